"""One entry point for "this piece of model text is an expression": plain text first, LaTeX second.

Results are exact ``Fraction`` s when the expression is plain rational arithmetic (so ``17+5`` never
builds a sympy object), else sympy expressions built under the caps.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

from botgrpo_sympy import numberformat
from botgrpo_sympy.limits import DigitOutsideBase, LimitExceeded, Limits, Undefined, Unsupported
from botgrpo_sympy.plainmath import NotRational, fraction_value, parse_plain, to_sympy

_LATEXISH = re.compile(r"[\\{}]")


def parse_plain_value(text: str, limits: Limits, *, euler: bool = False) -> Any:
    """Plain text -> Fraction (fast path) or sympy expression. Raises on anything else."""
    parsed = parse_plain(text, limits)  # parse_plain normalizes number formats
    try:
        return fraction_value(parsed, limits)
    except NotRational:
        return to_sympy(parsed, limits, euler=euler)


def parse_value(text: str, limits: Limits, *, latex: bool = False, euler: bool = False) -> Any:
    """An expression (not a relation or a set): Fraction or sympy ``Expr``.

    ``latex`` says the text came from a LaTeX context; text without backslashes or braces is still
    read by the plain grammar first. ``euler``: a plain ``e`` is Euler's number (final answers).

    Raises :class:`Unsupported`, :class:`LimitExceeded` or :class:`Undefined`.
    """
    import sympy

    if len(text) > limits.max_chars:
        raise LimitExceeded("length")
    # Number formats: the plain tokenizer normalizes them itself; the LaTeX path below does it here.
    text = numberformat.degrees(text, latex=bool(_LATEXISH.search(text))).strip()
    if not text:
        raise Unsupported("empty expression")
    if numberformat.percent_between_numbers(text):
        raise Unsupported("a percent sign before a number")  # 40/100%500: LaTeX's grammar would guess
    error: Exception | None = None
    # Math without backslashes or braces is read as plain text even inside $...$: the plain
    # grammar is stricter (2(x+1) is a product, not a function call) and needs no sympy.
    if not _LATEXISH.search(text):
        try:
            return parse_plain_value(text, limits, euler=euler)
        except (LimitExceeded, Undefined):
            raise
        except Unsupported as exc:
            error = exc
    from botgrpo_sympy.latexmath import parse_latex

    normalized = numberformat.normalize(text)
    if numberformat.base_numeral_left(normalized):
        raise DigitOutsideBase("a numeral with a digit outside its base")  # LaTeX would read 2058_7 as 2058
    try:
        value = parse_latex(normalized, limits)
    except Unsupported:
        if error is not None:
            raise error from None
        raise
    if not isinstance(value, sympy.Expr) or isinstance(value, sympy.Tuple):
        raise Unsupported(f"{type(value).__name__} is not a single expression")
    if value.is_Rational:
        return Fraction(int(value.p), int(value.q))
    return value
