"""The GRPO-family clipped policy loss, as one pure function.

``policy_loss`` covers GRPO (token ratio, per-sequence mean), DAPO (clip-higher, token mean), Dr. GRPO
(constant normaliser) and GSPO (sequence-level ratio), with an optional k3 KL penalty to a reference
policy. It takes ``(B,)`` outcome advantages or ``(B, T)`` token advantages (BoT-GRPO, process, PURE).
Names follow CleanRL's PPO (``ratio``, ``pg_loss1``, ``pg_loss2``, clip fractions, ``approx_kl``) so the
code reads against it. The module imports no torch (only tensor methods are used): the loss settings'
rules (:func:`loss_settings_problem`) are the one home the torch-free presets and run-file checks import.

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

from typing import TYPE_CHECKING, Literal, get_args

if TYPE_CHECKING:
    from torch import Tensor

__all__ = [
    "AGGREGATIONS",
    "LOSS_SETTINGS",
    "RATIO_LEVELS",
    "Aggregation",
    "RatioLevel",
    "loss_settings_problem",
    "policy_loss",
]

RatioLevel = Literal["token", "sequence"]
Aggregation = Literal["sequence", "token", "constant"]
RATIO_LEVELS: tuple[str, ...] = get_args(RatioLevel)
AGGREGATIONS: tuple[str, ...] = get_args(Aggregation)
#: The settings :func:`loss_settings_problem` checks (its keyword arguments), as the run file names them.
LOSS_SETTINGS = ("ratio_level", "aggregation", "eps_low", "eps_high", "kl_coef")


def loss_settings_problem(
    *, ratio_level: str, aggregation: str, eps_low: float, eps_high: float, kl_coef: float
) -> str | None:
    """What is wrong with a loss configuration, as ``"key=value ...: why"`` naming the key, or ``None``.

    The one home of these rules: :func:`policy_loss`, the presets (``config/presets.py``) and the run-file
    check (``config/checks.py``) call it and add where the settings came from.
    """
    if ratio_level not in RATIO_LEVELS:
        return f"ratio_level={ratio_level!r} is not one of {', '.join(RATIO_LEVELS)}"
    if aggregation not in AGGREGATIONS:
        return f"aggregation={aggregation!r} is not one of {', '.join(AGGREGATIONS)}"
    if not 0.0 <= eps_low < 1.0:
        return f"eps_low={eps_low} must lie in [0, 1) (the ratio floor is 1 - eps_low)"
    if eps_high < 0.0:
        return f"eps_high={eps_high} must be >= 0"
    if kl_coef < 0.0:
        return f"kl_coef={kl_coef} must be >= 0 (0 turns the KL penalty off)"
    return None


def _check_shapes(
    logp: Tensor,
    old_logp: Tensor,
    advantages: Tensor,
    mask: Tensor,
    ref_logp: Tensor | None,
    max_len: int | None,
) -> None:
    if logp.dim() != 2:
        raise ValueError(f"policy_loss: logp must be (B, T), got shape {tuple(logp.shape)}")
    others = [("old_logp", old_logp), ("mask", mask)] + (
        [("ref_logp", ref_logp)] if ref_logp is not None else []
    )
    for name, t in others:
        if t.shape != logp.shape:
            raise ValueError(f"policy_loss: {name} shape {tuple(t.shape)} != logp shape {tuple(logp.shape)}")
    if advantages.shape not in (logp.shape[:1], logp.shape):
        raise ValueError(
            f"policy_loss: advantages must be (B,) = {tuple(logp.shape[:1])} or (B, T) = {tuple(logp.shape)}, "
            f"got {tuple(advantages.shape)}"
        )
    if max_len is not None and max_len < logp.shape[1]:
        raise ValueError(f"policy_loss: max_len={max_len} is shorter than the batch's T={logp.shape[1]}")


def importance_ratio(logratio: Tensor, lengths: Tensor, ratio_level: str) -> Tensor:
    """``ratio`` ``(B, T)`` per token, or ``(B, 1)`` per rollout under ``"sequence"``.

    GSPO (Zheng et al. 2025): ``s_i = (pi / pi_old)(y_i)^(1 / |y_i|) = exp(mean_t log ratio)``.
    :param logratio: ``(B, T)`` ``logp - old_logp``, 0 on padding; :param lengths: ``(B,)`` valid tokens.
    """
    if ratio_level == "token":
        return logratio.exp()  # (B, T)
    return (logratio.sum(dim=1) / lengths.clamp(min=1.0))[:, None].exp()  # (B, 1)


def k3(ref_logp: Tensor, logp: Tensor, valid: Tensor) -> Tensor:
    """``(B, T)`` k3 estimate of KL(pi || pi_ref) per token, ``exp(d) - d - 1 >= 0`` with
    ``d = ref_logp - logp`` (Schulman 2020); 0 on padding."""
    delta = (ref_logp - logp).where(valid, 0.0)  # padding garbage (-inf) never reaches exp()
    return delta.exp() - delta - 1.0


def aggregate(per_token: Tensor, lengths: Tensor, aggregation: str, max_len: int | None) -> Tensor:
    """The loss ``()`` from ``(B, T)`` per-token losses, 0 on padding.

    ``"sequence"``: GRPO (Shao et al. 2024, eq. 3), ``1/G sum_i 1/|o_i| sum_t``; ``"token"``: DAPO (Yu et
    al. 2025), ``1/sum_i |o_i| sum_i sum_t``; ``"constant"``: Dr. GRPO (Liu et al. 2025), a constant
    ``B * max_len`` in place of ``|o_i|``.
    """
    if aggregation == "sequence":
        return (per_token.sum(dim=1) / lengths.clamp(min=1.0)).mean()
    if aggregation == "token":
        return per_token.sum() / lengths.sum().clamp(min=1.0)
    return per_token.sum() / (per_token.shape[0] * (max_len if max_len is not None else per_token.shape[1]))


def clip_metrics(
    ratio: Tensor, adv: Tensor, logratio: Tensor, m: Tensor, eps_low: float, eps_high: float
) -> dict[str, Tensor]:
    """Detached metrics over valid tokens (``m`` the float mask, ``ratio`` and ``adv`` broadcast to ``(B, T)``).

    Clip fractions as TRL counts them (the surrogate is clipped below: ``ratio < 1 - eps_low`` with
    ``A < 0``; above: ``ratio > 1 + eps_high`` with ``A > 0``); ``approx_kl`` as CleanRL,
    ``mean((ratio - 1) - log ratio)``, the k3 estimate of KL(old || new) per token.
    """
    ratio, adv, logratio = ratio.detach(), adv.detach(), logratio.detach()
    n_tokens = m.sum().clamp(min=1.0)
    is_low = ((ratio < 1.0 - eps_low) & (adv < 0)).to(m.dtype)
    is_high = ((ratio > 1.0 + eps_high) & (adv > 0)).to(m.dtype)
    clip_low = (is_low * m).sum() / n_tokens
    clip_high = (is_high * m).sum() / n_tokens
    return {
        "clip_frac_low": clip_low,
        "clip_frac_high": clip_high,
        "clip_frac": clip_low + clip_high,
        "approx_kl": ((logratio.exp() - 1.0 - logratio) * m).sum() / n_tokens,
        "ratio_mean": (ratio * m).sum() / n_tokens,
    }


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
    problem = loss_settings_problem(
        ratio_level=ratio_level, aggregation=aggregation, eps_low=eps_low, eps_high=eps_high, kl_coef=kl_coef
    )
    if problem:
        raise ValueError(f"policy_loss: {problem}")
    if kl_coef > 0.0 and ref_logp is None:
        raise ValueError("policy_loss: kl_coef > 0 needs ref_logp (the reference policy's token log-probs)")
    _check_shapes(logp, old_logp, advantages, mask, ref_logp, max_len)
    valid = mask.bool()  # (B, T)
    m = valid.to(logp.dtype)  # (B, T)
    lengths = m.sum(dim=1)  # (B,)
    adv = advantages.to(logp.dtype)
    adv = adv[:, None] if adv.dim() == 1 else adv  # (B, 1) or (B, T)

    logratio = (logp - old_logp).where(valid, 0.0)  # (B, T); padding garbage (-inf) never reaches exp()
    ratio = importance_ratio(logratio, lengths, ratio_level)  # (B, T) or (B, 1)
    # PPO clipped surrogate (Schulman et al. 2017, eq. 7), CleanRL form: max of the two negated terms;
    # eps_low / eps_high decoupled as DAPO's clip-higher (Yu et al. 2025).
    pg_loss1 = -adv * ratio
    pg_loss2 = -adv * ratio.clamp(1.0 - eps_low, 1.0 + eps_high)
    per_token = pg_loss1.maximum(pg_loss2).expand_as(logp)  # (B, T)
    kl = k3(ref_logp, logp, valid) if ref_logp is not None else None  # (B, T)
    if kl is not None and kl_coef > 0.0:
        per_token = per_token + kl_coef * kl
    loss = aggregate(per_token.where(valid, 0.0), lengths, aggregation, max_len)

    metrics = clip_metrics(ratio.expand_as(logp), adv.expand_as(logp), logratio, m, eps_low, eps_high)
    if kl is not None:
        metrics["kl"] = (kl.detach() * m).sum() / m.sum().clamp(min=1.0)
    return loss, metrics
