"""Pure text work: split a completion into steps, find math claims in a step, find the final answer.

(Over 450 lines by a few: the three cuts share their regexes and offset bookkeeping; the answer forms, claim text
and number formats already live in answerline.py, claimtext.py and numberformat.py.)

Nothing here builds math objects; it only cuts strings (with their offsets into the completion) so
the checker can parse each piece under the caps.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from botgrpo_core.signals.answers import boxed
from botgrpo_core.signals.steps import SplitMode, trim_range
from botgrpo_core.signals.steps import split_steps as core_split_steps
from botgrpo_sympy import claimtext, numberformat

#: Default final-answer patterns, tried in this order (the last match of the first that matches).
ANSWER_LINE = re.compile(
    r"(?im)^[ \t]*(?:\*\*)?(?:final[ \t]+answer|answer|A)(?:\*\*)?[ \t]*[:：](?:\*\*)?[ \t]*(.+?)[ \t]*$"
    r"|^[ \t]*\#{1,3}[ \t]*(?:final[ \t]+)?answer[ \t]*[:：]?[ \t]*(\S.*?)[ \t]*$"
)
#: A heading with nothing after it, "# Answer": the answer is the next non-empty line (PRM800K's format).
ANSWER_HEADER = re.compile(r"(?i)^[ \t]*\#{1,3}[ \t]*(?:final[ \t]+)?answer[ \t]*[:：]?[ \t]*$")
_HEADER_THEN_LINE = re.compile(
    r"(?im)^[ \t]*\#{1,3}[ \t]*(?:final[ \t]+)?answer[ \t]*[:：]?[ \t]*\n(?:[ \t]*\n)*[ \t]*(\S.*?)[ \t]*$"
)
#: GSM8K's final-answer line: "#### 72".
ANSWER_HASHES = re.compile(r"(?m)^[ \t]*####[ \t]*(.+?)[ \t]*$")
ANSWER_IS = re.compile(r"(?im)\b(?:final[ \t]+)?answer[ \t]+is[ \t:]*(.+?)[ \t]*(?:\.(?:[ \t]|$)|$)")

_ARROWS = re.compile(r"=>|⇒|⟹|->|→|\\implies|\\Rightarrow|\\Longrightarrow|\\therefore|∴")


@dataclass(frozen=True)
class Piece:
    """A substring of the completion: ``text == completion[start:end]``."""

    text: str
    start: int
    end: int


@dataclass(frozen=True)
class Claim:
    """A chain ``sides[0] rel[0] sides[1] rel[1] ...`` found in one step."""

    sides: tuple[Piece, ...]
    relations: tuple[str, ...]
    latex: bool


def _trimmed(text: str, start: int, end: int) -> Piece | None:
    """``text[start:end]`` past leading and trailing whitespace as a Piece, ``None`` when nothing is left."""
    start, end = trim_range(text, start, end)
    return Piece(text[start:end], start, end) if end > start else None


#: The end of a finished sentence inside a line: '.', '!' or '?' then white space.
_SENTENCE_END = re.compile(r"[.!?](?=\s)")


def unfinished_start(completion: str, mode: str) -> int:
    """Where the unfinished end of a completion the length cap cut begins (``truncated_cut``).

    'line': after the last newline. 'sentence': after the later of the last line's last sentence break and its last
    finished claim; when its last claim runs into the cut (nothing or one '.' or ',' after it: "36 + 14 = 5" where
    the cap cut "50"), the clause that claim opens. Whatever joins the clauses of a run-on (". ", ", ", " and ",
    nothing), every finished claim is checked; "2. 36 + 14 = 5" is no sentence break (a list marker)."""
    cut = completion.rfind("\n") + 1
    if mode != "sentence":
        return cut
    claims = find_claims(Piece(completion[cut:], cut, len(completion)))
    running = bool(claims) and _RUNS_INTO_CUT.fullmatch(completion, claims[-1].sides[-1].end) is not None
    finished = claims[:-1] if running else claims
    end = claims[-1].sides[0].start if running else len(completion)
    ends = [m.end() for m in _SENTENCE_END.finditer(completion, cut, end)]
    marker = _LIST_MARKER.match(completion, cut)  # "2. " at the line's start is no sentence
    if ends and marker and ends[0] <= marker.end():
        ends = ends[1:]
    return max([cut, *ends, *(c.sides[-1].end for c in finished[-1:])])


#: What may follow a claim the length cap cut: nothing, or a '.' or ',' ("= 5." may be "= 5.5" cut).
_RUNS_INTO_CUT = re.compile(r"[.,]?")


def split_steps(
    completion: str, mode: SplitMode = "auto", pattern: str | None = None, *, timeout_s: float = 1.0
) -> list[Piece]:
    """Steps of a completion, cut by the core splitter (:func:`botgrpo_core.signals.steps.split_steps`), so
    ``step_split`` means what ``split`` means for every other step-wise signal.

    The text before the first ``Step k:`` marker is kept as a step: a claim there is checked too.
    """
    steps = core_split_steps(completion, mode, pattern, timeout_s=timeout_s, preamble=True)
    return [Piece(step.text, step.start, step.end) for step in steps]


# --- math runs inside a step ---------------------------------------------------------------------------------
_LATEX_DELIMS = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$|\\\((.+?)\\\)|\\\[(.+?)\\\]", re.DOTALL)
#: Words that may appear inside a math run (function names, case-insensitive).
_WORD_OK = frozenset(
    [
        "sqrt",
        "cbrt",
        "sin",
        "cos",
        "tan",
        "cot",
        "sec",
        "csc",
        "asin",
        "acos",
        "atan",
        "arcsin",
        "arccos",
        "arctan",
        "sinh",
        "cosh",
        "tanh",
        "exp",
        "log",
        "ln",
        "abs",
        "floor",
        "ceil",
        "factorial",
        "gcd",
        "lcm",
        "binomial",
        "pi",
    ]
)
_ELLIPSIS = re.compile(r"\.\.\.+|…")
#: A decimal number just before the scanning position ("0.555" of "0.555..."), searched up to it.
_DECIMAL_END = re.compile(r"(?<![\d.])\d*\.\d+$")
_RUN_TOKEN = re.compile(
    r"""(?P<cmd>\\[A-Za-z]+|\\[{}])
      |(?P<num>{number})
      |(?P<word>[A-Za-z]+)
      |(?P<rel><=|>=|!=|=>|->|[=<>≤≥≠≈⇒⟹→∴])
      |(?P<op>\*\*|[-+*/^()!×÷·⋅∗−–‒²³π√∞|{}_⌊⌋⌈⌉°])
      |(?P<comma>,)
      |(?P<ws>[ \t{spaces}]+)""".replace("{number}", numberformat.SCAN_NUMBER).replace(
        "{spaces}", numberformat.GROUP_SPACES
    ),
    re.VERBOSE,
)
_BREAK_COMMANDS = frozenset({"text", "textbf", "mathrm", "quad", "qquad", "mbox", "hbox"})


def _runs(text: str, offset: int) -> list[Piece]:
    """Maximal stretches of math-looking tokens in plain text (prose words and punctuation break them)."""
    runs: list[Piece] = []
    start: int | None = None
    last_end = 0
    depth = 0
    pos = 0
    after_operator_word = False  # the run being built follows "mod", "choose", "half of"...
    last_word = ""
    word_before = ""  # what came before last_word: a word, or "#" after a run of math
    paren = None  # (where the run's outermost open "(" is, where the run ended before it)
    malformed: list[int] = []  # commas inside a number that are no thousands separators ("2,78.5")

    def close() -> None:
        nonlocal start, paren
        # a run touching a malformed numeral is not read: "2,78.5" is neither 2 nor 278.5 (issue 61)
        spoiled = bool(malformed) and any(start is not None and start - 1 <= k <= last_end for k in malformed)
        if start is not None and not after_operator_word and not spoiled:
            piece = _trimmed(text, start, last_end)
            if piece is not None:
                runs.append(Piece(piece.text, piece.start + offset, piece.end + offset))
        start, paren = None, None

    while pos < len(text):
        ellipsis = _ELLIPSIS.match(text, pos)
        if (
            ellipsis is not None
            and start is not None
            and last_end == pos
            and _DECIMAL_END.search(text, max(0, pos - 80), pos)
        ):
            # "0.555...": a decimal that does not end is part of its number (numberformat reads the repeating ones)
            last_end = pos = ellipsis.end()
            continue
        if ellipsis is not None:
            # "1 + 2 + ... + 100 = 5050": what follows an ellipsis has lost its left part.
            close()
            depth, last_word, pos = 0, "...", ellipsis.end()
            continue
        m = _RUN_TOKEN.match(text, pos)
        if m is None:
            close()
            depth = 0
            last_word = ":" if claimtext.ratio_colon(text, pos) else ""
            pos += 1
            continue
        kind, value = m.lastgroup, m.group()
        math_token = True
        if kind == "word":
            math_token = len(value) == 1 or value.lower() in _WORD_OK
        elif kind == "cmd":
            math_token = value[1:] not in _BREAK_COMMANDS
        elif kind == "comma":
            # Inside brackets a comma separates arguments; thousands groups (1,000) stay numbers;
            # elsewhere it ends a clause ("x = 3, so y = 4").
            thousands = numberformat.comma_group_at(text, pos) and last_end == pos and start is not None
            math_token = depth > 0 or bool(thousands)
            if not math_token and text[pos - 1 : pos].isdigit() and text[pos + 1 : pos + 2].isdigit():
                malformed.append(pos)  # "2,78.5": a comma inside a number that groups no thousands
        if kind == "op" and value == "(" and depth == 0 and start is not None:
            paren = (m.start(), last_end)
        if kind == "op" and value in "({":
            depth += 1
        elif kind == "op" and value in ")}":
            depth = max(0, depth - 1)
        if not math_token:
            if kind == "word":
                word_before = "#" if start is not None else last_word
            if kind == "word" and depth > 0 and paren is not None:
                # "2.785 (approximately)": a remark in brackets after the math is no part of it (issue 61)
                last_end = paren[1]
            close()
            depth = 0
            last_word = value.lower() if kind == "word" else ""
        elif kind != "ws":
            if start is None:
                start = m.start()
                after_operator_word = claimtext.is_operator_word(last_word, word_before)
            last_word = ""
            last_end = m.end()
        pos = m.end()
    close()
    return runs


_REL_SPLIT = re.compile(r"<=|>=|!=|\\leq?|\\geq?|\\neq?|\\approx|[=<>≤≥≠≈]")


def _split_top(text: str) -> tuple[list[tuple[int, int]], list[str]]:
    """Split at relation symbols outside brackets; returns (piece ranges, relations found)."""
    ranges, found = [], []
    start = 0
    depth = None
    for m in _REL_SPLIT.finditer(text):
        if m.group().startswith("\\") and text[m.end() : m.end() + 1].isalpha():
            continue  # \left, \neg... are not relations
        if depth is None:
            depth = _depths(text) if any(c in text for c in "([{") else []
        if depth and depth[m.start()]:
            continue
        ranges.append((start, m.start()))
        found.append(m.group())
        start = m.end()
    ranges.append((start, len(text)))
    return ranges, found


def _depths(text: str) -> list[int]:
    """Bracket depth before each character (escaped LaTeX braces count too)."""
    out, depth = [], 0
    for ch in text:
        out.append(depth)
        if ch in "({[":
            depth += 1
        elif ch in ")}]":
            depth = max(0, depth - 1)
    return out


def _claims_in(piece: Piece, latex: bool) -> list[Claim]:
    claims: list[Claim] = []
    # Arrows and (in LaTeX) "," / "\quad" / a line break "\\" (a system in $$...$$) separate independent statements.
    parts = [(piece.start, piece.end)]
    cut = [(m.start(), m.end()) for m in _ARROWS.finditer(piece.text)]
    if latex:
        depth = _depths(piece.text)
        cut += [
            (m.start(), m.end())
            for m in re.finditer(r",\s|\\q?quad|\\text\{[^{}]*\}|;|\\\\", piece.text)
            if depth[m.start()] == 0
        ]
    if cut:
        parts, pos = [], 0
        for a, b in sorted(cut):
            if a >= pos:
                parts.append((piece.start + pos, piece.start + a))
                pos = b
        parts.append((piece.start + pos, piece.end))
    for a, b in parts:
        text = piece.text[a - piece.start : b - piece.start]
        if _wrapped(text):  # "(4 * 5 = 20)": a claim in parentheses
            text, a = text[1:-1], a + 1
        ranges, rels = _split_top(text)
        if not rels:
            continue
        sides = []
        for s, e in ranges:
            side = _trimmed(text, s, e)
            sides.append(Piece(side.text, a + side.start, a + side.end) if side else Piece("", a + s, a + s))
        claims.append(Claim(tuple(sides), tuple(_canonical_relation(r) for r in rels), latex))
    return claims


def _wrapped(text: str) -> bool:
    """Is the whole text one parenthesized group?"""
    if not (text.startswith("(") and text.endswith(")")):
        return False
    depth = 0
    for i, ch in enumerate(text):
        depth += (ch == "(") - (ch == ")")
        if depth == 0:
            return i == len(text) - 1
    return False


def _canonical_relation(rel: str) -> str:
    return {
        "\\leq": "<=",
        "\\le": "<=",
        "≤": "<=",
        "\\geq": ">=",
        "\\ge": ">=",
        "≥": ">=",
        "\\neq": "!=",
        "\\ne": "!=",
        "≠": "!=",
        "\\approx": "≈",
    }.get(rel, rel)


#: Markdown bold around words ("**Result:**"), not the power operator of "2**3" or "x**2".
_BOLD = re.compile(r"(?:(?<=^)|(?<=[\s(]))\*\*(?=[A-Za-z])|(?<=[A-Za-z:.)])\*\*(?=\s|$|:)")
#: A list marker at the start of a step or of a line inside it ("- ", "* ", "1. ", "(a) "; a "Step k:" block holds
#: lines): not part of any claim ("- 3 * 4 = 12" is no -12).
_LIST_MARKER = re.compile(
    r"^[ \t]*(?:[-*•][ \t]+|\d{1,2}[.)][ \t]+|\(?(?:[a-zA-Z]|i{2,3}|iv|vi{1,3}|ix)\)[ \t]+)", re.MULTILINE
)


def _plain_dollars(text: str) -> str:
    """Blank out ``$`` signs that do not delimit LaTeX: currency (``$7.50``; a ``$`` before a number
    whose "inner text" up to the next ``$`` has prose words is a price) and ``$...$`` around math with
    no backslash, brace or multi-letter word (``$2 + 3 = 5$``), which the plain grammar reads anyway;
    ``$2ab$`` stays LaTeX, where juxtaposed letters are a product."""
    if "$" not in text:
        return text
    chars = list(text)
    positions = [m.start() for m in re.finditer(r"(?<!\\)\$\$?", text)]
    i = 0
    while i < len(positions):
        a = positions[i]
        width = 2 if text.startswith("$$", a) else 1
        b = positions[i + 1] if i + 1 < len(positions) else None
        inner = text[a + width : b] if b is not None else None
        words = re.findall(r"[A-Za-z]{2,}", inner or "")
        prose = any(w.lower() not in _WORD_OK for w in words)
        if width == 1 and inner is not None and prose and re.match(r"\.?\d", inner) and "\\" not in inner:
            # "If each costs $3, then 4 cost 4 x 3 = $12": a price, and the next $ opens anew
            chars[a] = " "
            i += 1
            continue
        plain = inner is None or not (re.search(r"[\\{}]", inner) or prose)
        if plain:
            for k in range(a, a + width):
                chars[k] = " "
            if b is not None:
                for k in range(b, b + (2 if text.startswith("$$", b) else 1)):
                    chars[k] = " "
        i += 2
    return "".join(chars)


def find_claims(step: Piece) -> list[Claim]:
    """Relation chains in a step: inside ``$...$``/``\\(...\\)`` as LaTeX, elsewhere as plain runs."""
    claims: list[Claim] = []
    text = step.text
    for marker in _LIST_MARKER.finditer(text):  # blank them out: offsets stay valid
        text = text[: marker.start()] + " " * (marker.end() - marker.start()) + text[marker.end() :]
    text = _BOLD.sub("  ", text)
    text = _plain_dollars(text)
    pos = 0
    for m in _LATEX_DELIMS.finditer(text):
        # outside LaTeX, "48 bags * 6 marbles = 280": the nouns are labels of the numbers (blanked)
        for run in _runs(claimtext.blank_labels(text[pos : m.start()]), step.start + pos):
            claims += _claims_in(run, latex="\\" in run.text or "{" in run.text)
        group = next(g for g in range(1, 5) if m.group(g) is not None)
        inner = _trimmed(text, m.start(group), m.end(group))
        if inner is not None:
            claims += _claims_in(Piece(inner.text, step.start + inner.start, step.start + inner.end), True)
        pos = m.end()
    for run in _runs(claimtext.blank_labels(text[pos:]), step.start + pos):
        claims += _claims_in(run, latex="\\" in run.text or "{" in run.text)
    return claims


# --- final answers -------------------------------------------------------------------------------------------
def last_boxed(text: str) -> Piece | None:
    """Content of the last closed, non-empty ``\\boxed{...}`` (or ``\\fbox{...}``): the core's one parser
    (:func:`botgrpo_core.signals.answers.boxed`: braces matched at any depth, linear in the text)."""
    for box in reversed(boxed(text)):
        found = _trimmed(text, box.start, box.end)
        if found is not None:
            return found
    return None


def extract_answer(completion: str, pattern: str | None = None) -> Piece | None:
    """The final answer: ``pattern`` (its first non-empty group, last match) or the defaults:
    the last ``\\boxed{}``, else the last ``Answer:`` / ``Final answer:`` / ``A:`` line, else the
    last ``#### N`` line, else the last "the answer is ..."."""
    if pattern is not None:
        found = None
        for m in re.finditer(pattern, completion):
            groups = [g for g in range(1, (m.re.groups or 0) + 1) if m.group(g)]
            g = groups[0] if groups else 0
            found = _trimmed(completion, m.start(g), m.end(g)) or found
        return _unwrap(completion, found)
    box = last_boxed(completion)
    if box is not None:
        return box
    for regex in (_HEADER_THEN_LINE, ANSWER_LINE, ANSWER_HASHES, ANSWER_IS):
        found = None
        for m in regex.finditer(completion):
            g = 1 if m.group(1) is not None else 2  # ANSWER_LINE: "Answer: 7" or "# Answer 7"
            found = _trimmed(completion, m.start(g), m.end(g)) or found
        if found is not None:
            return _unwrap(completion, _exclaimed(found))
    return None


def _exclaimed(piece: Piece) -> Piece:
    """ "The answer is 7!": in a prose answer line a final '!' is the sentence's, not a factorial (``$7!$`` and
    ``\\boxed{7!}`` keep it: math)."""
    text = piece.text
    if text.endswith("!") and not text.endswith("!!") and len(text) > 1 and text[-2] not in "$}":
        trimmed = text[:-1].rstrip()
        return Piece(trimmed, piece.start, piece.start + len(trimmed))
    return piece


def _unwrap(completion: str, piece: Piece | None) -> Piece | None:
    """Strip a ``\\boxed{}`` or a nested "the answer is X" inside an answer line."""
    if piece is None:
        return None
    inner = last_boxed(piece.text)
    if inner is not None:
        return Piece(inner.text, piece.start + inner.start, piece.start + inner.end)
    nested = ANSWER_IS.search(piece.text)
    if nested is not None:
        found = _trimmed(piece.text, nested.start(1), nested.end(1))
        if found is not None:
            return Piece(found.text, piece.start + found.start, piece.start + found.end)
    return piece
