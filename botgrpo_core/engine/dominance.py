"""Outcome dominance when part of the outcome comes from TRL ``reward_funcs``.

The run-file check (:func:`botgrpo_core.config.checks.outcome_dominance`) sees only the mixture's own
global signals. A trainer's TRL reward functions add to the outcome ``R[i]`` (weighted by
``GRPOConfig.reward_weights``) with no declared bounds, so the smallest gap ``d`` between distinct outcomes
is known only

- from a declared range: a reward function with a ``bounds = (low, high)`` attribute (as a signal's
  ``SignalSpec.bounds``) is taken as binary at its bounds, ``d_f = |w_f| (high - low)``, as the run-file
  check takes a global signal; checked when the trainer is built, when every function declares one;
- or from the rollouts: the smallest positive gap between the outcomes of rollouts of one group over the
  first ``window`` training batches; checked at each of them, silent until two outcomes differ.

The condition, its message and the values of ``alpha`` / ``beta`` that make it hold are the run-file
check's (one home); with ``rewards.strict`` a failure is an error.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import torch

from botgrpo_core.config.checks import dominance_message, outcome_dominance
from botgrpo_core.config.errors import ConfigError, OutcomeDominanceWarning

#: Outcomes closer than this (relative to their scale) count as equal (float noise of weighted sums).
_TOLERANCE = 1e-6


def declared_bounds(func: Callable[..., Any]) -> tuple[float, float] | None:
    """A reward function's ``bounds = (low, high)`` attribute, when it is two finite numbers with low <= high."""
    bounds = getattr(func, "bounds", None)
    try:
        low, high = (float(b) for b in bounds)  # type: ignore[union-attr]
    except (TypeError, ValueError):
        return None
    return (low, high) if math.isfinite(low) and math.isfinite(high) and low <= high else None


def smallest_group_gap(outcome: torch.Tensor, group_size: int) -> float | None:
    """The smallest positive difference between two outcomes of one group (consecutive blocks of
    ``group_size`` rows), or ``None`` when every group's outcomes are equal (NaN outcomes left out)."""
    groups = outcome.shape[0] // group_size if group_size else 0
    if not groups:
        return None
    values = outcome[: groups * group_size].double().view(groups, group_size)
    values = torch.where(torch.isnan(values), torch.inf, values).sort(dim=1).values  # (groups, G)
    gaps = values[:, 1:] - values[:, :-1]  # (groups, G - 1); a gap to a NaN outcome is inf or NaN: dropped
    finite = values[torch.isfinite(values)]
    scale = float(finite.abs().max()) if finite.numel() else 1.0
    positive = gaps[torch.isfinite(gaps) & (gaps > _TOLERANCE * max(scale, 1.0))]
    return float(positive.min()) if positive.numel() else None


class OutcomeDominance:
    """The outcome-dominance check of a trainer whose outcome includes TRL reward functions.

    :param mixture: the trainer's :class:`~botgrpo_core.rewards.mixture.RewardMixture`.
    :param reward_funcs: the TRL reward functions (each may declare ``bounds``).
    :param reward_weights: ``GRPOConfig.reward_weights`` (``None``: all 1).
    :param observe_only: outcomes come also from elsewhere (an environment's ``get_reward``): observe.
    :param window: how many training batches to observe before giving up silently.
    """

    def __init__(
        self,
        mixture: Any,
        reward_funcs: Sequence[Callable[..., Any]],
        reward_weights: Sequence[float] | None,
        *,
        observe_only: bool = False,
        window: int = 4,
    ) -> None:
        self.config = mixture.config
        self._bounds = [(r.config, r, r.bounds) for r in mixture.runners]
        own = outcome_dominance(self.config, self._bounds)
        self._signal_gap: float | None = own["outcome_gap"]
        #: still to be decided: local signals can move tokens, and the outcome has a part the mixture lacks
        self.pending = (
            own["two_beta_local"] > 0
            and self.config.outcome_gap is None
            and (bool(reward_funcs) or observe_only)
        )
        self.window, self.seen = window, 0
        self.gap: float | None = None
        self.result: dict[str, Any] | None = None
        if not self.pending or observe_only:
            return
        weights = list(reward_weights) if reward_weights is not None else [1.0] * len(reward_funcs)
        declared = [declared_bounds(f) for f in reward_funcs]
        if all(b is not None for b in declared):
            gaps = [abs(w) * (b[1] - b[0]) for w, b in zip(weights, declared) if abs(w) * (b[1] - b[0]) > 0]
            self._decide(min(gaps) if gaps else None, "the reward_funcs' declared bounds")

    def observe(self, outcome: torch.Tensor, group_size: int) -> None:
        """Check with the outcomes ``(N,)`` of one training batch (groups of ``group_size`` consecutive rows)."""
        if not self.pending:
            return
        self.seen += 1
        gap = smallest_group_gap(outcome, group_size)
        if gap is not None:
            self.gap = gap if self.gap is None else min(self.gap, gap)
            self._decide(self.gap, f"the outcomes of the first {self.seen} training batch(es)", final=False)
        if self.seen >= self.window:
            self.pending = False

    def _decide(self, gap: float | None, source: str, final: bool = True) -> None:
        if final:
            self.pending = False
        if gap is None:
            return
        if self._signal_gap is not None:
            gap = min(gap, self._signal_gap)
        self.result = outcome_dominance(self.config.model_copy(update={"outcome_gap": gap}), self._bounds)
        if self.result["holds"]:
            return
        self.pending = False
        message = (
            dominance_message(self.result, self.config.alpha, self.config.beta)
            + f". d = {gap:.4g} comes from {source} (reward_funcs x GRPOConfig.reward_weights plus the mixture's "
            "global signals); if your reward's smallest real gap is larger, give the function a "
            "`bounds = (low, high)` attribute or set rewards.outcome_gap"
        )
        if self.config.strict:
            raise ConfigError(message + " (rewards.strict: true makes this an error)")
        warnings.warn(message, OutcomeDominanceWarning, stacklevel=3)
