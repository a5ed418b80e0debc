"""Meta-tests: every hook has a test, every example run file validates, the CLI starts without torch."""

from __future__ import annotations

import ast
import inspect
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from botgrpo_core.signals.hookspecs import TokenRewardSpec

ROOT = Path(__file__).resolve().parent.parent

#: Which tests exercise which hook through a real plugin. Add an entry when adding a hook:
#: ``test_every_hook_has_a_test`` fails for a hook without one (and for entries naming missing tests);
#: ``tests/test_docs.py`` fails for a hook without its section in docs/hooks.md.
HOOK_TESTS: dict[str, list[str]] = {
    "botgrpo_register_signals": [
        "tests/test_plugin_template.py::test_installed_template_plugin_end_to_end",
        "tests/test_plugins.py::test_builtin_signals_are_always_there",
    ],
    "botgrpo_register_estimators": [
        "tests/test_cli_score.py::test_plugin_estimator_hook_is_used_by_score",
    ],
    "botgrpo_register_tasks": [
        "tests/test_plugin_hooks.py::test_task_hook_makes_a_plugin_task_a_data_task",
        "tests/test_plugin_hooks.py::test_a_task_name_has_one_home",
        "benchmarks/botgrpo_bench/tests/test_bench_plugin.py::test_react_is_a_data_task_through_the_plugin",
    ],
    "botgrpo_register_commands": [
        "tests/test_plugin_hooks.py::test_command_hook_adds_a_subcommand",
        "tests/test_plugin_hooks.py::test_a_taken_command_name_is_reported_and_skipped",
        "benchmarks/botgrpo_bench/tests/test_bench_plugin.py::test_bench_command_comes_from_the_plugin",
    ],
}


def hook_names() -> list[str]:
    """The hooks the spec declares (pluggy marks them with ``botgrpo_spec``)."""
    return sorted(
        name
        for name, fn in inspect.getmembers(TokenRewardSpec, inspect.isfunction)
        if hasattr(fn, "botgrpo_spec")
    )


def _test_function(node_id: str) -> tuple[str, str]:
    """``(function source, module source)`` of a test named ``path::function``."""
    path, _, name = node_id.partition("::")
    source = (ROOT / path).read_text(encoding="utf-8")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return ast.get_source_segment(source, node) or "", source
    raise AssertionError(f"{node_id}: no such test function (update HOOK_TESTS in tests/test_meta.py)")


def test_every_hook_has_a_test() -> None:
    hooks = hook_names()
    assert hooks == [  # the spec is read correctly
        "botgrpo_register_commands",
        "botgrpo_register_estimators",
        "botgrpo_register_signals",
        "botgrpo_register_tasks",
    ]
    assert sorted(HOOK_TESTS) == hooks, "add the new hook and its tests to HOOK_TESTS (or drop a removed one)"
    for hook, tests in HOOK_TESTS.items():
        assert tests, f"hook {hook} has no test"
        for node_id in tests:
            body, module = _test_function(node_id)
            assert body.startswith("def test_"), node_id
            # the test's module implements the hook, or the test checks that a real plugin declares it
            assert hook in module, f"{node_id}: its module never mentions {hook}"


# --- example run files -------------------------------------------------------------------------------------------
EXAMPLES = sorted(
    p
    for pattern in ("*.yaml", "*.yml")
    for p in (ROOT / "examples").rglob(pattern)
    if "node_modules" not in p.parts
)


@pytest.mark.parametrize("path", EXAMPLES, ids=[str(p.relative_to(ROOT)) for p in EXAMPLES])
def test_example_run_file_validates(path: Path, plugin_manager) -> None:
    from botgrpo_core.config.errors import ConfigError
    from botgrpo_core.config.loading import load_config

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # outcome-dominance warnings are advice, not invalidity
        try:
            config = load_config(path)
        except ConfigError as exc:
            pytest.fail(f"{path.relative_to(ROOT)} does not validate:\n{exc}")
    assert config.rewards.signals


# --- instant start -----------------------------------------------------------------------------------------------
_RUNNER = """
import json, sys
from botgrpo_core.cli.main import main
try:
    code = main(sys.argv[1:])
except SystemExit as exc:  # argparse --help exits
    code = exc.code
heavy = sorted(m for m in ("torch", "transformers", "trl", "vllm", "sympy") if m in sys.modules)
print("BOTGRPO-META " + json.dumps({"code": code, "heavy": heavy}), file=sys.stderr)
"""


@pytest.mark.parametrize(
    "argv",
    [["--help"], ["plugins"], ["plugins", "--json"], ["validate", "RUN"], ["score", "--help"]],
    ids=["help", "plugins", "plugins-json", "validate", "score-help"],
)
def test_cli_starts_without_heavy_imports(argv: list[str], tmp_path: Path) -> None:
    run = tmp_path / "run.yaml"
    run.write_text("rewards:\n  beta: 0\n  signals:\n    - name: core.exact_answer\n", encoding="utf-8")
    argv = [str(run) if a == "RUN" else a for a in argv]
    env = {k: v for k, v in os.environ.items() if k != "BOTGRPO_LOAD_PLUGINS"}
    done = subprocess.run(
        [sys.executable, "-c", _RUNNER, *argv],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    line = next(x for x in done.stderr.splitlines() if x.startswith("BOTGRPO-META "))
    result = json.loads(line.removeprefix("BOTGRPO-META "))
    assert result["code"] == 0, done.stderr
    assert result["heavy"] == [], f"botgrpo {' '.join(argv)} imported {result['heavy']}"
    assert done.stdout.strip()
