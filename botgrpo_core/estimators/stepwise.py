"""Step-level baselines: DeepSeekMath process supervision and PURE's min-form credit assignment."""

from __future__ import annotations

import torch
from torch import Tensor

from botgrpo_core.estimators.moments import DEFAULT_EPS
from botgrpo_core.estimators.options import _NAN_CHOICES, _STD_CHOICES, _bad_rows_error, _choice, _positive

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
    # (B, T) centred step rewards (two-pass variance), in float64: squares of |r| past ~1.8e19 overflow
    # float32, which zeroed every advantage (the normalisation is scale-free, so large rewards are legal)
    d = torch.where(ends, r.double() - mean[gi][:, None], 0.0)
    var = zeros.index_add(0, gi, torch.linalg.vecdot(d, d)) / n_g.clamp(min=1.0)
    if std == "bessel":
        var = torch.where(n_g > 1, var * n_g / (n_g - 1).clamp(min=1.0), 0.0)
    # exact no-spread test: every step reward of the group equal (rounding in mu must not leak through)
    big = torch.finfo(r.dtype).max
    gmax = zeros.to(r.dtype).fill_(-big).scatter_reduce(0, gi, torch.where(ends, r, -big).amax(1), "amax")
    gmin = zeros.to(r.dtype).fill_(big).scatter_reduce(0, gi, torch.where(ends, r, big).amin(1), "amin")
    spread = (gmax > gmin) & (var > 0)
    scale = torch.where(spread, 1.0 / (var.sqrt() + eps), 0.0)[gi][:, None]  # (B, 1) float64
    z = (d * scale).to(r.dtype)  # (B, T) normalised step rewards at step ends, 0 elsewhere
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
    # In float64: -r / T overflows float32 for large rewards or a tiny T (inf - inf = NaN in the softmax);
    # a float64 logit is finite for every finite float32 reward and T >= 1e-45, and the softmax then tends
    # to its T -> 0 limit (all weight on the smallest step reward) instead of NaN.
    logits = torch.where(ends, -r.double() / temperature, float("-inf"))  # (B, T) float64
    logits = (logits - logits.amax(dim=1, keepdim=True).clamp(min=torch.finfo(torch.float64).min)).clamp(
        max=0.0
    )
    e = torch.where(ends, logits.exp(), 0.0)  # (B, T)
    weights = e / e.sum(dim=1, keepdim=True).clamp(min=torch.finfo(torch.float64).tiny)  # softmax over steps
    transformed = torch.where(ends, weights * r.double(), 0.0).to(r.dtype)  # (B, T) r*_k at step ends
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
