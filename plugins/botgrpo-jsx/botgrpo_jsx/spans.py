"""Make a signal's spans disjoint, so that a token never collects two penalties for one character.

Rules and syntax errors can overlap (a missing ``key`` on an element that is also unclosed). A local
signal's declared bounds must hold per character whatever the aligner does with overlaps, so each
character keeps the most negative value covering it and the explanations are merged.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from botgrpo_core.signals import Span


@dataclass
class Mark:
    """A value on ``[start, end)`` with an explanation, before overlaps are resolved."""

    start: int
    end: int
    value: float
    meta: dict[str, Any] = field(default_factory=dict)


def disjoint(marks: Iterable[Mark], max_meta: int = 8) -> list[Span]:
    """Resolve overlapping marks into disjoint spans, each character keeping its minimum value.

    Empty or inverted marks are dropped. Adjacent pieces with equal value and the same explanations
    are joined, so a single mark comes back as a single span. A sweep over the cut points keeps the
    covering marks grouped by value (in start order), so the cost is O((marks + pieces) log marks).
    """
    items = sorted((m for m in marks if m.end > m.start), key=lambda m: m.start)
    if not items:
        return []
    cuts = sorted({m.start for m in items} | {m.end for m in items})
    ending: dict[int, list[int]] = {}
    for i, m in enumerate(items):
        ending.setdefault(m.end, []).append(i)
    active: dict[float, dict[int, Mark]] = {}  # value -> covering marks, in start order
    values: list[float] = []  # heap of values that have (or had) covering marks
    pieces: list[tuple[int, int, float, list[dict[str, Any]]]] = []
    nxt = 0
    for a, b in itertools.pairwise(cuts):
        for i in ending.get(a, ()):
            del active[items[i].value][i]
        while nxt < len(items) and items[nxt].start <= a:
            group = active.setdefault(items[nxt].value, {})
            if not group:
                heapq.heappush(values, items[nxt].value)
            group[nxt] = items[nxt]
            nxt += 1
        while values and not active.get(values[0]):
            heapq.heappop(values)
        if not values:
            continue
        value = values[0]
        metas = [m.meta for m in itertools.islice(active[value].values(), max_meta)]
        if pieces and pieces[-1][1] == a and pieces[-1][2] == value and pieces[-1][3] == metas:
            pieces[-1] = (pieces[-1][0], b, value, metas)
        else:
            pieces.append((a, b, value, metas))
    spans = []
    for a, b, value, metas in pieces:
        meta: dict[str, Any] = dict(metas[0]) if len(metas) == 1 else {"items": metas}
        spans.append(Span(a, b, value, meta))
    return spans
