"""Advantage estimators: bag-of-tokens (BoT-GRPO) and the GRPO-family baselines.

Every estimator is a pure function over torch tensors with one signature (:data:`EstimatorFn`)::

    fn(token_rewards (B, T) float, mask (B, T) bool, group_index (B,) long, num_groups, **options)
        -> advantages (B, T), 0 on padding

and is looked up by name in a registry, so a run file (``algorithm.estimator``) or a plugin
(``botgrpo_register_estimators``) can pick or add one. :func:`compute_advantages` is the public entry
point: it validates inputs, turns ``group_size`` / ``group_ids`` into ``group_index`` and returns
float32 advantages.

Notation (see docs/algorithms.md): rollout ``i`` of group ``g``, mask ``m[i, t]``, length
``L_i = sum_t m[i, t]``, token reward ``r[i, t]``. A rollout with ``L_i = 0`` is *empty*.

Speed: the statistics need only per-rollout moments, so ``bot`` is two passes over ``(B, T)`` (one
reduction, one elementwise) plus ``(B,)``/``(G,)`` work with ``index_add_``; no Python loop over rows or
tokens and no ``(B, T)`` float64 temporary (``benchmarks/aggregation.py`` measures it).
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

__all__ = [
    "EstimatorFn",
    "available_estimators",
    "bot_advantages_from_stats",
    "compute_advantages",
    "estimator_is_outcome_level",
    "get_estimator",
    "group_stats_from_moments",
    "register_estimator",
    "rollout_moments",
]

EstimatorFn = Callable[..., Tensor]
"""``fn(token_rewards (B, T) float, mask (B, T) bool, group_index (B,) long, num_groups: int, **options)
-> (B, T)`` advantages, 0 on padding. Options are keyword-only and come from the run file."""

DEFAULT_EPS = 1e-6
"""Added to the group std before dividing (``A = (r - mu) / (std + eps)``). Small enough that a group
with a real spread is normalised to unit variance to ~1e-6 relative; groups with no spread never reach
the division (their advantage is exactly 0), so eps only guards near-degenerate spreads."""

TRL_EPS = 1e-4
"""TRL 1.16 ``GRPOTrainer`` divides by ``std + 1e-4``; the ``grpo`` estimator uses the same default."""

_STD_CHOICES = ("bessel", "population")
_NAN_CHOICES = ("raise", "mask")
_SCOPE_CHOICES = ("group", "batch")

# float64 rounding level of E[r^2] below which the cancellation E[r^2] - mu^2 is noise, not spread.
_VAR_NOISE = 8 * torch.finfo(torch.float64).eps


# --------------------------------------------------------------------------------------------------
# Registry
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Entry:
    fn: EstimatorFn
    outcome_level: bool  # one advantage per rollout (fits a sequence-level ratio)
    builtin: bool  # built-ins are trusted to return float32, 0 on padding


_REGISTRY: dict[str, _Entry] = {}


def register_estimator(
    name: str, fn: EstimatorFn, *, overwrite: bool = False, outcome_level: bool = False
) -> None:
    """Register an advantage estimator under ``name``.

    :param name: the name a run file uses (``algorithm.estimator``).
    :param fn: an :data:`EstimatorFn`.
    :param overwrite: replace an existing registration instead of raising.
    :param outcome_level: ``True`` when ``fn`` gives every token of a rollout the same advantage (like
        ``grpo``); only such estimators may be paired with a sequence-level (GSPO) ratio.
    :raises ValueError: ``name`` is already registered and ``overwrite`` is false, or ``name`` is empty.
    """
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"estimator name must be a non-empty string, got {name!r}")
    if not callable(fn):
        raise TypeError(f"estimator {name!r}: fn must be callable, got {type(fn).__name__}")
    if name in _REGISTRY and not overwrite:
        owner = getattr(_REGISTRY[name].fn, "__module__", "?")
        raise ValueError(
            f"estimator {name!r} is already registered (by {owner}); choose another name, "
            "or pass overwrite=True to replace it"
        )
    _REGISTRY[name] = _Entry(fn=fn, outcome_level=outcome_level, builtin=False)


def _register_builtin(name: str, fn: EstimatorFn, *, outcome_level: bool = False) -> None:
    _REGISTRY[name] = _Entry(fn=fn, outcome_level=outcome_level, builtin=True)


def available_estimators() -> list[str]:
    """Names of all registered estimators, sorted."""
    return sorted(_REGISTRY)


def _lookup(name: str) -> _Entry:
    try:
        return _REGISTRY[name]
    except KeyError:
        close = difflib.get_close_matches(str(name), _REGISTRY, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise KeyError(
            f"unknown advantage estimator {name!r}.{hint} Available: {', '.join(available_estimators())}. "
            "Set algorithm.estimator to one of these, or register one with "
            "botgrpo_core.advantages.register_estimator / the botgrpo_register_estimators hook."
        ) from None


def get_estimator(name: str) -> EstimatorFn:
    """The estimator function registered as ``name``.

    :raises KeyError: unknown name; the message lists the available names and the nearest match.
    """
    return _lookup(name).fn


def _accepts(fn: Callable[..., Any], option: str) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return True
    return option in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


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


def estimator_is_outcome_level(name: str) -> bool:
    """Whether ``name`` gives one advantage per rollout (safe with a sequence-level ratio)."""
    return _lookup(name).outcome_level


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
    entry = _lookup(estimator)
    r, m = _validate_inputs(token_rewards, mask)
    group_index, num_groups = _group_index(r.shape[0], group_size, group_ids, r.device)
    _check_options(estimator, entry.fn, options)
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
    r = token_rewards
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


def _check_plugin_output(name: str, out: Any, m: Tensor) -> Tensor:
    if not isinstance(out, Tensor) or out.shape != m.shape:
        shape = tuple(out.shape) if isinstance(out, Tensor) else type(out).__name__
        raise ValueError(f"estimator {name!r} returned {shape}, expected a (B, T) = {tuple(m.shape)} tensor")
    out = torch.where(m, out.float(), 0.0)  # enforce the contract: 0 on padding
    if not bool(torch.isfinite(out).all()):
        raise ValueError(f"estimator {name!r} returned non-finite advantages on valid tokens")
    return out


def _choice(estimator: str, option: str, value: Any, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(
            f"estimator {estimator!r}: option {option}={value!r} is not one of {', '.join(choices)}"
        )


def _positive(estimator: str, option: str, value: Any, *, allow_zero: bool = False) -> None:
    ok = (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and (value >= 0 if allow_zero else value > 0)
    )
    if not ok:
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"estimator {estimator!r}: option {option} must be a number {bound}, got {value!r}")


# --------------------------------------------------------------------------------------------------
# Moments: the (B, 3) summary a distributed trainer gathers instead of (B, T)
# --------------------------------------------------------------------------------------------------


def _bad_rows_error(what: str, bad: Tensor) -> ValueError:
    rows = bad.nonzero().flatten().tolist()
    shown = ", ".join(map(str, rows[:20])) + (", ..." if len(rows) > 20 else "")
    return ValueError(
        f"{what}: non-finite (NaN/inf) token rewards on valid tokens of rollout(s) {shown} "
        f"({len(rows)} in all). Fix the signal that produced them (check its on_error policy), or pass "
        "nan_policy='mask' to give those rollouts advantage 0 and leave them out of the group statistics."
    )


def _row_counts(mask: Tensor) -> Tensor:
    """``(B,)`` int32 number of True per row of a bool ``(B, T)`` mask.

    ``mask.sum(1, dtype=int32)`` first copies the whole mask to int32 (4 bytes a token). Summing
    contiguous chunks of at most 255 columns in uint8 (no overflow, no copy) and then the ``(B, T / c)``
    partial sums in int32 reads the mask once; used when T has such a divisor ``c``.
    """
    batch, tokens = mask.shape
    chunk = next((c for c in range(min(tokens, 255), 15, -1) if tokens % c == 0), 0)
    if not chunk or not mask.is_contiguous():
        return mask.sum(dim=1, dtype=torch.int32)
    partial = mask.view(torch.uint8).view(batch, tokens // chunk, chunk).sum(dim=2, dtype=torch.uint8)
    return partial.sum(dim=1, dtype=torch.int32)


def rollout_moments(token_rewards: Tensor, mask: Tensor, *, nan_policy: str = "raise") -> Tensor:
    """Per-rollout token moments ``(B, 3)`` float64: ``[mean_t r, mean_t r^2, L]``.

    ``L`` is the number of valid tokens (0 for an empty rollout, whose two means are 0). These three
    numbers per rollout are all the group statistics need, so a distributed trainer gathers this
    ``(B, 3)`` tensor across processes instead of the padded ``(B, T)`` rewards, then calls
    :func:`group_stats_from_moments` and :func:`bot_advantages_from_stats`.

    Precision: sums are taken over ``r - p_i`` with ``p_i`` the reward at the row's first valid token
    (shifted-data variance), so a constant row has exactly ``mean = p_i`` and zero within-row spread,
    and the ``(B,)`` results are combined in float64. The ``(B, T)`` work stays in the input dtype.

    :param token_rewards: ``(B, T)`` float.
    :param mask: ``(B, T)`` bool.
    :param nan_policy: ``"raise"`` (ValueError naming the rollouts with a non-finite reward on a valid
        token) or ``"mask"`` (such a rollout gets ``L = 0`` and zero means: left out of the statistics).
    """
    return _rollout_moments(token_rewards, mask, nan_policy, None)


def _rollout_moments(r: Tensor, m: Tensor, nan_policy: str, scratch: Tensor | None) -> Tensor:
    """:func:`rollout_moments`, writing its ``(B, T)`` temporary into ``scratch`` when given, so that a
    caller can reuse that buffer for its output (one ``(B, T)`` allocation per estimator call)."""
    _choice("rollout_moments", "nan_policy", nan_policy, _NAN_CHOICES)
    count = _row_counts(m)  # (B,) int32
    nonempty = count > 0  # (B,)
    # pivot p_i: the reward at some valid token. Column 0 when it is valid in every non-empty row
    # (right padding, the usual layout: a (B,) check), else the first valid token (one argmax pass).
    if bool((m[:, 0] | ~nonempty).all()):
        pivot = r[:, :1]  # (B, 1)
    else:
        pivot = r.gather(1, m.view(torch.uint8).argmax(dim=1, keepdim=True))  # (B, 1)
    pivot = torch.where(nonempty[:, None], pivot, 0.0)  # an empty row's pivot is padding: drop it
    x = torch.sub(r, pivot, out=scratch) if scratch is not None else r - pivot  # (B, T) in r's dtype
    torch.where(m, x, x.new_zeros(()), out=x)  # in place (no second (B, T) buffer): 0 on padding
    s1 = x.sum(dim=1).double()  # (B,) sum_t m (r - p)
    s2 = torch.linalg.vector_norm(x, dim=1).double().square()  # (B,) sum_t m (r - p)^2, one reduction
    del x
    n = count.double().clamp(min=1.0)
    shift_mean = s1 / n  # (B,) mean_t (r - p)
    within = (s2 / n - shift_mean * shift_mean).clamp(min=0.0)  # (B,) population variance inside the row
    mean = pivot.squeeze(1).double() + shift_mean
    mean_sq = within + mean * mean
    valid = count.double()
    # an empty row has s1 = s2 = 0 and pivot 0, so its means are already 0
    bad = ~torch.isfinite(s1 + s2)  # (B,) NaN/inf on a valid token (padding never reaches the sums)
    if bool(bad.any()):
        if nan_policy == "raise":
            raise _bad_rows_error("rollout_moments", bad)
        mean = torch.where(bad, 0.0, mean)  # where, not * 0: NaN * 0 is NaN
        mean_sq = torch.where(bad, 0.0, mean_sq)
        valid = torch.where(bad, 0.0, valid)
    return torch.stack([mean, mean_sq, valid], dim=1)  # (B, 3)


def group_stats_from_moments(
    moments: Tensor,
    group_index: Tensor,
    num_groups: int,
    *,
    std: str = "bessel",
    weighting: str = "rollout",
) -> tuple[Tensor, Tensor, Tensor]:
    """Group mean, std and rollout count from per-rollout moments.

    :param moments: ``(B, 3)`` ``[mean_t r, mean_t r^2, L]`` from :func:`rollout_moments` (possibly
        gathered from several processes; rows of one group may come from anywhere).
    :param group_index: ``(B,)`` long in ``[0, num_groups)``.
    :param std: ``"bessel"`` multiplies the pooled variance by ``n / (n - 1)``, ``n`` the group's
        non-empty rollouts (so ``beta = 0`` reproduces GRPO's ``torch.std``); ``"population"`` does not.
    :param weighting: ``"rollout"`` gives each non-empty rollout total weight 1 (BoT: token weight
        ``1 / L_i``); ``"token"`` gives each valid token weight 1 (the ``token_pool`` ablation).
    :returns: ``mean (G,)``, ``std (G,)``, ``count (G,)`` float64, ``count`` = non-empty rollouts.
        ``std`` is exactly 0 where the group has no spread: all its valid tokens carry one value, or it
        has fewer than 2 non-empty rollouts under ``bessel`` (the correction is undefined there).
    """
    _choice("group_stats_from_moments", "std", std, _STD_CHOICES)
    _choice("group_stats_from_moments", "weighting", weighting, ("rollout", "token"))
    mom = moments.double()
    row_mean, row_mean_sq, length = mom.unbind(dim=1)  # (B,) each
    present = (length > 0).double()  # (B,)
    w = present if weighting == "rollout" else length  # (B,) total weight of each rollout
    gi = group_index.to(mom.device)
    zeros = mom.new_zeros(num_groups)
    count = zeros.index_add(0, gi, present)  # (G,) non-empty rollouts
    wsum = zeros.index_add(0, gi, w)  # (G,)
    s1 = zeros.index_add(0, gi, w * row_mean)  # (G,) sum of weight * mean
    s2 = zeros.index_add(0, gi, w * row_mean_sq)  # (G,) sum of weight * mean of squares
    safe = wsum.clamp(min=torch.finfo(torch.float64).tiny)
    mean = torch.where(wsum > 0, s1 / safe, 0.0)
    mean_sq = torch.where(wsum > 0, s2 / safe, 0.0)
    var = mean_sq - mean * mean
    # E[r^2] - mu^2 cancels: anything at its float64 rounding level is no spread (exactly 0 below).
    var = torch.where(var > _VAR_NOISE * mean_sq, var, 0.0)
    if std == "bessel":
        var = torch.where(count > 1, var * count / (count - 1).clamp(min=1.0), 0.0)
    return mean, var.sqrt(), count


def bot_advantages_from_stats(
    token_rewards: Tensor,
    mask: Tensor,
    group_index: Tensor,
    mean: Tensor,
    std: Tensor,
    *,
    eps: float = DEFAULT_EPS,
    keep: Tensor | None = None,
    out: Tensor | None = None,
) -> Tensor:
    """``A[i, t] = (r[i, t] - mean[g_i]) / (std[g_i] + eps)`` on valid tokens, 0 elsewhere.

    A group with ``std == 0`` (no spread) gets exactly 0.

    :param mean: ``(G,)`` group means, :param std: ``(G,)`` group stds (from
        :func:`group_stats_from_moments`).
    :param keep: optional ``(B,)`` bool; rollouts with ``False`` get advantage 0 (pass
        ``moments[:, 2] > 0`` to zero rollouts that ``nan_policy="mask"`` left out).
    :param out: optional ``(B, T)`` buffer of ``token_rewards``' dtype to write the result into (it must
        not alias ``token_rewards``).
    :returns: ``(B, T)`` in ``token_rewards``' dtype.
    """
    r, m = token_rewards, mask
    gi = group_index.to(mean.device)
    scale = torch.where(std > 0, 1.0 / (std + eps), 0.0)  # (G,) float64
    row_scale = scale[gi]  # (B,)
    if keep is not None:
        row_scale = torch.where(keep, row_scale, 0.0)
    s = row_scale.to(r.dtype)[:, None]  # (B, 1)
    b = (-mean[gi] * row_scale).to(r.dtype)[:, None]  # (B, 1)
    # Two sweeps over (B, T) and one buffer: r * s + b in one fused op, then the mask in place.
    # Rounding: |error| <= ~ulp(|mu| * s), the same order as the rounding already in r itself.
    out = torch.addcmul(b, r, s, out=out)  # (B, T)
    torch.where(m, out, out.new_zeros(()), out=out)  # padding (whatever it held) -> exactly 0
    if keep is not None and not bool(keep.all()):
        out[~keep] = 0.0  # a kept-out row's NaN * 0 would survive the scale
    return out


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


# ---- step-level estimators (process supervision, PURE) ----------------------------------------------


def step_ends(token_rewards: Tensor, mask: Tensor, step_mask: Tensor | None = None) -> Tensor:
    """``(B, T)`` bool: the tokens where a step ends (their token reward is that step's reward).

    With ``step_mask`` given (bool ``(B, T)``, True at each step's last token, e.g. from the span
    alignment) it is used as is, restricted to valid tokens. Otherwise a step is a maximal run of
    consecutive valid tokens with one reward value (a local span aligned onto tokens gives every token
    of the span its value): a valid token ends a step when the next token is padding or carries a
    different reward. Two adjacent steps with exactly equal rewards merge into one; pass ``step_mask``
    when that matters.
    """
    if step_mask is not None:
        if step_mask.shape != mask.shape:
            raise ValueError(f"step_mask shape {tuple(step_mask.shape)} != mask shape {tuple(mask.shape)}")
        return mask & (step_mask if step_mask.dtype == torch.bool else step_mask != 0)
    r, m = token_rewards, mask
    ends = m.clone()
    # not an end if the next token is valid and has the same reward
    same_next = m[:, 1:] & (r[:, 1:] == r[:, :-1])  # (B, T-1)
    ends[:, :-1] &= ~same_next
    return ends


def _rtg(values: Tensor) -> Tensor:
    """Reverse cumulative sum along T: ``out[:, t] = sum_{t' >= t} values[:, t']``."""
    return values.flip(1).cumsum(1).flip(1)


def _step_bad_rows(name: str, token_rewards: Tensor, mask: Tensor, nan_policy: str) -> Tensor | None:
    _choice(name, "nan_policy", nan_policy, _NAN_CHOICES)
    finite = torch.isfinite(token_rewards) | ~mask
    bad = ~finite.all(dim=1)  # (B,)
    if not bool(bad.any()):
        return None
    if nan_policy == "raise":
        raise ValueError(f"estimator {name!r}: {_bad_rows_error('step rewards', bad).args[0]}")
    return bad


def process(
    token_rewards: Tensor,
    mask: Tensor,
    group_index: Tensor,
    num_groups: int,
    *,
    step_mask: Tensor | None = None,
    std: str = "bessel",
    eps: float = DEFAULT_EPS,
    nan_policy: str = "raise",
) -> Tensor:
    """DeepSeekMath process supervision (Shao et al. 2024, sec. 4.1.3).

    The step rewards of all rollouts of a group are pooled *unweighted* and normalised,
    ``z = (r_step - mean) / (std + eps)`` (Bessel over the group's step count by default), and a
    token's advantage is the sum of the normalised rewards of its own and all later steps
    (returns-to-go). Steps: see :func:`step_ends`.
    """
    _choice("process", "std", std, _STD_CHOICES)
    _positive("process", "eps", eps, allow_zero=True)
    r, m = token_rewards, mask
    ends = step_ends(r, m, step_mask)  # (B, T) bool
    bad = _step_bad_rows("process", r, m, nan_policy)
    if bad is not None:
        ends = ends & ~bad[:, None]
    gi = group_index
    zeros = r.new_zeros(num_groups, dtype=torch.float64)
    x = torch.where(ends, r, 0.0)  # (B, T) step rewards, 0 elsewhere
    n_g = zeros.index_add(0, gi, ends.sum(1).double())  # (G,) steps per group
    mean = zeros.index_add(0, gi, x.sum(1).double()) / n_g.clamp(min=1.0)  # (G,)
    mu = mean.to(r.dtype)[gi][:, None]  # (B, 1)
    d = torch.where(ends, r - mu, 0.0)  # (B, T) centred step rewards (two-pass variance)
    var = zeros.index_add(0, gi, torch.linalg.vecdot(d, d).double()) / n_g.clamp(min=1.0)
    if std == "bessel":
        var = torch.where(n_g > 1, var * n_g / (n_g - 1).clamp(min=1.0), 0.0)
    # exact no-spread test: every step reward of the group equal (rounding in mu must not leak through)
    big = torch.finfo(r.dtype).max
    gmax = zeros.to(r.dtype).fill_(-big).scatter_reduce(0, gi, torch.where(ends, r, -big).amax(1), "amax")
    gmin = zeros.to(r.dtype).fill_(big).scatter_reduce(0, gi, torch.where(ends, r, big).amin(1), "amin")
    spread = (gmax > gmin) & (var > 0)
    scale = torch.where(spread, 1.0 / (var.sqrt() + eps), 0.0).to(r.dtype)[gi][:, None]  # (B, 1)
    z = d * scale  # (B, T) normalised step rewards at step ends, 0 elsewhere
    return torch.where(m, _rtg(z), 0.0)


def pure(
    token_rewards: Tensor,
    mask: Tensor,
    group_index: Tensor,
    num_groups: int,
    *,
    step_mask: Tensor | None = None,
    temperature: float = 0.1,
    baseline: str = "rloo",
    nan_policy: str = "raise",
) -> Tensor:
    """PURE min-form credit assignment (Cheng et al. 2025, arXiv:2504.15275).

    Within each rollout the step rewards ``r_k`` are reweighted,
    ``r*_k = softmax(-r / T)_k * r_k`` (so ``sum_k r*_k`` tends to ``min_k r_k`` as ``T -> 0``), and a
    token's return is the sum of ``r*_k`` over its own and later steps. ``baseline="rloo"`` subtracts
    the mean whole-rollout return of the *other* non-empty rollouts of the group (the paper trains with
    an RLOO advantage estimator); ``"none"`` returns the raw returns-to-go. Steps: see
    :func:`step_ends`.
    """
    _positive("pure", "temperature", temperature)
    _choice("pure", "baseline", baseline, ("rloo", "none"))
    r, m = token_rewards, mask
    ends = step_ends(r, m, step_mask)  # (B, T) bool
    bad = _step_bad_rows("pure", r, m, nan_policy)
    if bad is not None:
        ends = ends & ~bad[:, None]
    logits = torch.where(ends, -r / temperature, float("-inf"))  # (B, T)
    logits = logits - logits.amax(dim=1, keepdim=True).clamp(min=torch.finfo(r.dtype).min)  # stable softmax
    e = torch.where(ends, logits.exp(), 0.0)  # (B, T)
    weights = e / e.sum(dim=1, keepdim=True).clamp(min=torch.finfo(r.dtype).tiny)  # softmax over steps
    transformed = torch.where(ends, weights * r, 0.0)  # (B, T) r*_k at step ends
    returns = _rtg(transformed)  # (B, T)
    if baseline == "rloo":
        has_steps = ends.any(dim=1)  # (B,)
        total = returns[:, 0].double() * has_steps  # (B,) whole-rollout return
        zeros = r.new_zeros(num_groups, dtype=torch.float64)
        n_g = zeros.index_add(0, group_index, has_steps.double())[group_index]  # (B,)
        s_g = zeros.index_add(0, group_index, total)[group_index]  # (B,)
        loo = (s_g - total) / (n_g - 1).clamp(min=1.0)  # mean of the others
        ok = has_steps & (n_g > 1)  # a lone rollout has nothing to compare with
        returns = torch.where(ok[:, None], returns - loo.to(r.dtype)[:, None], 0.0)
    if bad is not None:
        returns = torch.where(bad[:, None], 0.0, returns)
    return torch.where(m, returns, 0.0)


_register_builtin("bot", bot)
_register_builtin("token_pool", token_pool)
_register_builtin("grpo", grpo, outcome_level=True)
_register_builtin("dr_grpo", dr_grpo, outcome_level=True)
_register_builtin("process", process)
_register_builtin("pure", pure)
