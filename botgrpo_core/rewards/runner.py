"""One configured signal, ready to score: its scorer (in-process or in a worker pool), the in-run result cache,
and the checks every result passes before it is mixed (types, spans inside the text, finite values, bounds).
"""

from __future__ import annotations

import json
import math
import numbers
import signal
import warnings
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from botgrpo_core.config.models import SignalConfig
from botgrpo_core.rewards.alignment import (
    MAX_SPANS_PER_SAMPLE,
    CheckedSpans,
    misfit_spans,
    span_problem,
    span_table,
)
from botgrpo_core.rewards.pool import WorkerPool, WorkerStartError
from botgrpo_core.rewards.signal_metrics import (
    scorer_metrics,
)
from botgrpo_core.signals import Sample, SampleError, Scorer, Span, TokenValues, Value

if TYPE_CHECKING:
    from pydantic import BaseModel

    from botgrpo_core.signals.manager import RegisteredSignal


class SignalError(RuntimeError):
    """A signal failed on a sample and its ``on_error`` policy is ``raise``."""


_WORKER_SCORER: Scorer | None = None  # the scorer of this worker process (set by the pool's initializer)


def _init_worker_scorer(make_scorer: Any, params: Any) -> None:
    global _WORKER_SCORER
    _WORKER_SCORER = make_scorer(params)


def _score_in_worker(sample: Sample) -> Any:
    assert _WORKER_SCORER is not None, "worker started without a scorer"
    results = list(_WORKER_SCORER.score([sample]))
    if len(results) != 1:
        raise ValueError(f"score() returned {len(results)} results for 1 sample")
    return results[0]


class _SignalRunner:
    """One configured signal: its scorer (in-process or in a worker pool), params, cache and checks."""

    def __init__(
        self, config: SignalConfig, registered: RegisteredSignal, params: BaseModel, path: str
    ) -> None:
        self.config = config
        self.registered = registered
        self.spec = registered.spec
        self.params = params
        self.path = path
        self.bounds = self.spec.resolve_bounds(params)
        self._scorer: Scorer | None = None
        self._pool: WorkerPool | None = None
        self._cache: OrderedDict[tuple[str, str, str], Any] = OrderedDict()
        self._cache_size = config.cache_size
        self._params_key = params.model_dump_json()
        self._warned: set[str] = set()  # scorer methods that raised (one warning each)
        if config.batch_timeout_s is not None and not self._in_core_pool():
            from botgrpo_core.config.errors import ConfigError

            raise ConfigError(
                f"{path}.batch_timeout_s: bounds the core's worker pool, which {self.spec.name!r} does not use "
                "(it scores in the trainer's process, or runs processes of its own: see its params); set "
                f"{path}.workers above 0 or remove the key"
            )

    # scorer construction is lazy: heavy plugins load their models on first use
    def _score_raw(self, samples: list[Sample]) -> list[Any]:
        # a signal with its own processes (spec.own_pool) got the signal-level settings in its params
        if self._in_core_pool():
            workers, timeout_s, memory_mb = self.config.core_pool()
            if self._pool is None:
                self._pool = WorkerPool(
                    _score_in_worker,
                    workers=workers,
                    timeout_s=timeout_s,
                    memory_mb=memory_mb,
                    initializer=_init_worker_scorer,
                    initargs=(self.spec.make_scorer, self.params),
                    batch_timeout_s=self.config.batch_timeout_s,
                )
            try:
                return self._pool.map(samples)
            except WorkerStartError as exc:
                raise self._dead(exc) from exc
        if self._scorer is None:
            self._scorer = self.spec.make_scorer(self.params)
        try:
            results = list(self._scorer.score(samples))
        except (Exception, SystemExit, KeyboardInterrupt) as exc:  # sys.exit() in plugin code ends a sample
            if _users_interrupt(exc):
                raise
            if isinstance(
                exc, WorkerStartError
            ):  # no sample of the batch can be scored: loud, not 100% errors
                raise self._dead(exc) from exc
            # isolate the failing samples: score one by one
            return [self._score_one(s) for s in samples]
        if len(results) != len(samples):
            message = (
                f"signal {self.spec.name!r} (plugin {self.registered.distribution}) returned {len(results)} "
                f"results for {len(samples)} samples; score() must return one result per sample"
            )
            return [SampleError(message, reason="invalid") for _ in samples]
        return results

    def _dead(self, exc: WorkerStartError) -> SignalError:
        """The error that ends the run when this signal's worker processes cannot be started."""
        return SignalError(
            f"signal {self.spec.name!r} (plugin {self.registered.distribution}) cannot score: its worker "
            f"processes could not be started ({exc}). Fix the cause, or remove the signal from "
            f"{self.path.rsplit('[', 1)[0]}, then resume the run"
        )

    def _in_core_pool(self) -> bool:
        """Whether the core's pool runs this scorer (signal-level ``workers > 0``, and the signal has no
        processes of its own: for an ``own_pool`` signal the settings are the plugin's)."""
        return self.config.core_pool()[0] > 0 and not self.spec.own_pool

    def _score_one(self, sample: Sample) -> Any:
        assert self._scorer is not None
        try:
            results = list(self._scorer.score([sample]))
        except (Exception, SystemExit, KeyboardInterrupt) as exc:
            if _users_interrupt(exc):
                raise
            if isinstance(exc, WorkerStartError):
                raise self._dead(exc) from exc
            return SampleError(f"{type(exc).__name__}: {exc}", reason="error")
        if len(results) != 1:
            return SampleError(f"score() returned {len(results)} results for 1 sample", reason="invalid")
        return results[0]

    def _key(self, sample: Sample) -> tuple[str, str, str, bool]:
        row = json.dumps(dict(sample.row), sort_keys=True, default=str)
        return (sample.prompt, sample.completion, row, sample.truncated)

    def score(self, samples: Sequence[Sample]) -> tuple[list[Any], list[bool]]:
        """Normalised results (a value, spans, TokenValues or SampleError) and, per sample, cache hit or not.

        With caching on, identical samples are scored once, whether seen in an earlier batch or
        repeated within this one (GRPO groups often repeat short completions).
        """
        if not self.config.cache:
            raw = self._score_raw(list(samples))
            return [self._check(r, s) for r, s in zip(raw, samples)], [False] * len(samples)
        results, cached, first_of, copies = self._plan(samples)
        if first_of:
            todo = list(first_of.values())
            raw = self._score_raw([samples[i] for i in todo])
            for key, i, result in zip(first_of, todo, raw):
                checked = self._check(result, samples[i])
                results[i] = checked
                if not isinstance(checked, SampleError):
                    self._cache[key] = checked
                    if len(self._cache) > self._cache_size:
                        self._cache.popitem(last=False)
        for i, source in copies:
            results[i] = results[source]
        return results, cached

    def _plan(
        self, samples: Sequence[Sample]
    ) -> tuple[list[Any], list[bool], dict[tuple[str, str, str], int], list[tuple[int, int]]]:
        """The cached results, which samples are served by the cache, the first sample of each key still
        to score (key -> index) and the repeats of those (sample index, index it copies)."""
        results: list[Any] = [None] * len(samples)
        cached = [False] * len(samples)
        first_of: dict[tuple[str, str, str], int] = {}
        copies: list[tuple[int, int]] = []
        for i, sample in enumerate(samples):
            key = self._key(sample)
            if key in self._cache:
                self._cache.move_to_end(key)
                results[i] = self._cache[key]
                cached[i] = True
            elif key in first_of:
                copies.append((i, first_of[key]))
                cached[i] = True
            else:
                first_of[key] = i
        return results, cached, first_of, copies

    def prefetch(self, samples: Sequence[Sample]) -> bool:
        """Let an in-process scorer with a ``prefetch`` method (:class:`~botgrpo_core.signals.PrefetchingScorer`)
        start work in the background on exactly the samples :meth:`score` will then pass it (the same
        batch, less the cached and repeated ones). ``True`` when it started; a prefetch that raises is
        ignored (with one warning): :meth:`score` then scores the batch as usual."""
        if self._in_core_pool():
            return False  # the scorer lives in the core's worker processes, not here
        if self._scorer is None:
            self._scorer = self.spec.make_scorer(self.params)
        start = getattr(self._scorer, "prefetch", None)
        if not callable(start):
            return False
        if self.config.cache:
            _, _, first_of, _ = self._plan(samples)
            todo = [samples[i] for i in first_of.values()]
        else:
            todo = list(samples)
        if not todo:
            return False
        try:
            start(todo)
        except Exception as exc:
            self._warn_once("prefetch", exc, "its batches are scored without it")
            return False
        return True

    def _warn_once(self, method: str, exc: Exception, consequence: str) -> None:
        """One warning per scorer method that raised (``metrics``, ``prefetch``); the batch goes on."""
        if method in self._warned:
            return
        self._warned.add(method)
        warnings.warn(
            f"signal {self.spec.name!r} (plugin {self.registered.distribution}): {method}() raised "
            f"{type(exc).__name__}: {exc}; {consequence}",
            RuntimeWarning,
            stacklevel=3,
        )

    def _check(self, result: Any, sample: Sample) -> Any:
        """Validate a result against the signal's kind and bounds; a bad one becomes a SampleError."""
        if isinstance(result, SampleError):
            return result
        if isinstance(result, BaseException):
            return SampleError(f"{type(result).__name__}: {result}", reason="error")
        low, high = self.bounds
        tolerance = 1e-6 * max(1.0, abs(low), abs(high))
        bounds = (low - tolerance, high + tolerance)
        if self.spec.kind == "global" and isinstance(result, Value):  # a value with meta (e.g. a screenshot)
            problem, number = _global_value(result.value, bounds)
            if result.meta is not None and not isinstance(result.meta, Mapping):
                problem = f"Value.meta must be a mapping, got {type(result.meta).__name__}"
            value = Value(number, dict(result.meta) if result.meta else None)  # type: ignore[arg-type]
        elif self.spec.kind == "global":
            problem, value = _global_value(result, bounds)
        elif isinstance(result, TokenValues):
            problem, value = _token_values_problem(result, sample, bounds), result
        elif isinstance(result, (list, tuple)) and len(result) > MAX_SPANS_PER_SAMPLE:
            return SampleError(
                f"{self.spec.name}: {len(result)} spans, over the cap of {MAX_SPANS_PER_SAMPLE} per sample "
                "(botgrpo_core.rewards.alignment.MAX_SPANS_PER_SAMPLE); merge adjacent spans, or return "
                "TokenValues to score every token",
                reason="too_many_spans",
            )
        elif isinstance(result, (list, tuple)):
            problem, value = _spans_problem(list(result), sample, bounds)
        else:
            problem, value = f"unsupported result type {type(result).__name__}", None
        if problem is None:
            return value
        reason = "nan" if "NaN" in problem or "non-finite" in problem else "invalid"
        return SampleError(f"{self.spec.name}: {problem} (declared bounds {self.bounds})", reason=reason)

    def scorer_metrics(self) -> dict[str, float]:
        """The scorer's own ``metrics()`` as ``signals/<name>/<key>`` (in-process scorers; see
        :func:`~botgrpo_core.rewards.signal_metrics.scorer_metrics`). One that raises costs its metrics
        only, with one warning: a scorer's bookkeeping must not break the batch."""
        report = getattr(self._scorer, "metrics", None)
        if not callable(report):
            return {}
        try:
            return scorer_metrics(self.spec.name, dict(report()))
        except Exception as exc:
            self._warn_once("metrics", exc, "its metrics are left out of the logs")
            return {}

    def close(self) -> None:
        """Stop the worker pool and let the scorer release what it holds (``close()`` is optional)."""
        if self._pool is not None:
            self._pool.close()
            self._pool = None
        closer = getattr(self._scorer, "close", None)
        if callable(closer):
            closer()
        self._scorer = None


def _users_interrupt(exc: BaseException) -> bool:
    """Whether ``exc`` may be the user's Ctrl-C (then it propagates): a KeyboardInterrupt under Python's
    default SIGINT handler, or one botgrpo's own handler raised (``engine.interrupt`` marks it with
    ``botgrpo_signal``: a second signal, or one outside the training loop). Any other KeyboardInterrupt
    under botgrpo's handler comes from plugin code and costs its sample, like any other exception.
    """
    if not isinstance(exc, KeyboardInterrupt):
        return False
    marked = getattr(exc, "botgrpo_signal", None) is not None
    return marked or signal.getsignal(signal.SIGINT) is signal.default_int_handler


# ---- result checks: (problem or None, the checked value) ------------------------------------------------------
def _global_value(result: Any, bounds: tuple[float, float]) -> tuple[str | None, float | None]:
    """A global result as a finite float within ``bounds`` (a one-element tensor or array counts)."""
    if isinstance(result, bool) or not isinstance(result, numbers.Real):
        size = getattr(result, "size", None)
        size = size() if callable(size) else size  # torch: .size() is a shape; numpy: .size is a count
        count = getattr(result, "numel", lambda: size if isinstance(size, int) else None)()
        if not hasattr(result, "item") or count != 1:
            return f"a global signal must return one number, got {type(result).__name__}", None
        result = result.item()
    try:
        value = float(result)
    except (OverflowError, TypeError, ValueError):  # 10**400, or an .item() that is not a number
        return f"value {str(result)[:40]} is not a finite float", None
    if math.isnan(value):
        return "returned NaN", None
    if not bounds[0] <= value <= bounds[1]:  # inf fails this too
        return f"value {value} is outside the declared bounds", None
    return None, value


def _token_values_problem(result: TokenValues, sample: Sample, bounds: tuple[float, float]) -> str | None:
    values = list(result.values)
    if len(values) != len(sample.offsets):
        return f"{len(values)} token values for {len(sample.offsets)} tokens"
    for v in values:
        try:
            ok = bounds[0] <= float(v) <= bounds[1]  # NaN fails this too
        except (OverflowError, TypeError, ValueError):
            ok = False
        if not ok:
            return f"token value {str(v)[:40]} is not a finite number within the declared bounds"
    return None


def _spans_problem(
    spans: list[Any], sample: Sample, bounds: tuple[float, float]
) -> tuple[str | None, CheckedSpans | None]:
    """Spans inside the completion with values within ``bounds``, checked with array ops (one ``(S, 3)`` table)."""
    other = next((span for span in spans if not isinstance(span, Span)), None)
    if other is not None:
        return f"a local signal returns Span objects, got {type(other).__name__}", None
    n = len(sample.completion)
    try:
        table = span_table(spans)  # (S, 3): start, end, value
    except (TypeError, ValueError):  # a field that is not a number
        span = next((sp for sp in spans if span_problem(sp, n)), spans[0])
    else:
        value = table[:, 2]
        bad = misfit_spans(table, n) | ~((bounds[0] <= value) & (value <= bounds[1]))
        if not bad.any():
            return None, CheckedSpans(spans, table)
        span = spans[int(np.argmax(bad))]
    return span_problem(span, n) or f"span value {span.value} outside the declared bounds", None
