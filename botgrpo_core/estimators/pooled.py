"""Bag-of-tokens estimators: ``bot`` (BoT-GRPO, 1/L token weights) and ``token_pool`` (the no-1/L ablation).

Each is its coefficients from the per-rollout moments (``bot_coefficients``, ``token_pool_coefficients``)
run through :func:`~botgrpo_core.estimators.gathered.estimate`; a distributed trainer runs the same
coefficients on the gathered moments (:func:`~botgrpo_core.estimators.gathered.gathered_advantages`).
"""

from __future__ import annotations

import torch
from torch import Tensor

from botgrpo_core.estimators.gathered import estimate
from botgrpo_core.estimators.moments import DEFAULT_EPS, group_stats_from_moments, inverse_std
from botgrpo_core.estimators.options import _SCOPE_CHOICES, _STD_CHOICES, _choice, _positive


def _pooled_coefficients(
    name: str,
    weighting: str,
    moments: Tensor,
    group_index: Tensor,
    num_groups: int,
    std: str,
    eps: float,
    scope: str,
) -> tuple[Tensor, Tensor]:
    """``scale = 1 / (std_g + eps)``, ``shift = -mu_g * scale`` per rollout: ``A = (r - mu_g) / (std_g + eps)``."""
    _choice(name, "std", std, _STD_CHOICES)
    _choice(name, "scope", scope, _SCOPE_CHOICES)
    _positive(name, "eps", eps, allow_zero=True)
    if scope == "batch":  # the whole batch is one group
        group_index, num_groups = torch.zeros_like(group_index), 1
    mean, sd, _ = group_stats_from_moments(moments, group_index, num_groups, std=std, weighting=weighting)
    gi = group_index.to(mean.device)
    scale = inverse_std(sd, eps)[gi]  # (N,)
    return scale, -mean[gi] * scale


def bot_coefficients(
    moments: Tensor, group_index: Tensor, num_groups: int, *, std: str, eps: float, scope: str
) -> tuple[Tensor, Tensor]:
    """``bot``'s ``CoefficientsFn``: every non-empty rollout weighs 1 (token weight ``1 / L_i``)."""
    return _pooled_coefficients("bot", "rollout", moments, group_index, num_groups, std, eps, scope)


def token_pool_coefficients(
    moments: Tensor, group_index: Tensor, num_groups: int, *, std: str, eps: float, scope: str
) -> tuple[Tensor, Tensor]:
    """``token_pool``'s ``CoefficientsFn``: every valid token weighs 1."""
    return _pooled_coefficients("token_pool", "token", moments, group_index, num_groups, std, eps, scope)


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
    return estimate(
        "bot",
        bot_coefficients,
        token_rewards,
        mask,
        group_index,
        num_groups,
        nan_policy,
        std=std,
        eps=eps,
        scope=scope,
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
    return estimate(
        "token_pool",
        token_pool_coefficients,
        token_rewards,
        mask,
        group_index,
        num_groups,
        nan_policy,
        std=std,
        eps=eps,
        scope=scope,
    )
