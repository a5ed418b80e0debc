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

import functools
import re
from fractions import Fraction
from typing import Any

import sympy

from botgrpo_sympy.claimstate import Side
from botgrpo_sympy.equality import free_symbols
from botgrpo_sympy.numberformat import normalize, number_key, number_keys, written_in_base

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


_PLAIN = re.compile(r"[0-9A-Za-z+\-*/^=<>. ]*")


def _key_text(text: str) -> str:
    """:func:`canonical`, with a fast path for plain ASCII arithmetic (``17 + 5``: only the spaces go)."""
    return text.replace(" ", "") if _PLAIN.fullmatch(text) else canonical(text)


def _bare(text: str) -> str:
    """The text as written, without spacing, delimiters or brackets (numerals not read: ``2053_7`` stays)."""
    return _LATEX_NOISE.sub("", text).strip("{}()").replace("{", "").replace("}", "")


#: A side that is plainly one number or one letter, as written (the fast path of :func:`has_operation`).
_PLAIN_ATOM = re.compile(r"\s*\$?\s*[-+]?(?:\d[\d,]*(?:\.\d*)?|\.\d+|[A-Za-z])\s*%?\s*\$?\s*")
_NEEDS_READING = re.compile(r"[\\{}()\[\]_]|[^\x00-\x7f]")


def has_operation(text: str) -> bool:
    """Whether a side computes anything (``17 + 5``, ``\\frac{1}{2}``, ``2x``) rather than naming one number
    or one letter (``7``, ``(7)``, ``x``, ``12,500``, ``25%``)."""
    if _PLAIN_ATOM.fullmatch(text):
        return False
    if not _NEEDS_READING.search(text):
        return True  # plain ASCII with something besides one number: "17 + 5", "2x"
    return not _ATOM.fullmatch(_bare(canonical(text)))


def link_info(a: Side, b: Side, rel: str, arithmetic: bool) -> dict[str, Any]:
    """What :meth:`Credit.apply` needs of one checked link ``a rel b``: its texts, whether it has no variable, its
    side values. Whether it is trivial and its key are read in :func:`judge`, for verified links only."""
    values = [v for v in map(_fraction, (a.value, b.value)) if v is not None]
    return {"texts": (a.text, rel, b.text), "no_variable": arithmetic, "values": values}


def judge(info: dict[str, Any]) -> None:
    """Fill in ``tautology`` and ``arithmetic`` (with an operation) of a verified link's :func:`link_info`."""
    if "tautology" in info:
        return
    a, _, b = info["texts"]
    ops = has_operation(a) or has_operation(b)
    # "x = x" (the same text; not the same parsed value: sympy folds "(K+6)+K" into "2K+6"), "7 = 7", "7 > 3" (no
    # operation, no variable); "724_{10} = 2053_7" is a conversion, "x = 3" after "3x = 9" a result, not tautologies
    same_text = a.replace(" ", "") == b.replace(" ", "") or (
        len(a) < 200 and len(b) < 200 and _NEEDS_READING.search(a + b) is not None and _bare(a) == _bare(b)
    )
    converts = "_" in a + b and (written_in_base(a) or written_in_base(b))
    info["tautology"] = same_text or (info["no_variable"] and not ops and not converts)
    info["arithmetic"] = info["no_variable"] and ops


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


#: A number followed by a percent sign in a prompt: "25%" relates 0.25 too.
_PROMPT_PERCENT = re.compile(r"(\d[\d,]*(?:\.\d+)?)\s?\\?%")


@functools.lru_cache(maxsize=1024)
def _prompt_context(prompt: str) -> tuple[frozenset[str], frozenset[str]]:
    """The numbers of a prompt (:func:`number_keys`; also as percents and fractions: "25%" is 0.25 too, "3/4" is
    0.75) and its math letters; cached: the rollouts of a group share one."""
    tail = prompt[-4000:]
    numbers = set(number_keys(tail))
    for m in _PROMPT_PERCENT.finditer(tail):
        numbers.add(number_key(Fraction(m.group(1).replace(",", "")) / 100) or "")
    for m in _PROMPT_FRACTION.finditer(tail):
        num, den = int(m.group(1) or m.group(3)), int(m.group(2) or m.group(4))
        if den:
            numbers.add(number_key(Fraction(num, den)) or f"{num}/{den}")
    numbers.discard("")
    return frozenset(numbers), frozenset(prompt_letters(tail))


class Credit:
    """The credit state of one completion: the claims credited so far, the numbers and letters related to the
    problem. Numbers are compared as :func:`number_keys` strings (no fractions built for every claim)."""

    def __init__(self, prompt: str, credit_trivial: bool, letters: set[Any] = frozenset()) -> None:
        self.credit_trivial = credit_trivial
        self.prompt = prompt
        self._numbers: set[str] | None = None  # the related numbers (the prompt's first, read when needed)
        self._pending: list[str] = []  # texts of related claims whose written numbers are not read yet
        self._letters: set[str] | None = None
        self._given = {str(x) for x in letters}
        self.judge_relation = True
        self.credited: set[str] = set()

    def _context(self) -> None:
        if self._numbers is None:
            numbers, letters = _prompt_context(self.prompt)
            self._numbers, self._letters = set(numbers), set(letters) | self._given | (self._letters or set())
            # a prompt without numbers or letters ("Simplify the expression.", or none given) says nothing of what
            # is related: every claim is
            self.judge_relation = bool(numbers or letters)

    @property
    def letters(self) -> set[str]:
        self._context()
        assert self._letters is not None
        return self._letters

    def _related(self, numbers: set[str]) -> bool:
        """Whether any of ``numbers`` is the prompt's or an earlier related claim's (their texts read lazily)."""
        self._context()
        assert self._numbers is not None
        if numbers & self._numbers:
            return True
        while self._pending:
            self._numbers |= number_keys(self._pending.pop())
        return bool(numbers & self._numbers)

    def unrelated_identity(self, symbols: set[Any]) -> bool:
        """An identity in letters none of which the problem or an earlier claim named (decided when it is checked)."""
        letters = self.letters
        return self.judge_relation and not ({str(x) for x in symbols} & letters)

    def learn_letters(self, symbols: set[Any] | set[str]) -> None:
        """Letters an earlier claim or declaration named: later identities in them are related."""
        if symbols:
            self.letters.update(str(x) for x in symbols)

    def learn_claim(self, values: list[Any], records: list[dict[str, Any]]) -> None:
        """A claim's side values and link records: unless all its links are unrelated identities, its letters are
        related from here on (a definition ``y = 2x + 1`` has no record and names ``x`` and ``y``)."""
        symbolic = [v for v in values if isinstance(v, sympy.Basic) and not isinstance(v, sympy.Number)]
        if symbolic and (not records or not all(r.get(INFO, {}).get("unrelated_identity") for r in records)):
            self.learn_letters(free_symbols(*symbolic))

    def link_info(self, a: Side, b: Side, rel: str, identity: bool) -> dict[str, Any]:
        """:func:`link_info` of a checked link; ``identity``: it held for every value (then whether its letters
        are related is decided now, in the order of the text)."""
        symbols = free_symbols(a.value, b.value) if a.value is not None and b.value is not None else None
        info = link_info(a, b, rel, symbols == set())
        if identity and symbols:
            info["unrelated_identity"] = self.unrelated_identity(symbols)
        return info

    def _unrelated(self, info: dict[str, Any]) -> bool:
        """Arithmetic with an operation none of whose numbers (written, or its sides' values) is related."""
        if not info.get("arithmetic"):
            return False
        self._context()
        if not self.judge_relation:
            return False
        a, _, b = info["texts"]
        keys = {k for k in map(number_key, info["values"]) if k is not None}
        return not self._related(keys | number_keys(a) | number_keys(b))

    def apply(self, records: list[dict[str, Any]]) -> None:
        """Zero the +1 of each repeated or trivial record, in order (and learn the related numbers)."""
        for r in records:
            info = r.pop(INFO, None)
            if info is None:
                continue
            # only a verified claim is judged trivial; what the others write is related (a refutation stays -1)
            trivial = False
            if r["verdict"] == 1 and not self.credit_trivial:
                if "texts" in info:
                    judge(info)
                trivial = info["tautology"] or info.get("unrelated_identity", False) or self._unrelated(info)
            if not trivial and "texts" in info:
                self._context()
                assert self._numbers is not None
                self._numbers.update(k for k in map(number_key, info["values"]) if k is not None)
                self._pending += [info["texts"][0], info["texts"][2]]
            if r["verdict"] != 1:
                continue
            if trivial:
                r["verdict"], r["uncredited"] = 0, "trivial"
                why = (
                    "a tautology"
                    if info.get("tautology")
                    else "an identity in letters the problem does not use"
                    if info.get("unrelated_identity")
                    else "no number of the problem or of an earlier result"
                )
                r["reason"] = f"true but trivial: {why} (credit_trivial: false)"
                continue
            key = info.get("key") or "{}{}{}".format(
                _key_text(info["texts"][0]), info["texts"][1], _key_text(info["texts"][2])
            )
            if key in self.credited:
                r["verdict"], r["uncredited"] = 0, "repeat"
                r["reason"] = "true, but credited already in this completion (a repeated claim)"
            else:
                self.credited.add(key)


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
