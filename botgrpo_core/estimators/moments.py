"""Per-rollout moments and the length-weighted group statistics built from them.

The statistics need only ``(mean_t r, mean_t r^2, L)`` per rollout, so a distributed trainer gathers a
``(B, 3)`` table instead of the padded ``(B, T)`` rewards (see docs/algorithms.md).
"""

from __future__ import annotations

import torch
from torch import Tensor

from botgrpo_core.estimators.options import _NAN_CHOICES, _STD_CHOICES, _bad_rows_error, _choice

DEFAULT_EPS = 1e-6
"""Added to the group std before dividing (``A = (r - mu) / (std + eps)``). Small enough that a group
with a real spread is normalised to unit variance to ~1e-6 relative; groups with no spread never reach
the division (their advantage is exactly 0), so eps only guards near-degenerate spreads."""

# float64 rounding level of E[r^2] below which the cancellation E[r^2] - mu^2 is noise, not spread.
_VAR_NOISE = 8 * torch.finfo(torch.float64).eps


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
    :func:`~botgrpo_core.estimators.gathered.gathered_advantages`.

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
    if r.shape[1] == 0:  # no tokens at all: every rollout is empty
        return r.new_zeros(r.shape[0], 3, dtype=torch.float64)
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
    # (B,) sum_t m (r - p), accumulated in float64: a few rewards near 3e38 sum past float32's range
    s1 = x.sum(dim=1, dtype=torch.float64)
    s2 = torch.linalg.vector_norm(x, dim=1).double().square()  # (B,) sum_t m (r - p)^2, one reduction
    overflow = torch.isinf(s2) & torch.isfinite(s1)  # |r - p| >~ 1e19: the float32 norm overflowed
    if bool(overflow.any()):  # rare: redo those rows' sums in float64 (finite rewards give finite moments)
        s2[overflow] = x[overflow].double().square().sum(dim=1)
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


def inverse_std(std: Tensor, eps: float) -> Tensor:
    """``1 / (std + eps)``, exactly 0 where ``std == 0`` (no spread: the advantage is 0, not ``x / eps``)."""
    return torch.where(std > 0, 1.0 / (std + eps), 0.0)


def affine_advantages(
    token_rewards: Tensor,
    mask: Tensor,
    scale: Tensor | None,
    shift: Tensor,
    *,
    keep: Tensor | None = None,
    out: Tensor | None = None,
) -> Tensor:
    """``A[i, t] = scale[i] * r[i, t] + shift[i]`` on valid tokens of kept rollouts, 0 elsewhere.

    Every moments-based estimator ends here (see ``CoefficientsFn`` in the registry): ``bot`` with
    ``scale = 1 / (std_g + eps)``, ``shift = -mu_g * scale``; ``grpo`` with ``scale = None`` (0: one
    advantage per rollout), ``shift = A_i``.

    :param token_rewards: ``(B, T)`` float; :param mask: ``(B, T)`` bool.
    :param scale: ``(B,)`` or ``None`` (= 0), :param shift: ``(B,)`` per-rollout coefficients (float64).
    :param keep: optional ``(B,)`` bool; rollouts with ``False`` get advantage 0 (pass
        ``moments[:, 2] > 0`` to zero rollouts that ``nan_policy="mask"`` left out).
    :param out: optional ``(B, T)`` buffer of ``token_rewards``' dtype to write the result into (it must
        not alias ``token_rewards``).
    :returns: ``(B, T)`` in ``token_rewards``' dtype.
    """
    r, m = token_rewards, mask
    if keep is not None:
        shift = torch.where(keep, shift, 0.0)
    if scale is None:  # one advantage per rollout: a single masked broadcast, r is never read
        return torch.where(m, shift.to(r.dtype)[:, None], r.new_zeros(()), out=out)
    if keep is not None:
        scale = torch.where(keep, scale, 0.0)
    # A = (r - c) * s with the centre c = -shift / s, the centre split into its float32 value c_hi and
    # the float64 rest c_lo: r - c_hi is exact for r near c (Sterbenz), and the small (r - c_hi) * s - c_lo * s
    # rounds relative to the spread, not to |c|. (r * s + shift rounds r * s to float32 before the shift
    # cancels it: at mean/spread 1e7 that error reached 0.74.) Three sweeps over (B, T), one buffer.
    center = torch.where(scale != 0, -shift / torch.where(scale != 0, scale, 1.0), 0.0)  # (B,) float64
    c_hi = center.to(r.dtype)  # (B,)
    c_lo = center - c_hi.double()  # (B,) what the cast dropped
    s = scale.to(r.dtype)[:, None]  # (B, 1)
    out = torch.sub(r, c_hi[:, None], out=out)  # (B, T)
    torch.addcmul((-c_lo * scale).to(r.dtype)[:, None], out, s, out=out)
    torch.where(m, out, out.new_zeros(()), out=out)  # padding (whatever it held) -> exactly 0
    if keep is not None and not bool(keep.all()):
        out[~keep] = 0.0  # a kept-out row's NaN * 0 would survive the scale
    return out
