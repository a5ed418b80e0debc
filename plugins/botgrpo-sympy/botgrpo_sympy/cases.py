"""Cases and substitutions: ``If $x = -3$``, ``plug in $n = 2$``, ``if $x > 1$``.

A claim opened by a case word binds a new value to its variable (no verdict: it is a choice, not a
claim about the old value); a condition on a variable starts a case, so that variable's carried value
and the equations that contain it are dropped (``if x > 1 ... x = 5``, then ``if x < 1 ... 1 - x = 4``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import sympy

from botgrpo_sympy import numberformat
from botgrpo_sympy.claimstate import Side, StepState, short
from botgrpo_sympy.equality import free_symbols
from botgrpo_sympy.numeval import Value

#: Order relations: with a variable they are conditions, never checked claims.
ORDER = ("<", ">", "<=", ">=")


def start_case(
    st: StepState,
    sides: list[Side],
    relations: list[str],
    numeric: Callable[[Any], Value | None],
    case: bool = False,
    step: int = 0,
) -> list[dict[str, Any]] | None:
    """``If $x = -3$`` / ``plug in $n = 2$`` binds a new value (no verdict); a condition on a
    variable (``if $x > 1$``) or an equation after a case word (``in the second, $x - 1 = -4$``) starts a
    case: earlier values and equations of its variables are dropped. A new value for a variable that had one
    also drops the values carried since that one was bound (``step``: the step index), found under the old case."""
    if len(sides) == 2 and relations == ["="]:
        head, value = sides[0].value, numeric(sides[1].value)
        if isinstance(head, sympy.Symbol) and value is not None and head not in free_symbols(sides[1].value):
            # (not "x = 0.42 + 0.3x": an equation in x, whose right side has only x's old value)
            old = st.bound_at.get(head) if head in st.env else None
            st.forget(head)
            if old is not None:
                # "If $x = 3$, then $y = 2$" then "If $x = 1$, ...": what was found under the old value goes with it
                for symbol in [s for s, k in st.bound_at.items() if k >= old and s in st.env]:
                    st.forget(symbol)
                    st.known.discard(symbol)
            st.env[head], st.known, st.cased = value, st.known | {head}, st.cased | {head}
            st.bound_at[head] = step
            st.seen.append(value)
            shown = f"{sides[0].text} = {sides[1].text}"
            return [{"claim": short(shown), "verdict": 0, "reason": "a case or a substitution"}]
    for side in sides:
        if side.value is not None and (case or any(r in ORDER for r in relations)):
            for symbol in free_symbols(side.value):
                st.forget(symbol)
                st.cased.add(symbol)
    return None


def forget_angles(st: StepState, sides: list[str]) -> None:
    """``$x = 100^\\circ$`` (side texts ``sides``): degrees are dropped outside trigonometry, so ``x`` would carry
    100 (radians inside ``\\sin x``); a letter (or ``\\theta``) given a value in degrees carries none."""
    if any(numberformat.degrees_outside_trig(text) for text in sides):
        for text in sides:
            if re.fullmatch(r"\\?[A-Za-z]+", text) and (len(text) == 1 or text[0] == "\\"):
                st.forget(sympy.Symbol(text.lstrip("\\")))
