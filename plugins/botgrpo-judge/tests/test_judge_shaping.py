"""Step shaping (``after_first_error``, botgrpo_core.rewards.shaping) on real ``judge.steps`` spans.

The tiny judge scores each step in logprob mode; ``range`` is shifted by the median raw score so that some
steps get a negative value and some a positive one. Through the core mixture, each token after the end of a
completion's first negative step gets 0 (``zero``) or that step's value (``negative``), and ``keep`` is the
signal's own spans; the scorer's results are the same in all three.
"""

from __future__ import annotations

from pathlib import Path
from statistics import median
from typing import Any

import torch
from judge_data import NO, YES

from botgrpo_core.config.models import RewardsConfig
from botgrpo_core.rewards.mixture import RewardMixture
from botgrpo_core.signals.manager import PluginManager
from botgrpo_core.signals.testing import make_samples

COMPLETIONS = [
    "17+5=22\n22-8=15\n15+1=16\nA: 16",
    "2+2=5\n5+1=6\nA: 6",
    "3*3=9\n9+1=11\n11-1=10\nThe answer is 10.",
    "17+5=22\n22-8=14\nA: 14",
]


def _score(params: dict[str, Any], mode: str) -> Any:
    config = RewardsConfig(
        alpha=0.0, beta=1.0, signals=[{"name": "judge.steps", "params": params, "after_first_error": mode}]
    )
    samples = make_samples(COMPLETIONS, prompt="what is it?")
    with RewardMixture(config, PluginManager(allowlist=["judge"])) as mixture:
        return mixture.score_batch(samples)


def test_after_first_error_on_judge_steps(judge_dir: Path) -> None:
    params: dict[str, Any] = {"model": str(judge_dir), "yes_tokens": YES, "no_tokens": NO}
    raw = [s.value for spans in _score(params, "keep").signals["judge.steps"].results for s in spans]
    mid = median(raw)
    params["range"] = [-1.0 - mid, 1.0 - mid]  # value = raw - median: both signs
    out = {mode: _score(params, mode) for mode in ("keep", "zero", "negative")}
    results = out["keep"].signals["judge.steps"].results
    assert all(o.signals["judge.steps"].results == results for o in out.values())
    shaped_somewhere = False
    for i, spans in enumerate(results):
        keep, zero, negative = (out[m].token_rewards[i] for m in ("keep", "zero", "negative"))
        for span in spans:  # one character a token: token t covers [t, t + 1)
            assert torch.allclose(keep[span.start : span.end], torch.tensor(span.value))
        first = next((s for s in spans if s.value < 0), None)
        if first is None:
            assert torch.equal(zero, keep) and torch.equal(negative, keep)
            continue
        cut = first.end
        assert torch.equal(zero[:cut], keep[:cut]) and torch.equal(negative[:cut], keep[:cut])
        later = [s for s in spans if s.start >= cut]
        for span in later:
            assert torch.all(zero[span.start : span.end] == 0)
            assert torch.allclose(negative[span.start : span.end], torch.tensor(first.value))
        shaped_somewhere |= any(s.value != 0 for s in later)
    assert shaped_somewhere, [[round(s.value, 4) for s in spans] for spans in results]
