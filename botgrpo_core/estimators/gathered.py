"""The one path of the moments-based estimators, on one process or on many.

``bot``, ``token_pool``, ``grpo`` and ``dr_grpo`` are three steps (docs/algorithms.md):

1. per-rollout moments ``[mean_t r, mean_t r^2, L]`` (:func:`~.moments.rollout_moments`), ``(B, 3)``;
2. per-rollout coefficients from the moments alone: the estimator's ``CoefficientsFn`` (registry), where
   its group statistics, ``scope``, ``std`` and ``eps`` live;
3. ``A[i, t] = scale[i] * r[i, t] + shift[i]`` on valid tokens (:func:`~.moments.affine_advantages`).

:func:`estimate` runs them on one batch (the body of the built-ins). :func:`gathered_advantages` runs
step 2 on the moments gathered from every process and step 3 on this process's rows, which is all a
distributed trainer needs; estimators whose statistics need every token reward (``process``, ``pure``,
plugins) get the gathered ``(N, T)`` batch and :func:`~.compute.compute_advantages` instead.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import torch
from torch import Tensor

from botgrpo_core.estimators.compute import (
    _validate_inputs,
    compute_advantages,
    resolve_options,
    without_dropped_rollouts,
)
from botgrpo_core.estimators.moments import _rollout_moments, affine_advantages
from botgrpo_core.estimators.options import _NAN_CHOICES, _bad_rows_error, _choice
from botgrpo_core.estimators.registry import CoefficientsFn, estimator_info


def estimate(
    name: str,
    coefficients: CoefficientsFn,
    token_rewards: Tensor,
    mask: Tensor,
    group_index: Tensor,
    num_groups: int,
    nan_policy: str,
    **options: Any,
) -> Tensor:
    """A moments-based estimator on one batch: moments, ``coefficients(moments, ...)``, affine map.

    :param name: the estimator's name, for messages. :param options: ``coefficients``' options.
    :returns: ``(B, T)`` in ``token_rewards``' dtype, 0 on padding (one ``(B, T)`` allocation).
    """
    _choice(name, "nan_policy", nan_policy, _NAN_CHOICES)
    buffer = torch.empty_like(token_rewards)  # the moments' scratch, then the result
    try:
        moments = _rollout_moments(token_rewards, mask, nan_policy, buffer)  # (B, 3)
    except ValueError as err:
        raise ValueError(f"estimator {name!r}: {err}") from None
    scale, shift = coefficients(moments, group_index, num_groups, **options)  # (B,) each
    keep = (moments[:, 2] > 0) if nan_policy == "mask" else None
    return affine_advantages(token_rewards, mask, scale, shift, keep=keep, out=buffer)


def gathered_advantages(
    estimator: str,
    options: Mapping[str, Any],
    moments: Tensor,
    token_rewards: Tensor,
    mask: Tensor,
    *,
    start: int,
    group_size: int,
    gather_tokens: Callable[[], tuple[Tensor, Tensor]],
) -> Tensor:
    """This process's ``(B, T)`` float32 advantages in a batch spread over processes.

    The gathered batch has ``N`` rollouts; this process holds rows ``[start, start + B)`` and groups are
    consecutive blocks of ``group_size`` rows (TRL's layout). The result equals those rows of
    ``compute_advantages(estimator, *without_dropped_rollouts(estimator, r, m, options),
    group_size=group_size)`` on the concatenated batch (tests/test_gathered_advantages.py), with the
    same defaults, option checks and errors.

    :param estimator: a registered name; :param options: its options (``algorithm.estimator_options``).
    :param moments: ``(N, 3)`` ``rollout_moments(r, m, nan_policy="mask")`` of every process's rows, in
        process order (e.g. ``accelerator.gather``): the only exchange for ``statistics`` moments/outcome.
    :param token_rewards: ``(B, T)`` this process's rows (NaN on dropped rollouts); :param mask: ``(B, T)``.
    :param gather_tokens: ``() -> (rewards (N, T'), mask (N, T'))`` of every process, padded to a common
        ``T' >= T``; called only for estimators with ``statistics == "tokens"``.
    :raises ValueError: a bad option (naming the estimator), or ``nan_policy: raise`` and a dropped
        rollout among this process's rows (naming its row in the gathered batch).
    """
    info = estimator_info(estimator)
    n, batch = moments.shape[0], token_rewards.shape[0]
    group_index = torch.arange(n, device=moments.device) // group_size  # (N,)
    rows = slice(start, start + batch)
    if info.statistics == "tokens":
        all_rewards, all_mask = gather_tokens()
        all_rewards, all_mask, opts = without_dropped_rollouts(estimator, all_rewards, all_mask, options)
        full = compute_advantages(estimator, all_rewards, all_mask, group_ids=group_index, **opts)
        return full[rows, : token_rewards.shape[1]]
    r, mask = _validate_inputs(token_rewards, mask)  # as compute_advantages: half -> float32, bool mask
    r, mask, opts = without_dropped_rollouts(estimator, r, mask, options)
    opts = resolve_options(estimator, info.fn, opts)
    nan_policy = opts.pop("nan_policy")
    _choice(estimator, "nan_policy", nan_policy, _NAN_CHOICES)
    local = moments[rows]  # (B, 3)
    if nan_policy == "raise":
        _raise_on_dropped(estimator, local, mask, start, n)
    num_groups = -(-n // group_size)
    scale, shift = info.coefficients_fn(moments, group_index, num_groups, **opts)  # (N,) each
    out = affine_advantages(
        r, mask, None if scale is None else scale[rows], shift[rows], keep=local[:, 2] > 0
    )
    return out if out.dtype == torch.float32 else out.float()


def _raise_on_dropped(estimator: str, local: Tensor, mask: Tensor, start: int, n: int) -> None:
    """``nan_policy: raise``: a row with valid tokens whose moments are empty had a non-finite reward
    (``rollout_moments(..., nan_policy="mask")`` zeroed it); raise as ``compute_advantages`` would."""
    dropped = (local[:, 2] == 0) & mask.any(dim=1).to(local.device)  # (B,)
    if bool(dropped.any()):
        bad = torch.zeros(n, dtype=torch.bool, device=local.device)
        bad[start : start + local.shape[0]] = dropped
        raise ValueError(f"estimator {estimator!r}: {_bad_rows_error('rollout_moments', bad)}")


def group_keep(nonzero: Tensor, group_size: int) -> Tensor:
    """``(N,)`` bool: the rollout's group (a block of ``group_size`` prompt rollouts, whatever the
    estimator's ``scope``) has a rollout with a nonzero advantage (DAPO's dynamic sampling keeps it).

    :param nonzero: ``(N,)`` bool, rollout ``i`` has some nonzero advantage (gathered over processes).
    """
    n = nonzero.shape[0]
    group_index = torch.arange(n, device=nonzero.device) // group_size  # (N,)
    per_group = torch.zeros(-(-n // group_size), dtype=torch.long, device=nonzero.device)
    per_group.index_add_(0, group_index, nonzero.long())  # (N / G,) rollouts with a learning signal
    return per_group[group_index] > 0
