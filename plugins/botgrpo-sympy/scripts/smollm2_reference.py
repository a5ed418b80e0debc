"""An exact-arithmetic reference that proposes the verdict each line of a model's solution deserves.

Written independently of ``botgrpo_sympy`` (no sympy, no eval, its own tokenizer): it reads runs of
``number op number ... = number = ...`` (operators ``+ - * / x × ÷ ·``, brackets, ``$``, thousands commas,
``%`` as /100), evaluates each side with :class:`fractions.Fraction` and proposes

- ``+1``: the line holds at least one such claim and every link is true (a decimal may be the value rounded
  or truncated to its own digits);
- ``-1``: a link is false;
- ``0``: no claim (no ``=`` between numbers, no answer line), or the sample's cut last line.

It says when it is *unsure* (``sure=False``): an ``=`` whose sides are not plain arithmetic (words between
the numbers, letters, units), a run it could not read, an answer line (judged by the hand labeller), a line
with a number after "is"/"are" that may be a claim in words. Those lines are labelled by hand.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import NamedTuple

_NUMBER = r"\d+(?:,\d{3})*(?:\.\d+)?|\.\d+"
_TOKEN = re.compile(rf"\s*(?:(?P<num>{_NUMBER})(?P<pct>%)?|(?P<op>[-+*/()=×÷·−x]))")
_ANSWER = re.compile(r"(?i)####|the (?:final )?answer is|answer:|^\s*A:|\\boxed")
_OPS = {"×": "*", "x": "*", "÷": "/", "·": "*", "−": "-"}


class Proposal(NamedTuple):
    label: int
    sure: bool
    why: str


def _tokens(text: str) -> list[str | Fraction] | None:
    """Tokens of a pure arithmetic run, or None when something else sits in it."""
    out: list[str | Fraction] = []
    pos = 0
    text = text.replace("$", "").rstrip(" .,;:")
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            if text[pos:].strip() == "":
                break
            return None
        if m.group("num"):
            value = Fraction(m.group("num").replace(",", ""))
            out.append(value / 100 if m.group("pct") else value)
        else:
            out.append(_OPS.get(m.group("op"), m.group("op")))
        pos = m.end()
    return out


class _Parser:
    def __init__(self, toks: list[str | Fraction]) -> None:
        self.toks, self.i = toks, 0

    def peek(self) -> str | Fraction | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self) -> str | Fraction:
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def expr(self) -> Fraction:
        value = self.term()
        while self.peek() in ("+", "-"):
            value = value + self.term() if self.take() == "+" else value - self.term()
        return value

    def term(self) -> Fraction:
        value = self.unary()
        while self.peek() in ("*", "/") or self.peek() == "(":
            op = "*" if self.peek() == "(" else self.take()
            rhs = self.unary()
            if op == "/" and rhs == 0:
                raise ZeroDivisionError
            value = value * rhs if op == "*" else value / rhs
        return value

    def unary(self) -> Fraction:
        if self.peek() == "-":
            self.take()
            return -self.unary()
        tok = self.take()
        if tok == "(":
            value = self.expr()
            if self.take() != ")":
                raise ValueError
            return value
        if isinstance(tok, Fraction):
            return tok
        raise ValueError


def evaluate(toks: list[str | Fraction]) -> Fraction:
    """The exact value of an arithmetic token list (ValueError when it is not one)."""
    if len(toks) > 60:
        raise ValueError
    parser = _Parser(toks)
    value = parser.expr()
    if parser.i != len(toks):
        raise ValueError
    return value


def _agrees(value: Fraction, written: str) -> bool:
    """``written`` (a side that is one number) states ``value`` exactly, or rounded (half up) or truncated to
    its own decimal digits."""
    target = Fraction(written.replace(",", "").replace("$", "").rstrip("%")) / (100 if "%" in written else 1)
    if value == target:
        return True
    if "." not in written:
        return False
    scale = 10 ** len(written.rstrip("%").split(".")[1]) * (100 if "%" in written else 1)
    sign = -1 if value < 0 else 1
    magnitude = abs(value) * scale
    rounded = sign * Fraction(int(magnitude + Fraction(1, 2)), scale)
    truncated = sign * Fraction(int(magnitude), scale)
    return target in (rounded, truncated)


_MARKER = re.compile(r"^\s*(?:\d+[.)]\s|[-*•]\s|\**step \d+\**:?\**\s)", re.IGNORECASE)
_NAMED = re.compile(
    rf"(?i)(?:[a-z][a-z' ]*\s*=\s*\$?(?:{_NUMBER})%?[a-z ]*?)(?:\s*(?:,|and)\s*[a-z][a-z' ]*\s*=\s*\$?(?:{_NUMBER})%?[a-z ]*?)*"
)
_HEAD = re.compile(r"(?i)(?<![\w.$])[a-z][a-z' ]*?\s*=\s*")
_RUN = re.compile(r"[\d$.(][\d$.,%+\-*/()×÷·−x= ]*=[\d$.,%+\-*/()×÷·−x= ]*[\d)%]")


def propose(line: str, cut: bool = False) -> Proposal:
    """The reference's label for one line."""
    text = line.replace("\u00a0", " ").replace("\\times", "×").replace("\\cdot", "·").replace("\\div", "÷")
    if cut:
        return Proposal(0, True, "cut by the length cap")
    if _ANSWER.search(text):
        return Proposal(0, False, "answer line")
    if not re.search(r"\d", text):
        return Proposal(0, True, "no number")
    text = _MARKER.sub("", text)
    for head in list(_HEAD.finditer(text)):  # a name before a calculation ("Total pages = 120 - 36 = 84")
        if _RUN.match(text, head.end()):
            text = text[: head.start()] + " " * (head.end() - head.start()) + text[head.end() :]
    runs = list(_RUN.finditer(text))
    if _NAMED.fullmatch(text.strip().rstrip(".")):
        return Proposal(0, True, "named values only (x = 3, Total = 120)")
    if "=" not in text:
        if re.search(r"\d\s*[-+*/×÷x]\s*\$?\d", text):
            return Proposal(0, False, "arithmetic without =")
        return Proposal(0, True, "no relation")
    labels: list[int] = []
    for run in runs:
        if re.search(
            r"[A-Za-z^]$", text[: run.start()]
        ):  # "h^2 = 2(h^2)", "2h = 4": letters glued to the run
            return Proposal(0, False, f"a letter or power glued to {run.group()!r}")
        if re.search(r"(?:^|\s)[-+*/×÷·−x]\s*$", text[: run.start()]):  # the run lost its left operand
            return Proposal(0, False, f"an operand before {run.group()!r} is not a number")
        sides = [s.strip() for s in run.group().split("=")]
        if any(not s for s in sides):
            return Proposal(0, False, f"empty side in {run.group()!r}")
        values = []
        for side in sides:
            toks = _tokens(side)
            if not toks:
                return Proposal(0, False, f"unreadable side {side!r}")
            try:
                values.append(evaluate(toks))
            except (ValueError, IndexError, ZeroDivisionError):
                return Proposal(0, False, f"unreadable side {side!r}")
        for n, (a, b, right) in enumerate(zip(values, values[1:], sides[1:], strict=False)):
            single = re.fullmatch(rf"\$?(?:{_NUMBER})%?", right.replace(" ", ""))
            if (
                a != b
                and not single
                and (head := _tokens(right))
                and head[0] == a
                and len(head) > 1
                and n < len(sides) - 2
            ):
                labels.append(1)  # a running calculation: "5 + 3 = 8 * 2 = 16" claims 5 + 3 = 8, 8 * 2 = 16
                continue
            labels.append(1 if (a == b or (single and _agrees(a, right.replace(" ", "")))) else -1)
    outside = _RUN.sub(" ", text)
    if "=" in outside:
        return Proposal(-1 if -1 in labels else 0, False, "an = the reference could not read")
    if not labels:
        return Proposal(0, False, "no readable claim")
    return Proposal(-1 if -1 in labels else 1, True, "arithmetic")


def _numbers(text: str) -> list[Fraction]:
    return [Fraction(m.replace(",", "")) for m in re.findall(_NUMBER, text.replace("$", ""))]


def label_solution(
    prompt: str, lines: list[str], truncated: bool, known: dict[int, int] | None = None
) -> list[Proposal]:
    """Proposals for every line of one solution (the last line is cut when ``truncated``).

    An answer line (``####``, "the answer is") deserves +1 when its number is the result of the last claim
    above and that claim is true, -1 when its number appears nowhere above (prompt included), else 0; it
    is unsure when the last claim above was unsure and has no ``known`` (hand) label. An answer line that
    itself holds a relation (``#### 2 * 3 = 6``) is read as a claim line; one without a number is no claim.
    ``known``: line index -> hand label, used for the claim lines above an answer line."""
    known = known or {}
    out: list[Proposal] = []
    last_result: Fraction | None = None
    last: Proposal | None = None
    for k, line in enumerate(lines):
        cut = truncated and k == len(lines) - 1
        proposal = propose(line, cut)
        if proposal.why == "answer line":
            tail = _ANSWER.split(line)[-1]
            nums = _numbers(tail)
            before = line[: line.rfind(tail)] if tail else line
            above = _numbers(prompt) + [n for earlier in [*lines[:k], before] for n in _numbers(earlier)]
            if "=" in line:  # the claims of the whole line (answer phrases as clause breaks)
                claim = propose(_ANSWER.sub(" ; ", line))
                if "=" not in tail and len(set(nums)) == 1 and nums[0] not in above:
                    claim = Proposal(-1, True, "the answer in the line appears nowhere above")
                proposal = Proposal(claim.label, claim.sure, f"answer line holding a claim: {claim.why}")
            elif not nums:
                proposal = Proposal(0, True, "answer line without a number")
            elif len(set(nums)) != 1:
                proposal = Proposal(0, False, "answer line")
            elif nums[0] not in above:
                proposal = Proposal(-1, True, "answer appears nowhere above")
            elif last is not None and last_result == nums[0]:
                proposal = Proposal(1 if last.label == 1 else 0, last.sure, "answer copies the last result")
            else:
                proposal = Proposal(0, True, "answer not the last result")
        if "=" in line and not cut and not proposal.why.startswith("answer copies"):
            results = _numbers(line.split("=")[-1])
            final = Proposal(known[k], True, "hand") if k in known else proposal
            last, last_result = final, (results[0] if results else None)
        out.append(proposal)
    return out
