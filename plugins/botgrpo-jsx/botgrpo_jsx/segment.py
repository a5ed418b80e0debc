"""Top-level units of a component, cut by its indentation (which an error inside a line leaves alone).

The top-level items are the lines at the outermost indentation, each with its deeper lines and its
closing lines at its own indentation (``}``, ``)``, ``</div>``, ``/>``, ``>``; repeated, as in ``} else
{``). A top-level item that opens a block (a component, a class, an object) is descended into: its
statements are units (a hook, a handler, an ``if``), and a ``return`` of a multi-line JSX element
(``return <div>``, ``return (`` + ``<div>``; ``const A = () => (`` at the top level) once more: each
child of the root element is a unit (a page's sections). The lines a descended item keeps for itself
(the function header, ``return <div>``, ``</div>;``, ``}``) form its *frame* unit. Units are disjoint
runs of whole lines. :mod:`botgrpo_jsx.units` judges them.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field

from botgrpo_jsx.syntax import SyntaxError_

_CLOSER = re.compile(r"^(?:[})\]]|</|/>|>)")
_JSX_OPEN = re.compile(r"<[A-Za-z>]")


@dataclass(frozen=True)
class Unit:
    """One unit: ``ranges`` of whole lines (``str`` indices, first non-blank character to line end).

    ``kind``: ``top-level``, ``statement``, ``jsx child`` or ``frame`` (a descended item's own lines).
    """

    ranges: tuple[tuple[int, int], ...]
    kind: str

    @property
    def start(self) -> int:
        return self.ranges[0][0]

    @property
    def end(self) -> int:
        return self.ranges[-1][1]

    @property
    def frame(self) -> bool:
        return self.kind == "frame"

    def contains(self, index: int) -> bool:
        return any(a <= index < b for a, b in self.ranges)

    def clip(self, code: str, error: SyntaxError_) -> SyntaxError_:
        """``error`` cut at the end of this unit's range holding its start: a repair's span takes the
        tokens either side of the insertion, and the one after may be the next unit's. A repair at
        the blank after the unit (a block's lost ``}`` goes before the next statement) keeps the
        span reaching it."""
        for a, b in self.ranges:
            if a <= error.start < b:
                end = min(error.end, b)
                at = error.meta.get("at")
                if isinstance(at, int) and end < at <= error.end and not code[end:at].strip():
                    end = at
                return dataclasses.replace(error, end=end)
        return error


@dataclass(frozen=True)
class _Line:
    start: int  # first non-blank character
    end: int  # end of the line (before its newline, trailing blanks trimmed)
    indent: int
    text: str


@dataclass
class _Item:
    head: int
    end: int  # exclusive line index
    closers: list[int] = field(default_factory=list)
    runs: list[tuple[int, int]] = field(default_factory=list)  # deeper line runs [lo, hi)


def _lines(code: str) -> list[_Line]:
    out = []
    pos = 0
    for raw in code.split("\n"):
        stripped = raw.strip()
        if stripped:
            lead = len(raw) - len(raw.lstrip())
            out.append(_Line(pos + lead, pos + len(raw.rstrip()), lead, stripped))
        pos += len(raw) + 1
    return out


def _items(lines: list[_Line], lo: int, hi: int) -> list[_Item]:
    """The items of ``lines[lo:hi]``: a head line, the deeper lines after it, and closing lines at
    the head's indentation (``}``, ``)``, ``</div>``, ``/>``, ``>``), repeated (``} else {``)."""
    items = []
    i = lo
    while i < hi:
        item = _Item(i, i + 1)
        depth = lines[i].indent
        j = i + 1
        while True:
            k = j
            while k < hi and lines[k].indent > depth:
                k += 1
            if k > j:
                item.runs.append((j, k))
            j = k
            if j < hi and lines[j].indent == depth and _CLOSER.match(lines[j].text):
                item.closers.append(j)
                j += 1
                continue
            break
        item.end = j
        items.append(item)
        i = j
    return items


def _range(lines: list[_Line], lo: int, hi: int) -> tuple[int, int]:
    return lines[lo].start, lines[hi - 1].end


def _children(lines: list[_Line], item: _Item) -> list[_Item]:
    return [c for lo, hi in item.runs for c in _items(lines, lo, hi)]


def _frame(lines: list[_Line], items: list[_Item]) -> Unit:
    rows = sorted({r for item in items for r in (item.head, *item.closers)})
    return Unit(tuple((lines[r].start, lines[r].end) for r in rows), "frame")


def _leaf(lines: list[_Line], item: _Item, kind: str) -> Unit:
    return Unit((_range(lines, item.head, item.end),), kind)


def _jsx_root(lines: list[_Line], item: _Item) -> list[_Item] | None:
    """The items down to a multi-line JSX root element of ``return <div>`` / ``return (`` / ``=> (``
    (the items whose lines are frame), or ``None`` when ``item`` returns none."""
    head = lines[item.head].text
    if not item.runs:
        return None
    if head.endswith("(") and not _JSX_OPEN.search(head):
        inner = _children(lines, item)
        if len(inner) == 1 and inner[0].runs and lines[inner[0].head].text.startswith("<"):
            return [item, inner[0]]
        return None
    return [item] if head.startswith("return") and _JSX_OPEN.search(head) else None


def segment(code: str) -> list[Unit]:
    """The units of ``code`` in source order (see the module docstring); frames come before their
    leaves' verdicts matter but are listed at their first line."""
    lines = _lines(code)
    units: list[Unit] = []
    for item in _items(lines, 0, len(lines)):
        head = lines[item.head].text
        root = _jsx_root(lines, item) if head.endswith("(") else None
        if root is not None:  # `const A = () => (` ... `);`
            units.append(_frame(lines, root))
            units += [_leaf(lines, c, "jsx child") for c in _children(lines, root[-1])]
            continue
        if not (item.runs and head.endswith("{")):
            units.append(_leaf(lines, item, "top-level"))
            continue
        units.append(_frame(lines, [item]))
        for child in _children(lines, item):
            root = _jsx_root(lines, child)
            if root is None:
                units.append(_leaf(lines, child, "statement"))
                continue
            units.append(_frame(lines, root))
            units += [_leaf(lines, c, "jsx child") for c in _children(lines, root[-1])]
    return units


_NOT_NEWLINE = re.compile(r"[^\n]")


def blank(text: str, ranges: list[tuple[int, int]]) -> str:
    """``text`` with every character of ``ranges`` but newlines replaced by a space (same offsets)."""
    pieces, pos = [], 0
    for a, b in ranges:
        pieces += [text[pos:a], _NOT_NEWLINE.sub(" ", text[a:b])]
        pos = b
    pieces.append(text[pos:])
    return "".join(pieces)


def unit_of(units: list[Unit], index: int) -> int | None:
    """The unit holding ``index``, else the one starting last before it (``None``: none does)."""
    best = None
    for k, unit in enumerate(units):
        if unit.contains(index):
            return k
        if unit.start <= index and (best is None or unit.start >= units[best].start):
            best = k
    return best
