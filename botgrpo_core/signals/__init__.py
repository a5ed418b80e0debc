"""Data contracts between the core and reward plugins.

A *signal* turns a batch of :class:`Sample` objects into rewards. A ``global`` signal gives one value
per rollout (the outcome ``R[i]``); a ``local`` signal gives character spans of the completion with
values (``S[i, t]`` after alignment onto tokens), or one value per completion token.

Everything here is plain Python (no torch): plugin entry points import it at no cost.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias

from pydantic import BaseModel, ConfigDict

SignalKind = Literal["global", "local"]


@dataclass(frozen=True)
class Span:
    """A value on the characters ``[start, end)`` of the completion text.

    Offsets are Python ``str`` indices (code points) into ``Sample.completion``, so plugin authors
    never deal with tokenizers or bytes. ``meta`` carries explanations (e.g. which claim failed) that
    ``botgrpo score`` shows.

    :raises TypeError: a field that is not a real number (a string ``"-1"``, ``None``, a bool).
    :raises ValueError: a value that is not finite (NaN, inf, an int past float range); a scorer that
        cannot score a sample returns a :class:`SampleError` for it instead.
    """

    start: int
    end: int
    value: float
    meta: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        # offsets are checked against the completion when aligned (rewards.alignment.span_problem); a
        # value is checked here: a string "-1" or a NaN must fail where the plugin made it
        if not (type(self.start) is int and type(self.end) is int and type(self.value) in _PLAIN):
            for name in ("start", "end", "value"):
                x = getattr(self, name)
                if isinstance(x, bool) or not isinstance(x, numbers.Real):
                    raise TypeError(
                        f"Span.{name} must be a real number, got {type(x).__name__} {_short(x)}; convert it "
                        "where the span is made (e.g. float(...) for a value, int(...) for an offset)"
                    )
        try:
            finite = math.isfinite(self.value)
        except OverflowError:  # an int past float range (10**400)
            finite = False
        if not finite:
            raise ValueError(
                f"Span({_short(self.start)}, {_short(self.end)}): value must be finite, got "
                f"{_short(self.value)}; return a SampleError for a sample that cannot be scored"
            )


_PLAIN = (float, int)


def _short(x: object) -> str:
    text = repr(x)
    return text if len(text) <= 40 else text[:37] + "..."


@dataclass(frozen=True)
class Sample:
    """One rollout as a signal sees it.

    :param prompt: the prompt text.
    :param completion: the decoded completion text.
    :param token_ids: completion token ids (may be empty where no tokenizer is involved).
    :param offsets: ``offsets[t] == (start, end)``, character range of token ``t`` in ``completion``
        (trainers pass a read-only :class:`botgrpo_core.rewards.offsets.TokenOffsets`; any sequence of pairs works).
    :param row: the dataset row's other fields (reference answer, tests, spec...).
    :param truncated: the completion was cut by the length cap (it ends without an end-of-sequence token), so
        its last line may be unfinished: a signal should not read that line as a claim. Trainers set it from
        the token ids; ``botgrpo score`` from a row's ``truncated`` field.
    """

    prompt: str
    completion: str
    token_ids: Sequence[int] = ()
    offsets: Sequence[tuple[int, int]] = ()
    row: Mapping[str, Any] = field(default_factory=dict)
    truncated: bool = False


@dataclass(frozen=True)
class TokenValues:
    """Per-token values for a local signal that prefers tokens over spans (length = len(offsets))."""

    values: Sequence[float]


@dataclass(frozen=True)
class Value:
    """A global signal's value with explanations: ``meta`` as on a :class:`Span`, shown by ``botgrpo score``.

    A ``bytes`` meta value holding a PNG (e.g. the screenshot a vision judge scored) is shown as an image by
    ``botgrpo score --html`` and as base64 by ``--json`` (up to 1 MiB; see docs/writing-plugins.md). The
    result cache keeps ``meta`` with the value, so keep attachments small. A plain float needs no wrapper.
    """

    value: float
    meta: Mapping[str, Any] | None = None


class SampleError(Exception):
    """A per-sample failure a scorer reports without raising (e.g. its own worker timed out).

    Return an instance in place of that sample's result; the mixture applies the signal's
    ``on_error`` policy to it and counts it under ``reason`` (``error``, ``timeout``, ``memory``).
    """

    def __init__(self, message: str, reason: str = "error") -> None:
        super().__init__(message)
        self.reason = reason


#: What ``score`` returns for one sample: a float or a :class:`Value` (global), spans or token values (local),
#: or an error.
SampleResult: TypeAlias = "float | Value | Sequence[Span] | TokenValues | SampleError"


class Scorer(Protocol):
    """A ready-to-use signal: built once per run from validated params, then called per batch."""

    def score(self, samples: Sequence[Sample]) -> Sequence[SampleResult]:
        """Score a batch. Must return exactly one result per sample, in order."""
        ...


class PrefetchingScorer(Scorer, Protocol):
    """A scorer that can start a batch in the background (its work waits on another process or a server).

    Before it scores a batch, the mixture calls ``prefetch`` on every in-process scorer that has it, with
    exactly the samples it will then pass to ``score`` (the batch less what the result cache serves), and
    scores those signals after the others, so their wait overlaps the others' work. ``score`` must still
    return the right results for any batch: for another batch than the prefetched one it scores that
    batch itself (after finishing or dropping the background work). A ``prefetch`` that raises is ignored.

    .. versionadded:: 0.1
    """

    def prefetch(self, samples: Sequence[Sample]) -> None:
        """Start scoring ``samples`` in the background and return at once."""
        ...


class NoParams(BaseModel):
    """Parameters model for a signal that takes none."""

    model_config = ConfigDict(extra="forbid")


#: A signal's worker settings. For a signal with ``SignalSpec.own_pool`` the run file sets them at signal
#: level only (``rewards.signals[i].workers``, ...) and the core fills them into the signal's params.
OWN_POOL_KEYS = ("workers", "timeout_s", "memory_mb")


@dataclass(frozen=True)
class SignalSpec:
    """A signal as a plugin registers it.

    :param name: namespaced name, ``<namespace>.<signal>`` (``jsx.compiles``); the namespace is the
        plugin's entry-point name, which is how the core loads only the plugins a config needs.
    :param kind: ``global`` (one value per rollout) or ``local`` (spans or per-token values).
    :param bounds: declared ``(low, high)`` of every value, or a callable of the validated params
        returning them (used by the outcome-dominance check and by ``check_signal_contract``).
    :param params_model: pydantic model of the signal's params; use ``extra="forbid"``.
    :param make_scorer: builds a :class:`Scorer` from validated params. Must be picklable by reference
        (a module-level function or class) so a worker process can rebuild the scorer.
    :param description: one line shown by ``botgrpo plugins``.
    :param required_fields: dataset row fields the signal reads (checked before training), or a callable
        of the validated params returning them (when a param names the field).
    :param own_pool: the scorer runs model text in worker processes of its own (as botgrpo-sympy's
        checkers do). The core then never runs it in its own pool; the run file's signal-level ``workers``,
        ``timeout_s`` and ``memory_mb`` (:data:`OWN_POOL_KEYS`) are the plugin's: the core fills each one the
        run file sets into the params (unset, ``null``: the params model's default) and refuses them inside
        ``params``. The params model must declare the three fields.
    :param gap: a global signal's smallest difference between two values it gives, or a callable of the
        validated params returning it (the outcome-dominance check's ``d``); default ``high - low``, a binary
        signal at its bounds. ``sympy.answer`` gives -1, 0 or 1: bounds (-1, 1), gap 1.
    """

    name: str
    kind: SignalKind
    bounds: tuple[float, float] | Callable[[BaseModel], tuple[float, float]]
    make_scorer: Callable[[BaseModel], Scorer]
    params_model: type[BaseModel] = NoParams
    description: str = ""
    required_fields: tuple[str, ...] | Callable[[BaseModel], tuple[str, ...]] = ()
    own_pool: bool = False
    gap: float | Callable[[BaseModel], float] | None = None

    def __post_init__(self) -> None:
        namespace, dot, rest = self.name.partition(".")
        if not dot or not namespace or not rest:
            raise ValueError(
                f"signal name {self.name!r} must be namespaced as '<plugin>.<signal>', e.g. 'jsx.compiles'"
            )
        if self.kind not in ("global", "local"):
            raise ValueError(f"signal {self.name!r}: kind must be 'global' or 'local', got {self.kind!r}")
        missing = [k for k in OWN_POOL_KEYS if k not in self.params_model.model_fields]
        if self.own_pool and missing:
            raise ValueError(
                f"signal {self.name!r}: own_pool=True needs params fields {', '.join(OWN_POOL_KEYS)} (the core "
                f"fills them from the run file's signal level); {self.params_model.__name__} lacks "
                f"{', '.join(missing)}"
            )

    @property
    def namespace(self) -> str:
        return self.name.partition(".")[0]

    def resolve_bounds(self, params: BaseModel) -> tuple[float, float]:
        low, high = self.bounds(params) if callable(self.bounds) else self.bounds
        if not (math.isfinite(low) and math.isfinite(high) and low <= high):
            raise ValueError(
                f"signal {self.name!r}: bounds must be finite with low <= high, got {(low, high)}"
            )
        return float(low), float(high)

    def resolve_gap(self, params: BaseModel) -> float:
        """The smallest difference between two values (``gap``, default ``high - low``)."""
        if self.gap is None:
            low, high = self.resolve_bounds(params)
            return high - low
        return float(self.gap(params) if callable(self.gap) else self.gap)

    def resolve_required_fields(self, params: BaseModel) -> tuple[str, ...]:
        fields = self.required_fields(params) if callable(self.required_fields) else self.required_fields
        return tuple(fields)
