"""Training metrics: one reduction over the gathered tables, one vocabulary, the scorers' own metrics() logged."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from typing import Any

import pytest
import torch
from train_fixtures import ArithPlugin, DigitScorer, NoParams, parse, run_dict

import botgrpo_core
from botgrpo_core.engine.batch_metrics import (
    ADVANTAGE_COLUMNS,
    ROLLOUT_COLUMNS,
    advantage_columns,
    batch_metrics,
)
from botgrpo_core.estimators.compute import compute_advantages
from botgrpo_core.estimators.moments import rollout_moments
from botgrpo_core.rewards.signal_metrics import SIGNAL_COLUMNS
from botgrpo_core.signals import Sample, SignalSpec

# A batch of 2 groups of 2 rollouts, one global signal "s", by hand:
#  r0: tokens (1, 1)        outcome 1, success, cache hit
#  r1: tokens (0, 1, 0, 1)  outcome 1 (ties r0), the signal came from the cache
#  r2: 3 tokens, dropped (on_error nan: the signal timed out)
#  r3: empty completion
ROLLOUTS = torch.tensor(
    [  # mean, mean_sq, length, valid, outcome, success | value, failed, timeout, spans, cache_hit, clamped
        [1.0, 1.0, 2, 1, 1.0, 1, 1.0, 0, 0, 0, 1, 0],
        [0.5, 0.5, 4, 1, 1.0, 0, 1.0, 0, 0, 0, 1, 0],
        [0.0, 0.0, 3, 0, 0.0, 0, 0.0, 1, 1, 0, 0, 0],
        [0.0, 0.0, 0, 1, 0.0, 0, 0.0, 0, 0, 0, 0, 0],
    ],
    dtype=torch.float64,
)
ADVANTAGES = torch.tensor([[0.5, -0.5, 9.0, 9.0], [1.0, -1.0, 2.0, 0.0], [0.0, 0.0, 0.0, 9.0], [9.0] * 4])
MASK = torch.tensor([[1, 1, 0, 0], [1, 1, 1, 1], [1, 1, 1, 0], [0, 0, 0, 0]], dtype=torch.bool)


def test_batch_metrics_against_hand_computation() -> None:
    assert ROLLOUTS.shape[1] == len(ROLLOUT_COLUMNS) + len(SIGNAL_COLUMNS)
    adv = advantage_columns(ADVANTAGES, MASK)
    assert adv.shape == (4, len(ADVANTAGE_COLUMNS)) and adv.dtype == torch.float64
    assert adv[3].tolist() == [0.0, 0.0, 0.0, 0.0, math.inf, -math.inf]  # no tokens: min/max stay out
    got = batch_metrics(ROLLOUTS, adv, 2, {"s": "global"})
    # 9 valid tokens: sum 2, sum of squares 6.5, sum |A| 5 (the 9.0s are padding)
    want = {
        "reward/token_mean": (1.0 + 0.5 + 0.0) / 3,  # valid rollouts only
        "reward/valid_frac": 0.75,
        "reward/outcome_mean": 2 / 3,
        "completion/length_mean": (2 + 4 + 3 + 0) / 4,
        "success_rate": 1 / 3,
        # group 0: outcomes tie, token rewards differ; group 1: one non-empty rollout, no spread at all
        "groups/zero_spread_frac": 0.5,
        "groups/outcome_zero_spread_frac": 1.0,
        "groups/no_signal_frac": 0.5,  # group 0 has nonzero advantages, group 1 none
        "advantages/mean": 2 / 9,
        "advantages/std": math.sqrt(6.5 / 9 - (2 / 9) ** 2),
        "advantages/abs_mean": 5 / 9,
        "advantages/min": -1.0,
        "advantages/max": 2.0,
        "signals/s/mean": 2 / 3,  # over the samples the signal did not fail on
        "signals/s/error_frac": 0.25,
        "signals/s/timeout_frac": 0.25,
        "signals/s/cache_hit_frac": 0.5,
    }
    assert got.keys() == want.keys()  # the vocabulary; spans_per_sample and clamped_frac: local signals only
    for key, value in want.items():
        assert got[key] == pytest.approx(value, rel=1e-12), key


def test_no_success_column_and_empty_batches() -> None:
    rollouts = ROLLOUTS.clone()
    rollouts[:, ROLLOUT_COLUMNS.index("success")] = math.nan  # no task, no bound: success unknown
    got = batch_metrics(rollouts, advantage_columns(ADVANTAGES, MASK), 2, {"s": "local"})
    assert "success_rate" not in got and got["signals/s/spans_per_sample"] == 0.0
    empty = batch_metrics(ROLLOUTS[:0], advantage_columns(ADVANTAGES[:0], MASK[:0]), 2, {"s": "global"})
    assert empty["groups/no_signal_frac"] == 0.0 and empty["advantages/min"] == 0.0
    assert math.isnan(empty["reward/token_mean"]) and math.isnan(empty["signals/s/mean"])
    no_tokens = advantage_columns(torch.zeros(2, 0), torch.zeros(2, 0, dtype=torch.bool))
    assert no_tokens.tolist() == [[0.0, 0.0, 0.0, 0.0, math.inf, -math.inf]] * 2


@pytest.mark.parametrize(("estimator", "no_signal"), [("bot", 0.0), ("grpo", 1.0)])
def test_no_signal_share_is_the_estimators_own(estimator: str, no_signal: float) -> None:
    """Outcomes tie in every group; only BoT learns from the local signal (issue 15's `zero-spread=1.00`)."""
    outcome = torch.tensor([1.0, 1.0, 0.0, 0.0])
    local = torch.tensor([[0.0, -1.0, 0.0], [0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    mask = torch.ones(4, 3, dtype=torch.bool)
    beta = 0.5 if estimator == "bot" else 0.0  # GRPO sees outcomes only
    rewards = outcome[:, None] + beta * local
    advantages = compute_advantages(estimator, rewards, mask, group_size=2)
    moments = rollout_moments(rewards, mask)
    extra = torch.tensor([[1.0, o, math.nan] for o in outcome.tolist()], dtype=torch.float64)
    rollouts = torch.cat([moments, extra], dim=1)
    got = batch_metrics(rollouts, advantage_columns(advantages, mask), 2, {})
    assert got["groups/outcome_zero_spread_frac"] == 1.0
    assert got["groups/no_signal_frac"] == no_signal
    assert got["groups/zero_spread_frac"] == no_signal  # here: spread in token rewards <=> a gradient


# ---- the whole run: a real in-process signal whose scorer reports metrics() -----------------------------------
class MeteredScorer(DigitScorer):
    """Global: the digit share; counts the batches and samples it scored, as a judge counts its calls."""

    def __init__(self, params: NoParams) -> None:
        super().__init__(params)
        self.calls = 0
        self.samples = 0

    def score(self, samples: Sequence[Sample]) -> list[float]:
        self.calls += 1
        self.samples += len(samples)
        return super().score(samples)

    def metrics(self) -> dict[str, Any]:
        return {"test_meter.digits/calls": self.calls, "samples": self.samples, "backend": "cpu"}


class BrokenMetricsScorer(DigitScorer):
    def metrics(self) -> dict[str, float]:
        raise RuntimeError("the counter store is gone")


class MeterPlugin:
    @botgrpo_core.hookimpl
    def botgrpo_register_signals(self, register: Callable[[SignalSpec], None]) -> None:
        register(SignalSpec("test_meter.digits", "global", (0.0, 1.0), MeteredScorer, NoParams))
        register(SignalSpec("test_meter.broken", "global", (0.0, 1.0), BrokenMetricsScorer, NoParams))


def test_training_logs_one_vocabulary_and_the_scorers_metrics(tmp_path, plugin_manager, capsys) -> None:
    from botgrpo_core.engine.run import run_training

    plugin_manager.register(ArithPlugin(), name="test_arith", distribution="botgrpo-tests")
    plugin_manager.register(MeterPlugin(), name="test_meter", distribution="botgrpo-tests")
    signals = [
        {"name": "test_arith.steps"},
        {"name": "test_meter.digits", "weight": 0.5},
        {"name": "test_meter.broken", "weight": 0.5},
    ]
    config = parse(run_dict(tmp_path, rewards={"beta": 0.1, "signals": signals}))
    with pytest.warns(RuntimeWarning, match=r"'test_meter.broken' .*metrics\(\) raised RuntimeError"):
        run_training(config, progress=True, log=lambda m: None)

    records = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    train = [r for r in records if r["kind"] == "train"]
    assert [r["step"] for r in train] == [1, 2]
    calls = [r["signals/test_meter.digits/calls"] for r in train]
    samples = [r["signals/test_meter.digits/samples"] for r in train]
    # the scorer's running counts: the held-out scoring at step 0, then one call per generation batch
    assert 2 <= calls[0] < calls[1] and 1 <= samples[0] <= samples[1]
    for r in train:
        keys = {k for k in r if k.startswith("signals/")}
        assert keys == {
            *(
                f"signals/test_arith.steps/{s}"
                for s in ("mean", "error_frac", "timeout_frac", "cache_hit_frac")
            ),
            "signals/test_arith.steps/spans_per_sample",
            "signals/test_arith.steps/clamped_frac",
            # uncovered: group_mean (the default): the fill's figures
            "signals/test_arith.steps/covered_frac",
            "signals/test_arith.steps/uncovered_fill",
            *(
                f"signals/{n}/{s}"
                for n in ("test_meter.digits", "test_meter.broken")
                for s in ("mean", "error_frac", "timeout_frac", "cache_hit_frac")
            ),
            "signals/test_meter.digits/calls",
            "signals/test_meter.digits/samples",
        }  # the broken metrics() cost its own keys only; "backend" is not a number
        assert r["signals/test_meter.broken/error_frac"] == 0.0 and 0.0 <= r["groups/no_signal_frac"] <= 1.0
        assert not any(k.startswith("signal/") for k in r)
    # the progress bar shows the estimator's no-signal share, not outcome ties
    bar = capsys.readouterr().err
    assert f"no-signal={train[-1]['groups/no_signal_frac']:.2f}" in bar and "zero-spread" not in bar
    # and the share of groups whose outcomes are all equal (only the local signals move the policy there)
    assert f"outcome-flat={train[-1]['groups/outcome_zero_spread_frac']:.2f}" in bar
