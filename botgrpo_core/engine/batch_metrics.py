"""Metrics of one generation batch, from the per-rollout tables all processes gathered (pure functions).

The trainer exchanges two small tables per batch, rows ``[p * B, (p + 1) * B)`` from process ``p``,
groups consecutive blocks of ``G`` rows (TRL's layout), so every process computes the same numbers:

- the rollout table ``(N, len(ROLLOUT_COLUMNS) + len(SIGNAL_COLUMNS) * K)``: the token rewards' moments,
  valid, outcome and success, then the mixture's signal columns (:mod:`botgrpo_core.rewards.signal_metrics`);
- the advantage table ``(N, len(ADVANTAGE_COLUMNS))`` from :func:`advantage_columns`.

Names follow TRL's style (``family/statistic``): ``reward/*``, ``completion/length_mean``,
``success_rate``, ``groups/*``, ``advantages/*`` and ``signals/<name>/*`` (docs/concepts.md lists them).
"""

from __future__ import annotations

from collections.abc import Mapping

import torch

from botgrpo_core.engine.batches import _masked_mean
from botgrpo_core.estimators.moments import group_stats_from_moments
from botgrpo_core.rewards.signal_metrics import mixture_metrics

#: The rollout table's first columns (the signal columns follow): ``[mean_t r, mean_t r^2, L]`` of the
#: token rewards (``rollout_moments``), valid (0/1), the outcome ``sum_j a_j R_j``, success (0/1, NaN unknown).
ROLLOUT_COLUMNS = ("mean", "mean_sq", "length", "valid", "outcome", "success")
#: Per rollout, over its valid tokens: count, sum A, sum A^2, sum |A|, min A, max A (+inf / -inf if none).
ADVANTAGE_COLUMNS = ("count", "sum", "sum_sq", "abs_sum", "min", "max")
_COL = {name: i for i, name in enumerate(ROLLOUT_COLUMNS)}


def advantage_columns(advantages: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``(B, T)`` advantages and completion mask -> the ``(B, len(ADVANTAGE_COLUMNS))`` float64 rows."""
    m = mask.bool()
    a = torch.where(m, advantages.double(), 0.0)  # (B, T)
    inf = torch.tensor(float("inf"), dtype=torch.float64, device=a.device)
    if a.shape[1]:
        low, high = torch.where(m, a, inf).amin(1), torch.where(m, a, -inf).amax(1)
    else:  # no tokens at all
        low, high = inf.expand(a.shape[0]), (-inf).expand(a.shape[0])
    return torch.stack([m.sum(1).double(), a.sum(1), (a * a).sum(1), a.abs().sum(1), low, high], dim=1)


def batch_metrics(
    rollouts: torch.Tensor, advantages: torch.Tensor, group_size: int, kinds: Mapping[str, str]
) -> dict[str, float]:
    """All metrics of a generation batch.

    :param rollouts: ``(N, len(ROLLOUT_COLUMNS) + len(SIGNAL_COLUMNS) * K)`` the gathered rollout table.
    :param advantages: ``(N, len(ADVANTAGE_COLUMNS))`` the gathered :func:`advantage_columns`.
    :param group_size: ``G``; a trailing partial group is left out of the ``groups/*`` shares.
    :param kinds: ``{signal name: kind}`` in config order (``RewardMixture.signal_kinds()``).
    """
    ok = rollouts[:, _COL["valid"]] > 0
    success = rollouts[:, _COL["success"]]
    out = {
        "reward/token_mean": _masked_mean(rollouts[:, _COL["mean"]], ok),
        "completion/length_mean": float(rollouts[:, _COL["length"]].mean()) if len(rollouts) else 0.0,
    }
    if not torch.isnan(success).all():
        out["success_rate"] = _masked_mean(success, ok)
    out.update(group_metrics(rollouts, advantages, group_size))
    out.update(advantage_metrics(advantages))
    signals = rollouts[:, len(ROLLOUT_COLUMNS) :]
    out.update(mixture_metrics(ok, rollouts[:, _COL["outcome"]], signals, kinds))
    return out


def group_metrics(rollouts: torch.Tensor, advantages: torch.Tensor, group_size: int) -> dict[str, float]:
    """Shares of groups without a learning signal, three ways.

    - ``groups/zero_spread_frac``: all valid token rewards of the group are equal (population std 0 of
      the pooled token rewards): no estimator can tell its rollouts apart;
    - ``groups/outcome_zero_spread_frac``: all outcomes are equal (no signal for GRPO, which only sees them);
    - ``groups/no_signal_frac``: every advantage of the group is 0 under the configured estimator (the
      groups DAPO's dynamic sampling drops). Under BoT a group whose outcomes tie still learns from its
      local signals, so this is the share that tells whether a run learns.
    """
    G = group_size
    groups = rollouts.shape[0] // G if G else 0
    if not groups:
        return {
            "groups/zero_spread_frac": 0.0,
            "groups/outcome_zero_spread_frac": 0.0,
            "groups/no_signal_frac": 0.0,
        }
    rows = rollouts[: groups * G]
    group_index = torch.arange(groups * G, device=rows.device) // G
    moments = rows[:, [_COL["mean"], _COL["mean_sq"], _COL["length"]]]
    _, std, _ = group_stats_from_moments(moments, group_index, groups, std="population")
    present = (rows[:, _COL["length"]] > 0).view(groups, G)
    outcomes = rows[:, _COL["outcome"]].view(groups, G)
    big = torch.finfo(torch.float64).max
    o_max = torch.where(present, outcomes, -big).amax(1)
    o_min = torch.where(present, outcomes, big).amin(1)
    silent = (advantages[: groups * G, ADVANTAGE_COLUMNS.index("abs_sum")] == 0).view(groups, G).all(1)
    return {
        "groups/zero_spread_frac": float((std == 0).double().mean()),
        "groups/outcome_zero_spread_frac": float((o_max <= o_min).double().mean()),
        "groups/no_signal_frac": float(silent.double().mean()),
    }


def advantage_metrics(advantages: torch.Tensor) -> dict[str, float]:
    """Mean, std, mean |A|, min and max of the advantages over the valid tokens of all rollouts."""
    count, total, total_sq, abs_total, low, high = advantages.double().unbind(1)  # (N,) each
    n = count.sum().clamp(min=1.0)
    mean = total.sum() / n
    tokens = bool(count.sum() > 0)
    return {
        "advantages/mean": float(mean),
        "advantages/std": float((total_sq.sum() / n - mean**2).clamp(min=0).sqrt()),
        "advantages/abs_mean": float(abs_total.sum() / n),
        "advantages/min": float(low.min()) if tokens else 0.0,
        "advantages/max": float(high.max()) if tokens else 0.0,
    }
