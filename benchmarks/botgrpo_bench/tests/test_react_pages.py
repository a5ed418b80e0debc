"""React pages (the React task's length axis): disjoint splits, keys that parse back, the length bound,
per-section error rates, and section errors that break compilation exactly where ``SECTION_ERRORS`` says
(checked by the jsx plugin), each flagged by the local signals on its own section's line."""

from __future__ import annotations

import math

import pytest

from botgrpo_bench.react import REACT_CHARS, ReactParams, ReactTask
from botgrpo_bench.react_pages import SECTION_ERRORS, PageSpec, Section, render_page
from botgrpo_core.tasks import get_task


def test_pages_splits_are_disjoint_deterministic_and_keys_parse_back() -> None:
    task = get_task("react", {"sections": [2, 4]})
    held = task.eval_rows(200, seed=0)
    assert held == task.eval_rows(200, seed=0)
    assert len({r["spec"] for r in held}) == 200
    train = task.train_rows(2000, seed=1)
    assert not {r["spec"] for r in held} & {r["spec"] for r in train}
    counts = {len(task.parse_row(r).sections) for r in train}
    assert counts == {2, 3, 4}
    for r in train[:50]:
        spec = task.parse_row(r)
        assert isinstance(spec, PageSpec) and spec.key == r["spec"] and spec.prompt == r["prompt"]
        assert len({s.kind for s in spec.sections}) == len(spec.sections)  # distinct kinds


def test_page_text_fits_the_alphabet_and_the_length_bound() -> None:
    task = ReactTask(ReactParams(sections=(4, 4)))
    rows = task.train_rows(300)
    texts = [r["prompt"] for r in rows]
    for r in rows:
        spec = task.parse_row(r)
        texts.append(render_page(spec))
        for i, s in enumerate(spec.sections):
            texts += [render_page(spec, {i: e.lstrip("*")}) for e in SECTION_ERRORS[s.kind]]
    assert set("".join(texts)) <= set(REACT_CHARS)
    assert max(len(t) for t in texts) <= task.max_completion_chars
    # the bound is a bound, not a guess far above what pages reach
    assert task.max_completion_chars < 1.15 * max(len(t) for t in texts)


def test_each_section_carries_its_own_error_at_the_configured_rate() -> None:
    task = get_task("react", {"error_rate": 0.4, "sections": [3, 3]})
    rows = task.train_rows(1000, seed=2)
    demos = task.demonstrations(rows, seed=2)
    flawed = 0
    for r, d in zip(rows, demos, strict=True):
        spec = task.parse_row(r)
        good = render_page(spec).splitlines()
        flawed += sum(line not in d.splitlines() for line in good if line.startswith("    "))
    n = 3 * len(rows)
    assert abs(flawed / n - 0.4) < 4 * math.sqrt(0.4 * 0.6 / n)


def test_page_solutions_compile_and_section_errors_are_caught() -> None:
    """A correct page compiles and breaks no rule; each section error breaks compilation exactly when
    SECTION_ERRORS marks it with '*', and otherwise breaks a rule (what jsx.rules must see)."""
    task = ReactTask(ReactParams(sections=(5, 5)))
    rows = task.eval_rows(10) + task.train_rows(10)
    assert task.evaluate(rows, [task.solution(task.parse_row(r)) for r in rows]) == {
        "compile_rate": 1.0,
        "rule_clean_rate": 1.0,
    }
    row = rows[0]
    spec = task.parse_row(row)
    cases = [(i, e) for i, s in enumerate(spec.sections) for e in SECTION_ERRORS[s.kind]]
    codes = [render_page(spec, {i: e.lstrip("*")}) for i, e in cases]
    for (_i, error), code, (compiles, clean) in zip(
        cases, codes, task.check([row] * len(codes), codes), strict=True
    ):
        assert compiles == (not error.startswith("*")), code
        assert not clean, code


@pytest.mark.parametrize("sections", [(0, 1), (3, 2), (1, 6)])
def test_bad_sections_name_the_key_and_the_fix(sections: tuple[int, int]) -> None:
    with pytest.raises(ValueError, match=r"sections: .* e\.g\. sections: \[4, 4\]"):
        ReactParams(sections=sections)


def test_section_keys_round_trip() -> None:
    page = PageSpec("Todo", (Section("list", ("title",)), Section("state", (), 3)), export=True)
    assert page.key == "page Todo: list title; state 3"
    assert PageSpec.parse(page.key, True) == page
    assert page.prompt == "S: export page Todo: list title; state 3\n"


@pytest.mark.parametrize("n_errors", [1, 2, 3, 5])
def test_local_signals_blame_the_broken_section_only(n_errors: int) -> None:
    """On five-section pages with 1, 2, 3 or 5 section errors, the jsx.syntax and jsx.rules spans fall on
    the broken sections' lines only (a state section: also its hook line and the props line), and each
    broken section gets one; so do jsx.units' -1 spans: the local credit the length axis is about (error
    recovery after a page's first error must not blame the sections after it)."""
    import random

    from botgrpo_core.signals import Sample
    from botgrpo_jsx.params import RulesParams, SyntaxParams, UnitsParams
    from botgrpo_jsx.scorers import RulesScorer, SyntaxScorer, UnitsScorer

    task = ReactTask(ReactParams(sections=(5, 5)))
    rules, syntax = RulesScorer(RulesParams(workers=0)), SyntaxScorer(SyntaxParams(workers=0))
    units = UnitsScorer(UnitsParams(workers=0))
    rng = random.Random(n_errors)
    for row in task.train_rows(4, seed=7):
        spec = task.parse_row(row)
        hooks = sum(x.kind == "state" for x in spec.sections)
        owned = []  # the (1-based) lines of each section, after the header, hook line(s) and `return <div>`
        for i, x in enumerate(spec.sections):
            owned.append({3 + hooks + i} | ({1, 2} if x.kind == "state" else set()))
        if n_errors == 1:  # every error of every section alone, as before
            drawn = [{i: e.lstrip("*")} for i, x in enumerate(spec.sections) for e in SECTION_ERRORS[x.kind]]
        else:
            drawn = [
                {
                    i: rng.choice(SECTION_ERRORS[spec.sections[i].kind]).lstrip("*")
                    for i in rng.sample(range(5), n_errors)
                }
                for _ in range(3)
            ]
        codes = [render_page(spec, errors) for errors in drawn]
        samples = [Sample(prompt=row["prompt"], completion=c, row=dict(row)) for c in codes]
        scored = zip(
            drawn, codes, rules.score(samples), syntax.score(samples), units.score(samples), strict=True
        )
        for errors, code, r, s, u in scored:
            broken = set().union(*(owned[i] for i in errors))
            lines = {code.count("\n", 0, span.start) + 1 for span in list(r) + list(s)}
            flagged = {code.count("\n", 0, span.start) + 1 for span in u if span.value < 0}
            assert lines <= broken and flagged <= broken, (errors, lines, flagged, code)
            for i in errors:  # and each broken section gets a span, and a -1 from jsx.units
                assert lines & owned[i] and flagged & owned[i], (i, errors, lines, flagged, code)
