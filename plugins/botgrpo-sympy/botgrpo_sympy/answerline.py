"""The answer-line check of ``sympy.steps``: does the stated final answer follow from the text above?

+1 when it equals the last result (``31 cents`` after a result of 0.31) and the claim that gave that result was
verified; 0 when it copies a result that was refuted (``15 + 26 + 72 = 80`` then ``#### 80``: the error already has
its -1 on its own line, and a false alarm there must not spread) or never verified (a definition); 0 when it is an
earlier value or
any number written above (in prose, in the prompt, or in a claim that was not read: "she has five boxes
of 8, that is 40 pens"), the last result times or over 100 (``75`` after ``3/4 = 0.75`` of a dollar), or not
a rational number (``\\sqrt{7}``: digits "written above" say nothing of it); -1 only for a rational number
that appears nowhere above, or a numeral with a digit its base lacks (``108_7``). An answer of several values
(``(7, 3)``, ``\\{2, 5\\}``) is -1 when one of them, a rational number, appears nowhere above (the values the
unknowns took are above), else 0: which value belongs to which unknown is not read.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from botgrpo_sympy.answer import read_answer
from botgrpo_sympy.claimstate import StepState, copied_value_status, short, show
from botgrpo_sympy.limits import UNREADABLE, Limits
from botgrpo_sympy.numberformat import fractions_in, numbers_in, rounds_to, written_in_base
from botgrpo_sympy.numeval import Value, same

#: "31 cents", "31¢": an answer in cents, compared with a result in dollars.
_CENTS = re.compile(r"(?i)\bcents?\b|¢")


def written_in(value: Value, text: str) -> bool:
    """Is ``value`` (or ``value`` percent) a number written in ``text``, a fraction written there (``\\frac{5}{12}``,
    ``5/12``), or such a fraction rounded (``0.4167``)?"""
    if not isinstance(value, Fraction):
        return False
    written = numbers_in(text)
    if value in written or value * 100 in written:
        return True
    fractions = fractions_in(text)
    return value in fractions or any(rounds_to(f, value) for f in fractions)


def _copied(claim: str, state: StepState, reason: str) -> dict[str, Any]:
    """An answer line equal to the last result: +1 only when the claim that gave the result was verified."""
    status = copied_value_status(state.last_claims)
    if status == "verified":
        return {"claim": claim, "verdict": 1, "reason": reason}
    return {"claim": claim, "verdict": 0, "reason": f"{reason}, which was {status}"}


def malformed_numeral_verdict(text: str) -> dict[str, Any]:
    """The claim record for an answer line whose numeral has a digit outside its base (``108_7``)."""
    return {
        "claim": short(f"answer {text}"),
        "verdict": -1,
        "reason": "a numeral with a digit outside its base",
    }


def several_values(text: str, limits: Limits, numeric: Callable[[Any], Value | None]) -> list[Value] | None:
    """The numbers of a tuple or set answer (``(7, 3)``), or None when it is not one of numbers."""
    try:
        answer = read_answer(text, limits)
    except UNREADABLE:
        return None
    if answer.kind not in ("tuple", "set") or len(answer.items) < 2:
        return None
    values = [numeric(v) for v in answer.items]
    return None if any(v is None for v in values) else values


def several_values_verdict(text: str, values: list[Value], state: StepState, above: str) -> dict[str, Any]:
    """The claim record for an answer line of several values (a tuple or set), see the module docstring."""
    claim = short(f"answer {text}")
    if state.last_value is None:
        return {"claim": claim, "verdict": 0, "reason": "no earlier result to compare with"}
    for v in values:
        if isinstance(v, Fraction) and not any(same(v, s) for s in state.seen) and not written_in(v, above):
            return {"claim": claim, "verdict": -1, "reason": f"{show(v)} appears nowhere above"}
    return {"claim": claim, "verdict": 0, "reason": "values from above (which unknown each is: not read)"}


def answer_verdict(text: str, got: Value | None, state: StepState, above: str) -> dict[str, Any]:
    """The claim record for an answer line ``text`` with value ``got`` (None: not a number)."""
    claim = short(f"answer {text}")
    last = state.last_value
    if last is None:
        return {"claim": claim, "verdict": 0, "reason": "no earlier result to compare with"}
    if got is None:
        return {"claim": claim, "verdict": 0, "reason": "answer is not a number"}
    if same(got, last):
        return _copied(claim, state, "matches the last result")
    if isinstance(got, Fraction) and _CENTS.search(text) and same(got / 100, last):
        return _copied(claim, state, "matches the last result, in cents")
    if not isinstance(got, Fraction):
        # "\\sqrt{7}", "2\\pi": whether such a value "appears above" is not a question of written digits
        return {"claim": claim, "verdict": 0, "reason": f"not the last result {show(last)} (not refuted)"}
    if isinstance(last, Fraction) and got in (last * 100, last / 100):
        # "75" after "3/4 = 0.75" of a dollar, "31" (cents) after "p = 0.31", "40" (percent) after "0.4"
        return {
            "claim": claim,
            "verdict": 0,
            "reason": f"the last result {show(last)} in hundredths or hundreds",
        }
    if written_in_base(text):
        # "40_9": the text may give the value only in words ("thirty-six"), or in another base
        return {
            "claim": claim,
            "verdict": 0,
            "reason": f"an answer in a base, not the last result {show(last)}",
        }
    if any(same(got, v) for v in state.seen) or written_in(got, above):
        # An earlier value, or a number from the text: maybe the question asked for it. Not refuted.
        return {
            "claim": claim,
            "verdict": 0,
            "reason": f"a value from above, not the last result {show(last)}",
        }
    return {
        "claim": claim,
        "verdict": -1,
        "reason": f"appears nowhere above; the last result is {show(last)}",
    }
