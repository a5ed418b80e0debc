"""Step shaping (``after_first_error``, botgrpo_core.rewards.shaping) on real ``sympy.steps`` spans, through the core
mixture (the checker's worker process) and the ``bot`` advantages, against a hand-computed case."""

from __future__ import annotations

from math import sqrt

import torch

from botgrpo_core.config.models import RewardsConfig
from botgrpo_core.estimators.compute import compute_advantages
from botgrpo_core.rewards.mixture import RewardMixture
from botgrpo_core.signals.manager import PluginManager
from botgrpo_core.signals.testing import make_samples

#: A: the second step is wrong (2+2=5), the third is right given it (5+1=6). B: every step right.
WRONG, RIGHT = "1+1=2\n2+2=5\n5+1=6", "1+1=2\n2+2=4\n4+1=5"


def _rewards(mode: str) -> tuple[torch.Tensor, torch.Tensor, list[list[float]]]:
    config = RewardsConfig(
        alpha=0.0,
        beta=1.0,
        signals=[
            {
                "name": "sympy.steps",
                "workers": 1,
                "after_first_error": mode,
                "params": {"step_split": "lines"},
            }
        ],
    )
    with RewardMixture(config, PluginManager(allowlist=["sympy"])) as mixture:
        out = mixture.score_batch(make_samples([WRONG, RIGHT]))
    spans = [[s.value for s in r] for r in out.signals["sympy.steps"].results]
    return out.token_rewards, out.mask, spans


def test_after_first_error_on_sympy_steps_and_the_advantages() -> None:
    """('keep' and 'negative' on the same rule: tests/test_shaping.py; one mixture here, a worker start costs.)

    One character a token, 17 tokens each, "\\n" in no span.

    zero: A = 1 x5, 0, -1 x5, 0, 0 x5 (the +1 of 5+1=6 dropped): mean 0, mean of squares 10/17;
    B = 1 x5, 0, 1 x5, 0, 1 x5: mean 15/17 = mean of squares. mu = 15/34, E[r^2] = 25/34,
    var = 25/34 - 225/1156 = 625/1156, Bessel (n = 2): 1250/1156, std = sqrt(1250)/34, so
    A[i,t] = (r - 15/34) * 34 / sqrt(1250) = (34 r - 15) / sqrt(1250).
    """
    zero, mask, spans = _rewards("zero")
    assert spans == [[1.0, -1.0, 1.0], [1.0, 1.0, 1.0]]  # the checker's own spans: 5+1=6 holds
    assert zero[0].tolist() == [1] * 5 + [0] + [-1] * 5 + [0] + [0] * 5
    assert zero[1].tolist() == [1] * 5 + [0] + [1] * 5 + [0] + [1] * 5
    adv = compute_advantages("bot", zero, mask, group_size=2, eps=0.0)
    expected = (34 * zero - 15) / sqrt(1250)
    assert torch.allclose(adv, expected, atol=1e-6)
