"""The two scorers: they hand each completion to a checker process of a ``WorkerPool``.

One task per completion, so the pool's per-task deadline is the hard per-sample time limit; a
sample over it (or over the memory limit) comes back as a ``SampleError`` and its worker is
replaced, while the rest of the batch is scored normally.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from botgrpo_core.pool import WorkerPool
from botgrpo_core.signals import Sample, SampleError, Span
from botgrpo_sympy.params import AnswerParams, StepsParams

#: Environment variable naming a file where checker processes record tripwire hits (tests, audits).
TRIPWIRE_ENV = "BOTGRPO_SYMPY_TRIPWIRE_LOG"


class _PoolScorer:
    kind = ""

    def __init__(self, params: AnswerParams | StepsParams) -> None:
        from botgrpo_sympy import worker

        self.params = params
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
        completion loses its result (the good ones of its chunk cost one extra run).
        """
        from botgrpo_sympy.worker import ITEM_ERROR

        size = self.params.chunk_size
        chunks = [list(items[i : i + size]) for i in range(0, len(items), size)]
        results: list[Any] = []
        for chunk, out in zip(chunks, self.pool.map(chunks), strict=True):
            if isinstance(out, SampleError) and len(chunk) > 1:
                singles = self.pool.map([[item] for item in chunk])
                out = [o if isinstance(o, SampleError) else o[0] for o in singles]
            elif isinstance(out, SampleError):
                out = [out]
            results += out
        return [
            SampleError(r[1]) if isinstance(r, tuple) and len(r) == 2 and r[0] == ITEM_ERROR else r
            for r in results
        ]

    def close(self) -> None:
        """Stop the checker processes."""
        self.pool.close()

    def __enter__(self) -> _PoolScorer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AnswerScorer(_PoolScorer):
    """``sympy.answer``: 1.0 if the final answer equals the row's reference, else 0.0."""

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
            items.append((sample.completion, str(sample.row[field])))
            where.append(i)
        for i, out in zip(where, self.run(items), strict=True):
            results[i] = out if isinstance(out, SampleError) else float(out[0])
        return results

    def explain(self, samples: Sequence[Sample]) -> list[tuple[float, dict[str, Any]] | SampleError]:
        """Like ``score`` but with the reason for each value (for ``botgrpo score`` and the scripts)."""
        field = self.params.reference_field
        items = [(s.completion, str(s.row.get(field, ""))) for s in samples]
        return self.run(items)


class StepsScorer(_PoolScorer):
    """``sympy.steps``: one span per step, +1 verified / -1 refuted / 0 not checkable."""

    kind = "steps"

    def score(self, samples: Sequence[Sample]) -> list[list[Span] | SampleError]:
        return self.run([(s.prompt, s.completion) for s in samples])
