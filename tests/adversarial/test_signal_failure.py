"""Issue 26 finding 1 on the real training path: a signal never degrades to a silent 100% error rate.

Before: SIGKILL a pooled signal's worker during training, then its replacement while it starts, and every
later sample of that signal erred (``OSError: handle is closed``, error share 1.0 to the end), one warning,
exit 0. Now the start is tried again (the run goes on, the killed sample is counted); a signal whose workers
cannot be started stops the run with an error naming it; and ``rewards.on_signal_failure`` stops (or warns
about) a run whose signal fails on most rollouts step after step.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from adversarial_plugins import FragilePlugin
from train_fixtures import arith_plugin, parse, run_dict  # noqa: F401  (fixture)

from botgrpo_core.cli.main import main
from botgrpo_core.engine.run import run_training
from botgrpo_core.engine.signal_health import SignalFailureError
from botgrpo_core.rewards.runner import SignalError


def _records(out: Path) -> list[dict]:
    lines = (out / "metrics.jsonl").read_text().splitlines()
    return [r for r in map(json.loads, lines) if r.get("kind") == "train"]


@pytest.fixture
def fragile(arith_plugin):  # noqa: F811
    arith_plugin.register(FragilePlugin(), name="fragile", distribution="botgrpo-tests")
    return arith_plugin


def _fragile_run(tmp_path: Path, sticky: bool) -> object:
    signal = {"name": "fragile.parity", "workers": 1, "timeout_s": 30, "cache": False}
    # the held-out evaluation at step 0 scores 8 samples first: call 11 is the 3rd sample of step 1
    signal["params"] = {"flag": str(tmp_path / "flag"), "kill_at": 11, "sticky": sticky}
    return parse(
        run_dict(
            tmp_path / "run",
            rewards={"signals": [signal, {"name": "test_arith.steps"}]},
            training={"steps": 2},
        )
    )


@pytest.mark.timeout(300)
def test_a_worker_killed_and_its_replacement_killed_starting_cost_one_sample(tmp_path, fragile) -> None:
    messages: list[str] = []
    run_training(_fragile_run(tmp_path, sticky=False), progress=False, log=messages.append)
    records = _records(tmp_path / "run")
    assert [r["step"] for r in records] == [1, 2]
    errors = [r["signals/fragile.parity/error_frac"] for r in records]
    assert errors == [1 / 8, 0.0]  # the sample its worker died on; step 2 all scored (was 1.0 to the end)
    assert (tmp_path / "flag.killed").exists() and not (tmp_path / "flag").exists()  # both kills happened


@pytest.mark.timeout(300)
def test_a_signal_whose_workers_cannot_start_stops_the_run_naming_it(tmp_path, fragile) -> None:
    with pytest.raises(SignalError, match=r"'fragile.parity'.*could not be started.*SIGKILL") as caught:
        run_training(_fragile_run(tmp_path, sticky=True), progress=False, log=lambda m: None)
    assert "4 failed start(s) in a row" in str(caught.value)


def test_a_signal_failing_step_after_step_stops_the_run(tmp_path, arith_plugin, capsys) -> None:  # noqa: F811
    run = run_dict(
        tmp_path / "run",
        rewards={
            "signals": [{"name": "test_arith.broken"}, {"name": "test_arith.digit_spans"}],
            "on_signal_failure": {"steps": 2},
        },
        training={"steps": 4},
    )
    with pytest.raises(SignalFailureError) as caught:
        run_training(parse(run), progress=False, log=lambda m: None)
    message = str(caught.value)
    assert "'test_arith.broken' failed on 100% of the rollouts for 2 training steps in a row" in message
    assert "no such binary 'mathcheck'" in message and "rewards.on_signal_failure" in message
    assert [r["step"] for r in _records(tmp_path / "run")] == [1]  # stopped in step 2, before its update
    # `botgrpo train` says the same in one line, no traceback, and exits 1
    run["training"]["output_dir"] = str(tmp_path / "cli")
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(run))
    assert main(["train", str(tmp_path / "run.yaml")]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert [line for line in err.splitlines() if line.startswith("error: ")] == [f"error: {message}"]


def test_warn_trains_on_and_says_so(tmp_path, arith_plugin) -> None:  # noqa: F811
    messages: list[str] = []
    config = parse(
        run_dict(
            tmp_path,
            rewards={
                "signals": [{"name": "test_arith.broken"}, {"name": "test_arith.digit_spans"}],
                "on_signal_failure": {"action": "warn", "steps": 1, "threshold": 0.9},
            },
            training={"steps": 2},
        )
    )
    run_training(config, progress=False, log=messages.append)
    assert [r["step"] for r in _records(tmp_path)] == [1, 2]
    warned = [m for m in messages if "rewards.on_signal_failure" in m]
    assert len(warned) == 2 and all("action warn" in m for m in warned)


def test_the_core_pools_batch_deadline_is_a_signal_key() -> None:
    """Issue 26 finding 7 for signals in the core's pool: rewards.signals[i].batch_timeout_s bounds the batch."""
    from signal_fixtures import TestPlugin

    from botgrpo_core.config.errors import ConfigError
    from botgrpo_core.config.models import RewardsConfig
    from botgrpo_core.rewards.mixture import RewardMixture
    from botgrpo_core.signals.manager import PluginManager
    from botgrpo_core.signals.testing import make_samples

    manager = PluginManager(entry_points=[])
    manager.register(TestPlugin(), name="test")
    pooled = {"name": "test.dot", "workers": 1, "timeout_s": 60, "batch_timeout_s": 0.5}
    with RewardMixture(RewardsConfig(alpha=1.0, beta=0.0, signals=[pooled]), manager) as mix:
        out = mix.score_batch(make_samples(["a.", "hang", "b."]))  # "hang" spins: only a kill ends it
    assert out.outcome.tolist() == [1.0, 0.0, 0.0]  # "b." waited behind it and was not started
    assert out.metrics["signals/test.dot/timeout_frac"] == pytest.approx(2 / 3)
    assert "batch_timeout_s=0.5" in str(out.signals["test.dot"].results[2])
    in_process = {"name": "test.dot", "batch_timeout_s": 0.5}
    with pytest.raises(
        ConfigError, match=r"rewards.signals\[0\].batch_timeout_s: bounds the core's worker pool"
    ):
        RewardMixture(RewardsConfig(alpha=1.0, beta=0.0, signals=[in_process]), manager)
