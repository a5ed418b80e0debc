"""Entry point ``sympy = "botgrpo_sympy.plugin"``: registers ``sympy.answer`` and ``sympy.steps``.

Importing this module costs pydantic only; sympy, latex2sympy2 and the checker processes are
started by ``make_scorer`` when a run actually uses one of the signals.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from botgrpo_core.signals import SignalSpec
from botgrpo_core.signals.hookspecs import hookimpl
from botgrpo_sympy.params import AnswerParams, StepsParams

if TYPE_CHECKING:
    from botgrpo_sympy.scorers import AnswerScorer, StepsScorer


def make_answer_scorer(params: AnswerParams) -> AnswerScorer:
    """Build the ``sympy.answer`` scorer (starts its checker processes on first use)."""
    from botgrpo_sympy.scorers import AnswerScorer

    return AnswerScorer(params)


def make_steps_scorer(params: StepsParams) -> StepsScorer:
    """Build the ``sympy.steps`` scorer (starts its checker processes on first use)."""
    from botgrpo_sympy.scorers import StepsScorer

    return StepsScorer(params)


def answer_fields(params: AnswerParams) -> tuple[str, ...]:
    """The row field ``sympy.answer`` reads (checked before training)."""
    return (params.reference_field,)


def answer_bounds(params: AnswerParams) -> tuple[float, float]:
    """``[unanswered, 1]``: no answer (or a cut completion) below a wrong one's 0, a right one 1."""
    return (min(params.unanswered, 0.0), 1.0)


def answer_gap(params: AnswerParams) -> float:
    """The smallest difference between two values: right 1 vs wrong 0, or wrong 0 vs ``unanswered``."""
    return min([1.0] + ([-params.unanswered] if params.unanswered < 0 else []))


ANSWER = SignalSpec(
    name="sympy.answer",
    kind="global",
    bounds=answer_bounds,
    gap=answer_gap,
    make_scorer=make_answer_scorer,
    params_model=AnswerParams,
    required_fields=answer_fields,
    own_pool=True,  # guarded checker processes; workers/timeout_s/memory_mb come from the signal level
    description="1 if the final answer (\\boxed{}, 'Answer:', 'A:' or a pattern) equals the reference, 0 if "
    "not, -1 (params.unanswered) if none is stated or the length cap cut the completion; checked with sympy "
    "under time and memory limits",
)

STEPS = SignalSpec(
    name="sympy.steps",
    kind="local",
    bounds=(-1.0, 1.0),
    make_scorer=make_steps_scorer,
    params_model=StepsParams,
    own_pool=True,
    description="per step: +1 verified, -1 refuted, 0 not checkable (arithmetic, identities, equations)",
)


@hookimpl
def botgrpo_register_signals(register: Callable[[SignalSpec], None]) -> None:
    """Register ``sympy.answer`` and ``sympy.steps``."""
    register(ANSWER)
    register(STEPS)
