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


def held_start(pid_log: str, hold: str) -> None:
    """An initializer that appends this worker's pid to ``pid_log``, then spins while the file ``hold``
    exists (at most 60 s): a test can kill the worker while it is still starting."""
    import time

    with open(pid_log, "a") as f:
        f.write(f"{os.getpid()}\n")
    start = time.monotonic()
    while os.path.exists(hold) and time.monotonic() - start < 60:
        pass


def die_at_start_if(flag: str) -> None:
    """An initializer that exits with code 7 while the file ``flag`` exists (a broken start)."""
    if os.path.exists(flag):
        os._exit(7)


def hang_marked(item: str) -> str:
    """``hang:<path>``: writes ``path`` then spins until killed; ``spin``: spins; anything else: upper-cased."""
    if item == "spin":
        while True:
            pass
    if item.startswith("hang:"):
        with open(item[5:], "w") as f:
            f.write(str(os.getpid()))
        while True:
            pass
    return item.upper()
