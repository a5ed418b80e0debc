"""A checker's own deadline, before the pool's: what was found before it stands (issue 56).

The pool kills a worker whose completion runs past ``timeout_s`` and the completion gets a ``SampleError``: every
verdict found so far is lost, so heavy true identities after a wrong line hid its -1. Inside a checker process a
completion therefore gets a softer budget, ``soft_timeout_share`` of ``timeout_s`` (0.5 by default): past it the checker stops, keeps
the spans it has, and gives the rest one 0 span. It notices between claims (``deadline``) and, for one long
claim, by ``SIGALRM`` (:func:`soft_deadline`), which raises :class:`CheckTimeout` once, inside that claim. The pool's
kill stays the backstop (a C-level computation that never returns to Python).
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Iterator
from typing import Any

#: The status (or claim reason) of what the checker's own deadline left unchecked.
LATE = "not checked: the checker's own deadline passed (timeout_s); the verdicts before it stand"


def late_record(text: str) -> dict[str, Any]:
    """The record of a claim left unchecked by the deadline (0)."""
    return {"claim": text, "verdict": 0, "reason": LATE}


class CheckTimeout(BaseException):
    """The checker's own deadline passed inside a claim (a BaseException: libraries' ``except Exception`` keep
    it)."""


@contextlib.contextmanager
def soft_deadline(seconds: float) -> Iterator[float]:
    """Yield the monotonic time by which a check should stop; in the main thread also arm ``SIGALRM`` to raise
    :class:`CheckTimeout` once, at that time, inside whatever runs. Disarmed on exit (the old handler back)."""
    deadline = time.monotonic() + seconds
    if threading.current_thread() is not threading.main_thread():
        yield deadline  # no signals off the main thread: the checks between claims only
        return
    fired = {"done": False}

    def handler(signum: int, frame: Any) -> None:
        if not fired["done"]:
            fired["done"] = True
            raise CheckTimeout(f"the checker's own deadline ({seconds:g} s) passed")

    old = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 1e-3))  # once: a swallowed raise is seen between claims
    try:
        yield deadline
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        fired["done"] = True
        signal.signal(signal.SIGALRM, old)
