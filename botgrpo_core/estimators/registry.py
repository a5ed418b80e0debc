"""The estimator registry: names, functions and what each needs (outcome-level or token-level).

A run file names an estimator (``algorithm.estimator``); a plugin adds one through
``botgrpo_register_estimators``. Each :class:`EstimatorInfo` says whether the estimator is outcome-level
(fits a sequence-level ratio) and what its statistics need from the other processes' rollouts
(``statistics``); the moments-based built-ins also name their :data:`CoefficientsFn`, through which
``estimators.gathered`` runs them on one process or many.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from torch import Tensor

EstimatorFn = Callable[..., "Tensor"]
"""``fn(token_rewards (B, T) float, mask (B, T) bool, group_index (B,) long, num_groups: int, **options)
-> (B, T)`` advantages, 0 on padding. Options are keyword-only and come from the run file."""

CoefficientsFn = Callable[..., "tuple[Tensor | None, Tensor]"]
"""``coefficients(moments (N, 3) float64, group_index (N,) long, num_groups: int, **options)
-> (scale (N,) | None, shift (N,))`` float64: an estimator whose advantage is affine in the token reward
per rollout, ``A[i, t] = scale[i] * r[i, t] + shift[i]``, with the coefficients computed from the
per-rollout moments ``[mean_t r, mean_t r^2, L]`` alone (``bot``: ``scale = 1 / (std_g + eps)``,
``shift = -mu_g * scale``; ``grpo``: ``scale = None``, i.e. 0, ``shift = A_i``). The options are the
estimator's own, without ``nan_policy`` (which acts on the moments, before this function)."""

Statistics = Literal["moments", "outcome", "tokens"]
"""What an estimator's group statistics need from each rollout, which decides what a distributed trainer
gathers: ``"moments"`` the ``(B, 3)`` token moments (bag-of-tokens estimators), ``"outcome"`` only the
rollout's token-mean reward (outcome-level estimators), ``"tokens"`` every token reward ``(B, T)``
(step-level and plugin estimators)."""


@dataclass(frozen=True)
class EstimatorInfo:
    """A registered estimator and what it needs; torch-free until :attr:`fn` is first read."""

    name: str
    target: EstimatorFn | str  # the function, or "module:attribute" for a built-in (imported on first use)
    outcome_level: bool = False  # one advantage per rollout (fits a sequence-level ratio)
    statistics: Statistics = "tokens"
    coefficients: CoefficientsFn | str | None = None  # "moments"/"outcome" estimators (see CoefficientsFn)
    builtin: bool = False  # built-ins are trusted to return float32, 0 on padding

    @property
    def fn(self) -> EstimatorFn:
        return _load(self.target)

    @property
    def coefficients_fn(self) -> CoefficientsFn:
        """The estimator's :data:`CoefficientsFn`; only ``"moments"`` and ``"outcome"`` estimators have one."""
        if self.coefficients is None:
            raise ValueError(f"estimator {self.name!r} needs every token reward (statistics='tokens')")
        return _load(self.coefficients)


def _load(target: Callable[..., Any] | str) -> Any:
    if callable(target):
        return target
    module, attr = target.split(":")
    return getattr(importlib.import_module(module), attr)


_BUILTINS = "botgrpo_core.estimators"
_REGISTRY: dict[str, EstimatorInfo] = {
    info.name: info
    for info in (
        EstimatorInfo(
            "bot",
            f"{_BUILTINS}.pooled:bot",
            statistics="moments",
            coefficients=f"{_BUILTINS}.pooled:bot_coefficients",
            builtin=True,
        ),
        EstimatorInfo(
            "token_pool",
            f"{_BUILTINS}.pooled:token_pool",
            statistics="moments",
            coefficients=f"{_BUILTINS}.pooled:token_pool_coefficients",
            builtin=True,
        ),
        EstimatorInfo(
            "grpo",
            f"{_BUILTINS}.outcome:grpo",
            outcome_level=True,
            statistics="outcome",
            coefficients=f"{_BUILTINS}.outcome:grpo_coefficients",
            builtin=True,
        ),
        EstimatorInfo(
            "dr_grpo",
            f"{_BUILTINS}.outcome:dr_grpo",
            outcome_level=True,
            statistics="outcome",
            coefficients=f"{_BUILTINS}.outcome:dr_grpo_coefficients",
            builtin=True,
        ),
        EstimatorInfo("process", f"{_BUILTINS}.stepwise:process", builtin=True),
        EstimatorInfo("pure", f"{_BUILTINS}.stepwise:pure", builtin=True),
    )
}
BUILTIN_ESTIMATORS = frozenset(_REGISTRY)


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
        owner = getattr(_REGISTRY[name].target, "__module__", "?")
        raise ValueError(
            f"estimator {name!r} is already registered (by {owner}); choose another name, "
            "or pass overwrite=True to replace it"
        )
    _REGISTRY[name] = EstimatorInfo(name, fn, outcome_level=outcome_level)


def available_estimators() -> list[str]:
    """Names of all registered estimators, sorted."""
    return sorted(_REGISTRY)


def estimator_info(name: str) -> EstimatorInfo:
    """The registration of ``name``.

    :raises KeyError: unknown name; the message lists the available names and the nearest match.
    """
    try:
        return _REGISTRY[name]
    except KeyError:
        close = difflib.get_close_matches(str(name), _REGISTRY, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise KeyError(
            f"unknown advantage estimator {name!r}.{hint} Available: {', '.join(available_estimators())}. "
            "Set algorithm.estimator to one of these, or register one with "
            "botgrpo_core.estimators.registry.register_estimator / the botgrpo_register_estimators hook."
        ) from None


def get_estimator(name: str) -> EstimatorFn:
    """The estimator function registered as ``name``.

    :raises KeyError: unknown name; the message lists the available names and the nearest match.
    """
    return estimator_info(name).fn


def _accepts(fn: Callable[..., Any], option: str) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return True
    return option in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def estimator_is_outcome_level(name: str) -> bool:
    """Whether ``name`` gives one advantage per rollout (safe with a sequence-level ratio)."""
    return estimator_info(name).outcome_level
