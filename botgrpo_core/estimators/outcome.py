"""Outcome-level baselines: GRPO and Dr. GRPO (one advantage per rollout, broadcast to its tokens).

Each is its coefficients from the per-rollout moments (``grpo_coefficients``, ``dr_grpo_coefficients``:
``scale = None``, ``shift = A_i``) run through :func:`~botgrpo_core.estimators.gathered.estimate`.
"""

from __future__ import annotations

import torch
from torch import Tensor

from botgrpo_core.estimators.gathered import estimate
from botgrpo_core.estimators.moments import group_stats_from_moments, inverse_std
from botgrpo_core.estimators.options import _STD_CHOICES, _choice, _positive

TRL_EPS = 1e-4
"""TRL 1.16 ``GRPOTrainer`` divides by ``std + 1e-4``; the ``grpo`` estimator uses the same default."""


def _outcomes(moments: Tensor) -> tuple[Tensor, Tensor]:
    """``(B, 3)`` outcome moments ``[R_i, R_i^2, L_i]`` with ``R_i = mean_t r[i, t]``, and ``R`` ``(B,)``."""
    outcome = moments[:, 0]
    return torch.stack([outcome, outcome * outcome, moments[:, 2]], dim=1), outcome


def grpo_coefficients(
    moments: Tensor, group_index: Tensor, num_groups: int, *, eps: float, std: str
) -> tuple[None, Tensor]:
    """``grpo``'s ``CoefficientsFn``: ``A_i = (R_i - mean_g R) / (std_g R + eps)``, 0 for empty rollouts."""
    _choice("grpo", "std", std, _STD_CHOICES)
    _positive("grpo", "eps", eps, allow_zero=True)
    mom, outcome = _outcomes(moments)
    mean, sd, _ = group_stats_from_moments(mom, group_index, num_groups, std=std)
    gi = group_index.to(mean.device)
    return None, torch.where(mom[:, 2] > 0, (outcome - mean[gi]) * inverse_std(sd, eps)[gi], 0.0)


def dr_grpo_coefficients(moments: Tensor, group_index: Tensor, num_groups: int) -> tuple[None, Tensor]:
    """``dr_grpo``'s ``CoefficientsFn``: ``A_i = R_i - mean_g R``, 0 for empty rollouts."""
    mom, outcome = _outcomes(moments)
    mean, _, _ = group_stats_from_moments(mom, group_index, num_groups, std="population")
    return None, torch.where(mom[:, 2] > 0, outcome - mean[group_index.to(mean.device)], 0.0)


def grpo(
    token_rewards: Tensor,
    mask: Tensor,
    group_index: Tensor,
    num_groups: int,
    *,
    eps: float = TRL_EPS,
    std: str = "bessel",
    nan_policy: str = "raise",
) -> Tensor:
    """GRPO outcome advantage (Shao et al. 2024), as TRL 1.16 computes it.

    Outcome ``R_i = mean_t r[i, t]`` (with ``beta = 0`` token rewards are constant per row,
    ``alpha * R_i``, so this is the outcome itself). ``A_i = (R_i - mean_g R) / (std_g R + eps)`` with
    the Bessel-corrected std (``torch.std``'s default, TRL's ``nanstd``) and ``eps = 1e-4`` added to the
    std, as in TRL; every valid token of rollout ``i`` gets ``A_i``. Empty rollouts carry no outcome and
    are left out; a group without spread (or with one non-empty rollout) gets 0.
    """
    return estimate(
        "grpo", grpo_coefficients, token_rewards, mask, group_index, num_groups, nan_policy, eps=eps, std=std
    )


def dr_grpo(
    token_rewards: Tensor,
    mask: Tensor,
    group_index: Tensor,
    num_groups: int,
    *,
    nan_policy: str = "raise",
) -> Tensor:
    """Dr. GRPO (Liu et al. 2025): ``A_i = R_i - mean_g R``, no std division; ``R_i = mean_t r``."""
    return estimate("dr_grpo", dr_grpo_coefficients, token_rewards, mask, group_index, num_groups, nan_policy)
