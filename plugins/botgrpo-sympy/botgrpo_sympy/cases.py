"""Cases and substitutions: ``If $x = -3$``, ``plug in $n = 2$``, ``if $x > 1$``.

A claim opened by a case word binds a new value to its variable (no verdict: it is a choice, not a
claim about the old value); a condition on a variable starts a case, so that variable's carried value
and the equations that contain it are dropped (``if x > 1 ... x = 5``, then ``if x < 1 ... 1 - x = 4``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import sympy

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
) -> list[dict[str, Any]] | None:
    """``If $x = -3$`` / ``plug in $n = 2$`` binds a new value (no verdict); a condition on a
    variable (``if $x > 1$``) or an equation after a case word (``in the second, $x - 1 = -4$``) starts a
    case: earlier values and equations of its variables are dropped."""
    if len(sides) == 2 and relations == ["="]:
        head, value = sides[0].value, numeric(sides[1].value)
        if isinstance(head, sympy.Symbol) and value is not None:
            st.forget(head)
            st.env[head], st.known, st.cased = value, st.known | {head}, st.cased | {head}
            st.seen.append(value)
            shown = f"{sides[0].text} = {sides[1].text}"
            return [{"claim": short(shown), "verdict": 0, "reason": "a case or a substitution"}]
    for side in sides:
        if side.value is not None and (case or any(r in ORDER for r in relations)):
            for symbol in free_symbols(side.value):
                st.forget(symbol)
                st.cased.add(symbol)
    return None
