r"""Which verified claims earn ``sympy.steps`` credit (+1): the rules that keep padding from paying (issue 56).

A checker that pays +1 for every true claim pays for padding: on SmolLM2 a run learned to repeat a verified line
to the length cap, and a hostile battery found ``1 + 1 = 2`` x30 or ``7 = 7`` x30 out-ranking an honest wrong
attempt. So a verified claim keeps its +1 only when it is

- **new**: a claim already credited in the same completion scores 0 when repeated (claims are compared in a
  canonical text: ``2+3=5`` and ``2 + 3 = 5`` are one claim; an answer line by its value);
- **not trivial** (unless ``credit_trivial``): no tautology (``7 = 7``, ``x = x``: sides with no operation, or
  the same text), an arithmetic claim uses at least one *related* number: one written in the prompt or
  established by an earlier related claim of the completion (``1 + 1 = 2`` in a problem about 17 apples and 5
  baskets is 0), and an identity (true for every value) is in at least one related letter: one of the prompt's
  math, or named by an earlier claim or declaration ("Let $x$ be ...") of the completion that was no unrelated
  identity itself (``\sin^2 x + \cos^2 x = 1`` in that apples problem is 0). A prompt with neither a number
  nor a letter in math (or none given) relates everything;

and a completion earns at most ``max_credited_spans`` +1 spans (:func:`bound_credit`). Refutations are never
touched: a false claim is -1 whatever its operands, however often it is repeated.

A record zeroed here keeps ``uncredited`` (``repeat``, ``trivial``) in its meta; an answer line that copies a
repeated verified result still counts it verified (:func:`botgrpo_sympy.claimstate.copied_value_status`).
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

import sympy

from botgrpo_sympy.claimstate import Side
from botgrpo_sympy.equality import free_symbols
from botgrpo_sympy.numberformat import normalize, numbers_in, written_in_base

#: The private key a claim record carries from the checker to :meth:`Credit.apply` (popped there).
INFO = "_credit"

_LATEX_NOISE = re.compile(
    r"\\left|\\right|\\[,;:!]|\\displaystyle|\\text\{[^{}]*\}|[\s$]|\\\(|\\\)|\\\[|\\\]"
)
_TIMES = re.compile(r"\\cdot|\\times|[×·∙]")
_DIVIDE = re.compile(r"\\div|÷")
#: A side with no operation: one number (a sign, thousands, a percent allowed) or one letter, in brackets or not.
_ATOM = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+|\\?[A-Za-z]+)%?")


def canonical(text: str) -> str:
    """A claim's text with spacing, math delimiters, number formats and sign spellings made uniform."""
    text = _TIMES.sub("*", normalize(text))
    text = _DIVIDE.sub("/", text)
    return _LATEX_NOISE.sub("", text)


def _bare(text: str) -> str:
    """The text as written, without spacing, delimiters or brackets (numerals not read: ``2053_7`` stays)."""
    return _LATEX_NOISE.sub("", text).strip("{}()").replace("{", "").replace("}", "")


def has_operation(text: str) -> bool:
    """Whether a side computes anything (``17 + 5``, ``\\frac{1}{2}``, ``2x``) rather than naming one number
    or one letter (``7``, ``(7)``, ``x``, ``12,500``, ``25%``)."""
    return not _ATOM.fullmatch(_bare(canonical(text)))


def link_info(a: Side, b: Side, rel: str, arithmetic: bool) -> dict[str, Any]:
    """What :meth:`Credit.apply` needs of one checked link ``a rel b``: its canonical key, whether it is a
    tautology, and for arithmetic (no variables) the numbers its computing sides use."""
    left, right = canonical(a.text), canonical(b.text)
    ops = [s for s in (a, b) if has_operation(s.text)]
    # "x = x" (the same text; not the same parsed value: sympy folds "(K+6)+K" into "2K+6"), "7 = 7", "7 > 3" (no
    # operation, no variable); "724_{10} = 2053_7" is a conversion, "x = 3" after "3x = 9" a result, not tautologies
    converts = written_in_base(a.text) or written_in_base(b.text)
    tautology = _bare(a.text) == _bare(b.text) or (arithmetic and not ops and not converts)
    info: dict[str, Any] = {"key": f"{left}{rel}{right}", "tautology": tautology}
    # the numbers it writes and the values of its sides: "84 = 2^2 \cdot 3 \cdot 7" is related by 84, "1 + 1 = 2" by
    # none of 1 and 2 in a problem about 17 apples
    info["numbers"] = (
        numbers_in(a.text)
        | numbers_in(b.text)
        | {v for v in map(_fraction, (a.value, b.value)) if v is not None}
    )
    info["arithmetic"] = arithmetic and bool(ops)
    return info


def _fraction(value: Any) -> Fraction | None:
    if isinstance(value, Fraction):
        return value
    if isinstance(value, sympy.Rational):  # a side sympy evaluated ("\\sqrt{100}")
        return Fraction(int(value.p), int(value.q))
    return None


def answer_info(value: Any) -> dict[str, Any]:
    """An answer line is one claim per value: ``The answer is 18.`` said twice earns once."""
    return {"key": f"answer:{value}", "tautology": False}


#: A fraction written in the prompt ("3/4 of a dollar", "\frac{3}{4}"): its value is related too.
_PROMPT_FRACTION = re.compile(
    r"(?<![\d.])(\d{1,9})\s*/\s*(\d{1,9})(?![\d.])|\\frac\{(\d{1,9})\}\{(\d{1,9})\}"
)
#: A letter of the prompt's math: inside $...$, or a lone letter beside a digit or an operator ("3x + 2", "x^2").
_MATH_SPAN = re.compile(r"\$[^$]{1,400}\$|\\\(.{1,400}?\\\)")
_LETTER = re.compile(r"(?<![A-Za-z\\])[A-Za-z](?![A-Za-z])")
_PLAIN_LETTER = re.compile(
    r"(?<=[\d+\-*/^=(])\s?([A-Za-z])(?![A-Za-z])|(?<![A-Za-z\\])([A-Za-z])(?=\s?[+\-*/^=)\d])"
)


def prompt_letters(prompt: str) -> set[str]:
    """Letters the prompt uses as variables (bounded work: the prompt's last 4,000 characters)."""
    text = prompt[-4000:]
    letters = {m.group() for span in _MATH_SPAN.finditer(text) for m in _LETTER.finditer(span.group())}
    letters |= {m.group(1) or m.group(2) for m in _PLAIN_LETTER.finditer(text)}
    return letters


class Credit:
    """The credit state of one completion: the claims credited so far, the numbers and letters related to the
    problem."""

    def __init__(self, prompt: str, credit_trivial: bool, letters: set[str] = frozenset()) -> None:
        self.credit_trivial = credit_trivial
        self.related: set[Fraction] = numbers_in(prompt)
        self.related |= {n / 100 for n in self.related}  # "25%" in the prompt: 0.25 too
        tail = prompt[-4000:]
        for m in _PROMPT_FRACTION.finditer(tail):  # "3/4 of a dollar": 0.75 is related too
            num, den = int(m.group(1) or m.group(3)), int(m.group(2) or m.group(4))
            if den:
                self.related.add(Fraction(num, den))
        self.letters: set[str] = {str(x) for x in letters} | prompt_letters(prompt)
        # a prompt without numbers or letters ("Simplify the expression.", or none given) says nothing of what is
        # related: every claim is
        self.judge_relation = bool(self.related or self.letters)
        self.credited: set[str] = set()

    def unrelated_identity(self, symbols: set[Any]) -> bool:
        """An identity in letters none of which the problem or an earlier claim named (decided when it is checked)."""
        return self.judge_relation and not ({str(x) for x in symbols} & self.letters)

    def learn_letters(self, symbols: set[Any] | set[str]) -> None:
        """Letters an earlier claim or declaration named: later identities in them are related."""
        self.letters |= {str(x) for x in symbols}

    def learn_claim(self, values: list[Any], records: list[dict[str, Any]]) -> None:
        """A claim's side values and link records: unless all its links are unrelated identities, its letters are
        related from here on (a definition ``y = 2x + 1`` has no record and names ``x`` and ``y``)."""
        if not records or not all(r.get(INFO, {}).get("unrelated_identity") for r in records):
            self.learn_letters(free_symbols(*(v for v in values if v is not None)))

    def link_info(self, a: Side, b: Side, rel: str, identity: bool) -> dict[str, Any]:
        """:func:`link_info` of a checked link; ``identity``: it held for every value (then whether its letters
        are related is decided now, in the order of the text)."""
        symbols = free_symbols(a.value, b.value) if a.value is not None and b.value is not None else None
        info = link_info(a, b, rel, symbols == set())
        if identity and symbols:
            info["unrelated_identity"] = self.unrelated_identity(symbols)
        return info

    def apply(self, records: list[dict[str, Any]]) -> None:
        """Zero the +1 of each repeated or trivial record, in order (and learn the related numbers)."""
        for r in records:
            info = r.pop(INFO, None)
            if info is None:
                continue
            trivial = False
            numbers = info.get("numbers", set())
            if not self.credit_trivial:
                unrelated = (
                    self.judge_relation and info.get("arithmetic", False) and not (numbers & self.related)
                )
                trivial = info["tautology"] or unrelated or info.get("unrelated_identity", False)
            if not trivial:
                self.related |= numbers
            if r["verdict"] != 1:
                continue
            if trivial:
                r["verdict"], r["uncredited"] = 0, "trivial"
                why = (
                    "a tautology"
                    if info["tautology"]
                    else "an identity in letters the problem does not use"
                    if info.get("unrelated_identity")
                    else "no number of the problem or of an earlier result"
                )
                r["reason"] = f"true but trivial: {why} (credit_trivial: false)"
            elif info["key"] in self.credited:
                r["verdict"], r["uncredited"] = 0, "repeat"
                r["reason"] = "true, but credited already in this completion (a repeated claim)"
            else:
                self.credited.add(info["key"])


def bound_credit(
    spans: list[tuple[int, int, float, dict[str, Any]]], limit: int | None
) -> list[tuple[int, int, float, dict[str, Any]]]:
    """At most ``limit`` +1 spans per completion (``max_credited_spans``; None: no bound): later ones score 0."""
    if limit is None:
        return spans
    out, credited = [], 0
    for start, end, value, meta in spans:
        if value > 0:
            credited += 1
            if credited > limit:
                meta = {**meta, "uncredited": "bound", "status": f"verified, past max_credited_spans={limit}"}
                value = 0.0
        out.append((start, end, value, meta))
    return out
