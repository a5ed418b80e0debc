"""botgrpo-bench as a plugin: ``botgrpo bench`` comes from its ``botgrpo_register_commands`` hook and
``data.task: react`` from its ``botgrpo_register_tasks`` hook (the core ships neither)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from botgrpo_bench.react import ReactTask

ROOT = Path(__file__).resolve().parents[3]
BENCH = ROOT / "benchmarks" / "bench_full.yaml"

#: runs the CLI in a fresh interpreter, then reports its exit code and which heavy modules it imported
_RUNNER = """
import json, sys
from botgrpo_core.cli.main import main
try:
    code = main(sys.argv[1:])
except SystemExit as exc:  # argparse --help and usage errors exit
    code = exc.code
heavy = sorted(m for m in ("torch", "transformers", "trl") if m in sys.modules)
print("BOTGRPO-META " + json.dumps({"code": code, "heavy": heavy}), file=sys.stderr)
"""


def _cli(*argv: str, allow: str | None = None) -> tuple[dict, str, str]:
    env = {k: v for k, v in os.environ.items() if k != "BOTGRPO_LOAD_PLUGINS"}
    if allow is not None:
        env["BOTGRPO_LOAD_PLUGINS"] = allow
    done = subprocess.run(
        [sys.executable, "-c", _RUNNER, *argv], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120
    )
    line = next(x for x in done.stderr.splitlines() if x.startswith("BOTGRPO-META "))
    return json.loads(line.removeprefix("BOTGRPO-META ")), done.stdout, done.stderr


def test_bench_command_comes_from_the_plugin() -> None:
    """``botgrpo_register_commands``: listed in ``--help``, ``bench --help`` without torch, gone without the plugin."""
    meta, out, _ = _cli("--help")
    assert meta == {"code": 0, "heavy": []}
    assert "bench" in out and "run a grid of presets" in out
    meta, out, _ = _cli("bench", "--help")
    assert meta == {"code": 0, "heavy": []} and "--quick" in out
    # a bench-file error is reported by the plugin's command, through the core's formatter
    meta, _, err = _cli("bench", str(BENCH), "--set", "tasks.math.metrc=x")
    assert meta["code"] == 2 and "tasks.math.metrc: unknown key; did you mean 'metric'?" in err
    meta, _, err = _cli("bench", str(BENCH), allow="jsx,sympy")  # the plugin may not load: no bench command
    assert meta["code"] == 2 and "invalid choice: 'bench'" in err
    meta, out, _ = _cli("plugins", "--json")
    bench = next(p for p in json.loads(out)["plugins"] if p["name"] == "bench")
    assert bench["distribution"] == "botgrpo-bench"
    assert bench["hooks"] == [
        "botgrpo_register_commands",
        "botgrpo_register_signals",
        "botgrpo_register_tasks",
    ]
    assert bench["tasks"] == ["react", "react-requests", "word-problems"] and [
        x["name"] for x in bench["signals"]
    ] == [
        "bench.react_spec",
        "bench.react_sections",
        "bench.react_substance",
        "bench.react_cascade",
        "bench.react_trivial",
    ]


def test_react_is_a_data_task_through_the_plugin(monkeypatch: pytest.MonkeyPatch) -> None:
    """``botgrpo_register_tasks``: a run file's ``data.task: react`` builds the plugin's task."""
    from botgrpo_core.config.loading import parse_config
    from botgrpo_core.engine.data import load_data
    from botgrpo_core.signals import manager as plugins
    from botgrpo_core.tasks import available_tasks, plugin_tasks

    monkeypatch.setattr(plugins, "_default", None)  # a fresh manager over the installed entry points
    assert available_tasks()["react"] == "botgrpo-bench"
    assert plugin_tasks()["react"].plugin == "bench"
    config = parse_config(
        {
            "data": {"source": "task", "task": "react", "task_params": {"error_rate": 0.2}, "eval_size": 3},
            "rewards": {"beta": 0.0, "signals": [{"name": "jsx.compiles", "workers": 0}]},
        },
        source="react.yaml",
    )
    data = load_data(config)
    assert isinstance(data.task, ReactTask) and data.task.params.error_rate == 0.2
    assert data.eval == data.task.eval_rows(3, seed=0)
    assert not {r["spec"] for r in data.eval} & {r["spec"] for r in data.train}


def test_hooks_md_quotes_this_plugin() -> None:
    """docs/hooks.md's examples of the task and command hooks are this plugin's code, verbatim."""
    text = (ROOT / "docs" / "hooks.md").read_text(encoding="utf-8")
    snippets = re.findall(r"<!-- snippet: (\S+) -->\n```\w*\n(.*?)```", text, re.S)
    quoted = [code for path, code in snippets if path == "benchmarks/botgrpo_bench/botgrpo_bench/plugin.py"]
    assert len(quoted) == 2
    source = (ROOT / "benchmarks" / "botgrpo_bench" / "botgrpo_bench" / "plugin.py").read_text(
        encoding="utf-8"
    )
    for code in quoted:
        assert code in source, f"docs/hooks.md quotes plugin.py, which no longer contains:\n{code}"
