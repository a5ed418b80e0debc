"""Worker functions for test_pool.py (module level, so worker processes can import them)."""

from __future__ import annotations

import os


def work(item: str) -> str:
    if item == "raise":
        raise ValueError("boom")
    if item == "hang":
        while True:  # busy loop: a real hang that only a kill ends
            pass
    if item == "memory":
        return str(len(bytearray(4 * 1024**3)))
    if item == "exit":
        os._exit(3)
    if item == "unpicklable":
        return lambda: None  # type: ignore[return-value]
    return item.upper()


def pid(_: object) -> int:
    return os.getpid()


def slow_start(seconds: float) -> None:
    """An initializer that takes a while (like loading a model): spins, no sleep."""
    import time

    start = time.monotonic()
    while time.monotonic() - start < seconds:
        pass


_SEEN: set[str] = set()


def seen_here(key: str) -> tuple[int, bool]:
    """(this worker's pid, whether this worker had the key before): what a per-worker cache would hit."""
    hit = key in _SEEN
    _SEEN.add(key)
    return os.getpid(), hit
