"""The answer-line check of ``sympy.steps``: does the stated final answer follow from the text above?

+1 when it equals the last result; 0 when it is an earlier value or any number written above (in
prose, in the prompt, or in a claim that was not read: "she has five boxes of 8, that is 40 pens");
-1 only for a number that appears nowhere above.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from botgrpo_sympy.claimstate import StepState, short, show
from botgrpo_sympy.numberformat import numbers_in
from botgrpo_sympy.numeval import Value, same


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
