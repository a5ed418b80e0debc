"""Real plugins used by the tests: well-behaved signals and ones that fail in every documented way.

They live in an importable module (not inside test functions) so worker processes can rebuild them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

import botgrpo_core
from botgrpo_core.signals import Sample, SignalSpec, Span


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")
    word: str = "bad"
    value: float = -1.0


class WordSpans:
    """Local: every occurrence of ``word`` gets ``value``."""

    def __init__(self, params: Params) -> None:
        self.params = params

    def score(self, samples: Sequence[Sample]) -> list[list[Span]]:
        out = []
        for s in samples:
            spans, start = [], s.completion.find(self.params.word)
            while start >= 0:
                spans.append(Span(start, start + len(self.params.word), self.params.value))
                start = s.completion.find(self.params.word, start + 1)
            out.append(spans)
        return out


class EndsWithDot:
    """Global: 1 if the completion ends with '.', else 0; raises on 'boom', hangs on 'hang', NaN on 'nan'."""

    def __init__(self, params: BaseModel) -> None:
        self.calls = 0

    def score(self, samples: Sequence[Sample]) -> list[float]:
        self.calls += 1
        out = []
        for s in samples:
            if "boom" in s.completion:
                raise RuntimeError("boom in the scorer")
            if "hang" in s.completion:
                while True:  # a real hang (busy loop), killed by the pool's timeout
                    pass
            out.append(math.nan if "nan" in s.completion else float(s.completion.endswith(".")))
        return out


class WrongLength:
    def __init__(self, params: BaseModel) -> None:
        pass

    def score(self, samples: Sequence[Sample]) -> list[float]:
        return [1.0] * (len(samples) + 1)


class OutOfBounds:
    def __init__(self, params: BaseModel) -> None:
        pass

    def score(self, samples: Sequence[Sample]) -> list[object]:
        return [5.0 if "big" in s.completion else [Span(0, 10_000, 1.0)] for s in samples]


class PastEnd:
    def __init__(self, params: BaseModel) -> None:
        pass

    def score(self, samples: Sequence[Sample]) -> list[list[Span]]:
        return [[Span(0, len(s.completion) + 5, -1.0)] for s in samples]


class BadSpans:
    """Malformed local results, one kind per sample (by its last character's code modulo 4): float
    offsets, a NaN value (Span raises, so the whole batch is re-scored one sample at a time), a non-Span
    item, and a fine one."""

    def __init__(self, params: BaseModel) -> None:
        pass

    def score(self, samples: Sequence[Sample]) -> list[list[Any]]:
        kinds = [
            lambda: [Span(0, 1, -1.0), Span(0.5, 2, -1.0)],  # type: ignore[arg-type]
            lambda: [Span(0, 1, float("nan"))],
            lambda: [Span(0, 1, -1.0), (0, 1, -1.0)],
            lambda: [Span(0, 1, -1.0), Span(1, 2, -0.5)],  # fine
        ]
        return [kinds[ord(s.completion[-1]) % len(kinds)]() for s in samples]


SPECS = {
    "test.word": SignalSpec("test.word", "local", (-1.0, 1.0), WordSpans, Params, "word spans"),
    "test.dot": SignalSpec("test.dot", "global", (0.0, 1.0), EndsWithDot, description="ends with a dot"),
    "test.wrong_length": SignalSpec("test.wrong_length", "global", (0.0, 1.0), WrongLength),
    "test.out_of_bounds": SignalSpec("test.out_of_bounds", "global", (0.0, 1.0), OutOfBounds),
    "test.past_end": SignalSpec("test.past_end", "local", (-1.0, 0.0), PastEnd),
    "test.bad_spans": SignalSpec("test.bad_spans", "local", (-1.0, 0.0), BadSpans),
}


class TestPlugin:
    """A plugin object registering every fixture signal."""

    @botgrpo_core.hookimpl
    def botgrpo_register_signals(self, register: Callable[[SignalSpec], None]) -> None:
        for spec in SPECS.values():
            register(spec)


class DuplicatePlugin:
    @botgrpo_core.hookimpl
    def botgrpo_register_signals(self, register: Callable[[SignalSpec], None]) -> None:
        register(SPECS["test.dot"])
