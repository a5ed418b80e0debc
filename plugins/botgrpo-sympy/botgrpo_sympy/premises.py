"""What a step checker reads from the prompt: its equations with variables as premises (``f`` for
``f = 0``) and the symbols they name, and the one reading of a relation's side it shares with the checker.

A group's G completions share one prompt, so each worker process keeps the premises of its last 256
(prompt, limits, function letters). The function letters belong to the key because they change the
reading: with ``p`` a function (a completion that defines ``p(x) = 5x``), ``p(2) = 10`` is function
notation and no premise; otherwise it is ``2p = 10``. Keyed by the prompt alone, a completion's verdicts
depended on which completion of its group the worker had checked first.
"""

from __future__ import annotations

from typing import Any

import sympy

from botgrpo_sympy import claimtext
from botgrpo_sympy.claimstate import Side, to_expr
from botgrpo_sympy.equality import free_symbols
from botgrpo_sympy.limits import UNREADABLE, Limits
from botgrpo_sympy.mathparse import parse_value
from botgrpo_sympy.params import StepsParams
from botgrpo_sympy.segments import Piece, find_claims

#: Premises are read from the prompt's first claims only (a long prompt is mostly prose).
_MAX_PROMPT_CLAIMS = 20
#: Per-process cache: (prompt tail, limits, function letters) -> (premises, known symbols).
_PROMPTS: dict[tuple[str, Limits, frozenset[str]], tuple[list[Any], set[sympy.Symbol]]] = {}
_CACHE_SIZE = 256


def prompt_tail(prompt: str, params: StepsParams) -> str:
    """The end of the prompt a checker reads (the question is usually at the end)."""
    return prompt[-4 * params.max_step_chars :]


def parse_side(piece: Piece, latex: bool, functions: frozenset[str], limits: Limits) -> Side:
    """One side of a relation, read: its value, or why it has none (function notation, not math, over a
    cap, undefined)."""
    text = piece.text
    if claimtext.applies_function(text, functions):
        return Side(text, error="function notation")
    try:
        return Side(text, value=parse_value(text, limits, latex=latex))
    except UNREADABLE as exc:
        return Side(text, error=str(exc) or exc.__class__.__name__)


def prompt_premises(
    prompt: str, params: StepsParams, functions: frozenset[str]
) -> tuple[list[Any], set[sympy.Symbol]]:
    """The prompt's premises (``a - b`` for each ``a = b`` with variables) and every symbol its relations
    name, as fresh containers the caller may change; cached per worker process."""
    tail = prompt_tail(prompt, params)
    key = (tail, params.limits, functions)
    cached = _PROMPTS.get(key)
    if cached is None:
        cached = _read_premises(tail, params.limits, functions)
        if len(_PROMPTS) >= _CACHE_SIZE:
            _PROMPTS.pop(next(iter(_PROMPTS)))
        _PROMPTS[key] = cached
    premises, known = cached
    return list(premises), set(known)


def _read_premises(
    tail: str, limits: Limits, functions: frozenset[str]
) -> tuple[list[Any], set[sympy.Symbol]]:
    premises: list[Any] = []
    known: set[sympy.Symbol] = set()
    for claim in find_claims(Piece(tail, 0, len(tail)))[:_MAX_PROMPT_CLAIMS]:
        sides = [parse_side(s, claim.latex, functions, limits) for s in claim.sides]
        for a, rel, b in zip(sides, claim.relations, sides[1:], strict=False):
            if a.value is None or b.value is None:
                continue
            known |= free_symbols(a.value, b.value)
            if rel == "=" and free_symbols(a.value, b.value):
                premises.append(to_expr(a.value) - to_expr(b.value))
    return premises, known
