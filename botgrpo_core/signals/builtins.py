"""Signals built into the core (namespace ``core``), so a user can start without writing a plugin.

- ``core.regex`` (local): every match of a pattern in the completion gets a value on its span.
- ``core.exact_answer`` (global): the extracted final answer equals a reference field of the row.
- ``core.length`` (global): DAPO's overlong reward shaping (Yu et al. 2025, "DAPO", eq. 13).

Patterns come from the run file (trusted) but run on model output (untrusted), so they run through
the ``regex`` package with a per-call timeout: a catastrophic-backtracking pattern costs one sample.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

import regex
from pydantic import BaseModel, ConfigDict, Field, field_validator

from botgrpo_core.signals import Sample, SampleError, SignalSpec, Span
from botgrpo_core.signals.answers import ANSWER_LINE, exact_number, last_boxed
from botgrpo_core.signals.hookspecs import hookimpl


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _compile(pattern: str, ignore_case: bool = False, multiline: bool = True) -> regex.Pattern:
    flags = (regex.IGNORECASE if ignore_case else 0) | (regex.MULTILINE if multiline else 0)
    try:
        return regex.compile(pattern, flags)
    except regex.error as exc:
        raise ValueError(f"invalid regular expression {pattern!r}: {exc}") from exc


# --- core.regex ------------------------------------------------------------------------------------------
class RegexParams(_Params):
    pattern: str = Field(..., description="regular expression searched in the completion")
    value: float = Field(-1.0, description="value given to each match's span")
    group: int | str = Field(0, description="capture group whose span gets the value (0 = whole match)")
    ignore_case: bool = Field(False, description="case-insensitive matching")
    max_matches: int = Field(1000, gt=0, description="at most this many spans per completion")
    timeout_s: float = Field(1.0, gt=0, description="per-completion regex time limit")

    @field_validator("pattern")
    @classmethod
    def _valid_pattern(cls, pattern: str) -> str:
        _compile(pattern)
        return pattern


class RegexScorer:
    def __init__(self, params: RegexParams) -> None:
        self.params = params
        self.compiled = _compile(params.pattern, params.ignore_case)

    def score(self, samples: Sequence[Sample]) -> list[list[Span] | SampleError]:
        p = self.params
        results: list[list[Span] | SampleError] = []
        for sample in samples:
            spans: list[Span] = []
            try:
                for match in self.compiled.finditer(sample.completion, timeout=p.timeout_s):
                    start, end = match.span(p.group)
                    if start >= 0:
                        spans.append(Span(start, end, p.value, {"match": match.group(p.group)[:80]}))
                    if len(spans) >= p.max_matches:
                        break
            except TimeoutError:
                results.append(SampleError(f"regex took over {p.timeout_s} s", reason="timeout"))
                continue
            results.append(spans)
        return results


# --- core.exact_answer -------------------------------------------------------------------------------------
class ExactAnswerParams(_Params):
    pattern: str | None = Field(
        None,
        description="regex whose first non-empty group is the answer (the last match counts); by default the "
        "last \\boxed{} (braces matched), else the last 'Answer:' / 'Final answer:' / 'A:' line",
    )
    reference_field: str = Field("answer", description="row field holding the reference answer")
    numeric: bool = Field(
        True, description="compare as exact numbers (ints, decimals, fractions) when both parse"
    )
    ignore_case: bool = Field(False, description="case-insensitive string comparison")
    timeout_s: float = Field(1.0, gt=0, description="per-completion regex time limit")

    @field_validator("pattern")
    @classmethod
    def _valid_pattern(cls, pattern: str | None) -> str | None:
        if pattern is not None:
            _compile(pattern)
        return pattern


class ExactAnswerScorer:
    def __init__(self, params: ExactAnswerParams) -> None:
        self.params = params
        self.compiled = None if params.pattern is None else _compile(params.pattern, params.ignore_case)

    def extract(self, completion: str) -> str | None:
        """The completion's final answer (see ``ExactAnswerParams.pattern``), stripped, or ``None``."""
        if self.compiled is None:
            box = last_boxed(completion)
            if box is not None:
                return completion[box.start : box.end].strip().rstrip(".")
            lines = ANSWER_LINE.findall(completion)
            return lines[-1].strip().rstrip(".") if lines else None
        last = None
        for match in self.compiled.finditer(completion, timeout=self.params.timeout_s):
            last = match
        if last is None:
            return None
        groups = [g for g in last.groups() if g] or [last.group(0)]
        return groups[0].strip().rstrip(".")

    def score(self, samples: Sequence[Sample]) -> list[float | SampleError]:
        p = self.params
        results: list[float | SampleError] = []
        for sample in samples:
            if p.reference_field not in sample.row:
                results.append(
                    SampleError(f"row has no field {p.reference_field!r} (set reference_field in params)")
                )
                continue
            try:
                answer = self.extract(sample.completion)
            except TimeoutError:
                results.append(SampleError(f"regex took over {p.timeout_s} s", reason="timeout"))
                continue
            reference = str(sample.row[p.reference_field]).strip()
            if answer is None:
                results.append(0.0)
                continue
            if p.numeric:
                a, r = exact_number(answer), exact_number(reference)
                if a is not None and r is not None:
                    results.append(float(a == r))
                    continue
            same = answer.casefold() == reference.casefold() if p.ignore_case else answer == reference
            results.append(float(same))
        return results


# --- core.length -----------------------------------------------------------------------------------------
class LengthParams(_Params):
    max_length: int = Field(..., gt=0, description="L_max: lengths above it get -1")
    cache: int = Field(
        ..., ge=0, description="L_cache: the soft zone (L_max - L_cache, L_max] where the penalty ramps"
    )
    unit: Literal["tokens", "chars"] = Field(
        "tokens", description="measure the length in tokens or characters"
    )

    def model_post_init(self, __context: object) -> None:
        if self.cache > self.max_length:
            raise ValueError("cache must be <= max_length")


class LengthScorer:
    """DAPO overlong shaping: 0 up to ``L_max - L_cache``, linear to -1 at ``L_max``, -1 beyond."""

    def __init__(self, params: LengthParams) -> None:
        self.params = params

    def score(self, samples: Sequence[Sample]) -> list[float]:
        p = self.params
        soft_start = p.max_length - p.cache
        out = []
        for sample in samples:
            length = len(sample.token_ids) if p.unit == "tokens" else len(sample.completion)
            if length <= soft_start:
                out.append(0.0)
            elif length <= p.max_length:
                out.append((soft_start - length) / p.cache)
            else:
                out.append(-1.0)
        return out


def _regex_bounds(params: RegexParams) -> tuple[float, float]:
    # Matches can overlap only through a capture group: a span count times the value bounds a token.
    return (min(0.0, params.value), max(0.0, params.value))


SIGNALS = (
    SignalSpec(
        name="core.regex",
        kind="local",
        bounds=_regex_bounds,
        params_model=RegexParams,
        make_scorer=RegexScorer,
        description="spans matching a regular expression get a value",
    ),
    SignalSpec(
        name="core.exact_answer",
        kind="global",
        bounds=(0.0, 1.0),
        params_model=ExactAnswerParams,
        make_scorer=ExactAnswerScorer,
        description="1 if the extracted final answer equals the row's reference field, else 0",
        required_fields=lambda params: (params.reference_field,),
    ),
    SignalSpec(
        name="core.length",
        kind="global",
        bounds=(-1.0, 0.0),
        params_model=LengthParams,
        make_scorer=LengthScorer,
        description="DAPO overlong reward shaping (0 .. -1)",
    ),
)


@hookimpl
def botgrpo_register_signals(register: Callable[[SignalSpec], None]) -> None:
    for spec in SIGNALS:
        register(spec)
