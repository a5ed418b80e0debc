"""What the words around a claim say about it: a case or substitution, function notation, a unit.

The checker only speaks when it reads a claim unambiguously. These rules decide, from the text
alone, when a relation is not a claim to check against earlier values:

- ``If $x = -3$``, ``plug in $n = 2$``, ``the other solution is $x = 5$``, ``For $n = 12$``: a case or a
  substitution: a new value for the variable, not a claim about its old one;
- ``f(5)``, ``g(g(2))``, ``p(-2)`` where ``f``/``g``/``h`` or a letter defined as ``p(x) = ...`` is a
  function: function notation, which no parser reads (``f(5)`` is not ``5 f``);
- ``The product of 3 and 4 = 12``: a bare number after words holding another number may be the end
  of an operation in words: not refuted;
- ``Let $x$ be the number of apples``: a new meaning for ``x``; its carried value is dropped;
- ``half of 10 = 5``, ``divided by 4 + 2 = 6``, ``3:2 = 1.5``: a run of math right after an operator word
  (or a ratio colon) has lost its left operand; ``a profit of 200000-130000 = 70000`` has not;
- ``gives $2 = \\sqrt{16} + 5$, clearly not true``, ``... a contradiction``: a claim the text itself calls
  false (testing a root, an argument by contradiction): not refuted;
- ``3.2 + 4.8 = 8 m``, ``3*19 = 57L``: a unit letter after the result of a calculation, dropped when
  the letter is not a variable of the solution (``2s = 10`` and ``240g/5 = 48g`` keep it);
- ``48 bags * 6 marbles = 280``, ``12 cookies at $2 each = $24``: nouns between a number and an operator are
  labels of the number, blanked out (``at`` a price is a product); not a measure unit before ``+``/``-``/``/``
  (``2 hours + 30 minutes`` is no sum of the numbers, ``450 km / 5 h`` a rate), and never before ``=`` after a bare number
  (``2 miles = 3520 yards`` converts units).
"""

from __future__ import annotations

import re

#: Words right before a claim that make ``x = value`` a case or a substitution.
_CASE_WORDS = re.compile(
    r"(?i)\b(?:if|when|whenever|suppose|supposing|assume|assuming|plug\w*|substitut\w*|let|letting|"
    r"for|try|trying|case|say|set|setting|take|taking|choose|pick|other|another|at|with|now|first|second|third|"
    r"otherwise|alternatively)\b"
)
#: Letters that are functions in competition writing whenever they are applied to something.
_USUAL_FUNCTIONS = frozenset("fgh")
#: ``p(x) =`` / ``q(t) :=``: a letter defined as a function of one variable.
_FUNCTION_DEFINITION = re.compile(r"(?<![A-Za-z\\])([A-Za-z])\s*\(\s*([a-z])\s*\)\s*:?=")
_APPLIED = re.compile(r"(?<![A-Za-z\\])([A-Za-z])\s*(?:\\left\s*)?\(")
#: Single letters that are units when they follow the last number of a claim.
UNIT_LETTERS = frozenset("mgLlhskt")
_TRAILING_UNIT = re.compile(r"^(.*\d)\s*([A-Za-z])$", re.DOTALL)


#: "Let $x$ be the number of apples", "let n denote ...": a letter given a new meaning.
_DECLARATION = re.compile(
    r"(?i)\b(?:let|letting|suppose|call|denote)\s+\$?\s*([A-Za-z])\s*\$?\s+"
    r"(?:be|denote|denotes|represent|represents|stand|stands|equal\s+the|is\s+the|for)\b"
)


def declared_letters(text: str) -> set[str]:
    """Letters a step declares anew ("Let $x$ be ..."): their carried values no longer hold."""
    return {m.group(1) for m in _DECLARATION.finditer(text)}


_BARE_NUMBER = re.compile(r"^[$€£]?\s?-?\d[\d,.]*\s?%?$")


#: A left side opening with a spaced sign (``- 3``) right after a word: the sign is binary, its left operand the
#: words before (``there are 21 CDs - 3 = 18``, ``... who joined - 1 = 50 + 50``); a tight ``-3`` is a number.
_SPACED_SIGN = re.compile(r"^[-+−–][ \t]")
_WORD_END = re.compile(r"[A-Za-z0-9)][ \t]*$")


def may_have_lost_left_operand(lead: str, first_side: str) -> bool:
    """``The product of 3 and 4 = 12``, ``5 out of 20 = 25%``: a claim whose left side is a bare
    number after words that hold another number may be the end of an operation written in words; so may one
    whose left side opens with a spaced sign right after a word (``21 CDs - 3 = 18``)."""
    side = first_side.strip()
    if _SPACED_SIGN.match(side) and _WORD_END.search(lead):
        return True
    return bool(_BARE_NUMBER.match(side)) and bool(re.search(r"\d", lead))


#: Words that say the claim just written is false: "gives $2 = \\sqrt{16} + 5$, clearly not true", "... = 1, a
#: contradiction", "which is impossible": testing a root or arguing by contradiction, not a wrong step.
_STATED_FALSE = re.compile(
    r"(?i)^[^.;\n]{0,40}?\b(?:not\s+(?:true|possible|valid|a\s+solution|satisf\w*)|no\s+solutions?|is\s+false|false|"
    r"impossible|"
    r"(?:a\s+)?contradiction|absurd|extraneous|does\s*n[o']t\s+(?:hold|work|check)|fails|never)\b"
)
_CONTRADICTION_LEAD = re.compile(
    r"(?i)\b(?:contradiction|absurd|impossible|would\s+(?:give|mean|need|imply))\b"
)


def stated_false(lead: str, trail: str) -> bool:
    """The words around a claim say it is false (``trail``: the text right after it, up to the next claim)."""
    return bool(_STATED_FALSE.match(trail)) or bool(_CONTRADICTION_LEAD.search(lead[-40:]))


_LIST_GLUE = re.compile(r"^[\s$,]*(?:and|or)?[\s$]*$")


def continues_list(lead: str) -> bool:
    """Only ``, `` / ``and`` between two claims: ``Try $a = 1$, $b = 2$, $c = 4$`` is one list (one case)."""
    return bool(_LIST_GLUE.match(lead))


#: Words that open another case of a case analysis ("in the second, $x - 1 = -4$", "for the right piece", "in part
#: (b)"): every claim there is about it.
_NEW_CASE = re.compile(
    r"(?i)\b(?:case|first|second|third|other|another|otherwise|alternatively|pieces?|branch(?:es)?|intervals?|"
    r"region|part)\b"
)


#: A hypothesis: "If", "When $n$ is odd", "Suppose": what follows holds under it, not under the one before.
_HYPOTHESIS = re.compile(r"(?i)\b(?:if|when|whenever|suppose|supposing|assume|assuming)\b")


def opens_hypothesis(lead: str) -> bool:
    """``lead`` opens a case (:func:`opens_case`) or a hypothesis ("When $n$ is odd, ...", "If ...")."""
    return opens_case(lead) or bool(_HYPOTHESIS.search(lead[-40:]))


#: A part or case marked "(ii)" or "(b)" at the start of a line (issue 61: "(ii) $2x - 1 = -7$" is the second case).
_CASE_MARKER = re.compile(r"(?m)^[ \t]*\((?:i{1,3}|iv|vi{0,3}|ix|[a-h])\)[ \t]*\$?[ \t]*$")


def opens_case(lead: str) -> bool:
    """``lead`` starts another case, so even an equation after it (not only ``x = 5``) leaves the old values."""
    return bool(_NEW_CASE.search(lead[-40:]) or _CASE_MARKER.search(lead[-40:]))


#: The text before a claim ends by opening LaTeX math: ``... since $`` / ``\\(``.
_OPENS_MATH = re.compile(r"(?:\$|\\\(|\\\[)\s*$")


def opens_math(lead: str) -> bool:
    """The claim opens its own ``$...$``: it cannot continue the words before it (``since $30 = 2 \\cdot 15$``)."""
    return bool(_OPENS_MATH.search(lead))


def is_case_lead(lead: str) -> bool:
    """``lead`` (the words between the previous claim and this one) opens a case or substitution."""
    return bool(_CASE_WORDS.search(lead[-40:]))


def function_letters(text: str) -> frozenset[str]:
    """Letters used as functions in a prompt and completion: ``f``, ``g``, ``h`` and any ``p(x) = ...``."""
    defined = {m.group(1) for m in _FUNCTION_DEFINITION.finditer(text) if m.group(1) != m.group(2)}
    return _USUAL_FUNCTIONS | defined


def applies_function(text: str, functions: frozenset[str]) -> bool:
    """``f(5)`` / ``g\\left(2\\right)`` with ``f``, ``g`` among ``functions``."""
    return any(m.group(1) in functions for m in _APPLIED.finditer(text))


def without_unit(text: str, variables: set[str]) -> tuple[str, str] | None:
    """``8 m`` / ``56L`` -> ``("8", "m")`` when the letter ends the text after a number, is a unit
    letter and is not one of ``variables``; else None."""
    m = _TRAILING_UNIT.match(text)
    if m is None or m.group(2) not in UNIT_LETTERS or m.group(2) in variables:
        return None
    return m.group(1), m.group(2)


#: Words that are operators in prose: "17 mod 5 = 2", "10 choose 3 = 120". A run right after one
#: has lost its left operand, so it is not a claim.
#: (":" stands for a ratio or time colon, "3:2 = 1.5"; "twice"... for "twice 8 = 16".)
_OPERATOR_WORDS = frozenset(
    [
        "mod",
        "modulo",
        "choose",
        "times",
        "plus",
        "minus",
        "over",
        "divided",
        "...",
        ":",
        "twice",
        "double",
        "triple",
        "thrice",
        "half",
    ]
)
#: "of" is an operator after a quantity ("half of 10 = 5", "3/4 of 1,000 = 750", "40% of 30"), a
#: preposition after a noun ("a profit of 200000-130000 = 70000", whose run is a whole claim).
_QUANTITY_WORDS = frozenset(
    [
        "half",
        "halves",
        "third",
        "thirds",
        "quarter",
        "quarters",
        "fourth",
        "fourths",
        "fifth",
        "fifths",
        "sixth",
        "sixths",
        "tenth",
        "tenths",
        "twice",
        "double",
        "triple",
        "thrice",
        "percent",
        "fraction",
        "part",
        "parts",
        "share",
        "one",
        "two",
        "three",
        "four",
        "five",
    ]
)
#: "by" is an operator after these verbs ("divided by 4 + 2 = 6" has lost "x /"), else a preposition.
_BY_VERBS = re.compile(
    r"(?:divid|multipl|increas|decreas|reduc|rais|grow|grew|ris|rose|fell|fall|drop|cut|up|down)"
)


def is_operator_word(word: str, before: str) -> bool:
    """Does a run right after ``word`` (itself after ``before``: a word, or "#" for a number) lack its
    left operand?"""
    if word == "of":
        return before == "#" or before in _QUANTITY_WORDS
    if word == "by":
        return bool(_BY_VERBS.match(before))
    return word in _OPERATOR_WORDS


def ratio_colon(text: str, pos: int) -> bool:
    """``3:2``, ``2:30``: a colon between digits (a ratio or a time); what follows is not a whole side."""
    return text[pos] == ":" and text[pos - 1 : pos].isdigit() and text[pos + 1 : pos + 2].isdigit()


#: Words that are never a number's label: prose glue and math words.
_NOT_LABELS = frozenset(
    [
        "and",
        "or",
        "is",
        "are",
        "was",
        "were",
        "so",
        "then",
        "to",
        "of",
        "in",
        "on",
        "by",
        "per",
        "for",
        "the",
        "a",
        "an",
        "it",
        "its",
        "this",
        "that",
        "which",
        "with",
        "than",
        "as",
        "if",
        "plus",
        "minus",
        "times",
        "over",
        "divided",
        "mod",
        "modulo",
        "choose",
        "equals",
        "equal",
        "makes",
        "make",
        "gives",
        "give",
        "total",
        "percent",
        "half",
        "halves",
        "third",
        "thirds",
        "quarter",
        "quarters",
        "dozen",
        "dozens",
        "hundred",
        "hundreds",
        "thousand",
        "thousands",
        "million",
        "millions",
        "billion",
        "score",
    ]
)
#: Measure units: numbers labelled with different ones do not add (``2 hours + 30 minutes``).
_MEASURES = re.compile(
    r"(?i)^(?:hours?|hrs?|minutes?|mins?|seconds?|secs?|days?|weeks?|months?|years?|km|cm|mm|meters?|metres?|"
    r"miles?|feet|foot|ft|inch(?:es)?|yards?|kg|grams?|pounds?|lbs?|ounces?|oz|liters?|litres?|ml|cups?|"
    r"gallons?|quarts?|pints?|dollars?|cents?|dozens?|tons?)$"
)
_LABELLED = re.compile(
    r"(?<![\w.\\^_{])(\d[\d,.]*%?)((?:[ \t]+[A-Za-z][a-z'-]+){1,2})"
    r"(?=[ \t]*([-+*/×÷−–=]|x(?=[ \t]*[$€£]?\d)|at(?=[ \t]+[$€£]?\d)))"
)
_AFTER_PRICE = re.compile(r"[ \t]+(?:each|apiece|per[ \t]+[a-z]+)(?=[ \t]*=)")
_OPERATOR_BEFORE = re.compile(r"\d%?[ \t]*[-+*/×÷−–x][ \t]*[$€£]?$")


def blank_labels(text: str) -> str:
    """``48 bags * 6 marbles = 280`` -> ``48      * 6         = 280`` (same length: offsets stay valid).

    A noun (one or two words) between a number and an arithmetic operator labels the number; ``N things at $P
    (each) = T`` is ``N * P = T``. Before ``=`` the words go only when the number ends a calculation
    (``* 6 marbles =``). Measure units are kept before ``+``/``-``/``/``, so the sum or rate stays unread (0)."""
    if not any(c.isdigit() for c in text):
        return text
    chars = list(text)
    for m in _LABELLED.finditer(text):
        words = m.group(2).split()
        op = m.group(3).strip()
        if any(w.lower() in _NOT_LABELS or w.lower() in _WORD_OK_WORDS for w in words):
            continue
        if op in "+-−–/÷" and any(_MEASURES.match(w) for w in words):
            continue  # "2 hours + 30 minutes", "450 km / 5 h": units, not labels
        if op == "=" and not _OPERATOR_BEFORE.search("".join(chars[: m.start(1)])):
            continue
        for k in range(m.start(2), m.end(2)):
            chars[k] = " "
        if op == "at":
            at = m.end(2) + len(text[m.end(2) :]) - len(text[m.end(2) :].lstrip(" \t"))
            chars[at], chars[at + 1] = "*", " "
            after = _AFTER_PRICE.search(text, at + 2)
            price = re.match(r"[ \t]*[$€£]?\d[\d,.]*", text[at + 2 :])
            if after is not None and price is not None and after.start() == at + 2 + price.end():
                for k in range(after.start(), after.end()):
                    chars[k] = " "
    return "".join(chars)


#: Function names a run of math may hold (segments' list): never labels.
_WORD_OK_WORDS = frozenset(["sqrt", "sin", "cos", "tan", "log", "ln", "exp", "abs", "gcd", "lcm", "pi"])
