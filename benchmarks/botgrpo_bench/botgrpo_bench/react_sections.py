"""``bench.react_sections``: the view task's local signal, a verdict per section that the spec can tell.

``jsx.units`` (botgrpo-jsx) judges each top-level unit of a page by compilation and the React rules
alone. On the view task that credit can be gamed, and a pilot run gamed it (short level, seed 0: the
compile rate rose 0.04 -> 0.26 while the spec rate fell to 0.00 and trivial pages rose to 0.50): a
section with a wrong field compiles and gets +1, and a section the page leaves out costs nothing, so
dropping the hard sections paid. This signal keeps ``jsx.units``' cut and blame and asks what the
outcome asks, unit by unit:

- a **JSX child** of the root (a section's line) gets ``pass_value`` when it parses in context, breaks
  no rule *and* implements a section of the spec that no earlier line did (checked on the line alone,
  so an error elsewhere on the page cannot hide it: :func:`line_sections`); ``fail_value`` when it is
  broken, implements nothing the spec asks for (a wrong tag or field), or repeats a section;
- a **frame** line (the signature, ``return <div>``, the closers) carries no credit when it is correct
  (boilerplate every page shares) and ``fail_value`` when it is broken;
- a page with **fewer section lines than the spec has sections** gets ``fail_value`` on the frame line
  that closes the root after its last section: the token where the policy ended the page too early.

With ``blame: tokens`` a broken or wrong line's ``fail_value`` goes only on its characters that differ
from the closest correct line of the spec (:func:`differing_spans`: the wrong tag or field name, a closer
of another name, where a missing closer goes), the rest of the line 0. A line-wide -1 also pushes down
the line's correct characters (``<``, the tag, the braces), which on the warm policy's failing pages are
87% of the characters under a section line's -1 (scripts/react_span_stats.py); a policy trained on it
learns to avoid the structure every correct line shares as much as the error. But ``tokens`` alone is
gamed (react-long-token-blame seed 0, docs/results.md): a right line earns ``pass_value`` on all of its
characters and a wrong one costs ``fail_value`` on a few, so one more line is a bet with a positive
expected local reward, and the policy padded its pages to the length cap (86% clipped by step 100).

``blame: words`` makes credit and blame symmetric: a correct line's ``pass_value``
goes only on its deciding words (:func:`deciding_words`: its tag, outer tag and field names), a wrong
line's ``fail_value`` on the words that differ, and a line past the spec's count that implements no new
section is charged whole, so padding a page with more lines no longer pays.

A page of whitespace alone gets ``fail_value`` on all of its characters (it has no unit to blame).

A page whose root never closes (cut off at the length cap) is, by default (``unfinished: as_parsed``),
blamed as the parser sees it: the unclosed root's -1 lands on its correct signature and ``return <div>``
lines, and a blank tail carries no span. A policy learned to end its pages in blank space to the cap that
way (react-cold bot-grpo seed 0: clipped pages 0 -> 0.42 by step 60, compile rate 0.22 -> 0): the tail
runs free under ``uncovered: group_mean`` while a closed page with a broken line can take a -1 on its
closers. ``unfinished: tail`` judges such a page's lines on its closed parse (the spec's closing lines
appended) and puts ``fail_value`` on its unfinished tail, everything after its last unit, where the page
failed to close.

So the signal has no ``fail_value`` span exactly when every section line is correct and new and none is
missing, which on the grammar's pages is the outcome's success (tests/test_react_sections.py), and the
empty, ``return null`` and one-section-copied pages that the outcome scores 0 carry a negative span and
no positive one.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import Field

from botgrpo_bench.react_spec import CLOSING_LINES, ViewSection, ViewSpec, section_line
from botgrpo_bench.react_verdict import page_facts, section_counts, view_spec_of
from botgrpo_jsx.params import UnitsParams

#: the ``jsx.units`` kind of a root's child (a section's line) and of a frame line
CHILD = "jsx child"
FRAME = "frame"


def line_sections(spec: ViewSpec, line: str) -> list[int]:
    """Per section of ``spec``: how many times ``line`` (one section's JSX, parsed on its own inside a
    fragment, so an error on another line cannot hide it) implements it."""
    return section_counts(spec, page_facts(f"const _ = <>\n{line}\n</>;"))


class SectionsParams(UnitsParams):
    """``bench.react_sections``: ``jsx.units``' params, and where a wrong or broken line's -1 goes."""

    blame: Literal["line", "tokens", "words"] = Field(
        "line",
        description="line: the whole line of a broken or wrong section; tokens: only its characters that "
        "differ from the closest correct section line of the spec (difflib), the rest of the line 0; "
        "words: as tokens, a correct line's +1 only on its deciding words (its tag and field names), and "
        "a line past the spec's count that implements no new section -1 whole",
    )
    unfinished: Literal["as_parsed", "tail"] = Field(
        "as_parsed",
        description="a page whose root never closes (no frame line after its sections: cut off at the length "
        "cap, or ended in blank padding): as_parsed, blamed as the parser sees it (the root's unclosed-tag and "
        "syntax -1 land on the correct signature and `return <div>` lines, and a blank tail carries no span); "
        "tail, its lines judged as if it had closed (the spec's closing lines appended for the parse) and "
        "fail_value on its unfinished tail, everything after its last unit (or its last line when nothing "
        "follows it)",
    )


#: the words a line is compared by: identifiers (tag, prop and field names) and single other characters
_WORD = re.compile(r"[A-Za-z_$][\w$]*|\S")


def differing_spans(line: str, start: int, spec: ViewSpec) -> list[tuple[int, int]]:
    """The ``(start, end)`` completion ranges of ``line`` (at ``start``) that differ from the spec's section
    line it is closest to, word by word (a wrong tag or field name is blamed whole): its replaced and
    extra words, and for missing ones the word where they go (the last one at the end of the line). Empty
    when the line is one of the spec's lines."""
    words = [(m.group(), m.start(), m.end()) for m in _WORD.finditer(line)]
    texts = [w for w, _, _ in words]
    opcodes: list[tuple[str, int, int, int, int]] = []
    score = -1
    for section in spec.sections:
        matcher = difflib.SequenceMatcher(None, texts, _WORD.findall(section_line(section)), autojunk=False)
        same = sum(b.size for b in matcher.get_matching_blocks())
        if same > score:
            score, opcodes = same, matcher.get_opcodes()
    ranges: list[tuple[int, int]] = []
    for op, i1, i2, _j1, _j2 in opcodes:
        if op in ("replace", "delete"):
            ranges.append((words[i1][1], words[i2 - 1][2]))
        elif op == "insert" and words:
            _, a, b = words[min(i1, len(words) - 1)]
            ranges.append((a, b))
    merged: list[tuple[int, int]] = []
    for a, b in sorted(ranges):
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return [(start + a, start + b) for a, b in merged]


def deciding_words(line: str, start: int, section: ViewSection) -> list[tuple[int, int]]:
    """The ``(start, end)`` completion ranges of the words of ``line`` (at ``start``) that decide whether
    it implements ``section``: its tag, outer tag and field names, wherever they occur in the line."""
    names = {section.tag, section.field, section.outer} - {""}
    return [(start + m.start(), start + m.end()) for m in _WORD.finditer(line) if m.group() in names]


def section_spans(
    spec: ViewSpec,
    completion: str,
    units: Sequence[Any],
    fail_value: float,
    pass_value: float,
    blame: str = "line",
    unfinished: bool = False,
) -> list[Any]:
    """The spans of one page from its ``jsx.units`` spans ``units`` (module doc; ``blame``:
    :class:`SectionsParams`). ``unfinished``: the page never closes its root and ``units`` come from its
    closed parse (:func:`closed_units`); its unfinished tail gets ``fail_value``."""
    from botgrpo_core.signals import Span

    if not completion.strip():
        # A page of whitespace has no unit, so nothing below would blame it: the whole page is the error
        # (react-long seed 0 at ecdab86 learned pages of spaces to the length cap, which the signal left
        # at 0 while honest pages carried their -1s). An empty completion has no character to carry a
        # span; its one token (EOS) takes the outcome alone.
        return (
            [Span(0, len(completion), fail_value, {"unit": FRAME, "verdict": "no code"})]
            if completion
            else []
        )
    children = [u for u in units if (u.meta or {}).get("unit") == CHILD]
    extra = {id(u) for u in children[len(spec.sections) :]} if blame == "words" else set()

    def failed(unit: Any, meta: dict[str, Any]) -> list[Span]:
        a, b = unit.start, unit.end
        narrow = blame in ("tokens", "words") and id(unit) not in extra
        ranges = differing_spans(completion[a:b], a, spec) if narrow else []
        return [Span(x, y, fail_value, meta) for x, y in ranges or [(a, b)]]

    out: list[Span] = []
    credited: set[int] = set()
    for unit in units:
        meta = dict(unit.meta or {})
        if meta.get("unit") != CHILD:
            if unit.value < 0:
                out.append(unit)  # a broken frame keeps its blame; a correct one earns nothing
            continue
        if unit.value < 0:
            out += failed(unit, meta)
            continue
        counts = line_sections(spec, completion[unit.start : unit.end])
        new = [i for i, n in enumerate(counts) if n and i not in credited]
        if new:
            credited.add(new[0])
            meta["verdict"] = f"implements {spec.sections[new[0]].key}"
            ranges = [(unit.start, unit.end)]
            if blame == "words":
                ranges = deciding_words(completion[unit.start : unit.end], unit.start, spec.sections[new[0]])
            out += [Span(a, b, pass_value, meta) for a, b in ranges or [(unit.start, unit.end)]]
        elif any(counts):
            out.append(Span(unit.start, unit.end, fail_value, {**meta, "verdict": "repeats a section"}))
        else:
            out += failed(unit, {**meta, "verdict": "implements no section of the spec"})
    missing = len(spec.sections) - len(children)
    if missing > 0:
        after = children[-1].end if children else 0
        closers = [u for u in units if (u.meta or {}).get("unit") != CHILD and u.start >= after]
        verdict = f"{missing} of {len(spec.sections)} sections missing"
        if closers:
            target = closers[0]
            out = [s for s in out if s is not target]
            why = f"{target.meta.get('verdict')}; {verdict}" if target.value < 0 else verdict
            out.append(Span(target.start, target.end, fail_value, {"unit": FRAME, "verdict": why}))
        elif completion.strip():  # no frame after the sections (cut off, or no code): the last line
            start = completion.rstrip().rfind("\n") + 1
            out.append(Span(start, len(completion.rstrip()), fail_value, {"unit": FRAME, "verdict": verdict}))
    if unfinished:
        out += _unfinished_tail(completion, units, out, fail_value)
    out.sort(key=lambda s: s.start)
    return out


def _unfinished_tail(
    completion: str, units: Sequence[Any], spans: Sequence[Any], fail_value: float
) -> list[Any]:
    """``fail_value`` on what follows the last unit and span of a page that never closed (blank padding
    or text no unit holds); on its last line when nothing follows and no span blames that line yet."""
    from botgrpo_core.signals import Span

    verdict = {"unit": FRAME, "verdict": "the page never closes its root"}
    after = max([u.end for u in units] + [s.end for s in spans], default=0)
    if after < len(completion):
        return [Span(after, len(completion), fail_value, verdict)]
    start = completion.rstrip().rfind("\n") + 1
    if any(s.value < 0 and s.end > start for s in spans):
        return []
    return [Span(start, len(completion.rstrip()), fail_value, verdict)]


def is_unfinished(completion: str, units: Sequence[Any]) -> bool:
    """A page with code whose root never closes: no frame unit after its last section line."""
    children = [u for u in units if (u.meta or {}).get("unit") == CHILD]
    if not completion.strip() or not children:
        return False
    return not any((u.meta or {}).get("unit") != CHILD and u.start >= children[-1].end for u in units)


def closed_page(completion: str) -> str:
    """``completion`` with the spec's closing lines appended (:data:`CLOSING_LINES`), for the parse of an
    unfinished page; units past ``len(completion.rstrip())`` belong to the appended lines."""
    return completion.rstrip() + "\n" + "\n".join(CLOSING_LINES)


class ReactSectionsScorer:
    """``bench.react_sections``: ``jsx.units``' spans, judged against the row's view spec (module doc)."""

    def __init__(self, params: Any) -> None:
        from botgrpo_jsx.scorers import UnitsScorer

        self.params = params
        self._units = UnitsScorer(params)

    def score(self, samples: Sequence[Any]) -> list[Any]:
        from botgrpo_core.signals import SampleError

        units = self._units.score(samples)
        unfinished = [False] * len(samples)
        if self.params.unfinished == "tail":
            units, unfinished = self._closed_units(samples, units)
        out: list[Any] = []
        for sample, spans, cut in zip(samples, units, unfinished, strict=True):
            if isinstance(spans, SampleError):
                out.append(spans)
                continue
            try:
                spec = view_spec_of(sample.row)
            except ValueError as exc:
                out.append(SampleError(str(exc)))
                continue
            p = self.params
            out.append(
                section_spans(spec, sample.completion, spans, p.fail_value, p.pass_value, p.blame, cut)
            )
        return out

    def _closed_units(self, samples: Sequence[Any], units: list[Any]) -> tuple[list[Any], list[bool]]:
        """``unfinished: tail``: the units of each unfinished page from its closed parse
        (:func:`closed_page`), those of the appended closing lines left out, and which pages those are."""
        from dataclasses import replace

        from botgrpo_core.signals import SampleError

        todo = [
            i
            for i, (s, u) in enumerate(zip(samples, units, strict=True))
            if not isinstance(u, SampleError) and is_unfinished(s.completion, u)
        ]
        closed = self._units.score(
            [replace(samples[i], completion=closed_page(samples[i].completion)) for i in todo]
        )
        out, cut = list(units), [False] * len(units)
        for i, spans in zip(todo, closed, strict=True):
            if isinstance(spans, SampleError):
                continue  # keep the page's own parse
            end = len(samples[i].completion.rstrip())
            out[i], cut[i] = [u for u in spans if u.end <= end], True
        return out, cut


def make_sections(params: SectionsParams) -> ReactSectionsScorer:
    """Build the ``bench.react_sections`` scorer."""
    return ReactSectionsScorer(params)
