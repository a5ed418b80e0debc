"""Where the tree-sitter work runs: in this process, or in a shared killable worker pool.

tree-sitter's own deadline (a progress callback) stops a slow parse, but a C-level hang or a
runaway allocation can only be stopped from outside, so by default the work goes to a
:class:`botgrpo_core.rewards.pool.WorkerPool` (per-task timeout, SIGKILL and replace, ``RLIMIT_AS``).
All ``jsx.*`` scorers of one process share one pool per (workers, memory) setting. A batch as a whole
has a deadline too (``batch_timeout_s``), in the pool and inline (and ``jsx.compiles``' esbuild
checks, in the Node worker, use it too, with the same error: :func:`batch_late`). Inside a worker
process (e.g. when the core already runs the signal in its own pool) ``workers: auto`` runs inline
rather than nesting pools.
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import threading
import time
from collections.abc import Sequence
from typing import Any

from botgrpo_core.rewards.pool import batch_deadline_error
from botgrpo_core.signals import SampleError
from botgrpo_jsx import analysis
from botgrpo_jsx.params import CommonParams

#: A unit of work: (analysis name, params, completion, prompt, row fields it needs).
Task = tuple[str, CommonParams, str, str, dict[str, Any]]

_pools: dict[tuple[int, int], Any] = {}
_pools_lock = threading.Lock()


def run_task(task: Task) -> Any:
    """Run one analysis (module-level so the pool can pickle it by reference)."""
    kind, params, completion, prompt, row = task
    if kind == "syntax":
        return analysis.syntax_spans(completion, params)  # type: ignore[arg-type]
    if kind == "rules":
        return analysis.rule_spans(completion, prompt, row, params)  # type: ignore[arg-type]
    if kind == "units":
        return analysis.unit_spans(completion, prompt, row, params)  # type: ignore[arg-type]
    if kind == "valid":
        return analysis.tree_sitter_valid(completion, params)
    if kind == "esprima":
        return analysis.esprima_valid(completion, params)
    raise ValueError(f"unknown jsx task {kind!r}")


def warm_up() -> None:
    """Worker initializer: load both grammars once, before the memory limit applies."""
    from botgrpo_jsx.treesitter import parse

    parse("const A = () => <div />;", 5.0, "tsx")
    parse("const A = () => <div />;", 5.0, "javascript")


def resolve_workers(workers: int | str) -> int:
    """``auto`` -> 2 (at most the CPU count) in a main process, 0 inside a worker process."""
    if workers != "auto":
        return int(workers)
    if multiprocessing.parent_process() is not None:
        return 0
    return max(1, min(2, os.cpu_count() or 1))


def _pool(workers: int, memory_mb: int, timeout_s: float) -> Any:
    from botgrpo_core.rewards.pool import WorkerPool

    key = (workers, memory_mb)
    with _pools_lock:
        pool = _pools.get(key)
        if pool is None:
            pool = WorkerPool(
                run_task, workers=workers, timeout_s=timeout_s, memory_mb=memory_mb, initializer=warm_up
            )
            _pools[key] = pool
        return pool


def run_tasks(tasks: Sequence[Task], params: CommonParams) -> list[Any]:
    """Run tasks in order, in the pool (with ``params.timeout_s`` per task) or inline.

    The batch has a deadline, ``params.batch_timeout_s``: in the pool, tasks still running then are
    killed and the others are not started; inline (a running task cannot be stopped) the deadline is
    checked between tasks. Either way the tasks cut get a ``timeout`` :class:`SampleError` naming
    ``batch_timeout_s`` and the tasks finished before it keep their results.
    """
    workers = resolve_workers(params.workers)
    if workers == 0:
        return _run_inline(tasks, params.batch_timeout_s)
    # One completion's tasks go to one worker: jsx.syntax's parse (and its blame) serve jsx.rules there.
    affinity = [hash(task[2]) for task in tasks]
    pool = _pool(workers, params.memory_mb, params.timeout_s)
    return pool.map(
        list(tasks), timeout_s=params.timeout_s, affinity=affinity, batch_timeout_s=params.batch_timeout_s
    )


def batch_late(batch_timeout_s: float, what: str, params: str = "jsx") -> SampleError:
    """The ``timeout`` error of an item that a jsx batch deadline cut
    (:func:`~botgrpo_core.rewards.pool.batch_deadline_error`), ``params`` saying whose key it is
    (``jsx``: the shared static-signal params; ``jsx.compiles``), ``what`` when it was cut."""
    return batch_deadline_error(batch_timeout_s, what, params=params)


def _run_inline(tasks: Sequence[Task], batch_timeout_s: float) -> list[Any]:
    """Run tasks in this process until the batch deadline; the tasks not started by then time out."""
    end = time.monotonic() + batch_timeout_s
    results: list[Any] = []
    for task in tasks:
        if time.monotonic() >= end:
            late = batch_late(batch_timeout_s, "before this item started (in-process: workers 0)")
            return results + [late] * (len(tasks) - len(results))
        try:
            results.append(run_task(task))
        except Exception as exc:  # a bug on one odd input costs that sample, not the batch
            results.append(SampleError(f"{type(exc).__name__}: {exc}", reason="error"))
    return results


@atexit.register
def close_pools() -> None:
    """Stop every shared pool (also called at interpreter exit)."""
    with _pools_lock:
        for pool in _pools.values():
            pool.close()
        _pools.clear()
