"""An independent reference for the prose corpus: find calculator claims in a line and decide them.

Written separately from the plugin's parsers on purpose (the corpus labels must not come from the
code they test): a small recursive-descent evaluator over exact ``Fraction`` s that reads the number
formats of real solutions (``$``, ``%``, ``,`` / space / NBSP thousands, leading-dot decimals, mixed
numbers, unicode minus and dashes, ``×`` ``÷`` ``x``, LaTeX ``\\frac``, ``\\cdot``, ``^``). Only claims whose
sides are numbers and operators are decided; anything with a letter is left to the hand label.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from fractions import Fraction

_LATEX = [
    (re.compile(r"\\[dt]?frac\{([^{}]+)\}\{([^{}]+)\}"), r"((\1)/(\2))"),
    (re.compile(r"\\(?:cdot|times)"), "*"),
    (re.compile(r"\\div"), "/"),
    (re.compile(r"\\left|\\right|\\,|\\!"), ""),
    (re.compile(r"\^\{([^{}]+)\}"), r"^(\1)"),
]
_CHARS = str.maketrans({"−": "-", "–": "-", "×": "*", "·": "*", "÷": "/", "\u00a0": " ", "\u202f": " "})
#: What a side of a calculator claim may contain once LaTeX is rewritten.
_SIDE = re.compile(r"^[\d\s.,$%()+\-*/^x]+$")


class NotNumeric(Exception):
    """The text is not a numbers-and-operators expression."""


def _prepare(text: str) -> str:
    for pattern, repl in _LATEX:
        for _ in range(3):
            text = pattern.sub(repl, text)
    text = re.sub(r"÷\s*(\d+)/(\d+)", r"/(\1/\2)", text)  # "2 1/2 ÷ 1/4": the divisor is the fraction
    text = re.sub(r"(?<=\d)\s+/\s+(\d+)/(\d+)(?![\d/.])", r" / (\1/\2)", text)  # "3 1/3 / 5/6": the same
    text = text.translate(_CHARS).replace("$", "").replace("{", "(").replace("}", ")")
    text = re.sub(r"(?<=\d)\s+x\s+(?=[\d.$])|(?<=\d)x(?=\d)", "*", text)
    text = re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", text)
    text = re.sub(r"(?<=\d) (?=\d{3}(?![\d/]))", "", text)
    text = re.sub(r"(\d+) (\d+)/(\d+)", r"(\1+\2/\3)", text)
    text = re.sub(r"(\d*\.?\d+)\s*%", r"(\1/100)", text)
    return text


def evaluate(text: str) -> Fraction:
    """Exact value of a numbers-only expression; raises :class:`NotNumeric` otherwise."""
    prepared = _prepare(text).strip()
    if not prepared or not _SIDE.match(prepared) or re.search(r"[a-wyzA-Z]", prepared):
        raise NotNumeric(text)
    tokens = re.findall(r"\d*\.\d+|\d+|\*\*|[-+*/^()]", prepared.replace(" ", ""))
    if "".join(tokens) != prepared.replace(" ", ""):
        raise NotNumeric(text)
    parser = _Parser(tokens)
    value = parser.expr()
    if parser.pos != len(tokens):
        raise NotNumeric(text)
    return value


class _Parser:
    def __init__(self, tokens: list[str]) -> None:
        self.tokens, self.pos = tokens, 0

    def _peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def _take(self) -> str:
        if self.pos >= len(self.tokens):
            raise NotNumeric("unexpected end")
        self.pos += 1
        return self.tokens[self.pos - 1]

    def expr(self) -> Fraction:
        value = self.term()
        while self._peek() in ("+", "-"):
            value = value + self.term() if self._take() == "+" else value - self.term()
        return value

    def term(self) -> Fraction:
        value = self.unary()
        while self._peek() in ("*", "/") or self._peek() == "(":
            op = "*" if self._peek() == "(" else self._take()
            right = self.unary()
            if op == "/" and right == 0:
                raise NotNumeric("division by zero")
            value = value * right if op == "*" else value / right
        return value

    def unary(self) -> Fraction:
        if self._peek() == "-":
            self._take()
            return -self.unary()
        return self.power()

    def power(self) -> Fraction:
        base = self.atom()
        if self._peek() in ("^", "**"):
            self._take()
            exponent = self.unary()
            if exponent.denominator != 1 or abs(exponent) > 64:
                raise NotNumeric("power")
            return base ** int(exponent)
        return base

    def atom(self) -> Fraction:
        tok = self._take()
        if tok == "(":
            value = self.expr()
            if self._take() != ")":
                raise NotNumeric("bracket")
            return value
        if re.fullmatch(r"\d*\.\d+|\d+", tok):
            return Fraction(tok)
        raise NotNumeric(tok)


@dataclass(frozen=True)
class CalcClaim:
    """``left = right`` with both sides numeric; ``right_span`` locates the right side in the line."""

    left: str
    right: str
    right_span: tuple[int, int]
    true: bool


def _holds(left: Fraction, right: Fraction, right_text: str) -> bool:
    if left == right:
        return True
    digits = re.search(r"\.(\d+)\s*%?\s*$", right_text.strip())
    if digits:  # a rounded or truncated decimal (6.17 for 18.5 / 3; 33.333% for 1/3: two more places)
        scale = 10 ** (len(digits.group(1)) + (2 if right_text.strip().endswith("%") else 0))
        return right in (Fraction(round(left * scale), scale), Fraction(int(left * scale), scale))
    if right_text.strip().endswith("%"):  # "60/250 * 100 = 24%": the percent sign as a label
        return left == right * 100
    return False


def calc_claims(line: str) -> list[CalcClaim]:
    """Numeric ``a = b`` links in a line (math inside ``$...$`` when the line has any)."""
    regions = [(m.start(1), m.group(1)) for m in re.finditer(r"\$([^$]+)\$", line)] or [(0, line)]
    out = []
    for offset, text in regions:
        parts = [(m.start(), m.end()) for m in re.finditer(r"(?<![<>!])=", text)]
        bounds = [0] + [p for se in parts for p in se] + [len(text)]
        pieces = [(bounds[i], bounds[i + 1]) for i in range(0, len(bounds), 2)]
        for (la, lb), (ra, rb) in itertools.pairwise(pieces):
            left = _numeric_suffix(text[la:lb])
            right_m = re.match(r"\s*(-?[−–]?\$?\s?[\d.,\u00a0\u202f ]*\d%?)", text[ra:rb])
            if left is None or right_m is None:
                continue
            right = right_m.group(1)
            rest = text[ra + right_m.end(1) : rb]
            if re.match(r"\s*[-+*/^(×÷·]|\s*\\(?:cdot|times|frac)|\s*\d", rest):
                right = None  # the right side is an expression: only its literal prefix was caught
            elif rest.startswith("_") or (re.match(r"[a-z](?![A-Za-z])", rest) and len(pieces) > 2):
                # "= 10000_2": a numeral in a base; "12 = 4y = -z": a coefficient in a chain, not a result
                right = None
            if right is None:
                continue
            try:
                lv, rv = evaluate(left), evaluate(right)
            except NotNumeric:
                continue
            start = offset + ra + right_m.start(1)
            out.append(
                CalcClaim(left.strip(), right.strip(), (start, start + len(right)), _holds(lv, rv, right))
            )
    return out


def _numeric_suffix(text: str) -> str | None:
    """The longest tail of ``text`` that is a numeric expression ("She earns 12 * 8" -> "12 * 8")."""
    words = re.split(r"(\s+)", text)
    for k in range(len(words)):
        tail = "".join(words[k:]).strip()
        if not tail:
            return None
        before = "".join(words[:k]).rstrip()
        prose_before = re.search(r"(?:^|\s)[A-Za-z']{2,}[:,]?$|[:,;]$", before)
        if before and (not prose_before or tail[0] in "+-*/−–"):
            continue
        if re.search(r"(?i)\b(?:half|third|thirds|quarter|quarters|twice|double)\s+of$", before):
            return None  # "half of 60 = 30": the left side is "half of 60", not a number  # the tail is the end of a longer expression ("2n + 1"), not a whole side
        try:
            evaluate(tail)
            return tail
        except NotNumeric:
            continue
    return None
