"""How one link of a claim is compared when no equation solving is involved: rounding
(``1/3 = 0.33``), order and approximate relations between numbers, the readings people intend
(a bare percent as a label, a running calculation, a unit after a result), and the shape test that
tells a wrong rewrite (``(x+3)^2 = x^2 + 9``) from an equation to solve.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

import mpmath
import sympy

from botgrpo_sympy.claimstate import Side, show, to_fraction
from botgrpo_sympy.claimtext import without_unit
from botgrpo_sympy.equality import Outcome, Verdict, expandable, free_symbols
from botgrpo_sympy.limits import CHECK_FAILURES, UNREADABLE, LimitExceeded, Limits, Undefined, Unsupported
from botgrpo_sympy.mathparse import parse_value
from botgrpo_sympy.numberformat import percent_label
from botgrpo_sympy.numeval import Evaluator, Value, same

_DECIMAL = re.compile(r"^\s*-?\d*\.(\d+)\s*$")


def rounded(a: Side, b: Side, value_a: Value | None, value_b: Value | None) -> bool:
    """``1/3 = 0.33``: one side is a decimal literal and the other rounds or truncates to it."""
    for lit, other in ((b, value_a), (a, value_b)):
        m = _DECIMAL.match(lit.text)
        if m is None or other is None or not isinstance(lit.value, Fraction):
            continue
        if not isinstance(other, Fraction) and abs(other.imag) > 1e-30:
            continue
        k = len(m.group(1))
        exact = to_fraction(other)
        scaled = exact * 10**k
        candidates = {Fraction(round(scaled), 10**k), Fraction(int(scaled), 10**k)}
        if lit.value in candidates:
            return True
    return False


def compare(va: Value, rel: str, vb: Value, rounded_ok: bool) -> Outcome:
    """``va rel vb`` for two numbers (``<``, ``<=``, ``!=``, ``≈``; ``rounded_ok``: a rounded decimal)."""
    if rel == "≈":
        if rounded_ok or same(va, vb):
            return Outcome(Verdict.TRUE, "approximately equal")
        x, y = complex(as_complex(va)), complex(as_complex(vb))
        close = abs(x - y) <= 1e-3 * max(abs(x), abs(y))
        return Outcome(Verdict.TRUE if close else Verdict.FALSE, f"{show(va)} vs {show(vb)}")
    if rel == "!=":
        return Outcome(Verdict.FALSE if same(va, vb) else Verdict.TRUE, "inequality")
    x, y = real_part(va), real_part(vb)
    if x is None or y is None:
        return Outcome(Verdict.UNKNOWN, "comparison of non-real numbers")
    if same(va, vb):
        holds = rel in ("<=", ">=")
    else:
        holds = {"<": x < y, ">": x > y, "<=": x < y, ">=": x > y}[rel]
    return Outcome(Verdict.TRUE if holds else Verdict.FALSE, f"{show(va)} {rel} {show(vb)} is {holds}")


def degree(expr: Any) -> int | None:
    """Total degree of a polynomial expression (None if it is not one, or too large to expand)."""
    if not expandable(expr):
        return None  # Poly would expand (a+b+c+d+f+g)^400
    try:
        poly = sympy.Poly(expr, *sorted(expr.free_symbols, key=str))
    except (sympy.PolynomialError, sympy.GeneratorsNeeded):
        return None
    return int(poly.total_degree())


def looks_like_rewrite(a: Any, b: Any) -> bool:
    """``(x+3)^2 = x^2 + 6x + 9``: both sides non-linear polynomials of the same degree.

    Equations to solve put a constant or a lower-degree expression on one side (``x^2 = 4``,
    ``(x-2)(x-3) = 0``); an expansion or factoring restates the same degree on both sides, so a
    false one is a wrong rewrite, not an equation.
    """
    if isinstance(a, Fraction) or isinstance(b, Fraction) or not (a.free_symbols and b.free_symbols):
        return False
    da, db = degree(a), degree(b)
    return da is not None and da == db and da >= 2


def as_complex(v: Value) -> Any:
    """A Python complex (raises OverflowError past float range: the caller's claim is then 0)."""
    return complex(v) if isinstance(v, Fraction) else complex(v.real, v.imag)


def real_part(v: Value) -> mpmath.mpf | None:
    """The real value at working precision (exact rationals of any size compare correctly)."""
    if isinstance(v, Fraction):
        with mpmath.workdps(60):
            return mpmath.mpf(v.numerator) / v.denominator
    if abs(v.imag) > mpmath.mpf(10) ** -30 * max(1, abs(v)):
        return None
    return v.real


def percent_label_holds(a: Side, b: Side, limits: Limits, accept_rounding: bool) -> bool:
    """``60/250 * 100 = 24%``: true when a bare percent is read as a plain number."""
    for lit, other in ((b, a), (a, b)):
        label = percent_label(lit.text)
        if label is not None and isinstance(other.value, Fraction):
            value = parse_value(label, limits)
            if value == other.value or (
                accept_rounding and rounded(Side(label, value), other, None, other.value)
            ):
                return True
    return False


#: "32/96 * 100%": a ratio written as a percent (the "%" names the unit of the result, it is not a hundredth).
_TIMES_HUNDRED_PERCENT = re.compile(r"(?:[*×·]|\\cdot|\\times)\s*100\s*\\?%")
_PERCENT_SIGN = re.compile(r"\\?%")


def hundred_percent_holds(a: Side, b: Side, limits: Limits, accept_rounding: bool) -> bool:
    """``32/96*100% = 33.333`` (or ``= 33.333%``): "times 100%" turns a ratio into a percent, so with every ``%``
    read as a label the claim holds (issue 61: the literal reading, 1/3 against 33.333, refuted it)."""
    if not (_TIMES_HUNDRED_PERCENT.search(a.text) or _TIMES_HUNDRED_PERCENT.search(b.text)):
        return False
    try:
        left, right = (parse_value(_PERCENT_SIGN.sub("", s.text), limits) for s in (a, b))
    except (Unsupported, LimitExceeded, Undefined):
        return False
    if not (isinstance(left, Fraction) and isinstance(right, Fraction)):
        return False
    plain_a, plain_b = Side(_PERCENT_SIGN.sub("", a.text), left), Side(_PERCENT_SIGN.sub("", b.text), right)
    return left == right or (accept_rounding and rounded(plain_a, plain_b, left, right))


#: A trigonometric function of a bare number ("\\sin 100", "sin(80)"): the number, to mark as degrees.
_TRIG_OF_NUMBER = re.compile(
    r"(\\?(?:sin|cos|tan|cot|sec|csc)(?:\^\{?\d\}?)?\s*(?:\\left)?[({]?\s*)(\d+(?:\.\d+)?)(?![\d.])"
)


def true_in_degrees(a: Side, b: Side, limits: Limits) -> bool:
    """``\\sin 100 = \\sin 80``: false in radians, true with the angles read in degrees (the marks dropped): an
    ambiguous reading (issue 61), never a refutation."""
    if not (_TRIG_OF_NUMBER.search(a.text) or _TRIG_OF_NUMBER.search(b.text)):
        return False
    try:
        left, right = (parse_value(_TRIG_OF_NUMBER.sub(r"\1\2°", s.text), limits) for s in (a, b))
        if free_symbols(left, right):
            return False
        va, vb = (v if isinstance(v, Fraction) else Evaluator({}, limits)(v) for v in (left, right))
    except (*UNREADABLE, *CHECK_FAILURES):
        return False
    return va is not None and vb is not None and same(va, vb)


#: "5+3=8*2=16": the right side starts with the value of the left, then keeps calculating.
_RUNNING = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(?:[-+*/×÷·−–]|x\s)")


def running_calculation(a: Side, b: Side) -> bool:
    """``5+3 = 8*2`` in ``5+3=8*2=16``: the link holds for the right side's first number."""
    m = _RUNNING.match(b.text)
    return m is not None and isinstance(a.value, Fraction) and a.value == Fraction(m.group(1))


def other_readings(
    a: Side,
    b: Side,
    outcome: Outcome,
    rewriting: bool,
    limits: Limits,
    accept_rounding: bool,
    values: tuple[Value | None, Value | None],
) -> Outcome:
    """A false numeric claim is true as people write it when a decimal is rounded, a bare percent
    is a label, or a chain is a running calculation; otherwise it stays false."""
    if accept_rounding and rounded(a, b, *values):
        return Outcome(Verdict.TRUE, "rounded")
    if percent_label_holds(a, b, limits, accept_rounding):
        return Outcome(Verdict.TRUE, "arithmetic (the % sign as a label)")
    if hundred_percent_holds(a, b, limits, accept_rounding):
        return Outcome(Verdict.TRUE, "arithmetic (times 100% makes a percent)")
    if rewriting and running_calculation(a, b):
        return Outcome(Verdict.TRUE, "a running calculation (5+3 = 8, then 8*2 = 16)")
    if true_in_degrees(a, b, limits):
        return Outcome(Verdict.UNKNOWN, f"true with the angles in degrees ({outcome.reason})")
    return outcome


def drop_result_unit(sides: list[Side], known: set[str], limits: Limits, latex: bool) -> list[Side]:
    """``3*19 = 57L``: a unit letter after the result of a calculation is dropped.

    Only on the last side, only when the letter is not one of the ``known`` variables and the other
    sides are numbers with an operator (a calculation): ``2s = 10`` is an equation in ``s``.
    """
    last = sides[-1]
    found = without_unit(last.text, known) if last.value is not None else None
    plain = sides[:-1]
    calculation = any(re.search(r"[-+*/^×÷·−–]|\d\s*x\s*\d|\\(?:cdot|times|frac)", s.text) for s in plain)
    if found is None or not calculation or any(s.value is None or free_symbols(s.value) for s in plain):
        return sides
    try:
        value = parse_value(found[0], limits, latex=latex)
    except (Unsupported, LimitExceeded, Undefined):
        return sides
    return [*plain, Side(last.text, value=value)]
