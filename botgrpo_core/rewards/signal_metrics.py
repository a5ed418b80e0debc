"""Per-signal batch metrics: one table layout, one reduction, one vocabulary (``signals/<name>/<stat>``).

Each signal gives every rollout a row of :data:`SIGNAL_COLUMNS`; :func:`mixture_metrics` reduces such
rows, over one process's batch (``MixtureOutput.metrics``, ``botgrpo score``) or over the rows of all
processes in training (:mod:`botgrpo_core.engine.batch_metrics`), so the numbers and their names are
the same everywhere. A scorer's own ``metrics()`` are logged beside them (:func:`scorer_metrics`).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from botgrpo_core.signals import SampleError

if TYPE_CHECKING:
    import torch

#: Per rollout and signal (signals in config order): the signal's value (for a local signal the token mean
#: of its aligned values; 0 where failed), failed (0/1), timed out (0/1), spans returned, served by the cache
#: (0/1), clamped (0/1: overlapping spans summed past the signal's bounds on some token, clamped back).
SIGNAL_COLUMNS = ("value", "failed", "timeout", "spans", "cache_hit", "clamped")
#: What :func:`mixture_metrics` logs per signal as ``signals/<name>/<stat>`` (the last two: local only).
SIGNAL_STATS = ("mean", "error_frac", "timeout_frac", "cache_hit_frac", "spans_per_sample", "clamped_frac")
_LOCAL_ONLY = ("spans_per_sample", "clamped_frac")


def signal_columns(
    values: torch.Tensor,
    results: Sequence[Any],
    cached: Sequence[bool],
    lengths: torch.Tensor,
    clamped: Sequence[bool] | None = None,
) -> torch.Tensor:
    """One signal's ``(B, len(SIGNAL_COLUMNS))`` float64 rows.

    :param values: ``(B,)`` global values or ``(B, T)`` aligned local values (0 on padding and where failed).
    :param results: the checked results (a :class:`SampleError` where the sample failed).
    :param cached: per sample, whether the result cache served it.
    :param lengths: ``(B,)`` completion tokens per rollout.
    :param clamped: per sample, whether its aligned values were clamped into the bounds (local signals).
    """
    import torch

    values = values.double()
    value = values if values.dim() == 1 else values.sum(1) / lengths.clamp(min=1).double()  # (B,)
    failed = [isinstance(r, SampleError) for r in results]
    timeout = [isinstance(r, SampleError) and r.reason == "timeout" for r in results]
    spans = [len(r) if isinstance(r, list) else 0 for r in results]
    clamped = list(clamped) if clamped is not None else [False] * len(results)
    flags = torch.tensor([failed, timeout, spans, list(cached), clamped], dtype=torch.float64).reshape(5, -1)
    return torch.cat([value[:, None], flags.T], dim=1)


def mixture_metrics(
    valid: torch.Tensor, outcome: torch.Tensor, signal_table: torch.Tensor, kinds: Mapping[str, str]
) -> dict[str, float]:
    """Statistics of the mixture over ``N`` rollouts (one process's batch, or all processes' in training).

    :param valid: ``(N,)`` nonzero where no ``on_error: nan`` signal dropped the rollout.
    :param outcome: ``(N,)`` the outcome part ``sum_j a_j R_j``.
    :param signal_table: ``(N, len(SIGNAL_COLUMNS) * K)`` the signals' columns, in the order of ``kinds``.
    :param kinds: ``{signal name: "global" | "local"}`` in config order (``RewardMixture.signal_kinds()``).
    :returns: ``reward/valid_frac``, ``reward/outcome_mean`` (over valid rollouts) and, per signal,
        ``signals/<name>/<stat>`` for :data:`SIGNAL_STATS`: the mean value over the samples it did not
        fail on; the shares of the ``N`` samples that failed, timed out and came from the cache; for local
        signals the spans returned per sample and the share whose overlapping spans were clamped.
    """
    ok = valid > 0
    n = max(int(valid.shape[0]), 1)
    out = {
        "reward/valid_frac": float(ok.double().mean()) if valid.numel() else 1.0,
        "reward/outcome_mean": _mean_where(outcome, ok),
    }
    width = len(SIGNAL_COLUMNS)
    for k, (name, kind) in enumerate(kinds.items()):
        block = signal_table[:, width * k : width * (k + 1)].double()
        value, failed, timeout, spans, cached, clamped = block.unbind(1)
        # in SIGNAL_STATS order: mean, error_frac, timeout_frac, cache_hit_frac, spans_per_sample, clamped_frac
        stats = (
            _mean_where(value, failed == 0),
            *(float(c.sum()) / n for c in (failed, timeout, cached, spans, clamped)),
        )
        for stat, v in zip(SIGNAL_STATS, stats, strict=True):
            if stat not in _LOCAL_ONLY or kind == "local":
                out[f"signals/{name}/{stat}"] = v
    return out


def scorer_metrics(name: str, report: Mapping[Any, Any]) -> dict[str, float]:
    """A scorer's ``metrics()`` dict as ``signals/<name>/<key>``.

    A ``<name>/`` prefix on a key is dropped; values that are not one real number are skipped; a key
    named like a batch statistic (:data:`SIGNAL_STATS`) becomes ``signals/<name>/scorer/<key>`` so the
    two never overwrite each other.
    """
    out: dict[str, float] = {}
    for key, value in report.items():
        number = _number(value)
        if number is None:
            continue
        key = str(key).removeprefix(f"{name}/")
        out[f"signals/{name}/{'scorer/' if key in SIGNAL_STATS else ''}{key}"] = number
    return out


def _mean_where(values: torch.Tensor, keep: torch.Tensor) -> float:
    keep = keep & ~values.isnan()
    return float(values[keep].double().mean()) if bool(keep.any()) else math.nan


def _number(value: Any) -> float | None:
    """``value`` as a float when it is one real number (Python, numpy, or a one-element tensor)."""
    if not isinstance(value, numbers.Real) and hasattr(value, "item"):
        try:
            value = value.item()
        except (TypeError, ValueError, RuntimeError):
            return None
    return float(value) if isinstance(value, numbers.Real) else None
