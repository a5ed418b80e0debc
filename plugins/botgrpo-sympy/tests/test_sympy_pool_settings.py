"""One place for the checkers' worker settings (issue 15): the run file's signal-level ``workers``,
``timeout_s`` and ``memory_mb`` reach the plugin's own guarded pool through the core's real path
(``RewardMixture.from_dict``: check_rewards, validate_params, the signal runner), the core starts no pool
of its own around it, and the same keys inside ``params`` are refused with the fix."""

from __future__ import annotations

import time

import pytest

from botgrpo_core.config.errors import ConfigError
from botgrpo_core.rewards.mixture import RewardMixture
from botgrpo_core.signals import Sample, SampleError
from botgrpo_sympy.params import StepsParams
from botgrpo_sympy.plugin import ANSWER, STEPS

LIFTED = {"max_exponent": 10**12, "max_bits": 10**13}  # lets 9^9^9 reach sympy: it hangs there


def _mixture(steps: dict) -> RewardMixture:
    signals = [{"name": "sympy.answer", "workers": 1}, {"name": "sympy.steps", **steps}]
    return RewardMixture.from_dict({"alpha": 1.0, "beta": 0.25, "signals": signals})


def test_both_signals_declare_their_own_pool() -> None:
    assert ANSWER.own_pool and STEPS.own_pool


def test_signal_level_settings_reach_the_checker_pool_and_its_deadline() -> None:
    timeout = 1.0
    assert timeout < StepsParams().timeout_s  # the plugin's default would not end the hang by the bound below
    # soft_timeout_share: null, so the hang reaches the pool's kill (the checker's own deadline would end it first)
    params = {"limits": LIFTED, "soft_timeout_share": None}
    steps = {"workers": 1, "timeout_s": timeout, "memory_mb": 900, "params": params}
    with _mixture(steps) as mix:
        runner = mix.runners[1]
        (good,) = runner.score([Sample(prompt="", completion="2 + 2 = 4")])[0]  # starts the checkers
        assert [s.value for s in good] == [1.0]
        assert runner._pool is None  # the core started no pool around the plugin's own
        pool = runner._scorer.pool
        assert (pool.num_workers, pool.timeout_s, pool.memory_mb) == (1, timeout, 900)
        assert sum(w.process.is_alive() for w in pool._workers) == 1  # one checker process
        start = time.monotonic()
        (hang,), _ = runner.score([Sample(prompt="", completion="9^9^9 = 1")])
        elapsed = time.monotonic() - start
        assert isinstance(hang, SampleError) and hang.reason == "timeout", hang
        assert timeout <= elapsed < StepsParams().timeout_s - 1.0, elapsed
        assert mix.runners[0].params.workers == 1  # sympy.answer's signal-level workers: 1


def test_unset_signal_level_settings_keep_the_plugins_defaults() -> None:
    mix = _mixture({"params": {"step_split": "lines"}})
    params = mix.runners[1].params
    assert (params.workers, params.timeout_s, params.memory_mb) == (2, 5.0, 1024)
    assert params.step_split == "lines"


@pytest.mark.parametrize(("key", "value"), [("workers", 8), ("timeout_s", 5), ("memory_mb", 2048)])
def test_worker_settings_inside_params_are_refused(key: str, value: float) -> None:
    with pytest.raises(ConfigError) as info:
        _mixture({"params": {"step_split": "lines", key: value}})
    message = str(info.value)
    assert f"rewards.signals[1].params.{key}: signal 'sympy.steps' (plugin botgrpo-sympy)" in message
    assert f"move it to rewards.signals[1].{key}" in message


def test_checking_never_moves_into_the_trainers_process() -> None:
    with pytest.raises(ConfigError, match=r"rewards\.signals\[1\]\.workers: Input should be greater than"):
        _mixture({"workers": 0})
