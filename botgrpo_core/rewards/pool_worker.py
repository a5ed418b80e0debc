"""The worker side of :class:`~botgrpo_core.rewards.pool.WorkerPool`: what runs in each worker process.

A worker ignores SIGINT (the parent stops the run), runs the pool's initializer, caps its own address
space (``RLIMIT_AS``: headroom over its size after start-up), says it is ready, then answers
``(task_id, item)`` messages with ``(task_id, status, payload)``: ``ok``, ``error`` (it raised) or
``memory`` (a ``MemoryError``; the worker then exits, its heap may be fragmented past the limit).

Signal code is untrusted as to its side effects: a worker's stdout is its stderr (a ``print`` in a signal
never reaches ``botgrpo score --json``'s output), and it is its descendants' subreaper (Linux
``PR_SET_CHILD_SUBREAPER``): processes a task started, even ones that detached, are killed when the task ends
(what the initializer started stays for the worker's life).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

_PAGE_SIZE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _address_space_bytes() -> int:
    """Virtual size of this process (what ``RLIMIT_AS`` counts)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[0]) * _PAGE_SIZE
    except OSError:  # not Linux: no reliable reading, so no headroom arithmetic
        return 0


def _limit_memory(headroom_mb: int | None) -> None:
    if headroom_mb is None:
        return
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        return
    limit = _address_space_bytes() + headroom_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _become_subreaper() -> None:
    """Make orphaned descendants of this worker its children, not init's (Linux; elsewhere a no-op)."""
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def _children(pid: int) -> list[int]:
    """Direct children of ``pid`` (``/proc/<pid>/task/*/children``; empty where that does not exist)."""
    out: list[int] = []
    with contextlib.suppress(OSError):
        for tid in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{tid}/children") as f:
                out += [int(p) for p in f.read().split()]
    return out


def end_descendants(root: int | None = None, keep: frozenset[int] = frozenset()) -> int:
    """Kill (SIGKILL) every process the last task left behind: the descendants of ``root`` (default: this
    worker, which also reaps them; with the subreaper flag detached ones are included). The pool calls it
    with a worker's pid before killing that worker (a timeout). Returns how many processes were killed (a
    zombie that outlived its parent may count twice). Children in ``keep`` (what the pool's initializer
    started, e.g. a helper server) are left alone with their descendants."""
    me, killed = os.getpid(), 0
    while True:
        todo, seen = [p for p in _children(root or me) if p not in keep], []
        while todo:  # stop each subtree before its children can be reparented and missed
            pid = todo.pop()
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGSTOP)
            seen.append(pid)
            todo += _children(pid)
        if not seen:
            return killed
        mine = set(_children(me)) - keep
        for pid in seen:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        killed += len(seen)
        if root not in (None, me):  # another process's tree: one pass (it reaps its own children)
            return killed
        for pid in mine:  # reap our own; their orphans come to us (subreaper) and go in the next round
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
        if killed > 100_000:  # a pathological fork loop: give up rather than spin
            return killed


def _worker_main(
    conn: Connection,
    fn: Callable[[Any], Any],
    memory_mb: int | None,
    initializer: Callable[..., None] | None,
    initargs: tuple[Any, ...],
) -> None:
    """Worker loop: receive ``(task_id, item)``, send ``(task_id, status, payload)``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group: the parent stops the run
    with contextlib.suppress(OSError, ValueError):  # signal code's stdout is not the command's output
        sys.stdout.flush()
        os.dup2(2, 1)
    _become_subreaper()
    if initializer is not None:
        initializer(*initargs)
    started = frozenset(_children(os.getpid()))  # the initializer's helpers live as long as the worker
    _limit_memory(memory_mb)
    conn.send(("ready", None, None))
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        task_id, item = message
        try:
            reply = (task_id, "ok", fn(item))
        except MemoryError:
            reply = (task_id, "memory", "MemoryError: the task exceeded the worker's memory limit")
        except BaseException as exc:
            reply = (task_id, "error", "".join(traceback.format_exception_only(type(exc), exc)).strip())
        end_descendants(keep=started)  # what the task started ends with it
        try:
            conn.send(reply)
        except MemoryError:
            conn.send((task_id, "memory", "MemoryError while sending the result"))
        except Exception as exc:  # e.g. an unpicklable result
            conn.send((task_id, "error", f"result could not be sent back: {exc!r}"))
        if reply[1] == "memory":
            return  # the heap may be fragmented past the limit: let the parent start a fresh worker
