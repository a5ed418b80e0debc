"""Parameters of ``sympy.answer`` and ``sympy.steps`` (checked when the run file is loaded).

Importing this module costs pydantic (and the ``regex`` package) only: sympy is imported by the
workers, never here.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from botgrpo_core.signals.steps import PATTERN_MODES, compile_pattern
from botgrpo_sympy.limits import Limits


def _check_regex(pattern: str | None, what: str) -> str | None:
    if pattern is None:
        return None
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"{what}: invalid regular expression {pattern!r}: {exc}") from exc
    return pattern


class _Common(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    answer_pattern: str | None = Field(
        None,
        description=(
            "regex for the final answer (first non-empty group of the last match); default: the last "
            "\\boxed{}, else the last 'Answer:' / 'Final answer:' / 'A:' line, else 'the answer is ...'"
        ),
    )
    # workers, timeout_s and memory_mb are set at signal level in the run file (rewards.signals[i].workers,
    # SignalSpec.own_pool): the core fills them in here and refuses them inside params
    workers: int = Field(
        2, ge=1, le=64, description="checker processes (never 0: model text is never checked in-process)"
    )
    timeout_s: float = Field(5.0, gt=0, description="hard time limit per completion (the worker is killed)")
    chunk_size: int = Field(
        8,
        ge=1,
        le=256,
        description="completions per worker task (fewer pipe round trips); a chunk that fails or times "
        "out is re-run one completion per task, so a bad completion still costs only its own result",
    )
    memory_mb: int = Field(1024, ge=64, description="memory headroom per checker process (RLIMIT_AS)")
    batch_timeout_s: float | None = Field(
        None,
        gt=0,
        le=86400,
        description="deadline of one batch's checks as a whole (null: none): completions still being checked "
        "then are killed and the rest are not started; all time out (not remembered as bad inputs)",
    )
    seed: int = Field(0, description="seed of the random substitution points (per completion, reproducible)")
    limits: Limits = Field(default_factory=Limits, description="caps on each parsed expression")

    @field_validator("answer_pattern")
    @classmethod
    def _answer_regex(cls, value: str | None) -> str | None:
        return _check_regex(value, "answer_pattern")


class AnswerParams(_Common):
    """``sympy.answer``: is the final answer mathematically equal to the row's reference?"""

    reference_field: str = Field("answer", description="row field holding the reference answer")
    partial_credit: bool = Field(
        False, description="tuples and sets score the fraction of matching elements instead of 0/1"
    )
    rel_tol: float = Field(
        0.0, ge=0, lt=1, description="accept numeric answers within this relative error (0 = exact)"
    )
    unanswered: float = Field(
        -1.0,
        ge=-1,
        le=0,
        description="the value of a completion that states no final answer, or (truncated: unanswered) that the "
        "length cap cut: below a wrong answer's 0, so saying nothing, stopping early or running to the cap never "
        "out-ranks an honest wrong attempt (botgrpo probe); 0 gives the old behaviour",
    )
    truncated: Literal["unanswered", "score"] = Field(
        "unanswered",
        description="a completion the length cap cut: 'unanswered' (its answer is not read: a run-on is never "
        "paid) or 'score' (read like any other)",
    )


class StepsParams(_Common):
    """``sympy.steps``: +1 / -1 / 0 per step for verified / refuted / uncheckable claims."""

    step_split: Literal["auto", "lines", "markers", "regex", "separator"] = Field(
        "auto",
        description="how steps are cut, the same modes as judge.steps (botgrpo_core.signals.steps): 'lines', "
        "'markers' ('Step k:' blocks; text before the first marker is a step too), 'auto' (markers when "
        "present, else lines), 'regex' (each step_regex match is a step), 'separator' (step_regex "
        "matches separate steps)",
    )
    step_regex: str | None = Field(
        None,
        description="markers/auto: the marker regex; regex: the step regex; separator: the separator regex",
    )
    points: int = Field(4, ge=1, le=32, description="random substitution points per identity check")
    check_answer_line: bool = Field(
        True,
        description="a step that only states the final answer is +1 if it equals the last result above, "
        "-1 if it is a number that appears nowhere above (prose and the prompt included), else 0",
    )
    refute_bare_answer: bool = Field(
        True,
        description="with check_answer_line: an answer line with nothing above it in the completion (the answer "
        "alone, no work) is -1, not 0, so giving only the answer never out-ranks an honest attempt that shows its "
        "work (botgrpo probe's bare_answer); false restores 0",
    )
    max_steps: int = Field(
        300, ge=1, description="steps after this many are not checked: one 0 span covers them all"
    )
    max_step_chars: int = Field(2000, ge=1, description="a longer step gets 0 without being checked")
    max_claims_per_step: int = Field(20, ge=1, description="relation chains checked per step (the rest: 0)")
    accept_rounding: bool = Field(
        True, description="'1/3 = 0.33' counts as correct when the decimal is the value rounded or truncated"
    )
    truncated_cut: Literal["line", "sentence"] = Field(
        "sentence",
        description="a completion the length cap cut: what of its unfinished end is no claim. 'sentence' "
        "(default): only the last claim, when it runs into the cut, or what follows the last complete claim, "
        "whatever joins the clauses ('. ', ', ', ' and ', none); 'line': all after the last newline (a one-line "
        "solution cut at the cap has no claim checked: run-on answers escape their -1, issue 56)",
    )
    credit_trivial: bool = Field(
        False,
        description="also give +1 to trivially true claims: tautologies ('7 = 7', 'x = x') and arithmetic on "
        "numbers neither in the prompt nor from an earlier result ('1 + 1 = 2' about 17 apples); off, they "
        "score 0 (padding with them paid, issue 56)",
    )
    repeated_steps: Literal["refute", "zero"] = Field(
        "refute",
        description="a step said again word for word (case, spacing and a trailing '.' aside; >= 6 characters): "
        "-1 ('refute'), or checked like any step ('zero': its claims earn no second +1). Saying a line twice is "
        "padding, and a 0 there would dilute a completion's blame under a per-token mean (botgrpo probe's "
        "lines_twice); a claim restated inside another sentence is not a repeated step and keeps credit-once",
    )
    max_credited_spans: int | None = Field(
        20,
        ge=0,
        description="most +1 spans one completion earns (later verified spans score 0; null: no bound): "
        "about the verified steps a solution needs, so credit cannot grow with padding (issue 56)",
    )
    soft_timeout_share: float | None = Field(
        0.5,
        gt=0,
        lt=1,
        description="after this share of timeout_s the checker stops by itself: the spans found so far stand (a "
        "-1 included), the rest is one 0 span (null: only the pool's kill, which loses them all, issue 56)",
    )
    blank_value: float = Field(
        -1.0,
        ge=-1.0,
        le=0.0,
        description="the value of a completion with no visible text (white space only): one span over it, so "
        "saying nothing never out-ranks an honest wrong attempt (issue 56); 0 leaves it a 0 span",
    )

    @field_validator("step_regex")
    @classmethod
    def _step_regex(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                compile_pattern(value)  # the flavour and flags the splitter runs it with
            except ValueError as exc:
                raise ValueError(f"step_regex: {exc}") from exc
        return value

    @model_validator(mode="after")
    def _regex_needed(self) -> StepsParams:
        if self.step_split in PATTERN_MODES and not self.step_regex:
            example = "'\\n\\n'" if self.step_split == "separator" else "'(?m)^.+=.+$'"
            raise ValueError(f"step_split: {self.step_split} needs step_regex (e.g. {example})")
        return self
