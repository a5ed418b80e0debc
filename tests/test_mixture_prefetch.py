"""Prefetching scorers (``Scorer.prefetch``): background work that overlaps the other signals' scoring.

The mixture asks every in-process scorer with a ``prefetch`` method to start on exactly the samples its
``score`` will then get (the batch less cached and repeated ones), scores those signals after the
others, and still mixes in config order, so the token rewards are the same as without prefetching.
"""

from __future__ import annotations

import threading
import warnings

import pytest
import torch
from pydantic import BaseModel, ConfigDict

from botgrpo_core.config.models import RewardsConfig
from botgrpo_core.rewards.mixture import RewardMixture
from botgrpo_core.signals import Sample, SignalSpec, Span
from botgrpo_core.signals.manager import PluginManager, register_signal
from botgrpo_core.signals.testing import make_samples

calls: list[tuple[str, tuple[str, ...]]] = []


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid")
    fail_prefetch: bool = False


def _vowel_share(text: str) -> float:
    return sum(c in "aeiou" for c in text) / max(1, len(text))


class _Plain:
    """The reference: the vowel share of each completion, scored in ``score``."""

    def __init__(self, params: _Params) -> None:
        self.params = params

    def score(self, samples: list[Sample]) -> list[float]:
        calls.append(("plain.score", tuple(s.completion for s in samples)))
        return [_vowel_share(s.completion) for s in samples]


class _Prefetching(_Plain):
    """The same values, computed on a thread started by ``prefetch`` and collected by ``score``."""

    def __init__(self, params: _Params) -> None:
        super().__init__(params)
        self._batch: tuple[tuple[str, ...], threading.Thread, list[float]] | None = None

    def prefetch(self, samples: list[Sample]) -> None:
        if self.params.fail_prefetch:
            raise RuntimeError("no background today")
        texts = tuple(s.completion for s in samples)
        calls.append(("prefetch", texts))
        values: list[float] = []
        thread = threading.Thread(target=lambda: values.extend(_vowel_share(t) for t in texts))
        self._batch = (texts, thread, values)
        thread.start()

    def score(self, samples: list[Sample]) -> list[float]:
        texts = tuple(s.completion for s in samples)
        calls.append(("prefetching.score", texts))
        if self._batch is not None:
            batch, thread, values = self._batch
            self._batch = None
            thread.join()
            if batch == texts:
                return values
        return [_vowel_share(t) for t in texts]


class _Words:
    """A local signal: -1 on every word "bad"."""

    def __init__(self, params: _Params) -> None:
        pass

    def score(self, samples: list[Sample]) -> list[list[Span]]:
        calls.append(("words.score", tuple(s.completion for s in samples)))
        out = []
        for s in samples:
            at = s.completion.find("bad")
            out.append([Span(at, at + 3, -1.0)] if at >= 0 else [])
        return out


@pytest.fixture
def manager() -> PluginManager:
    m = PluginManager(entry_points=[])
    for name, kind, bounds, make in (
        ("t.prefetching", "global", (0.0, 1.0), _Prefetching),
        ("t.plain", "global", (0.0, 1.0), _Plain),
        ("t.words", "local", (-1.0, 0.0), _Words),
    ):
        spec = SignalSpec(name=name, kind=kind, bounds=bounds, params_model=_Params, make_scorer=make)
        register_signal(spec, manager=m)
    calls.clear()
    return m


def _mixture(manager: PluginManager, signals: list[dict]) -> RewardMixture:
    return RewardMixture(RewardsConfig(alpha=1.0, beta=0.5, signals=signals), manager)


def test_a_prefetching_signal_starts_first_is_scored_last_and_mixes_as_without(manager) -> None:
    texts = ["a bad idea", "queue", "xyz", "a bad idea"]
    with_prefetch = _mixture(manager, [{"name": "t.prefetching", "weight": 2.0}, {"name": "t.words"}])
    out = with_prefetch.score_batch(make_samples(texts))
    # prefetch got the batch less its repeat; the other signal ran while it worked; score got the same list
    unique = ("a bad idea", "queue", "xyz")
    assert calls == [("prefetch", unique), ("words.score", unique), ("prefetching.score", unique)]
    reference = _mixture(manager, [{"name": "t.plain", "weight": 2.0}, {"name": "t.words"}])
    want = reference.score_batch(make_samples(texts))
    assert torch.equal(out.token_rewards, want.token_rewards)
    assert torch.equal(out.signal_table, want.signal_table)  # columns in config order
    assert list(out.signals) == ["t.prefetching", "t.words"]
    assert out.outcome.tolist() == pytest.approx([2 * _vowel_share(t) for t in texts])


def test_cached_samples_are_neither_prefetched_nor_scored_again(manager) -> None:
    mix = _mixture(manager, [{"name": "t.prefetching"}])
    mix.score_batch(make_samples(["abc", "def"]))
    calls.clear()
    out = mix.score_batch(make_samples(["def", "ghi", "abc"]))
    assert calls == [("prefetch", ("ghi",)), ("prefetching.score", ("ghi",))]
    assert out.signals["t.prefetching"].cached == [True, False, True]
    calls.clear()
    mix.score_batch(make_samples(["abc"]))  # all cached: nothing to start, nothing to score
    assert calls == []


def test_a_prefetch_that_raises_is_ignored_with_one_warning(manager) -> None:
    mix = _mixture(manager, [{"name": "t.prefetching", "params": {"fail_prefetch": True}}])
    with pytest.warns(
        RuntimeWarning, match=r"'t.prefetching'.*prefetch\(\) raised RuntimeError: no background"
    ):
        first = mix.score_batch(make_samples(["aaa", "bbb"]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the warning is given once per signal
        second = mix.score_batch(make_samples(["ccc"]))
    assert first.outcome.tolist() == [1.0, 0.0] and second.outcome.tolist() == [0.0]
    assert [e[0] for e in calls] == ["prefetching.score", "prefetching.score"]


def test_a_signal_in_the_cores_pool_is_not_prefetched(manager) -> None:
    with _mixture(manager, [{"name": "t.prefetching", "workers": 1, "timeout_s": 30}]) as mix:
        out = mix.score_batch(make_samples(["aei", "xyz"]))
        assert out.outcome.tolist() == [1.0, 0.0]
    assert calls == []  # the scorer lives in the worker process: nothing started here
