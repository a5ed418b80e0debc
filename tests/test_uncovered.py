"""``rewards.signals[i].uncovered``: a local signal's uncovered tokens at their group's mean verdict.

Checked against a float64 re-implementation written from the formula (docs/concepts.md), on properties
(silence is neutral; a constant added to every verdict of a group changes no advantage; the blank-page
collapse of docs/results.md cannot pay), across a split batch as two processes gather it, and on its
failure paths (failed samples, dropped rollouts, empty rollouts, groups with nothing covered, bad config).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import pytest
import torch
from pydantic import BaseModel, ConfigDict
from train_fixtures import arith_plugin  # noqa: F401  (fixture)

from botgrpo_core.config.checks import check_rewards
from botgrpo_core.config.errors import ConfigError
from botgrpo_core.config.models import RewardsConfig
from botgrpo_core.estimators.compute import compute_advantages, without_dropped_rollouts
from botgrpo_core.rewards.mixture import MixtureOutput, RewardMixture
from botgrpo_core.rewards.uncovered import (
    centre_uncovered,
    centred_signals,
    coverage_moments,
    fill_uncovered,
    group_fills,
)
from botgrpo_core.signals import Sample, SampleError, SignalSpec, Span, TokenValues
from botgrpo_core.signals.hookspecs import hookimpl
from botgrpo_core.signals.manager import PluginManager
from botgrpo_core.signals.testing import make_samples


class _NoParams(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RowSpans:
    """Local: the spans (or token values) the sample's row carries; a row with ``fail`` fails."""

    def __init__(self, params: _NoParams) -> None:
        pass

    def score(self, samples: Sequence[Sample]) -> list[Any]:
        out: list[Any] = []
        for s in samples:
            if s.row.get("fail"):
                out.append(SampleError("asked to fail", "error"))
            elif s.row.get("token_values") is not None:
                out.append(TokenValues(list(s.row["token_values"])))
            else:
                out.append([Span(a, b, v) for a, b, v in s.row.get("spans", [])])
        return out


class RowOther(RowSpans):
    """Local: the spans under the row's ``other`` key (a second, uncentred signal)."""

    def score(self, samples: Sequence[Sample]) -> list[Any]:
        return [[Span(a, b, v) for a, b, v in s.row.get("other", [])] for s in samples]


class RowOutcome:
    """Global: the row's ``outcome``; NaN (a failed sample) where the row says ``drop``."""

    def __init__(self, params: _NoParams) -> None:
        pass

    def score(self, samples: Sequence[Sample]) -> list[Any]:
        return [
            SampleError("dropped", "error") if s.row.get("drop") else float(s.row["outcome"]) for s in samples
        ]


class _Plugin:
    @hookimpl
    def botgrpo_register_signals(self, register: Any) -> None:
        register(SignalSpec("t.spans", "local", (-1.0, 1.0), RowSpans, _NoParams))
        register(SignalSpec("t.other", "local", (-1.0, 1.0), RowOther, _NoParams))
        register(SignalSpec("t.outcome", "global", (0.0, 1.0), RowOutcome, _NoParams))


def _manager() -> PluginManager:
    manager = PluginManager(entry_points=[])
    manager.register(_Plugin(), name="uncovered-test")
    return manager


def _score(
    completions: list[str], rows: list[dict[str, Any]], signals: list[dict[str, Any]], **mix: float
) -> MixtureOutput:
    config = RewardsConfig(alpha=mix.get("alpha", 1.0), beta=mix.get("beta", 1.0), signals=signals)
    with RewardMixture(config, _manager()) as mixture:
        return mixture.score_batch(make_samples(completions, rows=rows))  # one character a token


# --- a float64 reference, from the formula --------------------------------------------------------------------
def _reference(
    completions: list[str],
    rows: list[dict[str, Any]],
    groups: list[int],
    alpha: float,
    beta: float,
    w: tuple[float, float],
) -> list[list[float]]:
    """Token rewards with ``t.spans`` centred (weight ``w[0]``) and ``t.other`` at zero (``w[1]``), in float64."""

    def signal(row: dict[str, Any], n: int) -> tuple[list[float], list[bool]]:
        values, covered = [0.0] * n, [False] * n
        if row.get("fail"):
            return values, covered
        if row.get("token_values") is not None:
            for t, v in enumerate(row["token_values"][:n]):
                values[t], covered[t] = float(v), True
            return values, covered
        for a, b, v in row.get("spans", []):
            for t in range(a, b):  # one character a token
                values[t] += v
                covered[t] = True
        return [min(1.0, max(-1.0, x)) for x in values], covered

    n_rows = len(completions)
    own = [signal(rows[i], len(completions[i])) for i in range(n_rows)]
    fill: dict[int, float] = {}
    for g in set(groups):
        num = den = 0.0
        for i in range(n_rows):
            if groups[i] != g or rows[i].get("drop") or not completions[i]:
                continue
            values, covered = own[i]
            n = len(completions[i])
            num += sum(v for v, c in zip(values, covered) if c) / n
            den += sum(covered) / n
        fill[g] = num / den if den > 0 else 0.0
    out = []
    for i in range(n_rows):
        values, covered = own[i]
        other = rows[i].get("other", [])
        other_values = [0.0] * len(completions[i])
        for a, b, v in other:
            for t in range(a, b):
                other_values[t] += v
        r = []
        for t in range(len(completions[i])):
            s1 = values[t] if covered[t] else fill[groups[i]]
            r.append(alpha * rows[i]["outcome"] + beta * (w[0] * s1 + w[1] * other_values[t]))
        out.append([float("nan")] * len(r) if rows[i].get("drop") else r)
    return out


def _random_batch(
    rng: random.Random, groups: int, size: int
) -> tuple[list[str], list[dict[str, Any]], list[int]]:
    completions, rows, group_of = [], [], []
    for g in range(groups):
        for _ in range(size):
            n = rng.choice([0, 1, 3, 7, 12, 20, 31])
            row: dict[str, Any] = {"outcome": float(rng.random() < 0.4)}
            kind = rng.random()
            if kind < 0.1 and n:
                row["fail"] = True
            elif kind < 0.25 and n:
                row["token_values"] = [rng.uniform(-1, 1) for _ in range(n)]  # one a token
            elif n:
                spans = []
                for _ in range(rng.randint(0, 3)):  # disjoint-free spans: overlaps add up and clamp
                    a = rng.randrange(n)
                    spans.append((a, rng.randint(a + 1, n), rng.choice([-1.0, -0.5, 0.0, 0.25, 1.0])))
                row["spans"] = spans
            if n and rng.random() < 0.5:
                a = rng.randrange(n)
                row["other"] = [(a, n, rng.uniform(-1, 1))]
            if rng.random() < 0.08:
                row["drop"] = True
            completions.append("x" * n)
            rows.append(row)
            group_of.append(g)
    return completions, rows, group_of


_SIGNALS = [
    {"name": "t.outcome", "on_error": "nan"},
    {"name": "t.spans", "weight": 0.5, "uncovered": "group_mean"},
    {"name": "t.other", "weight": 2.0, "uncovered": "zero"},
]


@pytest.mark.parametrize("seed", range(6))
def test_the_fill_matches_a_float64_reference(seed: int) -> None:
    rng = random.Random(seed)
    completions, rows, groups = _random_batch(rng, groups=4, size=5)
    beta = 0.3
    mix = _score(completions, rows, _SIGNALS, beta=beta)
    got = centre_uncovered(mix, torch.tensor(groups), 4, beta)
    expected = _reference(completions, rows, groups, 1.0, beta, (0.5, 2.0))
    for i, row in enumerate(expected):
        got_row = got.token_rewards[i, : len(row)].double()
        torch.testing.assert_close(
            got_row, torch.tensor(row, dtype=torch.float64), rtol=1e-5, atol=1e-5, equal_nan=True
        )
        assert not got.mask[i, len(row) :].any()
    # what the signal said stays as it said it
    assert torch.equal(got.signals["t.spans"].values, mix.signals["t.spans"].values)


# --- properties ------------------------------------------------------------------------------------------------
def _advantages(mix: MixtureOutput, group_size: int) -> torch.Tensor:
    rewards, mask, opts = without_dropped_rollouts("bot", mix.token_rewards, mix.mask, {})
    return compute_advantages("bot", rewards, mask, group_size=group_size, **opts)


def test_a_blank_page_cannot_pay_when_the_group_carries_blame() -> None:
    """docs/results.md's collapse: most pages carry blame, one page is blank (no span). With ``zero`` the
    blank page's tokens out-rank the others at equal outcome; with ``group_mean`` they get advantage 0."""
    completions = ["ab\ncd", "ab\ncd", "ab\ncd", "     "]
    spans = [[(0, 2, -1.0), (3, 5, 1.0)], [(0, 2, -1.0), (3, 5, -1.0)], [(0, 2, -1.0)], []]
    rows = [{"outcome": 0.0, "spans": s} for s in spans]
    for mode in ("zero", "group_mean"):
        signals = [{"name": "t.outcome"}, {"name": "t.spans", "uncovered": mode}]
        mix = _score(completions, rows, signals, beta=0.2)
        mix = centre_uncovered(mix, torch.zeros(4, dtype=torch.long), 1, 0.2)
        adv = _advantages(mix, 4)
        blank = adv[3, :5]
        if mode == "zero":
            assert (blank > 0.3).all()  # silence is a winning bet
        else:
            assert blank.abs().max().item() < 1e-6  # silence is neutral (float32 rounding)
            # the fill is the length-weighted mean verdict: (0/5 - 4/5 - 2/5) / (4/5 + 4/5 + 2/5)
            assert mix.local[3, 0].item() == pytest.approx(-0.6)


@pytest.mark.parametrize("seed", range(4))
def test_a_constant_on_every_verdict_changes_no_advantage(seed: int) -> None:
    """With ``group_mean`` the filled signal moves as a whole when every verdict moves by ``c``, and the bag
    of tokens' statistics take the shift out; with ``zero`` the uncovered tokens stay at 0 and it does not."""
    rng = random.Random(seed)
    completions, rows = [], []
    for _ in range(12):  # 3 groups of 4; disjoint spans, so a shifted span shifts its tokens once
        n = rng.choice([4, 9, 16, 25])
        cuts = sorted(rng.sample(range(n + 1), 2 * rng.randint(0, 2)))
        spans = [(a, b, rng.uniform(-0.5, 0.5)) for a, b in zip(cuts[0::2], cuts[1::2]) if b > a]
        completions.append("x" * n)
        rows.append({"outcome": float(rng.random() < 0.5), "spans": spans})
    rows[0]["spans"] = [(0, 2, -0.5)]  # every group has a covered token and an uncovered one
    rows[4]["spans"], rows[8]["spans"] = [(1, 3, 0.25)], [(0, 1, 0.5)]
    shifted = [{**row, "spans": [(a, b, v + 0.4) for a, b, v in row["spans"]]} for row in rows]
    groups = torch.arange(12) // 4
    moved = {}
    for mode in ("zero", "group_mean"):
        signals = [{"name": "t.outcome"}, {"name": "t.spans", "uncovered": mode}]
        base, after = (
            centre_uncovered(_score(completions, r, signals, beta=0.5), groups, 3, 0.5)
            for r in (rows, shifted)
        )
        moved[mode] = (_advantages(base, 4) - _advantages(after, 4)).abs().max().item()
    assert moved["group_mean"] < 1e-4
    assert moved["zero"] > 1e-2


def test_two_processes_gathering_coverage_moments_match_one() -> None:
    """What the trainer does: each process's ``(B, 2K)`` moments gathered, the group means of every row,
    each process fills its own rows; a group spans both halves."""
    rng = random.Random(11)
    completions, rows, groups = _random_batch(rng, groups=3, size=4)
    mix = _score(completions, rows, _SIGNALS, beta=0.3)
    whole = centre_uncovered(mix, torch.tensor(groups), 3, 0.3)
    halves = [_select(mix, slice(0, 5)), _select(mix, slice(5, 12))]
    moments = torch.cat([coverage_moments(h, h.mask) for h in halves])  # the gather
    fills = group_fills(moments, torch.tensor(groups), 3)
    parts = [
        fill_uncovered(halves[0], halves[0].mask, fills[:5], 0.3),
        fill_uncovered(halves[1], halves[1].mask, fills[5:], 0.3),
    ]
    torch.testing.assert_close(
        torch.cat([p.token_rewards for p in parts]), whole.token_rewards, equal_nan=True
    )
    assert not torch.allclose(torch.nan_to_num(whole.token_rewards), torch.nan_to_num(mix.token_rewards))


def _select(mix: MixtureOutput, rows: slice) -> MixtureOutput:
    import dataclasses

    signals = {
        name: dataclasses.replace(
            s,
            values=s.values[rows],
            covered=None if s.covered is None else s.covered[rows],
            results=s.results[rows],
        )
        for name, s in mix.signals.items()
    }
    return dataclasses.replace(
        mix,
        token_rewards=mix.token_rewards[rows],
        mask=mix.mask[rows],
        valid=mix.valid[rows],
        outcome=mix.outcome[rows],
        local=mix.local[rows],
        signals=signals,
    )


# --- failure paths ---------------------------------------------------------------------------------------------
def test_failed_dropped_empty_and_uncovered_groups() -> None:
    completions = ["abcd", "abcd", "abcd", "", "abcd", "ab"]
    rows = [
        {"outcome": 1.0, "spans": [(0, 2, -1.0)]},  # group 0: covered half, verdict -1
        {"outcome": 1.0, "fail": True},  # failed: no spans, every token at the fill
        {"outcome": 1.0, "spans": [(0, 4, 1.0)], "drop": True},  # dropped: out of the mean, NaN
        {"outcome": 1.0},  # empty: out of the mean
        {"outcome": 0.0},  # group 1: nothing covered, the fill is 0
        {"outcome": 0.0, "spans": []},
    ]
    signals = [{"name": "t.outcome", "on_error": "nan"}, {"name": "t.spans", "uncovered": "group_mean"}]
    mix = _score(completions, rows, signals, beta=1.0)
    assert centred_signals(mix) == ["t.spans"]
    out = centre_uncovered(mix, torch.tensor([0, 0, 0, 0, 1, 1]), 2, 1.0)
    # group 0's mean verdict over covered tokens: rollout 0 alone, -1
    assert out.token_rewards[0, :4].tolist() == [0.0, 0.0, 0.0, 0.0]  # 1 - 1 on covered, 1 - 1 filled
    assert out.token_rewards[1, :4].tolist() == [0.0] * 4
    assert torch.isnan(out.token_rewards[2, :4]).all()
    assert not out.mask[3].any()
    assert out.token_rewards[4:].abs().sum().item() == 0.0
    # no centred signal: nothing to do, the same object back
    plain = _score(completions[:1], rows[:1], [{"name": "t.spans", "uncovered": "zero"}])
    assert centre_uncovered(plain, torch.zeros(1, dtype=torch.long), 1, 1.0) is plain


def test_a_global_signal_refuses_uncovered() -> None:
    config = RewardsConfig(alpha=1.0, beta=0.0, signals=[{"name": "t.outcome", "uncovered": "group_mean"}])
    with pytest.raises(ConfigError, match=r"rewards\.signals\[0\]\.uncovered.*global.*'zero'"):
        RewardMixture(config, _manager())
    with pytest.raises(ConfigError, match=r"rewards\.signals\[0\]\.uncovered"):
        check_rewards(config, "run.yaml", _manager())
    with pytest.raises(ValueError, match="uncovered"):
        RewardsConfig(alpha=1.0, beta=1.0, signals=[{"name": "t.spans", "uncovered": "mean"}])


def test_local_signals_are_centred_by_default_and_global_ones_untouched() -> None:
    """The default (issue 56): a local signal's silence is worth its group's verdict; a global signal that
    does not set the key is fine, and one that sets 'zero' explicitly too."""
    config = RewardsConfig(
        alpha=1.0, beta=0.1, signals=[{"name": "t.outcome"}, {"name": "t.spans"}, {"name": "t.other"}]
    )
    assert [s.uncovered_fill for s in config.signals] == ["group_mean"] * 3
    check_rewards(config, "run.yaml", _manager())
    signals = [s.model_dump(exclude_unset=True) for s in config.signals]
    mix = _score(["abcd", "ab"], [{"outcome": 1.0, "spans": [(0, 2, -1.0)]}, {"outcome": 0.0}], signals)
    assert centred_signals(mix) == ["t.spans", "t.other"]
    explicit = RewardsConfig(alpha=1.0, beta=0.0, signals=[{"name": "t.outcome", "uncovered": "zero"}])
    check_rewards(explicit, "run.yaml", _manager())


def test_a_run_with_a_centred_signal_trains_and_logs_its_fill(tmp_path, arith_plugin) -> None:  # noqa: F811
    """A real 2-step run: the fill happens in the trainer and its figures reach metrics.jsonl."""
    import json

    from train_fixtures import parse, run_dict

    from botgrpo_core.engine.run import run_training

    signals = [{"name": "test_arith.digits"}, {"name": "test_arith.steps", "uncovered": "group_mean"}]
    run_training(parse(run_dict(tmp_path, rewards={"signals": signals})), progress=False, log=lambda m: None)
    rows = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    train = [r for r in rows if r["kind"] == "train"]
    assert [r["step"] for r in train] == [1, 2]
    for r in train:
        assert 0.0 <= r["signals/test_arith.steps/covered_frac"] <= 1.0
        assert -1.0 <= r["signals/test_arith.steps/uncovered_fill"] <= 1.0
