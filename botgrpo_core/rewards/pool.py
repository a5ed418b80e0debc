"""A process pool for untrusted, CPU-heavy scoring: per-task timeout and memory bound.

``concurrent.futures.ProcessPoolExecutor`` cannot kill one hung task (a ``9**9**9`` in a sympy
checker, a tree-sitter parse that never returns) without breaking the whole pool, so each worker
here is its own process behind a pipe: a task over its deadline gets its worker SIGKILLed and
replaced, and the task's result is a :class:`~botgrpo_core.signals.SampleError`. Memory is bounded
with ``RLIMIT_AS`` inside each worker (headroom over the worker's size after start-up), so an
allocation bomb raises ``MemoryError`` there instead of taking the machine down.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from multiprocessing.reduction import ForkingPickler as _ForkingPickler
from typing import Any

from botgrpo_core.rewards.pool_batch import _Batch
from botgrpo_core.rewards.pool_worker import _worker_main, end_descendants
from botgrpo_core.signals import SampleError

#: Items in flight per worker by default: one running, the next waiting in its pipe.
PIPELINE_DEPTH = 2
#: Largest message sent to a worker that is still running an item (kept well below a pipe's buffer).
PIPELINE_MAX_BYTES = 16 * 1024
#: Tries to start one worker before the pool gives up (:class:`WorkerStartError`): a start that fails
#: (the process dies or hangs before it is ready) is tried again after a back-off.
START_ATTEMPTS = 4
#: Back-off before the first new try of a failed start; doubled before each further one.
START_BACKOFF_S = 0.25


#: How the error of an item cut by a batch deadline begins (see :func:`past_batch_deadline`).
BATCH_DEADLINE = "the batch passed its deadline"


def batch_deadline_error(batch_timeout_s: float, what: str, *, params: str | None = None) -> SampleError:
    """The ``timeout`` error of an item a batch deadline cut: it begins with :data:`BATCH_DEADLINE` (so
    :func:`past_batch_deadline` knows it), then names ``batch_timeout_s`` and, when given, whose ``params``
    it is (e.g. ``jsx.visual``), then ``what`` was cut (e.g. ``before this item finished``)."""
    where = f"batch_timeout_s={batch_timeout_s:g}" + (f", {params} params" if params else "")
    return SampleError(f"{BATCH_DEADLINE} ({where}) {what}", reason="timeout")


def past_batch_deadline(result: Any) -> bool:
    """Whether ``result`` is the error of an item that a batch deadline cut (not the item's own fault:
    a caller should neither retry it in the same batch nor remember it as a bad input)."""
    return isinstance(result, SampleError) and str(result).startswith(BATCH_DEADLINE)


class WorkerStartError(RuntimeError):
    """The pool could not start a worker in :data:`START_ATTEMPTS` tries (the message says why)."""


def exit_cause(exitcode: int | None) -> str:
    """What ended a worker, from its exit code: a signal (named) or an exit status."""
    if exitcode is None:
        return "still running"
    if exitcode >= 0:
        return f"exit code {exitcode}"
    try:
        name = signal.Signals(-exitcode).name
    except ValueError:
        name = f"signal {-exitcode}"
    if -exitcode == signal.SIGKILL:  # not the pool's own kill (that is a timeout): from outside
        return (
            f"killed by {name} from outside the pool (another process, or the system's out-of-memory killer)"
        )
    return f"killed by {name}"


@dataclass
class _Worker:
    #: ``None`` in a slot whose worker failed to start and waits for its back-off (``respawn_at``)
    process: Any
    conn: Connection | None
    #: items sent and not yet answered, in order: the first is running, the others wait in the pipe
    tasks: deque[int] = field(default_factory=deque)
    deadline: float = 0.0  # the running item's
    ready: bool = False  # sent its start-up message (initializer done)
    start_deadline: float = 0.0
    failed_starts: int = 0  # starts of this slot that failed in a row (reset once a worker is ready)
    respawn_at: float = 0.0  # a slot without a process: when its next start is due


class WorkerPool:
    """Run ``fn(item)`` for many items in worker processes, each under a deadline and a memory bound.

    :param fn: a picklable (module-level) function of one picklable argument.
    :param workers: number of worker processes (started on first use).
    :param timeout_s: default per-task wall-clock limit; a worker over it is killed and replaced.
    :param memory_mb: address-space headroom per worker above its size after start-up and the
        initializer (``None``: unbounded). Allocations past it raise ``MemoryError`` in the worker.
    :param initializer: called once in each new worker with ``initargs`` (load a model, patch builtins).
    :param start_method: ``forkserver`` (default: safe with threads and torch loaded in the parent).
    :param pipeline_depth: items in flight per worker (1: each waits for the answer to the one before).
    :param batch_timeout_s: default deadline of one ``map`` call as a whole (``None``: none). When it
        passes, the items still running are killed (their workers replaced) and the items not started
        are not started: all of them get a ``timeout`` ``SampleError``, so hanging items cost a batch at
        most this, not ``timeout_s`` x items / workers.

    ``map`` returns one entry per item in order: the function's result, or a ``SampleError`` with
    ``reason`` ``error`` (it raised), ``timeout``, ``memory`` (over ``memory_mb``), ``crash`` (the worker
    exited) or ``killed`` (a signal from outside ended the worker: another process, the system's
    out-of-memory killer); the message names the exit code or the signal.

    A worker that dies while starting (a replacement killed, an initializer that fails) is started
    again after a back-off (:data:`START_BACKOFF_S`, doubled each time); after :data:`START_ATTEMPTS`
    failed starts in a row, or one start past its deadline, ``map`` raises :class:`WorkerStartError`
    (the batch's items get no result), and a later ``map`` tries afresh.

    Each worker has up to ``pipeline_depth`` items in flight: the next waits in its pipe while one
    runs, so a worker never idles for the round trip to this process (~0.4 ms on a 2-core VM,
    measured: about what a 0.7 ms item costs to run). An item's deadline starts when the item before
    it is answered; when a worker is killed or dies, the items waiting behind the one it was running
    are queued again, not lost. Items whose message exceeds :data:`PIPELINE_MAX_BYTES` are sent to
    idle workers only (a full pipe would block this process while the worker runs).
    """

    def __init__(
        self,
        fn: Callable[[Any], Any],
        *,
        workers: int = 2,
        timeout_s: float = 5.0,
        memory_mb: int | None = 1024,
        initializer: Callable[..., None] | None = None,
        initargs: tuple[Any, ...] = (),
        start_method: str = "forkserver",
        pipeline_depth: int = PIPELINE_DEPTH,
        batch_timeout_s: float | None = None,
    ) -> None:
        if workers < 1:
            raise ValueError(f"WorkerPool: workers must be >= 1, got {workers}")
        if pipeline_depth < 1:
            raise ValueError(f"WorkerPool: pipeline_depth must be >= 1, got {pipeline_depth}")
        if timeout_s <= 0:
            raise ValueError(f"WorkerPool: timeout_s must be > 0, got {timeout_s}")
        self.fn = fn
        self.num_workers = workers
        self.pipeline_depth = pipeline_depth
        if batch_timeout_s is not None and not batch_timeout_s > 0:
            raise ValueError(f"WorkerPool: batch_timeout_s must be > 0, got {batch_timeout_s}")
        self.batch_timeout_s = batch_timeout_s
        self.timeout_s = timeout_s
        self.memory_mb = memory_mb
        self.initializer = initializer
        self.initargs = initargs
        self._ctx = multiprocessing.get_context(start_method)
        self._workers: list[_Worker] = []
        self._lock = threading.Lock()
        self._closed = False
        #: How many workers were replaced after a timeout, memory error or crash (for metrics).
        self.restarts = 0

    # -- worker lifecycle -------------------------------------------------------------------
    def _start_timeout(self) -> float:
        # The initializer may load a model: allow it generous time, but not forever.
        return max(60.0, 10 * self.timeout_s)

    def _spawn(self, failed_starts: int = 0) -> _Worker:
        parent_conn, child_conn = self._ctx.Pipe(duplex=True)
        process = self._ctx.Process(
            target=_worker_main,
            args=(child_conn, self.fn, self.memory_mb, self.initializer, self.initargs),
            daemon=True,
        )
        process.start()
        child_conn.close()
        deadline = time.monotonic() + self._start_timeout()
        return _Worker(process, parent_conn, start_deadline=deadline, failed_starts=failed_starts)

    def _mark_ready(self, index: int) -> None:
        """Receive a starting worker's ready message; a worker that died starting is a failed start."""
        worker = self._workers[index]
        assert worker.conn is not None
        try:
            worker.conn.recv()
        except (EOFError, OSError):
            worker.process.join(timeout=1)  # reap it so the exit code is known
            self._start_failed(index, f"died during start-up ({exit_cause(worker.process.exitcode)})")
            return
        worker.ready = True
        worker.failed_starts = 0

    def _start_failed(self, index: int, why: str) -> None:
        """A start of slot ``index`` failed: try again after a back-off, or raise after the last try.

        :raises WorkerStartError: the slot failed :data:`START_ATTEMPTS` starts in a row. The slot is
            left empty and due now, so a later ``map`` starts afresh (the pool stays usable).
        """
        worker = self._workers[index]
        self._kill(worker)
        failed = worker.failed_starts + 1
        if failed >= START_ATTEMPTS:
            self._workers[index] = _Worker(None, None, respawn_at=time.monotonic())
            raise WorkerStartError(
                f"WorkerPool: a worker {why}; {min(failed, START_ATTEMPTS)} failed start(s) in a row, "
                "check the initializer (and the machine's free memory)"
            )
        backoff = START_BACKOFF_S * 2 ** (failed - 1)
        self._workers[index] = _Worker(
            None, None, failed_starts=failed, respawn_at=time.monotonic() + backoff
        )

    def _kill(self, worker: _Worker) -> None:
        if worker.process is None:
            return
        if worker.process.is_alive():
            end_descendants(worker.process.pid)  # what its task started dies with it
            worker.process.kill()
        worker.process.join(timeout=5)
        if worker.conn is not None:
            worker.conn.close()

    def _replace(self, index: int, batch: _Batch) -> None:
        """Kill a worker and start its replacement without waiting for it: the call that hit a timeout
        returns at its deadline, and the new worker takes tasks once it reports ready. The items that
        were waiting in the old worker's pipe go back to ``batch``'s queue."""
        old = self._workers[index]
        if old.tasks:
            batch.running -= len(old.tasks)
            batch.put_back(index, list(old.tasks))
            old.tasks.clear()
        self._kill(old)
        self.restarts += 1
        self._workers[index] = self._spawn()

    def _ensure_started(self) -> None:
        if self._closed:
            raise RuntimeError("WorkerPool is closed")
        if not self._workers:  # the first start is waited for (replacements start in the background)
            if self._ctx.get_start_method() != "fork":
                from botgrpo_core.rewards.main_guard import check_main_guard

                try:
                    check_main_guard("a worker pool")
                except RuntimeError as exc:
                    raise WorkerStartError(str(exc)) from None
            self._workers = [self._spawn() for _ in range(self.num_workers)]
            for index in range(len(self._workers)):
                while not self._workers[index].ready:
                    self._start_step(index, block=True)

    def _start_step(self, index: int, block: bool) -> None:
        """Move slot ``index`` (not ready) towards ready: start its due worker, take a ready message, or
        fail a start that died or is past its deadline. ``block``: wait for whichever comes first."""
        worker = self._workers[index]
        if worker.conn is None:  # an empty slot waiting for its back-off
            wait_s = worker.respawn_at - time.monotonic()
            if wait_s > 0 and not block:
                return
            time.sleep(max(0.0, wait_s))
            self._workers[index] = self._spawn(worker.failed_starts)
            return
        left = worker.start_deadline - time.monotonic()
        # poll(): a replacement that started while no task was pending was not waited on
        if worker.conn.poll(max(0.0, left) if block else 0):
            self._mark_ready(index)
        elif time.monotonic() >= worker.start_deadline:  # a hang is not tried again (it would cost as long)
            worker.failed_starts = START_ATTEMPTS
            self._start_failed(index, f"did not start within {self._start_timeout():g} s (initializer hung?)")

    # -- public API -----------------------------------------------------------------------------
    def map(
        self,
        items: Sequence[Any],
        timeout_s: float | None = None,
        affinity: Sequence[int] | None = None,
        batch_timeout_s: float | None = None,
    ) -> list[Any]:
        """Run ``fn`` on every item; see the class docstring for what each entry can be.

        :param affinity: one int per item: items with the same key go to the same worker (key modulo the
            worker count) unless another worker is idle with nothing of its own left, so what a worker
            keeps between tasks (a parse cache) serves the later tasks on the same input.
        :param batch_timeout_s: this call's deadline as a whole (default: the pool's ``batch_timeout_s``);
            its clock starts once the pool's first workers are up.
        """
        timeout = self.timeout_s if timeout_s is None else timeout_s
        batch = _Batch(items, timeout, affinity, self.num_workers)
        if not items:
            return batch.results
        with self._lock:
            self._ensure_started()
            batch.limit = self.batch_timeout_s if batch_timeout_s is None else batch_timeout_s
            if batch.limit is not None:
                batch.end = time.monotonic() + batch.limit
            try:
                self._run(batch)
            except BaseException:  # a start that failed for good, a Ctrl-C: no answer of this batch
                self._drop_busy()  # may reach the next one
                raise
        return batch.results

    def _drop_busy(self) -> None:
        """Stop the workers with items in flight (their answers would be taken for the next batch's)."""
        for index, worker in enumerate(self._workers):
            if worker.tasks:
                self._kill(worker)
                self._workers[index] = _Worker(None, None, respawn_at=time.monotonic())

    def _run(self, batch: _Batch) -> None:
        """Dispatch, wait, collect until every item of ``batch`` has its result."""
        while batch.pending or batch.running:
            if time.monotonic() >= batch.end:
                self._expire(batch)
                return
            self._dispatch(batch)
            busy = [w for w in self._workers if w.tasks]
            starting = [w for w in self._workers if not w.ready] if batch.pending else []
            if not busy and not starting:
                continue
            deadlines = [w.deadline for w in busy] + [batch.end]
            deadlines += [w.start_deadline if w.conn else w.respawn_at for w in starting]
            wait_for = max(0.0, min(deadlines) - time.monotonic())
            conns = [w.conn for w in busy + starting if w.conn is not None]
            ready = set(wait(conns, timeout=wait_for)) if conns else time.sleep(wait_for) or set()
            self._collect(batch, ready)

    def _expire(self, batch: _Batch) -> None:
        """The batch deadline passed: every item without a result times out; busy workers are replaced."""
        late = batch_deadline_error(batch.limit, "before this item finished")
        for index, worker in enumerate(self._workers):
            if worker.tasks:
                self._replace(index, batch)  # its items go back to the queue, and time out below
        for queue in batch.queues:
            for task in queue:
                batch.results[task] = late
            queue.clear()
        batch.held.clear()

    def _dispatch(self, batch: _Batch) -> None:
        """Fill every ready worker up to ``pipeline_depth`` items in flight."""
        for index, worker in enumerate(self._workers):
            while worker.ready and len(worker.tasks) < self.pipeline_depth and batch.pending:
                task = batch.next_for(index)
                message = batch.held.pop(task, None)
                if message is None:
                    try:
                        message = bytes(_ForkingPickler.dumps((task, batch.items[task])))
                    except Exception as exc:
                        batch.results[task] = SampleError(f"item could not be sent to a worker: {exc!r}")
                        continue
                if worker.tasks and len(message) > PIPELINE_MAX_BYTES:
                    batch.held[task] = message  # sent once this worker is idle, not pickled again
                    batch.put_back(index, [task])
                    break
                try:
                    worker.conn.send_bytes(message)
                except OSError:  # the worker is gone: this item runs on its replacement
                    batch.put_back(index, [task])
                    self._lost(index, batch, "worker died")
                    break
                if not worker.tasks:
                    worker.deadline = time.monotonic() + batch.timeout
                worker.tasks.append(task)
                batch.running += 1

    def _collect(self, batch: _Batch, ready: set[Any]) -> None:
        """Take the results of the workers in ``ready``; time out the late ones; start replacements."""
        for index in range(len(self._workers)):
            worker = self._workers[index]
            if not worker.ready:
                self._start_step(index, block=False)
                continue
            if not worker.tasks:
                continue
            if worker.conn in ready:
                self._receive_all(index, batch)
            elif time.monotonic() >= worker.deadline:
                batch.finish(
                    worker.tasks.popleft(),
                    SampleError(f"timed out after {batch.timeout:g} s", reason="timeout"),
                )
                self._replace(index, batch)

    def _receive_all(self, index: int, batch: _Batch) -> None:
        """Every answer waiting from worker ``index``; the next item's deadline starts now."""
        worker = self._workers[index]
        while worker.tasks:
            task = worker.tasks.popleft()
            try:
                _, status, payload = worker.conn.recv()
            except (EOFError, OSError):
                worker.tasks.appendleft(task)
                self._lost(index, batch, "worker died")
                return
            if status == "ok":
                batch.finish(task, payload)
            else:
                batch.finish(task, SampleError(payload, reason=status))
                if status == "memory":  # the worker exits after a MemoryError
                    self._replace(index, batch)
                    return
            if not (worker.tasks and worker.conn.poll()):
                break
        worker.deadline = time.monotonic() + batch.timeout

    def _lost(self, index: int, batch: _Batch, why: str) -> None:
        """Worker ``index`` died: the item it was running gets the error, the ones behind it run again."""
        worker = self._workers[index]
        worker.process.join(timeout=1)  # reap it so the exit code is known
        code = worker.process.exitcode
        if worker.tasks:  # over the memory limit a worker reports a MemoryError ("memory") and exits
            reason = "killed" if code is not None and code < 0 else "crash"
            message = f"{why} ({exit_cause(code)})"
            batch.finish(worker.tasks.popleft(), SampleError(message, reason=reason))
        self._replace(index, batch)

    def close(self) -> None:
        """Stop the workers (idempotent)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            for worker in self._workers:
                with contextlib.suppress(
                    OSError, BrokenPipeError, AttributeError
                ):  # AttributeError: empty slot
                    worker.conn.send(None)  # type: ignore[union-attr]
            for worker in self._workers:
                if worker.process is not None:
                    worker.process.join(timeout=2)
                self._kill(worker)
            self._workers = []

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:  # best effort; explicit close() is the contract
        with contextlib.suppress(Exception):
            self.close()
