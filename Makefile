# botgrpo: `make demo` trains BoT-GRPO and GRPO side by side on CPU from one warm start; `make test` runs
# every suite.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.botgrpo-installed
PLUGIN_DIRS := $(sort $(dir $(wildcard plugins/*/pyproject.toml)))
# Each plugin installs with its own `test` extra when it declares one.
PLUGIN_REQS := $(foreach p,$(PLUGIN_DIRS),-e $(p:%/=%)[test])
# The benchmark harness (`botgrpo bench`, the react task) is a plugin of its own; the core works without it,
# `make demo` runs it (the regime bench's --quick: one level, BoT-GRPO against GRPO, one seed).
BENCH_DIR := benchmarks/botgrpo_bench

export HF_HUB_OFFLINE := 1
export HF_HUB_DISABLE_TELEMETRY := 1
export TOKENIZERS_PARALLELISM := false
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: install demo test lint format docs bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# torch first, pinned to the CPU build on this machine's disk, so the ranges below resolve to it
# instead of pulling a multi-GB CUDA build.
$(STAMP): $(BIN)/python pyproject.toml $(wildcard plugins/*/pyproject.toml) $(wildcard plugins/*/*/js/package-lock.json) $(BENCH_DIR)/pyproject.toml
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e ".[test,trl]" $(PLUGIN_REQS) -e "$(BENCH_DIR)[test]"
	# botgrpo-jsx: pinned esbuild + TypeScript from its lock file (exit 2 = no Node: it falls back to tree-sitter)
	$(BIN)/python -m botgrpo_jsx.setup || [ $$? -eq 2 ]
	# botgrpo-jsx's jsx.visual screenshots with Debian's headless Chromium: installed here when root (CI),
	# otherwise its tests skip and say so
	command -v chromium >/dev/null || { [ "$$(id -u)" = 0 ] && apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null; } || \
	  echo "note: chromium is not installed (apt-get install chromium); the jsx.visual tests will skip"
	touch $(STAMP)

install: $(STAMP)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

test: lint
	$(BIN)/python -m pytest -q -p no:cacheprovider

demo: install
	$(BIN)/botgrpo bench benchmarks/bench_regimes.yaml --quick --output runs/demo

docs: install
	$(BIN)/python scripts/gen_config_docs.py

bench: install
	$(BIN)/python benchmarks/aggregation.py

clean:
	rm -rf $(VENV) runs .pytest_cache
