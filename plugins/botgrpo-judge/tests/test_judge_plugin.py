"""The plugin as the core sees it: entry point, light import, signal contract."""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata
from pathlib import Path

from botgrpo_core.signals.manager import PluginManager
from botgrpo_core.signals.testing import check_signal_contract, make_samples
from botgrpo_judge.plugin import OUTCOME, STEPS


def test_entry_point_is_installed() -> None:
    (ep,) = [e for e in metadata.entry_points(group="botgrpo") if e.name == "judge"]
    assert ep.value == "botgrpo_judge.plugin"


def test_entry_module_imports_nothing_heavy() -> None:
    code = (
        "import sys, botgrpo_judge.plugin\n"
        "heavy = [m for m in ('torch', 'transformers', 'httpx', 'vllm', 'numpy') if m in sys.modules]\n"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_core_loads_both_signals() -> None:
    manager = PluginManager(allowlist=["judge"])
    assert manager.get_signal("judge.steps").spec is STEPS
    assert manager.get_signal("judge.outcome").spec is OUTCOME
    assert manager.get_signal("judge.steps").distribution == "botgrpo-judge"


COMPLETIONS = ["17+5=22\n22-8=14\nA: 14", "2+2=5\nA: 5", "", "Schöne Grüße: 東京\n→ ∞"]


def test_signal_contract_steps(judge_dir: Path) -> None:
    samples = make_samples(COMPLETIONS, prompt="what is 17+5-8?")
    params = {"model": str(judge_dir), "yes_tokens": [" yes"], "no_tokens": [" no"], "range": [0, 2]}
    results = check_signal_contract(STEPS, samples, params)
    assert [len(r) for r in results] == [3, 2, 0, 2]
    generate = {**params, "mode": "generate", "max_new_tokens": 8}
    check_signal_contract(STEPS, samples, generate)


def test_signal_contract_outcome(judge_dir: Path) -> None:
    samples = make_samples(COMPLETIONS, prompt="what is 17+5-8?", rows={"answer": "14"})
    params = {
        "model": str(judge_dir),
        "yes_tokens": [" yes"],
        "no_tokens": [" no"],
        "reference_field": "answer",
    }
    results = check_signal_contract(OUTCOME, samples, params)
    assert all(isinstance(r, float) for r in results)


def test_wheel_holds_no_test_infrastructure() -> None:
    """The test server and the tiny judge live in tests/judge_testing; nothing shipped imports them.

    (Which core modules a plugin may import is checked for every plugin in tests/test_architecture.py.)
    """
    import ast

    package = Path(__file__).parents[1] / "botgrpo_judge"
    offenders = []
    for source in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            offenders += [f"{source.name}: {n}" for n in names if n.split(".")[0] == "judge_testing"]
    assert offenders == []
    assert not (package / "server.py").exists() and not (package / "tiny_judge.py").exists()
    assert (Path(__file__).parent / "judge_testing" / "server.py").is_file()
