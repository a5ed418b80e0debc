"""Real plugins for the adversarial config tests (importable, so entry points can name them)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pydantic import BaseModel, ConfigDict, Field

import botgrpo_core
from botgrpo_core.signals import Sample, SignalSpec, Span


class Inner(BaseModel):
    model_config = ConfigDict(extra="forbid")
    ratio: float = 0.5
    strict: bool = False
    label: bool | str = "x"  # a union with text: any string is fine here


class OwnPoolParams(BaseModel):
    """Params of a signal that runs its own processes (as botgrpo-sympy's do)."""

    model_config = ConfigDict(extra="forbid")
    inner: Inner = Field(default_factory=Inner)
    workers: int = Field(2, ge=1)
    timeout_s: float = Field(5.0, gt=0)
    memory_mb: int = Field(1024, gt=0)


class Zero:
    def __init__(self, params: BaseModel) -> None:
        pass

    def score(self, samples: Sequence[Sample]) -> list[float]:
        return [0.0 for _ in samples]


class MisnamedPlugin:
    """Published under the entry-point name 'published', but its signals say 'actual.*'."""

    @botgrpo_core.hookimpl
    def botgrpo_register_signals(self, register: Callable[[SignalSpec], None]) -> None:
        register(SignalSpec("actual.zero", "global", (0.0, 1.0), Zero))


class OwnPoolPlugin:
    """Declares ``own_pool``: the run file's signal-level workers/timeout_s/memory_mb fill its params."""

    @botgrpo_core.hookimpl
    def botgrpo_register_signals(self, register: Callable[[SignalSpec], None]) -> None:
        register(SignalSpec("ownpool.zero", "global", (0.0, 1.0), Zero, OwnPoolParams, own_pool=True))


class SharedKeysPlugin:
    """Params that name the pool keys without ``own_pool``: the core pool applies."""

    @botgrpo_core.hookimpl
    def botgrpo_register_signals(self, register: Callable[[SignalSpec], None]) -> None:
        register(SignalSpec("sharedkeys.zero", "global", (0.0, 1.0), Zero, OwnPoolParams))


class StringValueSpans:
    """A local signal whose value arrives as text for completions containing 'str' (a JSON verdict the
    plugin forgot to convert), NaN for 'nan', and a real number otherwise."""

    def __init__(self, params: BaseModel) -> None:
        pass

    def score(self, samples: Sequence[Sample]) -> list[list[Span]]:
        values = {"str": "-1", "nan": float("nan")}
        return [[Span(0, 1, values.get(s.completion, -1.0))] for s in samples]  # type: ignore[arg-type]


class TextPlugin:
    @botgrpo_core.hookimpl
    def botgrpo_register_signals(self, register: Callable[[SignalSpec], None]) -> None:
        register(SignalSpec("text.spans", "local", (-1.0, 0.0), StringValueSpans))


class WideSpansParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    spans: int = Field(5000, ge=0)
    value: float = 0.001


class WideSpans:
    """Every sample gets ``spans`` copies of one span over its whole completion (issue 26 finding 6)."""

    def __init__(self, params: WideSpansParams) -> None:
        self.params = params

    def score(self, samples: Sequence[Sample]) -> list[list[Span]]:
        n, v = self.params.spans, self.params.value
        return [[Span(0, len(s.completion), v)] * (n + s.completion.count("!")) for s in samples]


class WideSpansPlugin:
    @botgrpo_core.hookimpl
    def botgrpo_register_signals(self, register: Callable[[SignalSpec], None]) -> None:
        register(SignalSpec("wide.spans", "local", (-100.0, 100.0), WideSpans, WideSpansParams))


class FragileParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    flag: str  # while this file exists, a starting worker SIGKILLs itself
    kill_at: int = 3  # the worker SIGKILLs itself on this score() call, once per run (creating `flag`)
    sticky: bool = False  # False: the first start that finds the flag removes it (the next start works)


class Fragile:
    """A pooled signal whose worker is killed mid-sample, then its replacement while it starts (issue 26
    finding 1): ``kill_at`` and ``flag`` play the external SIGKILLs of the report."""

    def __init__(self, params: FragileParams) -> None:
        import os
        import signal

        self.params, self.calls = params, 0
        if os.path.exists(params.flag):
            if not params.sticky:
                os.unlink(params.flag)
            os.kill(os.getpid(), signal.SIGKILL)

    def score(self, samples: Sequence[Sample]) -> list[float]:
        import os
        import signal

        self.calls += 1
        once = self.params.flag + ".killed"
        if self.calls == self.params.kill_at and not os.path.exists(once):
            for path in (once, self.params.flag):
                open(path, "w").close()
            os.kill(os.getpid(), signal.SIGKILL)
        return [float(len(s.completion) % 2) for s in samples]


class FragilePlugin:
    @botgrpo_core.hookimpl
    def botgrpo_register_signals(self, register: Callable[[SignalSpec], None]) -> None:
        register(SignalSpec("fragile.parity", "global", (0.0, 1.0), Fragile, FragileParams))
