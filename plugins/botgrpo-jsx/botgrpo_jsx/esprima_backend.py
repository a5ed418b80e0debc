"""Optional pure-Python parser backend (``parser: esprima`` / ``backend: esprima``), guarded.

esprima 4.0.1 (the Python port) needs no Node, but measured on this project it rejects optional
chaining, ``??``, fragments ``<>``, class fields and all TypeScript, hits Python's recursion limit at
about 55 levels of nesting, and is quadratic on long strings (1 MB: 16 s). So it runs only on code
up to :data:`MAX_CHARS` characters, a ``RecursionError`` is reported as an error (not as invalid
code), and the caller's worker timeout bounds the rest. Its error ``index`` is a ``str`` index.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Longer code is refused: esprima's cost is quadratic in string length.
MAX_CHARS = 20_000


class EsprimaUnavailable(RuntimeError):
    """esprima is not installed or cannot judge this input."""


@dataclass(frozen=True)
class EsprimaResult:
    """``ok``, or the first error's ``str`` index and message."""

    ok: bool
    index: int = 0
    message: str = ""


def check(code: str) -> EsprimaResult:
    """Parse ``code`` as an ES module with JSX.

    :raises EsprimaUnavailable: not installed, too long, or too deeply nested for esprima.
    """
    try:
        import esprima
    except ImportError as exc:
        raise EsprimaUnavailable("esprima is not installed: `pip install botgrpo-jsx[esprima]`") from exc
    if len(code) > MAX_CHARS:
        raise EsprimaUnavailable(f"esprima refuses code over {MAX_CHARS} characters (quadratic cost)")
    try:
        esprima.parseModule(code, {"jsx": True, "tolerant": False})
    except RecursionError as exc:
        raise EsprimaUnavailable("code nests deeper than esprima's recursion can follow") from exc
    except esprima.Error as exc:
        index = getattr(exc, "index", 0) or 0
        return EsprimaResult(False, max(0, min(int(index), len(code))), str(getattr(exc, "message", exc)))
    return EsprimaResult(True)
