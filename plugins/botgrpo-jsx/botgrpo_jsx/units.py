"""Top-level units of a component, each judged in context: where the errors of a page are.

tree-sitter's error recovery after a page's first error swallows the code after it into ``ERROR``
nodes, and a repair of one bracket or tag cannot make a page with two errors parse, so blame on such
pages used to smear over correct code. Instead the code is cut into *units* by its indentation (which
an error inside a line does not change), and each unit is checked with the others set aside:

- **Units** (:mod:`botgrpo_jsx.segment`): the top-level items, the statements of a component, the
  children of its returned root element, and the *frame* lines they are cut from.
- **Blanking.** A unit is set aside by replacing its characters with spaces (newlines kept), so
  every offset stays the same: statements, JSX children and top-level items all leave valid code
  behind when blanked.
- **In context.** The skeleton (every leaf unit blanked) must parse; when it does not, the frame is
  broken, and one missing bracket or tag (:func:`~botgrpo_jsx.syntax.located_cause`,
  :func:`~botgrpo_jsx.syntax.located_tag`) repairs it, else nothing is concluded. Then the leaves
  are put back in source order, by bisection (a group at once; when that breaks the code, each
  half): a leaf whose return leaves the code parsing is kept, one that does not is broken, and
  stays blanked while the later leaves are checked. So each error
  is found in its own unit, in the context of every correct unit before it; the code with the
  broken units blanked parses, and the rules (:mod:`botgrpo_jsx.rules`) run on it in full.

By construction a page that parses has no broken unit, and one that does not has at least one (or
a broken frame). Cost: ~2 log2(leaves) incremental parses per broken leaf, on code that does not
parse only.
"""

from __future__ import annotations

import dataclasses
import re
import time
from dataclasses import dataclass, field

from botgrpo_jsx.segment import Unit, blank, segment, unit_of
from botgrpo_jsx.syntax import SyntaxError_, located_cause, syntax_errors
from botgrpo_jsx.tag_blame import MAX_TAG_PROBLEMS, located_tag
from botgrpo_jsx.tags import tag_problems
from botgrpo_jsx.treesitter import Parsed, ParseTimeout, edited, parse
from botgrpo_jsx.walk import walk

#: More leaf units than this: no unit analysis (each leaf costs a parse of the whole code).
MAX_UNITS = 64
#: Code up to this many characters has its leaves put back before a whole-code repair is looked for.
PUT_BACK_FIRST_CHARS = 1200
_WORD = re.compile(r"[A-Za-z_$][\w$]*")
_CLOSERS = frozenset({"}", ")", "]"})


@dataclass
class Analysis:
    """The verdicts of one parse's units (offsets: ``str`` indices of the parsed code).

    :meth:`broken`: the broken units in source order (:meth:`errors` says where in each).
    ``repaired``: a parse, without any error, of the code with the broken leaves blanked (and a
    frame's repair applied), or of the code with its one verified repair; its offsets map back
    with :meth:`back`. ``trials``: per broken leaf, a parse holding its error (the leaf put back
    alone, or the whole code when one repair mends it), ``located``: errors known already.
    ``blanked``: the text of the broken leaves (names declared there still count as declared).
    """

    units: list[Unit]
    code: str
    repaired: Parsed
    deadline_s: float
    edit: tuple[int, int, str] | None = None
    located: dict[int, list[SyntaxError_]] = field(default_factory=dict)
    trials: dict[int, Parsed] = field(default_factory=dict)
    blanked: str = ""
    #: the trials are the original parse (one repair mends the code): their offsets need no mapping
    whole: bool = False

    @property
    def broken(self) -> list[int]:
        return sorted({*self.located, *self.trials})

    def errors(self, k: int) -> list[SyntaxError_]:
        """The syntax errors blamed in broken unit ``k`` (located on demand: jsx.units needs none)."""
        if k not in self.located:
            self.located[k] = _blame_in(self.trials[k], self, self.units[k], self.code, self.deadline_s)
        return self.located[k]

    def trial_back(self, index: int) -> int:
        """A ``str`` index of a trial -> one of the original code."""
        return index if self.whole else self.back(index)

    def back(self, index: int) -> int:
        """A ``str`` index of the repaired code -> one of the original code."""
        if self.edit is None:
            return index
        a, b, text = self.edit
        if index < a:
            return index
        if index >= a + len(text):
            return index - len(text) + (b - a)
        return a


def analyse(parsed: Parsed, deadline_s: float) -> Analysis | None:
    """The unit verdicts of ``parsed`` (memoised on it); ``None`` when the code cannot be cut into
    units whose skeleton parses (or repairs), or past the deadline (each parse gets
    ``deadline_s``; the put-back as a whole, 4 times that).

    Code that one verified repair mends (:func:`~botgrpo_jsx.syntax.located_cause`, else
    :func:`~botgrpo_jsx.syntax.located_tag`) has one broken unit, the one the repair's span starts in;
    otherwise (several errors, or one no repair places) the leaves are put back (:func:`_put_back`).
    Which goes first is a matter of cost, not of outcome (the same blame on the corpus' mutants and
    the React task's pages, measured): on code of at most :data:`PUT_BACK_FIRST_CHARS` the leaves
    are put back first (a few cheap parses), and two broken leaves spare the whole-code repair
    search, which fails on them after up to ~30 parses; one broken leaf restricts that search to it.
    On longer code, where each parse costs more and most broken code has one error, the whole-code
    repair goes first.
    """
    if "units" not in parsed.memo:
        try:
            parsed.memo["units"] = _analyse(parsed, deadline_s)
        except ParseTimeout:
            parsed.memo["units"] = None
    return parsed.memo["units"]


def _analyse(parsed: Parsed, deadline_s: float) -> Analysis | None:
    code = parsed.index.text
    units = segment(code)
    if not parsed.root.has_error:
        return Analysis(units, code, parsed, deadline_s)
    if not units:
        return None
    found = None
    if len(code) <= PUT_BACK_FIRST_CHARS:
        found = _put_back(parsed, units, deadline_s, repair_frame=True)
        if found is not None and found.edit is None and len(found.broken) > 1:
            return found  # one repair cannot mend two units: no whole-code repair is looked for
        if found is not None and found.edit is None:  # one broken unit: its repair is looked for in it
            unit = units[found.broken[0]]
            after = len(code) - len(code[unit.end :].lstrip())
            parsed.memo["within"] = (parsed.index.byte_of_char(unit.start), parsed.index.byte_of_char(after))
    cause = located_cause(parsed, deadline_s) or located_tag(parsed, deadline_s)
    if cause is not None and cause.edit is not None:
        whole = _from_cause(parsed, units, cause, deadline_s)
        if whole is not None:
            return whole
    if len(code) <= PUT_BACK_FIRST_CHARS:
        # a skeleton's repair is a guess (blanked lines hide the indentation that places a lost
        # bracket): when leaves break after it too, nothing is concluded
        if found is not None and found.edit is not None and found.trials:
            return None
        return found
    # a frame no repair of the whole code mends has several errors: not looked for in the skeleton
    return _put_back(parsed, units, deadline_s, repair_frame=False)


def _from_cause(parsed: Parsed, units: list[Unit], cause: SyntaxError_, deadline_s: float) -> Analysis | None:
    """The analysis of code one verified repair mends: the unit its span starts in is the broken one."""
    code = parsed.index.text
    k = unit_of(units, cause.start)
    if k is None or cause.edit is None:
        return None
    a, b, text = cause.edit
    repaired = edited(parsed, a, b, text, deadline_s)
    if repaired.root.has_error:
        return None
    found = Analysis(units, code, repaired, deadline_s, cause.edit, whole=True)
    # a lost closer's span takes the token after it, which may start the next unit: cut there (a
    # lost opener's belongs to what follows: kept)
    found.located[k] = [units[k].clip(code, cause) if cause.meta.get("repair") in _CLOSERS else cause]
    found.trials[k] = parsed
    return found


def _put_back(parsed: Parsed, units: list[Unit], deadline_s: float, repair_frame: bool) -> Analysis | None:
    """The analysis by blanking: the skeleton (when ``repair_frame``, repaired if one repair mends
    it), then the leaves put back (see the module docstring)."""
    code = parsed.index.text
    leaves = [k for k, u in enumerate(units) if not u.frame]
    if len(leaves) > MAX_UNITS:
        return None
    if not repair_frame and not _frames_balanced(code, units):
        return None  # the skeleton cannot parse (cut-off code lost its closers): spare its parse
    stop = time.monotonic() + 4 * deadline_s
    work = blank(code, [u.ranges[0] for u in (units[k] for k in leaves)])
    skeleton = parse(work, deadline_s, parsed.grammar)
    located: dict[int, list[SyntaxError_]] = {}
    edit = None
    if skeleton.root.has_error:
        if not repair_frame:
            return None
        cause = located_cause(skeleton, deadline_s) or located_tag(skeleton, deadline_s)
        if cause is None or cause.edit is None:
            return None
        a, b, text = cause.edit
        if any(units[k].start < a < units[k].end or units[k].start < b < units[k].end for k in leaves):
            return None  # the repair is inside a leaf: the cut is wrong
        edit = cause.edit
        work = work[:a] + text + work[b:]
        skeleton = parse(work, deadline_s, parsed.grammar)
        owner = _frame_of(units, cause.start)
        if skeleton.root.has_error or owner is None:
            return None
        located[owner] = [cause]
    code2, delta = code, 0
    if edit is not None:
        code2 = code[: edit[0]] + edit[2] + code[edit[1] :]
        delta = len(edit[2]) - (edit[1] - edit[0])
    analysis = Analysis(units, code, skeleton, deadline_s, edit, located)
    spans = {}
    for k in leaves:
        a, b = units[k].ranges[0]
        spans[k] = (a + delta, b + delta) if edit is not None and a >= edit[1] else (a, b)
    state = {"current": skeleton}

    def put_back(group: list[int], known_bad: bool) -> None:
        """Put ``group`` back at once; when that breaks the code, each half in turn (a bisection:
        a page with one broken unit in N costs ~2 log2 N parses, not N)."""
        if time.monotonic() > stop:
            raise ParseTimeout("unit analysis over its deadline")
        current = state["current"]
        lo, hi = spans[group[0]][0], spans[group[-1]][1]
        if not known_bad:
            text, pos = [], lo
            for k in group:
                a, b = spans[k]
                text += [current.index.text[pos:a], code2[a:b]]
                pos = b
            trial = edited(current, lo, hi, "".join(text), deadline_s)
            if not trial.root.has_error:
                state["current"] = trial
                return
            if len(group) == 1:
                # its repairs are looked for in it (and the blank after it, where a lost closer goes)
                trial_text = trial.index.text
                after = len(trial_text) - len(trial_text[hi:].lstrip())
                trial.memo["within"] = (trial.index.byte_of_char(lo), trial.index.byte_of_char(after))
                analysis.trials[group[0]] = trial
                return
        half = len(group) // 2
        put_back(group[:half], False)
        put_back(group[half:], False)

    if leaves:
        # with no frame repair, every leaf back is the code itself, which does not parse
        put_back(leaves, known_bad=edit is None and len(leaves) > 1)
    analysis.repaired = state["current"]
    analysis.blanked = "\n".join(code[units[k].start : units[k].end] for k in analysis.trials)
    return analysis


_QUOTED = re.compile(r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"|`(?:[^`\\]|\\.)*`")


def _frames_balanced(code: str, units: list[Unit]) -> bool:
    """Whether the frames' brackets balance, quoted text aside (a cheap test of the skeleton)."""
    text = _QUOTED.sub("", "\n".join(code[a:b] for u in units if u.frame for a, b in u.ranges))
    return all(text.count(o) == text.count(c) for o, c in ("{}", "()", "[]"))


def _frame_of(units: list[Unit], index: int) -> int | None:
    frames = [k for k, u in enumerate(units) if u.frame]
    for k in frames:
        if units[k].contains(index):
            return k
    before = [k for k in frames if units[k].start <= index]
    return before[-1] if before else (frames[0] if frames else None)


def _blame_in(
    trial: Parsed, analysis: Analysis, unit: Unit, code: str, deadline_s: float
) -> list[SyntaxError_]:
    """The syntax errors of a leaf put back alone: the located bracket or tag when it lies in the
    leaf, else tree-sitter's error nodes inside it, else the leaf's first line (original offsets)."""
    cause = located_cause(trial, deadline_s) or located_tag(trial, deadline_s)
    if cause is not None:
        found = [cause]
    else:  # no repair holds: the tags the name stack calls orphans, else tree-sitter's errors
        orphans = tag_problems(trial, walk(trial).tags)[:MAX_TAG_PROBLEMS]
        found = [
            SyntaxError_(*trial.char_range(p.tag.node), p.message, {"error": p.message})
            for p in orphans
            if unit.contains(analysis.back(trial.index.char_of_byte(p.tag.node.start_byte)))
        ]
        found = found or syntax_errors(trial)
    out = []
    for e in found:
        meta = {**e.meta, "unit": unit.kind}
        if isinstance(meta.get("at"), int):
            meta["at"] = analysis.back(meta["at"])
        moved = SyntaxError_(analysis.back(e.start), analysis.back(e.end), e.message, meta)
        clipped = unit.clip(code, moved)
        if clipped.end > clipped.start and unit.contains(clipped.start):
            out.append(dataclasses.replace(clipped, edit=None))
    if not out:  # nothing inside it: the whole unit, which alone breaks the code
        a, b = unit.ranges[0]
        meta = {"error": "this unit does not parse with the units before it", "unit": unit.kind}
        out = [SyntaxError_(a, b, meta["error"], meta)]
    return out


def declared_words(text: str) -> frozenset[str]:
    """Every name in ``text`` (the blanked broken units: what they may declare)."""
    return frozenset(_WORD.findall(text))
