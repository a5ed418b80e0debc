"""The state a step checker carries through a completion, and small helpers on claim results.

``Side`` is one side of a relation as parsed; ``StepState`` is what earlier steps established
(premises, carried values, the last equation and result); the rest formats values for span meta and
joins branch verdicts (``x = 2 or x = 3``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import mpmath
import sympy

from botgrpo_sympy.equality import free_symbols
from botgrpo_sympy.numeval import Value, mpf_to_fraction, show_fraction


@dataclass
class Side:
    """One side of a relation: its text, and its value or why it was not read."""

    text: str
    value: Any = None
    error: str | None = None


@dataclass
class StepState:
    """What earlier steps established, carried forward through the completion."""

    premises: list[Any] = field(default_factory=list)  # f with f = 0, from the prompt
    known: set[sympy.Symbol] = field(default_factory=set)  # symbols seen so far
    env: dict[sympy.Symbol, Value] = field(default_factory=dict)  # values carried (x = 3)
    prev_eq: Any = None  # the last equation with variables, as f (f = 0)
    prev_eq_step: int = 0  # the step it was recorded in
    recent_eqs: list[Any] = field(default_factory=list)  # all equations of the last step that had any
    step_eqs: list[Any] = field(default_factory=list)  # equations of the current step
    last_side: Side | None = None  # the last side of the last chain (for continuations)
    last_value: Value | None = None  # its numeric value, if any
    last_claims: list[dict[str, Any]] = field(default_factory=list)  # the records of the claim that gave it
    seen: list[Value] = field(default_factory=list)  # numeric values of every side so far
    cased: set[sympy.Symbol] = field(default_factory=set)  # variables given cases ("if x = 2", "x > 1")
    bound_at: dict[sympy.Symbol, int] = field(default_factory=dict)  # step that gave each carried value

    def forget(self, symbol: sympy.Symbol) -> None:
        """Drop the carried value of ``symbol`` and the remembered equations that contain it."""
        st = self
        st.env.pop(symbol, None)
        if st.prev_eq is not None and symbol in free_symbols(st.prev_eq):
            st.prev_eq = None
        st.recent_eqs = [g for g in st.recent_eqs if symbol not in free_symbols(g)]
        st.step_eqs = [g for g in st.step_eqs if symbol not in free_symbols(g)]


def to_expr(v: Any) -> Any:
    """A Fraction as a sympy Rational (sympy objects unchanged)."""
    return sympy.Rational(v.numerator, v.denominator) if isinstance(v, Fraction) else v


def to_fraction(v: Value) -> Fraction:
    """The exact value of a rational or of the real part of a numeric value."""
    if isinstance(v, Fraction):
        return v
    return mpf_to_fraction(v.real)


def assignment(a: Side, b: Side) -> tuple[sympy.Symbol, Fraction] | None:
    """``x = 5`` (a lone variable and a number, either way round): ``(x, 5)``."""
    for lhs, rhs in ((a, b), (b, a)):
        if isinstance(lhs.value, sympy.Symbol) and isinstance(rhs.value, Fraction):
            return lhs.value, rhs.value
    return None


def join_branches(results: list[dict[str, Any]]) -> None:
    """``x = 2 or x = 3``: cases that together give every solution are verified together."""
    branches = [r for r in results if "_branch" in r]
    if len(branches) >= 2:
        totals = {r["_branch"][1] for r in branches}
        covered = frozenset().union(*(r["_branch"][0] for r in branches))
        if len(totals) == 1 and covered == frozenset(range(totals.pop())):
            for r in branches:
                r["verdict"], r["reason"] = 1, "the cases together give every solution"
    for r in branches:
        del r["_branch"]


def join_alternatives(results: list[dict[str, Any]]) -> None:
    """``The roots are $x = -5$ and $x = 2$`` after an equation that gives only ``x = 2``: a value refuted by
    earlier equations is one of the alternatives the step lists (0, not -1) when every solution it was refuted
    at is another value the step gives the same variable. ``x = -5 or x = 3`` for ``(x+5)(x-2) = 0`` stays
    refuted (the solution 2 is not listed)."""
    given: dict[Any, set[Any]] = {}
    for r in results:
        if "_assign" in r:
            symbol, value = r["_assign"]
            given.setdefault(symbol, set()).add(value)
    for r in results:
        symbol, _ = r.pop("_assign", (None, None))
        refuted_at = r.pop("_refuted_at", None)
        if (
            r["verdict"] == -1
            and refuted_at
            and len(given.get(symbol, ())) > 1
            and refuted_at <= given[symbol]
        ):
            r["verdict"], r["reason"] = 0, f"one of the alternatives the step lists ({r['reason']})"


def copied_value_status(claims: list[dict[str, Any]]) -> str:
    """What the claim that gave the last result says of it: ``verified`` (no link refuted and its last link
    verified), ``refuted`` (a link refuted), else ``not verified`` (a definition, a premise, a claim not checkable).
    Read when an answer line copies that result: verdicts changed later in the step (cases joined, claims the text
    calls false) count, as the records are the step's own."""
    if any(r["verdict"] == -1 for r in claims):
        return "refuted"
    # a repeated verified claim earns no second +1 (credit.py), but the result it gave is still verified
    last = claims[-1] if claims else {}
    return "verified" if last.get("verdict") == 1 or last.get("uncredited") == "repeat" else "not verified"


def span_of(start: int, end: int, results: list[dict[str, Any]]) -> tuple[int, int, float, dict[str, Any]]:
    """A step's span: -1 if a claim is refuted, else +1 if one is verified, else 0; meta lists the claims."""
    verdicts = [r["verdict"] for r in results]
    value = -1.0 if -1 in verdicts else 1.0 if 1 in verdicts else 0.0
    meta: dict[str, Any] = {"claims": results}
    failed = [r for r in results if r["verdict"] == -1]
    if failed:
        meta["failed"] = "; ".join(f"{r['claim']}: {r['reason']}" for r in failed)
    if not results:
        meta["status"] = "no claim"
    return (start, end, value, meta)


#: Where a sentence or clause ends between two claims of a step: ". ", "! ", "? ", "; ", ", " or a line break.
_SENTENCE_END = re.compile(r"[.!?;,](?=\s)|\n")


def sentence_spans(
    text: str, start: int, end: int, groups: list[tuple[int, int, list[dict[str, Any]]]]
) -> list[tuple[int, int, float, dict[str, Any]]]:
    """A step ``text[start:end]`` cut into one span per clause holding claims: ``groups`` are each claim's
    ``(start, end, records)`` in order; claims with no sentence or clause end between them share a span
    ("$x = 2$ or $x = 3$"); the spans tile the step. Whole lines before the first claim's line and after the last
    claim's line (a ``Step k:`` header, lines without a claim) get a 0 span of their own, so a claim's verdict
    does not reach the lines around it; within the claims' lines, the first span starts at the first of them,
    each later one after the last clause end before its first claim, the last ends at the last of them."""
    if not groups:
        return [span_of(start, end, [])]
    head = text.rfind("\n", start, groups[0][0])
    tail = text.find("\n", groups[-1][1], end)
    lead = [span_of(start, head + 1, [])] if head >= 0 else []
    trail = [span_of(tail + 1, end, [])] if tail >= 0 and text[tail + 1 : end].strip() else []
    spans: list[tuple[int, int, float, dict[str, Any]]] = []
    span_start, records, prev_end = (head + 1 if lead else start), [], None
    for a, b, found in groups:
        if prev_end is not None:
            breaks = [m.end() for m in _SENTENCE_END.finditer(text, prev_end, a)]
            first, last = text.find("\n", prev_end, a), text.rfind("\n", prev_end, a)
            if first != last and text[first + 1 : last + 1].strip():  # whole lines between the claims' lines
                spans += [span_of(span_start, first + 1, records), span_of(first + 1, last + 1, [])]
                span_start = last + 1 + len(text[last + 1 : a]) - len(text[last + 1 : a].lstrip())
                records = []
            elif breaks:
                cut = breaks[-1]
                spans.append(span_of(span_start, cut, records))
                span_start = cut + len(text[cut:a]) - len(text[cut:a].lstrip())
                records = []
        records = records + found
        prev_end = b
    spans.append(span_of(span_start, tail + 1 if trail else end, records))
    return lead + spans + trail


def short(text: str, limit: int = 160) -> str:
    """Claim text for span meta, runs of spaces joined (labels blanked out), shortened (meta travels back from
    the worker and into logs)."""
    text = re.sub(r"[ \t]{2,}", " ", text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def show(v: Value) -> str:
    """A value for span meta (12 significant digits for numeric values)."""
    if isinstance(v, Fraction):
        return show_fraction(v)
    if abs(v.imag) < 1e-30:
        return mpmath.nstr(v.real, 12)
    return mpmath.nstr(v, 12)
