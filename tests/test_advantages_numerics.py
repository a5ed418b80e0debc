"""Numerical edge cases of the estimators (issue 17's fuzz findings), each against the float64 references.

Empty time axis, rewards near float32's range, a tiny PURE temperature, rewards that carry autograd, and a
large mean over a small spread all give defined, finite advantages that match the float64 formulas.
"""

from __future__ import annotations

import pytest
import torch
from reference_impl import bot_ref, process_ref, pure_ref

from botgrpo_core.estimators.compute import compute_advantages
from botgrpo_core.estimators.registry import BUILTIN_ESTIMATORS


def _ragged(rewards: torch.Tensor, mask: torch.Tensor) -> list[list[float]]:
    return [row[m].double().tolist() for row, m in zip(rewards, mask, strict=True)]


def _padded(ragged: list[list[float]], T: int) -> torch.Tensor:
    return torch.tensor([row + [0.0] * (T - len(row)) for row in ragged], dtype=torch.float64)


@pytest.mark.parametrize("name", sorted(BUILTIN_ESTIMATORS))
def test_no_tokens_gives_an_empty_result(name: str) -> None:
    out = compute_advantages(name, torch.zeros(4, 0), torch.zeros(4, 0, dtype=torch.bool), group_size=2)
    assert out.shape == (4, 0) and out.dtype == torch.float32


@pytest.mark.parametrize("scale", [3e19, 1e25])
def test_rewards_near_float32_range_give_the_float64_advantages(scale: float) -> None:
    """|r| above ~1.8e19 overflowed the float32 sum of squares ('non-finite rewards')."""
    base = torch.tensor([[1.0, -2.0, 0.5], [3.0, 1.0, -1.0], [0.0, 2.0, 2.0], [-1.0, -1.0, 4.0]])
    rewards = base * scale
    mask = torch.ones_like(rewards, dtype=torch.bool)
    got = compute_advantages("bot", rewards, mask, group_size=2).double()
    want = _padded(bot_ref(_ragged(rewards, mask), [0, 0, 1, 1]), 3)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("scale", [1.0, 3e19, 1e37])
def test_process_is_scale_free_up_to_float32_range(scale: float) -> None:
    """Process supervision normalises step rewards, so scaling them changes nothing; past |r| ~1.8e19 the
    float32 sum of squares overflowed and every advantage came out 0."""
    base = torch.tensor([[1.0, -2.0, 0.5], [3.0, 1.0, -1.0], [0.0, 2.0, 2.0], [-1.0, -1.0, 4.0]])
    rewards = base * scale
    mask = torch.ones_like(rewards, dtype=torch.bool)
    got = compute_advantages("process", rewards, mask, group_size=2).double()
    want = _padded(process_ref(_ragged(rewards, mask), [0, 0, 1, 1], eps=0.0), 3)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    unscaled = compute_advantages("process", base, mask, group_size=2, eps=0.0).double()
    torch.testing.assert_close(got, unscaled, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("temperature", "magnitude"), [(1e-45, 1.0), (0.1, 1e30), (1e-30, 3e38)])
def test_pure_is_finite_at_tiny_temperatures_and_huge_rewards(temperature: float, magnitude: float) -> None:
    """-r / T overflowed float32 (inf - inf = NaN in the softmax); T -> 0 is the min-form limit."""
    rewards = torch.tensor([[1.0, -0.5, 0.25, 0.0], [0.5, 0.5, -1.0, 1.0]]) * magnitude
    mask = torch.ones_like(rewards, dtype=torch.bool)
    got = compute_advantages("pure", rewards, mask, group_size=2, temperature=temperature, baseline="none")
    assert torch.isfinite(got).all()
    # the limit: all the weight on the rollout's smallest step reward, returned at and before that step
    for row, adv in zip(rewards.double().tolist(), got.double().tolist(), strict=True):
        k = min(range(len(row)), key=row.__getitem__)
        want = [row[k] if t <= k else 0.0 for t in range(len(row))]
        assert adv == pytest.approx(want, rel=1e-6)
    # the float64 reference at the same temperature (it subtracts each row's minimum, so it stays finite)
    ref = pure_ref(
        _ragged(rewards, mask), [0, 0], ends=[[True] * 4] * 2, temperature=temperature, baseline="none"
    )
    assert torch.allclose(got.double(), _padded(ref, 4), rtol=1e-6, atol=0), (got, ref)


@pytest.mark.parametrize("name", sorted(BUILTIN_ESTIMATORS))
def test_rewards_that_require_grad_are_treated_as_constants(name: str) -> None:
    rewards = torch.tensor([[1.0, 0.0], [0.0, 2.0]], requires_grad=True)
    mask = torch.ones(2, 2, dtype=torch.bool)
    out = compute_advantages(name, rewards * 1.0, mask, group_size=2)
    assert not out.requires_grad and torch.isfinite(out).all()


@pytest.mark.parametrize("name", ["bot", "token_pool"])
def test_large_mean_small_spread_keeps_float32_accuracy(name: str) -> None:
    """At mean/spread 1e7, r * s + shift rounded r * s to float32 first: errors up to 0.74 (unit-std scale).

    What is left (~2e-4 here) is the float64 moments' own limit: ``var = E[r^2] - mu^2`` cancels to a
    relative error of about ``(mean / spread)^2 * 1e-16``.
    """
    gen = torch.Generator().manual_seed(0)
    spread = torch.randint(-8, 9, (8, 16), generator=gen).float()  # integers: exact at 1e7 in float32
    rewards = 1e7 + spread
    mask = torch.ones_like(rewards, dtype=torch.bool)
    got = compute_advantages(name, rewards, mask, group_size=4).double()
    want = _padded(
        bot_ref(_ragged(rewards, mask), [i // 4 for i in range(8)], token_weights=name == "token_pool"), 16
    )
    assert (got - want).abs().max().item() < 1e-3
