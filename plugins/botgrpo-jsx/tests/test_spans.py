"""disjoint(): per character the most negative covering value, against a brute-force reference."""

from __future__ import annotations

import itertools
import random

from botgrpo_jsx.spans import Mark, disjoint


def _per_char(marks: list[Mark], length: int) -> list[float | None]:
    out: list[float | None] = [None] * length
    for m in marks:
        for i in range(max(m.start, 0), min(m.end, length)):
            out[i] = m.value if out[i] is None else min(out[i], m.value)
    return out


def test_disjoint_matches_a_per_character_reference() -> None:
    rng = random.Random(0)
    for _ in range(500):
        marks = []
        for k in range(rng.randrange(0, 10)):
            a = rng.randrange(0, 40)
            marks.append(Mark(a, a + rng.randrange(-3, 15), rng.choice([-1.0, -0.5, -2.0]), {"k": k}))
        spans = disjoint(marks)
        assert all(a.end <= b.start for a, b in itertools.pairwise(spans))  # disjoint, sorted
        got: list[float | None] = [None] * 60
        for s in spans:
            for i in range(s.start, s.end):
                got[i] = s.value
        assert got == _per_char(marks, 60)


def test_disjoint_keeps_the_explanations_of_the_winning_value() -> None:
    spans = disjoint(
        [Mark(0, 10, -1.0, {"r": "a"}), Mark(5, 8, -2.0, {"r": "b"}), Mark(5, 8, -2.0, {"r": "c"})]
    )
    assert [(s.start, s.end, s.value) for s in spans] == [(0, 5, -1.0), (5, 8, -2.0), (8, 10, -1.0)]
    assert spans[1].meta == {"items": [{"r": "b"}, {"r": "c"}]} and spans[0].meta == {"r": "a"}


def test_disjoint_is_fast_on_many_nested_marks() -> None:
    marks = [Mark(i, 40_000 - i, -1.0, {"i": i}) for i in range(20_000)]
    spans = disjoint(marks)  # 40,000 cut points over 20,000 nested marks: quadratic took minutes
    assert spans[0].start == 0 and spans[-1].end == 40_000 and {s.value for s in spans} == {-1.0}
    assert all(a.end == b.start for a, b in itertools.pairwise(spans))
    # pieces differ only where the first 8 explanations change (the 8 outermost marks' edges)
    assert len(spans) <= 17 and max(len(s.meta.get("items", [s.meta])) for s in spans) == 8
