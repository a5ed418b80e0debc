"""The template's scorers and their params models.

A scorer is built once per run from validated params (``make_scorer(params)``) and then called with
batches: ``score(samples) -> one result per sample, in order``. A per-sample problem is returned as a
``SampleError`` rather than raised, so one bad sample never costs the batch.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field, field_validator

from botgrpo_core import Sample, SampleError, Span


class BannedWordParams(BaseModel):
    """Params of ``template.banned_word``."""

    model_config = ConfigDict(extra="forbid")  # a typo in the run file is an error, not a silent default

    words: list[str] = Field(..., min_length=1, description="words to penalise")
    penalty: float = Field(-1.0, le=0, description="value on each occurrence's characters (<= 0)")
    ignore_case: bool = Field(True, description="match regardless of case")
    whole_word: bool = Field(True, description="match whole words only ('cat' does not match 'concat')")

    @field_validator("words")
    @classmethod
    def _non_empty(cls, words: list[str]) -> list[str]:
        if any(not w.strip() for w in words):
            raise ValueError("banned words must be non-empty strings")
        return words


class BannedWordScorer:
    """Spans of banned words.

    The words come from the run file, the text from the model: the pattern is an alternation of
    escaped literals, which the ``re`` engine matches in linear time (no backtracking blow-up).
    """

    def __init__(self, params: BannedWordParams) -> None:
        self.params = params
        # Longest first, so "foobar" wins over "foo" when both are banned.
        alternation = "|".join(re.escape(w) for w in sorted(set(params.words), key=len, reverse=True))
        pattern = rf"(?<!\w)(?:{alternation})(?!\w)" if params.whole_word else f"(?:{alternation})"
        self.pattern = re.compile(pattern, re.IGNORECASE if params.ignore_case else 0)

    def score(self, samples: Sequence[Sample]) -> list[list[Span]]:
        return [
            [
                Span(m.start(), m.end(), self.params.penalty, {"word": m.group(0)})
                for m in self.pattern.finditer(s.completion)
            ]
            for s in samples
        ]


class KeywordCoverageParams(BaseModel):
    """Params of ``template.keyword_coverage``."""

    model_config = ConfigDict(extra="forbid")

    field: str = Field(
        "keywords", description="row field holding the keywords (a list, or a comma-separated string)"
    )
    ignore_case: bool = Field(True, description="compare case-insensitively")


class KeywordCoverageScorer:
    """``covered / required`` keywords (1.0 when the row requires none)."""

    def __init__(self, params: KeywordCoverageParams) -> None:
        self.params = params

    def _keywords(self, sample: Sample) -> list[str] | SampleError:
        if self.params.field not in sample.row:
            return SampleError(f"row has no field {self.params.field!r}; add it, or set params.field")
        raw = sample.row[self.params.field]
        if isinstance(raw, str):
            raw = raw.split(",")
        if not isinstance(raw, list) or not all(isinstance(k, str) for k in raw):
            return SampleError(
                f"row field {self.params.field!r} must be a list of strings or a comma-separated string"
            )
        return [k.strip() for k in raw if k.strip()]

    def score(self, samples: Sequence[Sample]) -> list[float | SampleError]:
        results: list[float | SampleError] = []
        for sample in samples:
            keywords = self._keywords(sample)
            if isinstance(keywords, SampleError):
                results.append(keywords)
                continue
            if not keywords:
                results.append(1.0)
                continue
            text = sample.completion.casefold() if self.params.ignore_case else sample.completion
            found = sum((k.casefold() if self.params.ignore_case else k) in text for k in keywords)
            results.append(found / len(keywords))
        return results
