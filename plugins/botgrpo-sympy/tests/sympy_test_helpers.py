"""Helpers shared by the sympy plugin's tests (a module with a unique name, importable from tests)."""

from __future__ import annotations

import builtins
import contextlib
from collections.abc import Iterator


@contextlib.contextmanager
def no_eval() -> Iterator[list[str]]:
    """Make ``eval`` / ``exec`` raise (and record the attempt) inside the block, in this process."""
    calls: list[str] = []
    real_eval, real_exec = builtins.eval, builtins.exec

    def forbidden_eval(source: object, *args: object, **kwargs: object) -> None:
        calls.append(f"eval {source!r}"[:200])
        raise AssertionError(f"eval was called on {source!r}")

    def forbidden_exec(source: object, *args: object, **kwargs: object) -> None:
        if not isinstance(source, (str, bytes)) and str(getattr(source, "co_filename", "")).endswith(".py"):
            return real_exec(source, *args, **kwargs)  # a lazy module import, not model text
        calls.append(f"exec {source!r}"[:200])
        raise AssertionError(f"exec was called on {source!r}")

    builtins.eval, builtins.exec = forbidden_eval, forbidden_exec
    try:
        yield calls
    finally:
        builtins.eval, builtins.exec = real_eval, real_exec
