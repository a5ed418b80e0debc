"""``compute_advantages``: the public entry point (input checks, group index, option checks, registry)."""

from __future__ import annotations

import inspect
from typing import Any

import torch
from torch import Tensor

from botgrpo_core.estimators.registry import EstimatorFn, _accepts, estimator_info, get_estimator


def without_dropped_rollouts(
    name: str, rewards: Tensor, mask: Tensor, options: dict[str, Any]
) -> tuple[Tensor, Tensor, dict[str, Any]]:
    """Hand rollouts dropped by ``on_error: nan`` (NaN token rewards) to the estimator ``name``.

    An estimator that takes ``nan_policy`` gets ``"mask"`` (unless the options set it): it leaves them
    out of the group statistics. One that does not sees them as empty rollouts (masked out, reward 0).
    Training and ``botgrpo score`` both go through here, so they treat dropped rollouts alike.

    :param rewards: ``(B, T)`` token rewards; :param mask: ``(B, T)`` bool.
    :returns: ``(rewards, mask, options)`` to pass on to :func:`compute_advantages`.
    """
    options = dict(options)
    if _accepts(get_estimator(name), "nan_policy"):
        options.setdefault("nan_policy", "mask")
        return rewards, mask, options
    mask = mask & ~torch.isnan(rewards).any(dim=1, keepdim=True)
    return torch.where(mask, rewards, 0.0), mask, options


# --------------------------------------------------------------------------------------------------
# Public entry point
# --------------------------------------------------------------------------------------------------


def compute_advantages(
    estimator: str,
    token_rewards: Tensor,
    mask: Tensor,
    *,
    group_size: int | None = None,
    group_ids: Tensor | None = None,
    **options: Any,
) -> Tensor:
    """Advantages ``(B, T)`` float32 for token rewards ``(B, T)`` under a registered estimator.

    :param estimator: a registered name (``bot``, ``grpo``, ``dr_grpo``, ``process``, ``pure``,
        ``token_pool`` or a plugin's).
    :param token_rewards: ``(B, T)`` floating tensor; padding values are ignored (may be anything).
    :param mask: ``(B, T)`` completion mask, bool or 0/1 numbers; nonzero marks a valid token.
    :param group_size: rollouts of one prompt are contiguous blocks of this size (``B % group_size == 0``).
    :param group_ids: ``(B,)`` integer group label per rollout, any values, contiguous or not.
        Give exactly one of ``group_size`` and ``group_ids``.
    :param options: the estimator's keyword options (e.g. ``std="population"`` for ``bot``).
    :returns: ``(B, T)`` float32, exactly 0 on padding.
    :raises ValueError: bad shapes, grouping, option names or values (the message says how to fix it).
    """
    entry = estimator_info(estimator)
    r, m = _validate_inputs(token_rewards, mask)
    group_index, num_groups = _group_index(r.shape[0], group_size, group_ids, r.device)
    _check_options(estimator, entry.fn, options)
    if r.shape[1] == 0:  # no tokens: nothing to credit (the estimator would index column 0)
        return r.new_zeros(r.shape, dtype=torch.float32)
    out = entry.fn(r, m, group_index, num_groups, **options)
    if entry.builtin:
        return out if out.dtype == torch.float32 else out.float()
    return _check_plugin_output(estimator, out, m)


def _validate_inputs(token_rewards: Tensor, mask: Tensor) -> tuple[Tensor, Tensor]:
    if not isinstance(token_rewards, Tensor) or not isinstance(mask, Tensor):
        raise TypeError("token_rewards and mask must be torch tensors")
    if token_rewards.dim() != 2:
        raise ValueError(f"token_rewards must be (B, T), got shape {tuple(token_rewards.shape)}")
    if mask.shape != token_rewards.shape:
        raise ValueError(
            f"mask shape {tuple(mask.shape)} != token_rewards shape {tuple(token_rewards.shape)}; "
            "pass the completion mask aligned with the token rewards"
        )
    if not token_rewards.is_floating_point():
        raise ValueError(f"token_rewards must be floating point, got {token_rewards.dtype}")
    r = token_rewards.detach()  # advantages are constants of the surrogate: never differentiate through them
    if r.dtype in (torch.float16, torch.bfloat16):
        r = r.float()  # statistics in half precision lose the spread; float32 is the working type
    m = mask if mask.dtype == torch.bool else mask != 0
    return r, m


def _group_index(
    batch: int, group_size: int | None, group_ids: Tensor | None, device: torch.device
) -> tuple[Tensor, int]:
    if (group_size is None) == (group_ids is None):
        raise ValueError(
            "give exactly one of group_size (contiguous groups) and group_ids (a label per rollout)"
        )
    if group_size is not None:
        if isinstance(group_size, bool) or not isinstance(group_size, int) or group_size < 1:
            raise ValueError(f"group_size must be a positive int, got {group_size!r}")
        if batch % group_size:
            raise ValueError(
                f"batch of {batch} rollouts is not a multiple of group_size={group_size}; "
                "pass group_ids for uneven groups"
            )
        return torch.arange(batch, device=device) // group_size, batch // group_size
    assert group_ids is not None
    if not isinstance(group_ids, Tensor) or group_ids.shape != (batch,):
        shape = tuple(group_ids.shape) if isinstance(group_ids, Tensor) else type(group_ids).__name__
        raise ValueError(f"group_ids must be a (B,) = ({batch},) tensor, got {shape}")
    if group_ids.is_floating_point() or group_ids.is_complex():
        raise ValueError(f"group_ids must hold integers, got {group_ids.dtype}")
    uniq, inverse = torch.unique(group_ids.to(device), return_inverse=True)
    return inverse, int(uniq.numel())


def _check_options(name: str, fn: EstimatorFn, options: dict[str, Any]) -> None:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):  # builtins / C functions: let the call decide
        return
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return
    accepted = [n for n, p in params.items() if p.kind is inspect.Parameter.KEYWORD_ONLY]
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise ValueError(
            f"estimator {name!r} got unknown option(s) {', '.join(map(repr, unknown))}; "
            f"it accepts: {', '.join(accepted) or '(no options)'}"
        )


def resolve_options(name: str, fn: EstimatorFn, options: dict[str, Any]) -> dict[str, Any]:
    """``options`` with the defaults of ``fn``'s keyword-only parameters filled in (the defaults' one
    home is the estimator's signature); unknown names are rejected as by :func:`compute_advantages`."""
    _check_options(name, fn, options)
    params = inspect.signature(fn).parameters.values()
    defaults = {p.name: p.default for p in params if p.kind is p.KEYWORD_ONLY and p.default is not p.empty}
    return {**defaults, **options}


def _check_plugin_output(name: str, out: Any, m: Tensor) -> Tensor:
    if not isinstance(out, Tensor) or out.shape != m.shape:
        shape = tuple(out.shape) if isinstance(out, Tensor) else type(out).__name__
        raise ValueError(f"estimator {name!r} returned {shape}, expected a (B, T) = {tuple(m.shape)} tensor")
    out = torch.where(m, out.float(), 0.0)  # enforce the contract: 0 on padding
    if not bool(torch.isfinite(out).all()):
        raise ValueError(f"estimator {name!r} returned non-finite advantages on valid tokens")
    return out
