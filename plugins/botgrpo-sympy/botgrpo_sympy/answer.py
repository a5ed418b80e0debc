"""``sympy.answer``: compare an extracted final answer with a reference (runs inside a worker).

An answer is read into one of a few shapes, then compared shape by shape:

- ``scalar``: an expression (``14``, ``\\frac{3}{4}``, ``2\\sqrt{2}``, ``x^2+1``); ``x = 3`` reads as 3;
- ``tuple``: ``(1, 2, 3)`` (order matters); a pair ``(a, b)`` also matches the open interval;
- ``set``: ``\\{1, 2\\}`` or a bare list ``1, 2`` (order does not matter);
- ``interval`` / ``union``: ``[0, 1)``, ``(-\\infty, 2] \\cup (3, \\infty)``; ``x > 3`` reads as ``(3, oo)``.

Scalars are equal when random substitution (exact rationals) says so, see :mod:`equality`.
"""

from __future__ import annotations

import random
import re
import zlib
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import sympy

from botgrpo_sympy import numberformat
from botgrpo_sympy.answerforms import equation_sides, matrix_entries, same_digits_in_base
from botgrpo_sympy.equality import Verdict, equal
from botgrpo_sympy.limits import CHECK_FAILURES, LimitExceeded, Limits, Undefined, Unsupported
from botgrpo_sympy.mathparse import parse_value
from botgrpo_sympy.numeval import Evaluator, same
from botgrpo_sympy.params import AnswerParams
from botgrpo_sympy.plainmath import CONSTANTS, FUNCTIONS
from botgrpo_sympy.segments import extract_answer

_ERRORS = (Unsupported, LimitExceeded, Undefined)
_WRAPPERS = re.compile(r"^\$+|\$+$|^\\\(|\\\)$|^\\\[|\\\]$")
_TEXT = re.compile(r"\\(?:text|textbf|mathrm|mbox)\{([^{}]*)\}")
#: A unit word after a number ending an answer: "12 cm", "5 apples" (LaTeX unit removal is off).
_UNIT_WORD = re.compile(
    r"^(.*[\d}])\s*([A-Za-z]{2,12}|[A-Za-z](?=\^|²|³))(?:\^\{?[23]\}?|²|³)?$"
)  # "12 cm^2", "36 m^2"
_LEFT_RIGHT = re.compile(r"\\(?:left|right|big|Big|bigg|Bigg)(?=[()\[\]|.]|\\[{}])")
_UNION = re.compile(r"\\cup|∪|\bU\b")
_MAX_ELEMENTS = 20


@dataclass(frozen=True)
class Answer:
    kind: str  # scalar | tuple | set | interval | union | matrix (items: rows) | equation (items: lhs - rhs)
    items: tuple[Any, ...]
    left_open: bool = False
    right_open: bool = False


def clean(text: str) -> str:
    """Strip wrappers that never change the value: ``$``, ``\\(``, ``\\left``, ``\\text{}``, a final period."""
    text = text.strip()
    for _ in range(3):
        text = _WRAPPERS.sub("", text).strip()
    text = _LEFT_RIGHT.sub("", text)
    text = text.replace("\\!", "").replace("\\,", "").replace("\\displaystyle", "")
    text = text.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")
    text = text.rstrip(".").strip()
    # Units that never change the value: a trailing percent sign or degree mark (not "\\cos 60^\\circ", where the
    # degree mark is the angle's unit: it becomes pi/180 in the parser).
    if not numberformat.TRIG.search(text):
        text = numberformat.TRAILING_UNIT.sub("", text).strip()
    if text.startswith("\\text{") and text.endswith("}") and text.count("{") == 1:
        text = text[6:-1].strip()
    return text


def scalar_text(text: str) -> tuple[str, str | None]:
    """An answer written as one value, without what never changes it: ``("31", "cents")`` for ``31 cents``,
    ``("\\sqrt{7}", None)`` for ``$\\sqrt{7}$.`` (wrappers, ``\\text{}``, a trailing unit word)."""
    text = _TEXT.sub(lambda m: m.group(1), clean(text))
    spelled = numberformat.number_word(text)  # "seven", "twenty-one"
    if spelled is not None:
        return spelled, None
    unit = _UNIT_WORD.match(text)
    if unit and unit.group(2).lower() not in FUNCTIONS and unit.group(2).lower() not in CONSTANTS:
        return unit.group(1).strip(), unit.group(2)
    return text, None


def _split_commas(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts]


def _top_level_commas(text: str) -> bool:
    return len(_split_commas(text)) > 1 and not numberformat.COMMA_NUMBER.match(text)


def _scalar(text: str, limits: Limits) -> Any:
    value = parse_value(text, limits, euler=True)  # "e^2" in an answer is Euler's number, as in LaTeX
    if isinstance(value, sympy.Basic) and value.has(sympy.zoo, sympy.nan):
        raise Undefined("not a number")
    return value


def _elements(text: str, limits: Limits) -> tuple[Any, ...]:
    parts = _split_commas(text)
    if len(parts) > _MAX_ELEMENTS:
        raise LimitExceeded("elements")
    return tuple(_scalar(p, limits) for p in parts)


def read_answer(text: str, limits: Limits) -> Answer:
    """Read an answer string into a comparable shape. Raises if it is not math we understand."""
    text = clean(text)
    if not text:
        raise Unsupported("empty answer")
    if len(text) > limits.max_chars:
        raise LimitExceeded("length")
    entries = matrix_entries(text)
    if entries is not None:
        # "\\begin{pmatrix} \\frac{1}{2} \\\\ 3 \\end{pmatrix}": entry by entry (issue 61)
        return Answer("matrix", tuple(tuple(_scalar(clean(e), limits) for e in row) for row in entries))
    text, _ = scalar_text(text)  # "12 cm", "\\text{12 cm}": the unit word never changes the value
    # "x = 3" -> 3; "x \in [0, 1]" -> the interval
    m = re.match(r"^\s*[A-Za-z](?:_\{?\w+\}?)?\s*(?:=|\\in|∈)\s*(.+)$", text)
    if m and "=" not in m.group(1):
        text = m.group(1).strip()
    else:
        sides = equation_sides(text)
        if sides is not None and re.fullmatch(r"[A-Za-z](?:_\{?\w+\}?)?", sides[1]):
            text = sides[0]  # "2x + 3 = y" is "y = 2x + 3" (issue 61)
        elif sides is not None:
            # "x + y = 5": an equation, compared as one (its sides' difference, up to a constant factor)
            difference = _expr(_scalar(sides[0], limits)) - _expr(_scalar(sides[1], limits))
            return Answer("equation", (difference,))
    rel = re.match(r"^\s*([A-Za-z])\s*(<=|>=|<|>|\\leq?|\\geq?|≤|≥)\s*(.+)$", text)
    if rel:
        bound = _scalar(rel.group(3), limits)
        op = rel.group(2)
        strict = op in ("<", ">")
        if op in (">", ">=", "\\ge", "\\geq", "≥"):
            return Answer("interval", (bound, sympy.oo), strict, True)
        return Answer("interval", (-sympy.oo, bound), True, strict)
    pm = re.findall(r"\\pm|±", text)
    if len(pm) == 1:  # "1 \pm \sqrt{2}": the set of both signs
        plus, minus = re.sub(r"\\pm|±", "+", text), re.sub(r"\\pm|±", "-", text)
        return Answer("set", (_scalar(plus, limits), _scalar(minus, limits)))
    if _UNION.search(text):
        parts = _UNION.split(text)
        if len(parts) > _MAX_ELEMENTS:
            raise LimitExceeded("elements")
        return Answer("union", tuple(read_answer(p, limits) for p in parts))
    if (text.startswith("\\{") and text.endswith("\\}")) or (text.startswith("{") and text.endswith("}")):
        inner = text[2:-2] if text.startswith("\\{") else text[1:-1]
        return Answer("set", _elements(inner, limits) if inner.strip() else ())
    if text[0] in "([" and text[-1] in ")]" and _top_level_commas(text[1:-1]):
        items = _elements(text[1:-1], limits)
        if len(items) == 2 and (text[0] == "[" or text[-1] == "]"):
            return Answer("interval", items, text[0] == "(", text[-1] == ")")
        return Answer("tuple", items, text[0] == "(", text[-1] == ")")
    if _top_level_commas(text):
        return Answer("set", _elements(text, limits))
    return Answer("scalar", (_scalar(text, limits),))


class Comparer:
    """Compare answers with a per-completion random generator (reproducible substitution points)."""

    def __init__(self, params: AnswerParams, seed_text: str) -> None:
        self.params = params
        self.limits = params.limits
        self.rng = random.Random(params.seed ^ zlib.crc32(seed_text.encode("utf-8", "replace")))

    def scalar_equal(self, a: Any, b: Any) -> bool:
        if a in (sympy.oo, -sympy.oo) or b in (sympy.oo, -sympy.oo):
            return a == b
        outcome = equal(a, b, self.limits, self.rng)
        if outcome.verdict is Verdict.TRUE:
            return True
        if self.params.rel_tol > 0 and outcome.verdict is Verdict.FALSE:
            try:
                va, vb = Evaluator({}, self.limits)(_expr(a)), Evaluator({}, self.limits)(_expr(b))
            except _ERRORS:
                return False
            x, y = complex(_as_complex(va)), complex(_as_complex(vb))
            return abs(x - y) <= self.params.rel_tol * max(abs(x), abs(y))
        return False

    def score(self, pred: Answer, ref: Answer) -> float:
        """1.0 equal, 0.0 not; with ``partial_credit`` tuples/sets score the fraction matched."""
        if ref.kind == "scalar" and pred.kind == "set" and len(pred.items) == 1:
            pred = Answer("scalar", pred.items)
        if pred.kind == "scalar" and ref.kind == "set" and len(ref.items) == 1:
            ref = Answer("scalar", ref.items)
        pair_as_interval = {pred.kind, ref.kind} == {"tuple", "interval"}
        if pair_as_interval:
            t, i = (pred, ref) if pred.kind == "tuple" else (ref, pred)
            if len(t.items) != 2 or not (i.left_open and i.right_open and t.left_open and t.right_open):
                return 0.0
            return float(all(self.scalar_equal(x, y) for x, y in zip(t.items, i.items, strict=True)))
        if "matrix" in (pred.kind, ref.kind):
            return self._matrix(pred, ref)
        if pred.kind != ref.kind:
            return 0.0
        if pred.kind == "equation":
            return float(self.proportional(pred.items[0], ref.items[0]))
        if pred.kind == "scalar":
            return float(self.scalar_equal(pred.items[0], ref.items[0]))
        if pred.kind == "interval":
            if (pred.left_open, pred.right_open) != (ref.left_open, ref.right_open):
                return 0.0
            return float(all(self.scalar_equal(x, y) for x, y in zip(pred.items, ref.items, strict=True)))
        if pred.kind == "tuple":
            if len(pred.items) != len(ref.items):
                return 0.0
            hits = sum(self.scalar_equal(x, y) for x, y in zip(pred.items, ref.items, strict=True))
            return self._credit(hits, len(ref.items))
        # set / union: unordered matching
        matched = self._match(pred.items, ref.items, union=pred.kind == "union")
        size = max(len(pred.items), len(ref.items))
        if size == 0:
            return 1.0
        return self._credit(matched, size)

    def _matrix(self, pred: Answer, ref: Answer) -> float:
        """A matrix against a matrix of its shape, entry by entry; a 1x1 matrix against a scalar, a row or a column
        against a tuple (issue 61: a fraction inside a matrix environment against the plain fraction)."""
        if pred.kind == ref.kind:
            if [len(r) for r in pred.items] != [len(r) for r in ref.items]:
                return 0.0
            return float(
                all(self.scalar_equal(x, y) for a, b in zip(pred.items, ref.items) for x, y in zip(a, b))
            )
        m, other = (pred, ref) if pred.kind == "matrix" else (ref, pred)
        flat = [x for row in m.items for x in row]
        if other.kind == "scalar" and len(flat) == 1:
            return float(self.scalar_equal(flat[0], other.items[0]))
        if other.kind == "tuple" and (len(m.items) == 1 or all(len(r) == 1 for r in m.items)):
            if len(flat) != len(other.items):
                return 0.0
            return float(all(self.scalar_equal(x, y) for x, y in zip(flat, other.items)))
        return 0.0

    def proportional(self, a: Any, b: Any) -> bool:
        """``a = 0`` and ``b = 0`` are one equation: ``b`` is a nonzero constant times ``a`` (``x + y - 5`` and
        ``10 - 2x - 2y``). The factor is read at a random point, then checked as an identity."""
        symbols = sorted(_expr(a).free_symbols | _expr(b).free_symbols, key=str)
        for _ in range(4):
            point = {s: Fraction(self.rng.randint(-9, 9), self.rng.randint(1, 5)) for s in symbols}
            try:
                va, vb = Evaluator(point, self.limits)(_expr(a)), Evaluator(point, self.limits)(_expr(b))
            except _ERRORS:
                return False
            if isinstance(va, Fraction) and isinstance(vb, Fraction) and va != 0 and vb != 0:
                factor = vb / va
                return self.scalar_equal(_expr(a) * sympy.Rational(factor.numerator, factor.denominator), b)
        return False

    def _credit(self, hits: int, size: int) -> float:
        if hits == size:
            return 1.0
        return hits / size if self.params.partial_credit else 0.0

    def _match(self, pred: tuple[Any, ...], ref: tuple[Any, ...], union: bool) -> int:
        """Greedy one-to-one matching (elements are few; equality is transitive here)."""
        used: set[int] = set()
        hits = 0
        for p in pred:
            for j, r in enumerate(ref):
                if j in used:
                    continue
                ok = self.score(p, r) == 1.0 if union else self.scalar_equal(p, r)
                if ok:
                    used.add(j)
                    hits += 1
                    break
        return hits


def _expr(v: Any) -> Any:
    return sympy.Rational(v.numerator, v.denominator) if isinstance(v, Fraction) else v


def _as_complex(v: Any) -> complex:
    if isinstance(v, Fraction):
        return complex(float(v))
    return complex(float(v.real), float(v.imag))


def check_answer(params: AnswerParams, completion: str, reference: str) -> tuple[float, dict[str, Any]]:
    """Score one completion against its reference: ``(value, meta)``."""
    completion, reference = (
        numberformat.readable(completion),
        numberformat.readable(reference),
    )  # "٧", "７" (issue 60)
    piece = extract_answer(completion, params.answer_pattern)
    if piece is None:
        return params.unanswered, {"status": "no answer found"}
    if same_digits_in_base(clean(piece.text), clean(reference)):  # "4210_{5}" against "4210" (issue 61)
        return 1.0, {"status": "equal (the same digits, the base named)", "answer": piece.text[:200]}
    comparer = Comparer(params, piece.text + "\x00" + reference)
    try:
        ref = read_answer(reference, params.limits)
    except _ERRORS as exc:
        # The reference is trusted data: say so plainly, but fall back to comparing the strings.
        same_text = clean(piece.text) == clean(reference)
        return float(same_text), {"status": f"reference not parsed ({exc}); compared as text"}
    try:
        pred = read_answer(piece.text, params.limits)
    except _ERRORS as exc:
        return 0.0, {"status": f"answer not parsed: {exc}", "answer": piece.text[:200]}
    try:
        value = comparer.score(pred, ref)
    except CHECK_FAILURES as exc:  # e.g. OverflowError converting a huge exact value: this answer is 0
        return 0.0, {"status": f"not compared: {type(exc).__name__}", "answer": piece.text[:200]}
    return value, {"answer": piece.text[:200], "status": "equal" if value == 1.0 else "not equal"}


__all__ = ["Answer", "Comparer", "check_answer", "clean", "read_answer", "same"]
