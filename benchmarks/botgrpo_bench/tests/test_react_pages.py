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


def test_local_signals_blame_the_broken_section_only() -> None:
    """On a five-section page, every section error's jsx.syntax and jsx.rules spans fall on that section's
    line (a state section: also its hook line and the props line), never on another section: the local
    credit the length axis is about."""
    from botgrpo_core.signals import Sample
    from botgrpo_jsx.params import RulesParams, SyntaxParams
    from botgrpo_jsx.scorers import RulesScorer, SyntaxScorer

    task = ReactTask(ReactParams(sections=(5, 5)))
    rules, syntax = RulesScorer(RulesParams(workers=0)), SyntaxScorer(SyntaxParams(workers=0))
    for row in task.train_rows(4, seed=7):
        spec = task.parse_row(row)
        hooks = sum(x.kind == "state" for x in spec.sections)
        cases = [(i, e) for i, s in enumerate(spec.sections) for e in SECTION_ERRORS[s.kind]]
        codes = [render_page(spec, {i: e.lstrip("*")}) for i, e in cases]
        samples = [Sample(prompt=row["prompt"], completion=c, row=dict(row)) for c in codes]
        for (i, error), code, r, s in zip(
            cases, codes, rules.score(samples), syntax.score(samples), strict=True
        ):
            spans = list(r) + list(s)
            assert spans, (error, code)
            allowed = {3 + hooks + i}  # after the header, the hook line(s) and `return <div>`
            if spec.sections[i].kind == "state":
                allowed |= {1, 2}
            lines = {code.count("\n", 0, span.start) + 1 for span in spans}
            assert lines <= allowed, (error, lines, code)
