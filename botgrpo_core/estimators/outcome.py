"""Outcome-level baselines: GRPO and Dr. GRPO (one advantage per rollout, broadcast to its tokens)."""

from __future__ import annotations

import torch
from torch import Tensor

from botgrpo_core.estimators.moments import _rollout_moments, group_stats_from_moments
from botgrpo_core.estimators.options import _NAN_CHOICES, _STD_CHOICES, _choice, _positive

TRL_EPS = 1e-4


def _outcomes(name: str, token_rewards: Tensor, mask: Tensor, nan_policy: str, scratch: Tensor) -> Tensor:
    """``(B, 3)`` outcome moments ``[R_i, R_i^2, L_i]`` with ``R_i = mean_t r[i, t]``."""
    _choice(name, "nan_policy", nan_policy, _NAN_CHOICES)
    try:
        mom = _rollout_moments(token_rewards, mask, nan_policy, scratch)
    except ValueError as err:
        raise ValueError(f"estimator {name!r}: {err}") from None
    outcome = mom[:, 0]
    return torch.stack([outcome, outcome * outcome, mom[:, 2]], dim=1)


def _broadcast(row_adv: Tensor, mask: Tensor, out: Tensor) -> Tensor:
    """``(B, T)``: ``row_adv[i]`` on the valid tokens of row ``i``, 0 elsewhere, written into ``out``."""
    return torch.where(mask, row_adv.to(out.dtype)[:, None], out.new_zeros(()), out=out)


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
    _choice("grpo", "std", std, _STD_CHOICES)
    _positive("grpo", "eps", eps, allow_zero=True)
    buffer = torch.empty_like(token_rewards)  # scratch of the moments, then the result
    mom = _outcomes("grpo", token_rewards, mask, nan_policy, buffer)
    mean, sd, _ = group_stats_from_moments(mom, group_index, num_groups, std=std)
    scale = torch.where(sd > 0, 1.0 / (sd + eps), 0.0)[group_index]  # (B,)
    row_adv = torch.where(mom[:, 2] > 0, (mom[:, 0] - mean[group_index]) * scale, 0.0)  # (B,)
    return _broadcast(row_adv, mask, buffer)


def dr_grpo(
    token_rewards: Tensor,
    mask: Tensor,
    group_index: Tensor,
    num_groups: int,
    *,
    nan_policy: str = "raise",
) -> Tensor:
    """Dr. GRPO (Liu et al. 2025): ``A_i = R_i - mean_g R``, no std division; ``R_i = mean_t r``."""
    buffer = torch.empty_like(token_rewards)  # scratch of the moments, then the result
    mom = _outcomes("dr_grpo", token_rewards, mask, nan_policy, buffer)
    mean, _, _ = group_stats_from_moments(mom, group_index, num_groups, std="population")
    row_adv = torch.where(mom[:, 2] > 0, mom[:, 0] - mean[group_index], 0.0)  # (B,)
    return _broadcast(row_adv, mask, buffer)
