"""Load failures are loud: verl's plugin loader logs a failing plugin at debug level only, so botgrpo-verl
reports on stderr, naming the plugin and the cause."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip(
    "verl", reason="botgrpo-verl's tests run in the verl venv (.venv-verl, made by `make test`)"
)

from botgrpo_verl import plugin

PROBE = textwrap.dedent(
    """
    import verl
    from verl.experimental.agent_loop.agent_loop import AgentLoopOutput
    from verl.trainer.ppo.core_algos import ADV_ESTIMATOR_REGISTRY
    print("dense agent loop:", getattr(AgentLoopOutput.as_dict, "__botgrpo_dense__", False))
    print(",".join(sorted(n for n in ADV_ESTIMATOR_REGISTRY if n.startswith("botgrpo_"))))
    """
)


def broken_botgrpo_plugin(folder: Path) -> None:
    """An installed distribution whose ``botgrpo`` entry point names a module that does not exist."""
    info = folder / "brokenbot-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: brokenbot\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[botgrpo]\nbroken = botgrpo_no_such_module_xyz\n")


def test_import_verl_reports_a_botgrpo_plugin_that_fails_to_import(tmp_path: Path) -> None:
    broken_botgrpo_plugin(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "VERL_USE_EXTERNAL_PLUGINS": "auto"}
    env.pop("BOTGRPO_LOAD_PLUGINS", None)
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert (
        "warning: botgrpo-verl: botgrpo plugin 'broken' (brokenbot 0.1) failed to load, its estimators are "
        "missing: ModuleNotFoundError: No module named 'botgrpo_no_such_module_xyz'"
    ) in out.stderr
    # the other estimators still register, through verl's own entry-point loading
    registered = out.stdout.strip().splitlines()[-1].split(",")
    assert {"botgrpo_bot", "botgrpo_grpo", "botgrpo_pure"} <= set(registered)
    # and verl's agent loop carries the botgrpo manager's dense token rewards (botgrpo_verl.agent_loop)
    assert "dense agent loop: True" in out.stdout


def test_a_failure_of_the_plugin_itself_is_reported(monkeypatch, capsys) -> None:
    """What ``import verl`` would otherwise swallow: the step, the exception and its traceback on stderr."""

    def broken() -> list[str]:
        raise ImportError("cannot import name 'register_adv_est' (simulated)")

    monkeypatch.setattr(plugin, "register_estimators", broken)
    plugin._register()  # what importing the entry-point module runs; it must not raise into verl
    err = capsys.readouterr().err
    assert (
        "warning: botgrpo-verl: failed to load (broken): ImportError: cannot import name 'register_adv_est'"
        in err
    )
    assert "Traceback" in err
