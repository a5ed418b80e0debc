"""Bag-of-tokens estimators: ``bot`` (BoT-GRPO, 1/L token weights) and ``token_pool`` (the no-1/L ablation)."""

from __future__ import annotations

import torch
from torch import Tensor

from botgrpo_core.estimators.moments import (
    DEFAULT_EPS,
    _rollout_moments,
    bot_advantages_from_stats,
    group_stats_from_moments,
)
from botgrpo_core.estimators.options import _NAN_CHOICES, _SCOPE_CHOICES, _STD_CHOICES, _choice, _positive

# --------------------------------------------------------------------------------------------------
# Built-in estimators
# --------------------------------------------------------------------------------------------------


def _scoped(scope: str, group_index: Tensor, num_groups: int) -> tuple[Tensor, int]:
    if scope == "batch":
        return torch.zeros_like(group_index), 1
    return group_index, num_groups


def _pooled(
    name: str,
    weighting: str,
    token_rewards: Tensor,
    mask: Tensor,
    group_index: Tensor,
    num_groups: int,
    std: str,
    eps: float,
    scope: str,
    nan_policy: str,
) -> Tensor:
    _choice(name, "std", std, _STD_CHOICES)
    _choice(name, "scope", scope, _SCOPE_CHOICES)
    _choice(name, "nan_policy", nan_policy, _NAN_CHOICES)
    _positive(name, "eps", eps, allow_zero=True)
    group_index, num_groups = _scoped(scope, group_index, num_groups)
    buffer = torch.empty_like(token_rewards)  # the moments' scratch, then the result: one (B, T) allocation
    try:
        moments = _rollout_moments(token_rewards, mask, nan_policy, buffer)  # (B, 3)
    except ValueError as err:
        raise ValueError(f"estimator {name!r}: {err}") from None
    mean, sd, _ = group_stats_from_moments(moments, group_index, num_groups, std=std, weighting=weighting)
    keep = (moments[:, 2] > 0) if nan_policy == "mask" else None
    return bot_advantages_from_stats(
        token_rewards, mask, group_index, mean, sd, eps=eps, keep=keep, out=buffer
    )


def bot(
    token_rewards: Tensor,
    mask: Tensor,
    group_index: Tensor,
    num_groups: int,
    *,
    std: str = "bessel",
    eps: float = DEFAULT_EPS,
    scope: str = "group",
    nan_policy: str = "raise",
) -> Tensor:
    """BoT-GRPO: length-weighted pooled group statistics over the bag of tokens.

    ``w[i, t] = m[i, t] / L_i``, ``mu_g = sum w r / sum w``, ``var_g = sum w (r - mu_g)^2 / sum w``
    (times ``n / (n - 1)`` under ``std="bessel"``), ``A = (r - mu_g) / (sqrt(var_g) + eps)``.
    ``scope="batch"`` pools the whole batch as one group.
    """
    return _pooled(
        "bot", "rollout", token_rewards, mask, group_index, num_groups, std, eps, scope, nan_policy
    )


def token_pool(
    token_rewards: Tensor,
    mask: Tensor,
    group_index: Tensor,
    num_groups: int,
    *,
    std: str = "bessel",
    eps: float = DEFAULT_EPS,
    scope: str = "group",
    nan_policy: str = "raise",
) -> Tensor:
    """Ablation: like ``bot`` but every valid token weighs 1 (no ``1 / L``), so long rollouts dominate."""
    return _pooled(
        "token_pool", "token", token_rewards, mask, group_index, num_groups, std, eps, scope, nan_policy
    )
