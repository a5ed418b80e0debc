"""The answer-line check of ``sympy.steps``: does the stated final answer follow from the text above?

+1 when it equals the last result (``31 cents`` after a result of 0.31); 0 when it is an earlier value or
any number written above (in prose, in the prompt, or in a claim that was not read: "she has five boxes
of 8, that is 40 pens"), the last result times or over 100 (``75`` after ``3/4 = 0.75`` of a dollar), or not
a rational number (``\\sqrt{7}``: digits "written above" say nothing of it); -1 only for a rational number
that appears nowhere above.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

from botgrpo_sympy.claimstate import StepState, short, show
from botgrpo_sympy.numberformat import numbers_in
from botgrpo_sympy.numeval import Value, same

#: "31 cents", "31¢": an answer in cents, compared with a result in dollars.
_CENTS = re.compile(r"(?i)\bcents?\b|¢")


def written_in(value: Value, text: str) -> bool:
    """Is ``value`` (or ``value`` percent) a number written in ``text``?"""
    if not isinstance(value, Fraction):
        return False
    written = numbers_in(text)
    return value in written or value * 100 in written


def answer_verdict(text: str, got: Value | None, state: StepState, above: str) -> dict[str, Any]:
    """The claim record for an answer line ``text`` with value ``got`` (None: not a number)."""
    claim = short(f"answer {text}")
    last = state.last_value
    if last is None:
        return {"claim": claim, "verdict": 0, "reason": "no earlier result to compare with"}
    if got is None:
        return {"claim": claim, "verdict": 0, "reason": "answer is not a number"}
    if same(got, last):
        return {"claim": claim, "verdict": 1, "reason": "matches the last result"}
    if isinstance(got, Fraction) and _CENTS.search(text) and same(got / 100, last):
        return {"claim": claim, "verdict": 1, "reason": "matches the last result, in cents"}
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
