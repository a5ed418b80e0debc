"""The worker side of :class:`~botgrpo_core.rewards.pool.WorkerPool`: what runs in each worker process.

A worker ignores SIGINT (the parent stops the run), runs the pool's initializer, caps its own address
space (``RLIMIT_AS``: headroom over its size after start-up), says it is ready, then answers
``(task_id, item)`` messages with ``(task_id, status, payload)``: ``ok``, ``error`` (it raised) or
``memory`` (a ``MemoryError``; the worker then exits, its heap may be fragmented past the limit).
"""

from __future__ import annotations

import os
import signal
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


def _worker_main(
    conn: Connection,
    fn: Callable[[Any], Any],
    memory_mb: int | None,
    initializer: Callable[..., None] | None,
    initargs: tuple[Any, ...],
) -> None:
    """Worker loop: receive ``(task_id, item)``, send ``(task_id, status, payload)``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group: the parent stops the run
    if initializer is not None:
        initializer(*initargs)
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
        try:
            conn.send(reply)
        except MemoryError:
            conn.send((task_id, "memory", "MemoryError while sending the result"))
        except Exception as exc:  # e.g. an unpicklable result
            conn.send((task_id, "error", f"result could not be sent back: {exc!r}"))
        if reply[1] == "memory":
            return  # the heap may be fragmented past the limit: let the parent start a fresh worker
