"""Answer forms ``sympy.answer`` reads besides numbers, tuples, sets and intervals (issue 61): a numeral written
with its base against the bare digits, matrices, and equations compared as equations.

Pure text work: the caller parses the pieces (entries, sides) under the caps.
"""

from __future__ import annotations

import re

#: "4210_{5}", "4210_5": digits and their base.
_BASE_FORM = re.compile(r"^([0-9A-Fa-f]+)_\{?\s*(\d{1,2})\s*\}?$")
_DIGITS = re.compile(r"^[0-9A-Fa-f]+$")
#: A matrix environment, whole: pmatrix, bmatrix, Bmatrix, vmatrix, matrix, or an array with its column spec.
_MATRIX = re.compile(
    r"^\(?\s*\\begin\{(pmatrix|bmatrix|Bmatrix|vmatrix|Vmatrix|matrix|array)\}(?:\{[^{}]*\})?(.*?)\\end\{\1\}\s*\)?$",
    re.DOTALL,
)
_MAX_ENTRIES = 36


def same_digits_in_base(pred: str, ref: str) -> bool:
    """``4210_{5}`` against ``4210`` (or the other way round): the same digits, one of them with its base named.
    The problem asked for the numeral in that base; the bare form writes it without the subscript."""
    for a, b in ((pred, ref), (ref, pred)):
        m = _BASE_FORM.match(a.strip())
        if m and _DIGITS.match(b.strip()) and m.group(1).upper() == b.strip().upper():
            return True
    return False


def matrix_entries(text: str) -> list[list[str]] | None:
    """The entries of a matrix environment, row by row (None when ``text`` is not one, or is too big)."""
    m = _MATRIX.match(text.strip())
    if m is None:
        return None
    rows = [r for r in re.split(r"\\\\(?:\[[^\]]*\])?", m.group(2)) if r.strip()]
    entries = [[e.strip() for e in row.split("&")] for row in rows]
    if not entries or sum(len(r) for r in entries) > _MAX_ENTRIES or len({len(r) for r in entries}) != 1:
        return None
    return entries


def equation_sides(text: str) -> tuple[str, str] | None:
    """``2x + 3 = y``: its two sides, when ``text`` is one equation (one '=' outside brackets, both sides non-empty)."""
    depth, at = 0, []
    for i, ch in enumerate(text):
        depth += (ch in "([{") - (ch in ")]}")
        if ch == "=" and depth == 0 and text[i - 1 : i] not in ("<", ">", "!", "\\"):
            at.append(i)
    if len(at) != 1:
        return None
    left, right = text[: at[0]].strip(), text[at[0] + 1 :].strip()
    return (left, right) if left and right else None
