"""Step shaping (``rewards.signals[i].after_first_error``): the rule on spans and token rows, through the mixture,
and the advantages it leads to against a hand-computed case.

The sympy.steps and judge.steps cases live in those plugins' tests (test_sympy_shaping.py, test_judge_shaping.py).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from math import sqrt

import pytest
import torch
from pydantic import BaseModel, ConfigDict

from botgrpo_core.config.checks import check_rewards
from botgrpo_core.config.errors import ConfigError
from botgrpo_core.config.models import RewardsConfig
from botgrpo_core.estimators.compute import compute_advantages
from botgrpo_core.rewards.mixture import RewardMixture
from botgrpo_core.rewards.shaping import (
    AFTER_FIRST_ERROR_MODES,
    shape_spans,
    shape_token_rows,
    shuffle_span_values,
)
from botgrpo_core.signals import Sample, SignalSpec, Span, TokenValues
from botgrpo_core.signals.hookspecs import hookimpl
from botgrpo_core.signals.manager import PluginManager
from botgrpo_core.signals.testing import make_samples


def _spans(values: Sequence[float], width: int = 3) -> list[Span]:
    return [Span(k * width, (k + 1) * width - 1, v) for k, v in enumerate(values)]


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("keep", [1.0, -0.5, 1.0, -1.0, 0.25]),
        ("zero", [1.0, -0.5, 0.0, 0.0, 0.0]),
        ("negative", [1.0, -0.5, -0.5, -0.5, -0.5]),
    ],
)
def test_spans_after_the_first_negative_one(mode: str, expected: list[float]) -> None:
    spans = _spans([1.0, -0.5, 1.0, -1.0, 0.25])
    shaped = shape_spans(spans, mode)  # type: ignore[arg-type]
    assert [s.value for s in shaped] == expected
    assert [(s.start, s.end) for s in shaped] == [(s.start, s.end) for s in spans]


def test_first_is_by_position_not_by_list_order_and_overlaps_keep_their_value() -> None:
    spans = [Span(20, 25, -1.0), Span(0, 5, 1.0), Span(8, 12, -0.5), Span(10, 18, 1.0), Span(12, 14, 1.0)]
    shaped = shape_spans(spans, "zero")
    # first negative span: [8, 12); [10, 18) overlaps it (kept), [12, 14) and [20, 25) start after it
    assert [s.value for s in shaped] == [0.0, 1.0, -0.5, 1.0, 0.0]
    assert shape_spans([Span(0, 3, 1.0), Span(4, 6, 0.0)], "zero") == [Span(0, 3, 1.0), Span(4, 6, 0.0)]
    assert shape_spans([], "negative") == []
    meta = {"claims": ["x"]}
    assert shape_spans([Span(0, 1, -1.0), Span(2, 3, 1.0, meta)], "zero")[1].meta == meta
    with pytest.raises(ValueError, match="after_first_error"):
        shape_spans(spans, "drop")  # type: ignore[arg-type]


def test_token_rows_agree_with_spans_of_one_token() -> None:
    rng = random.Random(0)
    rows = [[rng.choice([-1.0, -0.5, 0.0, 0.5, 1.0]) for _ in range(12)] for _ in range(200)]
    for mode in AFTER_FIRST_ERROR_MODES:
        got = shape_token_rows(torch.tensor(rows), mode)  # type: ignore[arg-type]
        for row, out in zip(rows, got.tolist()):
            ref = [s.value for s in shape_spans([Span(t, t + 1, v) for t, v in enumerate(row)], mode)]  # type: ignore[arg-type]
            assert out == ref, (mode, row)


# --- through the mixture: a local step signal written for this test ---------------------------------------------
class _NoParams(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LineVerdicts:
    """Local: each line ``ok ...`` gets +1 and ``no ...`` gets -1 (other lines no span); ``tok:`` completions
    return per-token values instead (one character a token: ``+`` 1, ``-`` -1, else 0)."""

    def __init__(self, params: _NoParams) -> None:
        pass

    def score(self, samples: Sequence[Sample]) -> list[list[Span] | TokenValues]:
        out: list[list[Span] | TokenValues] = []
        for s in samples:
            if s.completion.startswith("tok:"):
                out.append(TokenValues([{"+": 1.0, "-": -1.0}.get(c, 0.0) for c in s.completion]))
                continue
            spans, pos = [], 0
            for line in s.completion.split("\n"):
                if line[:2] in ("ok", "no"):
                    spans.append(Span(pos, pos + len(line), 1.0 if line.startswith("ok") else -1.0))
                pos += len(line) + 1
            out.append(spans)
        return out


class _Plugin:
    @hookimpl
    def botgrpo_register_signals(self, register: object) -> None:
        register(SignalSpec("test.lines", "local", (-1.0, 1.0), LineVerdicts, _NoParams))  # type: ignore[operator]
        register(SignalSpec("test.outcome", "global", (0.0, 1.0), _Outcome, _NoParams))  # type: ignore[operator]


class _Outcome:
    def __init__(self, params: _NoParams) -> None:
        pass

    def score(self, samples: Sequence[Sample]) -> list[float]:
        return [float("ok" in s.completion) for s in samples]


def _manager() -> PluginManager:
    manager = PluginManager(entry_points=[])
    manager.register(_Plugin(), name="shaping-test")
    return manager


def _mix(completions: list[str], mode: str, alpha: float = 0.0) -> tuple[torch.Tensor, torch.Tensor]:
    signals = [{"name": "test.lines", "after_first_error": mode}]
    if alpha:
        signals.append({"name": "test.outcome"})
    config = RewardsConfig(alpha=alpha, beta=1.0, signals=signals)
    with RewardMixture(config, _manager()) as mixture:
        out = mixture.score_batch(make_samples(completions))
    return out.token_rewards, out.mask


def test_the_mixture_shapes_spans_and_token_values() -> None:
    text = "ok\nno\nok"  # 8 characters, one token each; "\n" is in no span
    keep, _ = _mix([text, "tok:+-+0+"], "keep")
    zero, _ = _mix([text, "tok:+-+0+"], "zero")
    negative, _ = _mix([text, "tok:+-+0+"], "negative")
    assert keep[0, :8].tolist() == [1, 1, 0, -1, -1, 0, 1, 1]
    assert zero[0, :8].tolist() == [1, 1, 0, -1, -1, 0, 0, 0]
    assert negative[0, :8].tolist() == [1, 1, 0, -1, -1, 0, -1, -1]
    assert keep[1, :9].tolist() == [0, 0, 0, 0, 1, -1, 1, 0, 1]
    assert zero[1, :9].tolist() == [0, 0, 0, 0, 1, -1, 0, 0, 0]
    assert negative[1, :9].tolist() == [0, 0, 0, 0, 1, -1, -1, -1, -1]


def test_advantages_against_a_hand_computed_case() -> None:
    """Group of two rollouts, alpha = 1, beta = 1, 'zero' shaping, the ``bot`` estimator (Bessel-corrected).

    Rollout A ``ok\\nno\\nok`` (8 tokens): local 1,1,0,-1,-1,0,[0,0 shaped from 1,1]; outcome 1 on every token.
    r_A = 2,2,1,0,0,1,1,1: mean 8/8 = 1, mean of squares 12/8 = 3/2.
    Rollout B ``ok\\nok\\nok`` (8 tokens): local 1,1,0,1,1,0,1,1; outcome 1: r_B = 2,2,1,2,2,1,2,2: mean 14/8 = 7/4,
    mean of squares 26/8 = 13/4.
    mu = (1 + 7/4) / 2 = 11/8; E[r^2] = (3/2 + 13/4) / 2 = 19/8; var = 19/8 - 121/64 = 31/64, times n/(n-1) = 2:
    31/32. A = (r - 11/8) / sqrt(31/32).
    """
    rewards, mask = _mix(["ok\nno\nok", "ok\nok\nok"], "zero", alpha=1.0)
    assert rewards.tolist() == [[2, 2, 1, 0, 0, 1, 1, 1], [2, 2, 1, 2, 2, 1, 2, 2]]
    adv = compute_advantages("bot", rewards, mask, group_size=2, eps=0.0)
    std = sqrt(31 / 32)
    expected = [[(r - 11 / 8) / std for r in row] for row in rewards.tolist()]
    assert torch.allclose(adv, torch.tensor(expected), atol=1e-6)
    # 'keep' gives A's last step its +1 back: a different mean and other advantages everywhere
    kept, _ = _mix(["ok\nno\nok", "ok\nok\nok"], "keep", alpha=1.0)
    assert not torch.allclose(compute_advantages("bot", kept, mask, group_size=2, eps=0.0), adv)


def test_a_global_signal_refuses_shaping() -> None:
    config = RewardsConfig(
        alpha=1.0, beta=0.0, signals=[{"name": "test.outcome", "after_first_error": "zero"}]
    )
    with pytest.raises(ConfigError, match=r"rewards\.signals\[0\]\.after_first_error.*global"):
        RewardMixture(config, _manager())
    # `botgrpo validate` refuses it too, before any model or mixture is built
    with pytest.raises(ConfigError, match=r"rewards\.signals\[0\]\.after_first_error.*global"):
        check_rewards(config, "run.yaml", _manager())
    with pytest.raises(ValueError, match="after_first_error"):
        RewardsConfig(alpha=1.0, beta=1.0, signals=[{"name": "test.lines", "after_first_error": "drop"}])


# shuffle_spans: the placement control of issue 57's study (same values per completion, other spans)


def test_shuffled_spans_keep_their_places_and_their_values_as_a_multiset() -> None:
    spans = [Span(0, 2, 1.0), Span(3, 5, -1.0), Span(6, 8, 1.0), Span(9, 11, 1.0), Span(12, 14, -1.0)]
    texts = [f"completion {i}" for i in range(40)]
    moved = 0
    for text in texts:
        out = shuffle_span_values(list(reversed(spans)), text)  # any order in, by position out
        assert [(s.start, s.end) for s in out] == [(s.start, s.end) for s in spans]
        assert sorted(s.value for s in out) == sorted(s.value for s in spans)
        assert out == shuffle_span_values(spans, text)  # fixed by the text: every batch and process alike
        moved += [s.value for s in out] != [s.value for s in spans]
    # 5 spans, values {+1 x3, -1 x2}: 10 distinct placements, so about 9 in 10 texts move something
    assert moved >= 30
    assert shuffle_span_values([], "x") == []


def test_the_mixture_moves_a_completions_credit_and_keeps_its_amount() -> None:
    """Through the real mixture: each completion's summed local reward is the same (spans of equal length),
    the tokens it lands on differ for some completions; a global signal refuses the key."""
    completions = [f"ok{i}\nno{i}\nok{i}\nok{i}\nno{i}" for i in range(12)]
    config = RewardsConfig(alpha=0.0, beta=1.0, signals=[{"name": "test.lines"}])
    shuffled = RewardsConfig(alpha=0.0, beta=1.0, signals=[{"name": "test.lines", "shuffle_spans": True}])
    with RewardMixture(config, _manager()) as mixture:
        plain = mixture.score_batch(make_samples(completions)).token_rewards
    with RewardMixture(shuffled, _manager()) as mixture:
        moved = mixture.score_batch(make_samples(completions)).token_rewards
    assert torch.equal(plain.sum(dim=1), moved.sum(dim=1))
    assert torch.equal((plain != 0).sum(dim=1), (moved != 0).sum(dim=1))
    assert sum(not torch.equal(a, b) for a, b in zip(plain, moved)) >= 6
    config = RewardsConfig(alpha=1.0, beta=0.0, signals=[{"name": "test.outcome", "shuffle_spans": True}])
    with pytest.raises(ConfigError, match=r"rewards\.signals\[0\]\.shuffle_spans.*global"):
        RewardMixture(config, _manager())
