"""The two scorers: they hand completions to the checker processes of a ``WorkerPool``.

Completions travel ``chunk_size`` to a task; the pool's deadline (``timeout_s``) applies to a task. A
chunk over it (or over the memory limit) is re-run one completion per task, so the deadline ends up
the per-completion limit: only the bad sample comes back as a ``SampleError`` (its worker is
replaced) while the rest of the batch is scored normally.
"""

from __future__ import annotations

import hashlib
import math
import os
import time
from collections.abc import Sequence
from typing import Any

from botgrpo_core.rewards.pool import WorkerPool, past_batch_deadline
from botgrpo_core.signals import Sample, SampleError, Span
from botgrpo_sympy.params import AnswerParams, StepsParams

#: Environment variable naming a file where checker processes record tripwire hits (tests, audits).
TRIPWIRE_ENV = "BOTGRPO_SYMPY_TRIPWIRE_LOG"
#: Inputs remembered as having timed out or run out of memory (per scorer; oldest dropped first).
_FAILED_CACHE = 4096


def _key(item: Any) -> bytes:
    """A fixed-size key for an item (``(completion, reference)`` or ``(prompt, completion)``)."""
    return hashlib.sha256(repr(item).encode("utf-8", "surrogatepass")).digest()


class _PoolScorer:
    kind = ""

    def __init__(self, params: AnswerParams | StepsParams) -> None:
        from botgrpo_sympy import worker

        self.params = params
        self._failed: dict[bytes, SampleError] = {}
        task = worker.answer_task if self.kind == "answer" else worker.steps_task
        # The env var is read here, in the parent, and passed explicitly: forkserver children do not
        # see environment changes made after the fork server started.
        self.pool = WorkerPool(
            task,
            workers=params.workers,
            timeout_s=params.timeout_s,
            memory_mb=params.memory_mb,
            initializer=worker.init_worker,
            initargs=(self.kind, params.model_dump(), os.environ.get(TRIPWIRE_ENV) or None),
        )

    def run(self, items: Sequence[Any]) -> list[Any]:
        """One result per item (or a ``SampleError``), in order.

        Items travel ``chunk_size`` to a task (one pipe round trip per chunk instead of per
        completion). A chunk that times out, runs out of memory or crashes is re-run one item per
        task, so the per-completion time limit and failure isolation hold: only the bad
        completion loses its result (the good ones of its chunk cost one extra run). An item that
        timed out or ran out of memory before gets its cached failure without running.
        """
        known = [self._failed.get(_key(item)) for item in items]
        todo = [item for item, failure in zip(items, known, strict=True) if failure is None]
        fresh = iter(self._run(todo) if todo else [])
        results = [failure if failure is not None else next(fresh) for failure in known]
        for item, result, failure in zip(items, results, known, strict=True):
            bad = isinstance(result, SampleError) and result.reason in ("timeout", "memory")
            if failure is None and bad and not past_batch_deadline(result):  # a cut batch: not the input
                self._remember(item, result)
        return results

    def _remember(self, item: Any, failure: SampleError) -> None:
        """Cache a timeout/memory failure: the same bomb is not re-run (a deadline and a worker
        restart) every time a run scores it again."""
        if len(self._failed) >= _FAILED_CACHE:
            self._failed.pop(next(iter(self._failed)))
        self._failed[_key(item)] = SampleError(
            f"{failure} (cached: this input failed before)", failure.reason
        )

    def _run(self, items: Sequence[Any]) -> list[Any]:
        size = self.params.chunk_size
        chunks = [list(items[i : i + size]) for i in range(0, len(items), size)]
        limit = self.params.batch_timeout_s  # one deadline over both rounds
        end = math.inf if limit is None else time.monotonic() + limit
        # per chunk: its items' results, or a SampleError
        outs: list[Any] = self.pool.map(chunks, batch_timeout_s=limit)
        # the items of every failed chunk, re-run together one per task (spread over the workers), while
        # the batch has time left; a chunk the batch deadline cut is not re-run
        retry = [
            k
            for k, out in enumerate(outs)
            if isinstance(out, SampleError) and len(chunks[k]) > 1 and not past_batch_deadline(out)
        ]
        left = end - time.monotonic()
        if retry and left > 0:
            singles = iter(
                self.pool.map(
                    [[item] for k in retry for item in chunks[k]],
                    batch_timeout_s=None if limit is None else left,
                )
            )
            for k in retry:
                outs[k] = [next(singles) for _ in chunks[k]]
                outs[k] = [o if isinstance(o, SampleError) else o[0] for o in outs[k]]
        results: list[Any] = []
        for k, out in enumerate(outs):
            results += [out] * len(chunks[k]) if isinstance(out, SampleError) else out
        return results

    def close(self) -> None:
        """Stop the checker processes."""
        self.pool.close()

    def __enter__(self) -> _PoolScorer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AnswerScorer(_PoolScorer):
    """``sympy.answer``: 1.0 if the final answer equals the row's reference, 0.0 if it does not, ``unanswered``
    (-1 by default) if the completion states none or the length cap cut it (``truncated: unanswered``)."""

    kind = "answer"

    def score(self, samples: Sequence[Sample]) -> list[float | SampleError]:
        field = self.params.reference_field
        results: list[Any] = [None] * len(samples)
        items, where = [], []
        for i, sample in enumerate(samples):
            if field not in sample.row or sample.row[field] is None:
                results[i] = SampleError(
                    f"sympy.answer: the dataset row has no field {field!r} (set params.reference_field "
                    f"to the column that holds the reference answer; row fields: {sorted(sample.row)})"
                )
                continue
            if sample.truncated and self.params.truncated == "unanswered":
                results[i] = self.params.unanswered  # the cap cut it: no answer is read
                continue
            items.append((sample.completion, str(sample.row[field])))
            where.append(i)
        for i, out in zip(where, self.run(items), strict=True):
            results[i] = out if isinstance(out, SampleError) else float(out[0])
        return results

    def explain(self, samples: Sequence[Sample]) -> list[tuple[float, dict[str, Any]] | SampleError]:
        """Like ``score`` but with the reason for each value (for ``botgrpo score`` and the scripts)."""
        field = self.params.reference_field
        cut = [s.truncated and self.params.truncated == "unanswered" for s in samples]
        items = [
            (s.completion, str(s.row.get(field, ""))) for s, c in zip(samples, cut, strict=True) if not c
        ]
        done = iter(self.run(items))
        status = {"status": "cut by the length cap: its answer is not read (params.truncated)"}
        return [(self.params.unanswered, dict(status)) if c else next(done) for c in cut]


class StepsScorer(_PoolScorer):
    """``sympy.steps``: one span per step, +1 verified / -1 refuted / 0 not checkable."""

    kind = "steps"

    def score(self, samples: Sequence[Sample]) -> list[list[Span] | SampleError]:
        # truncated: the length cap cut the completion, so its last line is read as no claim
        return self.run([(s.prompt, s.completion, s.truncated) for s in samples])
