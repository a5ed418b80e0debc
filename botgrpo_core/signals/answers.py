"""Final answers in completions: the one ``\\boxed{}`` parser and the exact-number reader.

Every signal that reads a final answer (``core.exact_answer``, ``sympy.answer``, the judge's verdicts)
finds boxes here, so ``\\boxed{\\frac{1}{2}}`` reads as ``\\frac{1}{2}`` everywhere.

Model output is untrusted: both readers are linear in the text (one regex pass, no backtracking
blow-up), and :func:`exact_number` refuses numbers whose exact value would be huge to build
(``1e99999999999999`` is not an answer, and ``Fraction`` would try to compute it).
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import NamedTuple

__all__ = ["ANSWER_LINE", "Box", "boxed", "exact_number", "last_boxed"]

# A box opener, an escaped brace (LaTeX's literal \{ \}, never structure) or a structural brace.
_TOKENS = re.compile(r"\\(?:boxed|fbox)\s*\{|\\[{}]|[{}]")

ANSWER_LINE = re.compile(r"(?:^|\n)[ \t]*(?:final answer|answer|A)[ \t]*:[ \t]*([^\n]*)", re.IGNORECASE)
"""The last ``Answer: ...`` / ``Final answer: ...`` / ``A: ...`` line; group 1 is the answer."""

_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE]([+-]?\d+))?|[+-]?\d+/\d+")
MAX_EXPONENT = 400
"""Largest decimal exponent :func:`exact_number` builds (``1e400`` has 401 digits; ``1e10**14`` would hang)."""
MAX_NUMBER_CHARS = 64


class Box(NamedTuple):
    """The content of one closed box: ``text[start:end]`` (without the braces)."""

    start: int
    end: int


def boxed(text: str) -> list[Box]:
    """Every closed, outermost ``\\boxed{...}`` / ``\\fbox{...}`` in text order, braces matched.

    One pass over the braces with a stack: nested boxes inside a box are part of its content, an
    unclosed box is ignored, and escaped braces ``\\{`` ``\\}`` do not count.

    :returns: the boxes' content ranges.
    """
    stack: list[int | None] = []  # per open brace: content start if it opened a box, else None
    closed: list[Box] = []  # every closed box, in order of its closing brace
    for m in _TOKENS.finditer(text):
        token = m.group()
        if token.startswith("\\") and len(token) == 2:
            continue  # \{ or \}
        if token == "}":
            start = stack.pop() if stack else None  # a stray closing brace closes nothing
            if start is not None:
                closed.append(Box(start, m.start()))
        else:
            stack.append(m.end() if token != "{" else None)
    # keep the outermost: a box inside another closed box is part of its content (an unclosed box is not)
    outermost: list[Box] = []
    for box in sorted(closed):
        if not outermost or box.start >= outermost[-1].end:
            outermost.append(box)
    return outermost


def last_boxed(text: str) -> Box | None:
    """The last closed outermost box of ``text`` (see :func:`boxed`), or ``None``."""
    found = boxed(text)
    return found[-1] if found else None


def exact_number(text: str) -> Fraction | None:
    """``text`` as an exact number (integer, decimal, ``1.5e3``, ``3/4``; ``,`` thousands), else ``None``.

    Refuses what would be costly to build: more than :data:`MAX_NUMBER_CHARS` characters or a decimal
    exponent beyond :data:`MAX_EXPONENT`.
    """
    text = text.strip().replace(",", "")
    if not text or len(text) > MAX_NUMBER_CHARS:
        return None
    m = _NUMBER.fullmatch(text)
    if m is None:
        return None
    if m.group(1) is not None and abs(int(m.group(1))) > MAX_EXPONENT:
        return None
    try:
        return Fraction(text)
    except (ValueError, ZeroDivisionError):
        return None
