"""Reward mixture: the mixing formula, on_error policies, failures that cost one sample, caching."""

from __future__ import annotations

import pytest
import torch
from signal_fixtures import TestPlugin

from botgrpo_core.config.models import RewardsConfig
from botgrpo_core.rewards.mixture import RewardMixture
from botgrpo_core.rewards.runner import SignalError
from botgrpo_core.rewards.samples import decode_samples
from botgrpo_core.signals import Sample, SampleError, SignalSpec, Span
from botgrpo_core.signals.manager import PluginManager, register_signal
from botgrpo_core.signals.testing import make_samples as fake_batch


@pytest.fixture
def manager() -> PluginManager:
    m = PluginManager(entry_points=[])
    m.register(TestPlugin(), name="test")
    return m


def _mixture(manager, signals, alpha=1.0, beta=0.5) -> RewardMixture:
    return RewardMixture(RewardsConfig(alpha=alpha, beta=beta, signals=signals), manager)


def test_formula_against_hand_computation(manager) -> None:
    # r[i,t] = alpha * (a1 * dot[i]) + beta * (b1 * word[i,t])   with char tokens
    mix = _mixture(
        manager,
        [
            {"name": "test.dot", "weight": 2.0},
            {"name": "test.word", "weight": 0.5, "params": {"value": -1.0}},
        ],
        alpha=1.5,
        beta=0.4,
    )
    out = mix.score_batch(fake_batch(["a bad one.", "ok"]))
    # sample 0: dot = 1 -> 1.5 * 2 = 3.0 everywhere; "bad" at [2, 5) -> + 0.4 * 0.5 * -1 = -0.2
    want0 = [3.0] * 10
    for t in range(2, 5):
        want0[t] -= 0.2
    assert torch.allclose(out.token_rewards[0], torch.tensor(want0))
    assert out.token_rewards[1].tolist() == [0.0] * 2 + [0.0] * 8  # padded to T = 10, zero reward
    assert out.mask.sum(1).tolist() == [10, 2]
    assert out.outcome.tolist() == [2.0, 0.0]
    assert out.metrics["signals/test.dot/mean"] == 0.5
    assert out.metrics["signals/test.word/spans_per_sample"] == 0.5
    assert "signals/test.dot/spans_per_sample" not in out.metrics  # a global signal has no spans


def test_raising_scorer_costs_one_sample(manager) -> None:
    mix = _mixture(manager, [{"name": "test.dot", "on_error": "zero"}], beta=0.0)
    out = mix.score_batch(fake_batch(["fine.", "boom.", "also."]))
    assert out.outcome.tolist() == [1.0, 0.0, 1.0]
    err = out.signals["test.dot"].results[1]
    assert isinstance(err, SampleError) and "boom in the scorer" in str(err)
    assert out.metrics["signals/test.dot/error_frac"] == pytest.approx(1 / 3)
    assert out.metrics["signals/test.dot/mean"] == 1.0  # over the samples it did not fail on


def test_nan_policy_drops_the_rollout(manager) -> None:
    mix = _mixture(manager, [{"name": "test.dot", "on_error": "nan"}], beta=0.0)
    out = mix.score_batch(fake_batch(["fine.", "nan here", "ok."]))
    assert out.valid.tolist() == [True, False, True]
    assert torch.isnan(out.token_rewards[1, : len("nan here")]).all()
    assert not torch.isnan(out.token_rewards[0]).any()
    assert out.signals["test.dot"].reasons["nan"] == 1


def test_raise_policy_names_signal_and_fix(manager) -> None:
    mix = _mixture(manager, [{"name": "test.dot", "on_error": "raise"}], beta=0.0)
    with pytest.raises(SignalError, match=r"'test.dot'.*sample 1.*rewards.signals\[0\].on_error"):
        mix.score_batch(fake_batch(["fine.", "boom"]))


def test_hanging_scorer_is_killed_by_the_timeout(manager) -> None:
    with _mixture(
        manager, [{"name": "test.dot", "workers": 1, "timeout_s": 0.5, "on_error": "zero"}], beta=0.0
    ) as mix:
        out = mix.score_batch(fake_batch(["a.", "hang", "b."]))
        assert out.outcome.tolist() == [1.0, 0.0, 1.0]
        assert out.metrics["signals/test.dot/timeout_frac"] == pytest.approx(1 / 3)
        assert mix.score_batch(fake_batch(["c."])).outcome.tolist() == [1.0]  # the pool survived


def test_signal_level_workers_start_the_cores_pool_with_its_defaults(manager) -> None:
    """A signal without ``own_pool``: signal-level ``workers > 0`` is the core's pool, null ``timeout_s`` /
    ``memory_mb`` its defaults (10 s, 1024 MB); null ``workers`` scores in the trainer's process."""
    signals = [
        {"name": "test.dot", "workers": 1},
        {"name": "test.out_of_bounds", "workers": 2, "timeout_s": 3.0},
        {"name": "test.word"},
    ]
    with _mixture(manager, signals) as mix:
        mix.score_batch(fake_batch(["a bad one."]))
        pooled, custom, in_process = mix.runners
        assert (pooled._pool.num_workers, pooled._pool.timeout_s, pooled._pool.memory_mb) == (1, 10.0, 1024)
        assert (custom._pool.num_workers, custom._pool.timeout_s, custom._pool.memory_mb) == (2, 3.0, 1024)
        assert in_process._pool is None and in_process._scorer is not None


def test_wrong_length_and_out_of_bounds_are_invalid(manager) -> None:
    mix = _mixture(manager, [{"name": "test.wrong_length"}, {"name": "test.out_of_bounds"}], beta=0.0)
    out = mix.score_batch(fake_batch(["x" * 20, "big"]))
    assert all(r.reason == "invalid" for r in out.signals["test.wrong_length"].results)
    oob = out.signals["test.out_of_bounds"].results
    assert isinstance(oob[1], SampleError) and "outside the declared bounds" in str(oob[1])
    assert isinstance(oob[0], SampleError)  # a list is not a global value
    assert out.outcome.tolist() == [0.0, 0.0]


def test_local_span_past_the_end_is_invalid_not_fatal(manager) -> None:
    out = _mixture(manager, [{"name": "test.past_end"}]).score_batch(fake_batch(["short", "longer one"]))
    assert all("ends past the completion" in str(r) for r in out.signals["test.past_end"].results)
    assert out.token_rewards.abs().sum() == 0


def test_malformed_spans_cost_their_sample_with_a_clear_reason(manager) -> None:
    out = _mixture(manager, [{"name": "test.bad_spans"}]).score_batch(
        fake_batch(["abcd", "abce", "abcf", "abcg"])
    )
    float_offsets, nan_value, not_a_span, fine = out.signals["test.bad_spans"].results
    assert isinstance(float_offsets, SampleError) and "non-integer offsets" in str(float_offsets)
    assert isinstance(nan_value, SampleError) and "value must be finite, got nan" in str(nan_value)
    assert isinstance(not_a_span, SampleError) and "returns Span objects, got tuple" in str(not_a_span)
    assert [(s.start, s.end, s.value) for s in fine] == [(0, 1, -1.0), (1, 2, -0.5)]
    assert out.token_rewards[:3].abs().sum() == 0  # one token per character in fake_batch
    assert out.token_rewards[3, :2].tolist() == pytest.approx([-1.0 * 0.5, -0.5 * 0.5])


def test_cache_reuses_identical_samples(manager) -> None:
    mix = _mixture(manager, [{"name": "test.dot"}], beta=0.0)
    runner = mix.runners[0]
    mix.score_batch(fake_batch(["a.", "b"]))
    scorer = runner._scorer
    calls = scorer.calls
    out = mix.score_batch(fake_batch(["a.", "b", "new."]))
    assert out.metrics["signals/test.dot/cache_hit_frac"] == pytest.approx(2 / 3)
    assert out.signals["test.dot"].cached == [True, True, False]
    assert scorer.calls == calls + 1  # only the new sample was scored
    rows_differ = mix.score_batch(fake_batch(["a."], rows={"answer": "x"}))
    assert (
        rows_differ.metrics["signals/test.dot/cache_hit_frac"] == 0
    )  # a different row is a different sample
    calls = scorer.calls
    repeated = mix.score_batch(fake_batch(["dup.", "dup.", "dup", "dup."]))
    assert repeated.outcome.tolist() == [1.0, 1.0, 0.0, 1.0]
    assert repeated.metrics["signals/test.dot/cache_hit_frac"] == 0.5 and scorer.calls == calls + 1


def test_cache_keeps_at_most_cache_size_results_least_recently_used_first(manager) -> None:
    mix = _mixture(manager, [{"name": "test.dot", "cache_size": 2}], beta=0.0)
    runner = mix.runners[0]
    mix.score_batch(fake_batch(["a.", "b."]))
    mix.score_batch(fake_batch(["a."]))  # a. is now the most recently used
    mix.score_batch(fake_batch(["c."]))  # evicts b.
    assert len(runner._cache) == 2
    out = mix.score_batch(fake_batch(["a.", "b."]))
    assert out.signals["test.dot"].cached == [True, False]


def test_cache_off_scores_everything(manager) -> None:
    mix = _mixture(manager, [{"name": "test.dot", "cache": False}], beta=0.0)
    out = mix.score_batch(fake_batch(["a.", "a."]))
    assert out.outcome.tolist() == [1.0, 1.0] and out.metrics["signals/test.dot/cache_hit_frac"] == 0


def test_decode_samples_with_a_real_tokenizer() -> None:
    from botgrpo_core.engine.tiny import byte_level_bpe_tokenizer

    tok = byte_level_bpe_tokenizer()
    ids = [tok.encode("x = 東京", add_special_tokens=False), tok.encode("y", add_special_tokens=False)]
    samples = decode_samples(tok, ["p1", "p2"], ids, rows=[{"answer": 1}, {"answer": 2}])
    assert [s.completion for s in samples] == ["x = 東京", "y"]
    assert isinstance(samples[0], Sample) and len(samples[0].offsets) == len(ids[0])
    assert samples[1].row == {"answer": 2}


def test_scorer_metrics_are_merged(manager) -> None:
    mix = _mixture(manager, [{"name": "test.dot"}], beta=0.0)
    mix.score_batch(fake_batch(["a."]))
    mix.runners[0]._scorer.metrics = lambda: {
        "test.dot/calls": 3,  # the signal's own prefix is dropped
        "other": 1,
        "label": "not a number",  # skipped
        "mean": 7,  # named like a batch statistic: kept apart
        "seconds": torch.tensor(0.5),  # a one-element tensor is a number
    }
    out = mix.score_batch(fake_batch(["b."]))
    assert out.metrics["signals/test.dot/calls"] == 3.0 and out.metrics["signals/test.dot/other"] == 1.0
    assert out.metrics["signals/test.dot/mean"] == 1.0 and out.metrics["signals/test.dot/scorer/mean"] == 7.0
    assert out.metrics["signals/test.dot/seconds"] == 0.5
    assert not any("label" in k for k in out.metrics)
    own = ("calls", "other", "scorer/mean", "seconds")
    assert out.scorer_metrics == {f"signals/test.dot/{k}": out.metrics[f"signals/test.dot/{k}"] for k in own}


def test_a_broken_scorer_metrics_costs_its_metrics_only(manager) -> None:
    mix = _mixture(manager, [{"name": "test.dot"}], beta=0.0)
    mix.score_batch(fake_batch(["a."]))

    def broken() -> dict[str, float]:
        raise KeyError("no counter")

    mix.runners[0]._scorer.metrics = broken
    with pytest.warns(RuntimeWarning, match=r"signal 'test.dot' .*metrics\(\) raised KeyError"):
        out = mix.score_batch(fake_batch(["b.", "c"]))
    assert out.outcome.tolist() == [1.0, 0.0] and out.scorer_metrics == {}
    assert out.metrics["signals/test.dot/mean"] == 0.5


def test_signal_table_reduces_to_the_metrics(manager) -> None:
    """The per-rollout rows the trainer gathers give the batch's metrics (one reduction, two places)."""
    from botgrpo_core.rewards.signal_metrics import SIGNAL_COLUMNS, mixture_metrics

    mix = _mixture(manager, [{"name": "test.dot"}, {"name": "test.word"}], beta=0.5)
    out = mix.score_batch(fake_batch(["a bad.", "boom", "bad bad", "x."]))
    assert out.signal_table.shape == (4, 2 * len(SIGNAL_COLUMNS)) and out.signal_table.dtype == torch.float64
    width = len(SIGNAL_COLUMNS)
    dot, word = out.signal_table[:, :width], out.signal_table[:, width:]
    assert dot[:, 0].tolist() == [1.0, 0.0, 0.0, 1.0] and dot[:, 1].tolist() == [0.0, 1.0, 0.0, 0.0]
    # local: token mean of the aligned values, one token per character; spans returned per sample
    assert word[:, 0].tolist() == pytest.approx([-3 / 6, 0.0, -6 / 7, 0.0]) and word[:, 3].tolist() == [
        1,
        0,
        2,
        0,
    ]
    again = mixture_metrics(out.valid, out.outcome, out.signal_table, mix.signal_kinds())
    assert again == {k: v for k, v in out.metrics.items() if k not in out.scorer_metrics}
    # the reduction of two halves' rows, concatenated, is the reduction of the whole batch
    halves = [mix.score_batch(fake_batch(t)) for t in (["a bad.", "boom"], ["bad bad", "x."])]
    joined = mixture_metrics(
        torch.cat([h.valid for h in halves]),
        torch.cat([h.outcome for h in halves]),
        torch.cat([h.signal_table for h in halves]),
        mix.signal_kinds(),
    )
    assert joined.keys() == again.keys()
    for key in joined.keys() - {"signals/test.dot/cache_hit_frac", "signals/test.word/cache_hit_frac"}:
        assert joined[key] == pytest.approx(again[key]), key  # (the halves came from the cache)
    assert joined["signals/test.word/cache_hit_frac"] == 1.0


def test_close_releases_scorers(manager) -> None:
    mix = _mixture(manager, [{"name": "test.dot"}], beta=0.0)
    mix.score_batch(fake_batch(["a."]))
    closed = []
    mix.runners[0]._scorer.close = lambda: closed.append(True)
    mix.close()
    assert closed == [True] and mix.runners[0]._scorer is None


# ---- hostile results: bounded per-sample outcomes, never a failed batch (issue 17) ---------------------------
class _Hostile:
    """Returns, per completion text, a result the contract forbids or that overflows naive handling."""

    def __init__(self, params):  # type: ignore[no-untyped-def]
        pass

    def score(self, samples):  # type: ignore[no-untyped-def]
        import numpy as np

        table = {"huge": 10**400, "pair": np.array([1.0, 2.0]), "one": np.array([1.0]), "ok": 0.5}
        if any(s.completion == "exit" for s in samples):
            raise SystemExit(3)
        return [table[s.completion] for s in samples]


class _Overlapping:
    """A local signal bounded to [-1, 1] that returns 30 overlapping -1 spans over the whole text."""

    def __init__(self, params):  # type: ignore[no-untyped-def]
        pass

    def score(self, samples):  # type: ignore[no-untyped-def]
        return [[Span(0, len(s.completion), -1.0)] * 30 for s in samples]


@pytest.mark.parametrize("on_error", ["zero", "nan"])
def test_hostile_global_values_cost_their_sample_only(on_error: str) -> None:
    spec = SignalSpec(name="hostile.value", kind="global", bounds=(0.0, 1.0), make_scorer=_Hostile)
    manager = PluginManager(entry_points=[])
    register_signal(spec, manager=manager)
    mix = _mixture(manager, [{"name": "hostile.value", "on_error": on_error}], beta=0.0)
    out = mix.score_batch(fake_batch(["huge", "pair", "one", "ok", "exit"]))
    outcome = out.signals["hostile.value"]
    assert outcome.failed == [True, True, False, False, True]  # 10**400, a size-2 array, sys.exit
    assert out.outcome[2:4].tolist() == [1.0, 0.5]  # a one-element array is a number
    assert "not a finite float" in str(outcome.results[0]) and "one number" in str(outcome.results[1])
    assert "SystemExit" in str(outcome.results[4])


def test_overlapping_spans_stay_within_the_signal_bounds() -> None:
    spec = SignalSpec(name="hostile.spans", kind="local", bounds=(-1.0, 1.0), make_scorer=_Overlapping)
    manager = PluginManager(entry_points=[])
    register_signal(spec, manager=manager)
    mix = _mixture(manager, [{"name": "hostile.spans"}], beta=1.0, alpha=0.0)
    out = mix.score_batch(fake_batch(["abc", "de"]))
    assert out.local.min().item() == -1.0  # 30 overlapping -1 spans would sum to -30
    assert out.metrics["signals/hostile.spans/clamped_frac"] == 1.0


class _Interrupting:
    """An in-process scorer that raises KeyboardInterrupt on the completion "stop" (plugin code, not a user)."""

    def __init__(self, params):  # type: ignore[no-untyped-def]
        pass

    def score(self, samples):  # type: ignore[no-untyped-def]
        if any(s.completion == "stop" for s in samples):
            raise KeyboardInterrupt
        return [1.0 for _ in samples]


def test_keyboard_interrupt_from_plugin_code_under_botgrpos_handler_costs_its_sample() -> None:
    import signal

    spec = SignalSpec(name="hostile.interrupt", kind="global", bounds=(0.0, 1.0), make_scorer=_Interrupting)
    manager = PluginManager(entry_points=[])
    register_signal(spec, manager=manager)
    mix = _mixture(manager, [{"name": "hostile.interrupt"}], beta=0.0)
    previous = signal.signal(signal.SIGINT, lambda *_: None)  # as engine.interrupt installs during training
    try:
        out = mix.score_batch(fake_batch(["ok", "stop"]))
    finally:
        signal.signal(signal.SIGINT, previous)
    assert out.signals["hostile.interrupt"].failed == [False, True]
    assert "KeyboardInterrupt" in str(out.signals["hostile.interrupt"].results[1])
    # Under Python's default handler it may be the user's Ctrl-C. Installed here: a suite started in the
    # background (SIGINT ignored) has none.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            mix.score_batch(fake_batch(["stop", "again"]))
    finally:
        signal.signal(signal.SIGINT, previous)


class _SignalledInterrupt:
    """Raises the KeyboardInterrupt botgrpo's own SIGINT handler raises (a user's second Ctrl-C)."""

    def __init__(self, params):  # type: ignore[no-untyped-def]
        pass

    def score(self, samples):  # type: ignore[no-untyped-def]
        import signal

        from botgrpo_core.engine.interrupt import StopOnSignal

        handler = StopOnSignal(log=lambda _: None)  # outside the training loop: a signal stops at once
        handler._handle(signal.SIGINT, None)
        return [1.0 for _ in samples]


def test_the_users_stop_from_botgrpos_handler_always_propagates() -> None:
    import signal

    spec = SignalSpec(
        name="hostile.userstop", kind="global", bounds=(0.0, 1.0), make_scorer=_SignalledInterrupt
    )
    manager = PluginManager(entry_points=[])
    register_signal(spec, manager=manager)
    mix = _mixture(manager, [{"name": "hostile.userstop"}], beta=0.0)
    previous = signal.signal(signal.SIGINT, lambda *_: None)  # botgrpo's handler is installed
    try:
        with pytest.raises(KeyboardInterrupt):
            mix.score_batch(fake_batch(["a", "b"]))
    finally:
        signal.signal(signal.SIGINT, previous)
