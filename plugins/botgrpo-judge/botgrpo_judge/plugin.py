"""Entry point of the ``judge`` plugin: registers ``judge.steps`` and ``judge.outcome``.

Cheap to import (pydantic and Jinja only): torch, transformers, httpx and vLLM load inside
``make_*_scorer``, and only the chosen backend's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from botgrpo_core.signals import SignalSpec
from botgrpo_core.signals.hookspecs import hookimpl
from botgrpo_judge.params import JudgeParams, OutcomeParams, StepsParams

if TYPE_CHECKING:
    from botgrpo_judge.scorer import JudgeScorer


def judge_bounds(params: JudgeParams) -> tuple[float, float]:
    """Declared bounds of both signals: the ``range`` param."""
    return params.bounds()


def judge_required_fields(params: JudgeParams) -> tuple[str, ...]:
    """Row fields named by ``question_field`` and ``reference_field``."""
    return tuple(f for f in (params.question_field, params.reference_field) if f)


def make_steps_scorer(params: StepsParams) -> JudgeScorer:
    """Scorer of ``judge.steps`` (loads the judge backend)."""
    from botgrpo_judge.scorer import JudgeScorer

    return JudgeScorer(params, "steps")


def make_outcome_scorer(params: OutcomeParams) -> JudgeScorer:
    """Scorer of ``judge.outcome`` (loads the judge backend)."""
    from botgrpo_judge.scorer import JudgeScorer

    return JudgeScorer(params, "outcome")


STEPS = SignalSpec(
    name="judge.steps",
    kind="local",
    bounds=judge_bounds,
    make_scorer=make_steps_scorer,
    params_model=StepsParams,
    required_fields=judge_required_fields,
    description="LLM judge score of each reasoning step (logprob P(yes)-P(no) or a parsed verdict), on its span",
)
OUTCOME = SignalSpec(
    name="judge.outcome",
    kind="global",
    bounds=judge_bounds,
    make_scorer=make_outcome_scorer,
    params_model=OutcomeParams,
    required_fields=judge_required_fields,
    description="LLM judge score of the whole solution, optionally against a reference answer",
)


@hookimpl
def botgrpo_register_signals(register: Callable[[SignalSpec], None]) -> None:
    """Register ``judge.steps`` and ``judge.outcome``."""
    register(STEPS)
    register(OUTCOME)
