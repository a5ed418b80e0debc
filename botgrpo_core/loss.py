"""The GRPO-family clipped policy loss, as one pure function.

``policy_loss`` covers GRPO (token ratio, per-sequence mean), DAPO (clip-higher, token mean), Dr. GRPO
(constant normaliser) and GSPO (sequence-level ratio), with an optional k3 KL penalty to a reference
policy. It takes ``(B,)`` outcome advantages or ``(B, T)`` token advantages (BoT-GRPO, process, PURE).
Names follow CleanRL's PPO (``ratio``, ``pg_loss1``, ``pg_loss2``) so the code reads against it.

References:
    PPO clipped surrogate: Schulman et al. 2017, "Proximal Policy Optimization Algorithms", arXiv:1707.06347.
    GRPO: Shao et al. 2024, "DeepSeekMath", arXiv:2402.03300 (per-sequence token mean, eq. 3).
    DAPO: Yu et al. 2025, "DAPO", arXiv:2503.14476 (clip-higher eps_low / eps_high, token-level mean).
    Dr. GRPO: Liu et al. 2025, "Understanding R1-Zero-Like Training", arXiv:2503.20783 (constant normaliser).
    GSPO: Zheng et al. 2025, "Group Sequence Policy Optimization", arXiv:2507.18071 (sequence ratio).
    k3 KL estimator: Schulman 2020, "Approximating KL Divergence", http://joschu.net/blog/kl-approx.html.
    CleanRL PPO: Huang et al. 2022, JMLR 23(274) (variable names, approx_kl, clip fraction).
"""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["AGGREGATIONS", "RATIO_LEVELS", "policy_loss"]

RATIO_LEVELS = ("token", "sequence")
AGGREGATIONS = ("sequence", "token", "constant")


def _check(
    logp: Tensor,
    old_logp: Tensor,
    advantages: Tensor,
    mask: Tensor,
    ref_logp: Tensor | None,
    eps_low: float,
    eps_high: float,
    kl_coef: float,
    ratio_level: str,
    aggregation: str,
    max_len: int | None,
) -> None:
    if logp.dim() != 2:
        raise ValueError(f"policy_loss: logp must be (B, T), got shape {tuple(logp.shape)}")
    for name, t in (("old_logp", old_logp), ("mask", mask)) + (
        (("ref_logp", ref_logp),) if ref_logp is not None else ()
    ):
        if t.shape != logp.shape:
            raise ValueError(f"policy_loss: {name} shape {tuple(t.shape)} != logp shape {tuple(logp.shape)}")
    if advantages.shape not in (logp.shape[:1], logp.shape):
        raise ValueError(
            f"policy_loss: advantages must be (B,) = {tuple(logp.shape[:1])} or (B, T) = {tuple(logp.shape)}, "
            f"got {tuple(advantages.shape)}"
        )
    if ratio_level not in RATIO_LEVELS:
        raise ValueError(f"policy_loss: ratio_level={ratio_level!r} is not one of {', '.join(RATIO_LEVELS)}")
    if aggregation not in AGGREGATIONS:
        raise ValueError(f"policy_loss: aggregation={aggregation!r} is not one of {', '.join(AGGREGATIONS)}")
    if not 0.0 <= eps_low < 1.0:
        raise ValueError(
            f"policy_loss: eps_low must lie in [0, 1) (ratio floor 1 - eps_low > 0), got {eps_low}"
        )
    if eps_high < 0.0:
        raise ValueError(f"policy_loss: eps_high must be >= 0, got {eps_high}")
    if kl_coef < 0.0:
        raise ValueError(f"policy_loss: kl_coef must be >= 0, got {kl_coef}")
    if kl_coef > 0.0 and ref_logp is None:
        raise ValueError("policy_loss: kl_coef > 0 needs ref_logp (the reference policy's token log-probs)")
    if max_len is not None and max_len < logp.shape[1]:
        raise ValueError(f"policy_loss: max_len={max_len} is shorter than the batch's T={logp.shape[1]}")


def policy_loss(
    logp: Tensor,
    old_logp: Tensor,
    advantages: Tensor,
    mask: Tensor,
    *,
    ref_logp: Tensor | None = None,
    eps_low: float = 0.2,
    eps_high: float = 0.2,
    kl_coef: float = 0.0,
    ratio_level: str = "token",
    aggregation: str = "sequence",
    max_len: int | None = None,
) -> tuple[Tensor, dict[str, Tensor]]:
    """Clipped surrogate loss (to minimise) and detached metrics.

    Per token (``ratio`` is per token, or per rollout under ``ratio_level="sequence"``)::

        pg_loss1 = -A * ratio
        pg_loss2 = -A * clip(ratio, 1 - eps_low, 1 + eps_high)
        l[i, t]  = max(pg_loss1, pg_loss2) + kl_coef * k3[i, t]

    Aggregation of ``l`` over valid tokens (``m`` the mask, ``L_i`` the lengths, ``B`` rows):

    - ``"sequence"`` (GRPO): ``mean_i (sum_t m l / max(L_i, 1))``, empty rows count as 0 (as TRL);
    - ``"token"`` (DAPO): ``sum m l / max(sum m, 1)``;
    - ``"constant"`` (Dr. GRPO): ``sum m l / (B * max_len)``, ``max_len`` defaulting to ``T``. Pass the
      generation cap so the normaliser does not vary with the batch's padding.

    :param logp: ``(B, T)`` log-probs of the sampled tokens under the current policy (with grad).
    :param old_logp: ``(B, T)`` the same under the policy that sampled them (no grad needed).
    :param advantages: ``(B,)`` per rollout or ``(B, T)`` per token.
    :param mask: ``(B, T)`` completion mask (bool or 0/1).
    :param ref_logp: ``(B, T)`` reference-policy log-probs, needed when ``kl_coef > 0``.
    :param ratio_level: ``"token"`` or ``"sequence"`` (GSPO: ``exp(mean_t (logp - old_logp))`` per rollout).
    :returns: ``(loss, metrics)``; ``loss`` a 0-d tensor, ``metrics`` 0-d detached tensors:
        ``clip_frac_low``, ``clip_frac_high``, ``clip_frac`` (fractions of valid tokens whose surrogate
        is clipped below / above / either, as TRL counts them), ``approx_kl`` (k3 estimate of
        KL(old || new) per token, CleanRL), ``ratio_mean`` (mean ratio used in the loss over valid
        tokens) and ``kl`` (mean k3 to the reference, only when ``ref_logp`` is given).
    """
    _check(
        logp,
        old_logp,
        advantages,
        mask,
        ref_logp,
        eps_low,
        eps_high,
        kl_coef,
        ratio_level,
        aggregation,
        max_len,
    )
    valid = mask if mask.dtype == torch.bool else mask != 0  # (B, T) bool
    m = valid.to(logp.dtype)  # (B, T)
    lengths = m.sum(dim=1)  # (B,)
    n_tokens = lengths.sum().clamp(min=1.0)  # ()
    adv = advantages.to(logp.dtype)
    adv = adv[:, None] if adv.dim() == 1 else adv  # (B, 1) or (B, T)

    logratio = torch.where(valid, logp - old_logp, 0.0)  # (B, T); padding garbage (-inf) never reaches exp()
    if ratio_level == "token":
        log_is = logratio  # (B, T)
    else:
        # GSPO (Zheng et al. 2025): s_i = (pi/pi_old)(y_i)^(1/|y_i|) = exp(mean_t log ratio)
        log_is = (logratio.sum(dim=1) / lengths.clamp(min=1.0))[:, None]  # (B, 1)
    ratio = torch.exp(log_is)  # (B, T) or (B, 1)

    # PPO clipped surrogate (Schulman et al. 2017, eq. 7), CleanRL form: max of the two negated terms.
    # eps_low / eps_high decoupled as DAPO's clip-higher (Yu et al. 2025).
    pg_loss1 = -adv * ratio  # (B, T)
    pg_loss2 = -adv * torch.clamp(ratio, 1.0 - eps_low, 1.0 + eps_high)  # (B, T)
    per_token = torch.max(pg_loss1, pg_loss2)  # (B, T) (broadcast when both are (B, 1))
    per_token = per_token.expand_as(logp)

    kl = None
    if ref_logp is not None:
        # k3 = exp(ref - logp) - (ref - logp) - 1 >= 0, unbiased for KL(pi || pi_ref) (Schulman 2020)
        delta = torch.where(valid, ref_logp - logp, 0.0)  # (B, T)
        kl = torch.exp(delta) - delta - 1.0  # (B, T)
        if kl_coef > 0.0:
            per_token = per_token + kl_coef * kl

    masked = torch.where(valid, per_token, 0.0)  # (B, T)
    if aggregation == "sequence":  # GRPO (Shao et al. 2024, eq. 3): 1/G sum_i 1/|o_i| sum_t
        loss = (masked.sum(dim=1) / lengths.clamp(min=1.0)).mean()
    elif aggregation == "token":  # DAPO (Yu et al. 2025), token-level loss: 1/sum_i |o_i| sum_i sum_t
        loss = masked.sum() / n_tokens
    else:  # Dr. GRPO (Liu et al. 2025): a constant in place of |o_i|
        loss = masked.sum() / (logp.shape[0] * (max_len if max_len is not None else logp.shape[1]))

    with torch.no_grad():
        full_ratio = ratio.expand_as(logp)
        full_adv = adv.expand_as(logp)
        is_low = ((full_ratio < 1.0 - eps_low) & (full_adv < 0)).to(logp.dtype)
        is_high = ((full_ratio > 1.0 + eps_high) & (full_adv > 0)).to(logp.dtype)
        clip_low = (is_low * m).sum() / n_tokens
        clip_high = (is_high * m).sum() / n_tokens
        # CleanRL: approx_kl = mean((ratio - 1) - logratio), the k3 estimate of KL(old || new)
        approx_kl = ((torch.exp(logratio) - 1.0 - logratio) * m).sum() / n_tokens
        metrics: dict[str, Tensor] = {
            "clip_frac_low": clip_low,
            "clip_frac_high": clip_high,
            "clip_frac": clip_low + clip_high,
            "approx_kl": approx_kl,
            "ratio_mean": (full_ratio * m).sum() / n_tokens,
        }
        if kl is not None:
            metrics["kl"] = (kl * m).sum() / n_tokens
    return loss, metrics
