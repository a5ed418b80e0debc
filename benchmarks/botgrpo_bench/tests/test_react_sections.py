"""``bench.react_sections``, the view levels' local signal, on the grammar's pages (real tree-sitter).

Blame lands on the broken or wrong section's own line on pages with 1, 2, 3 and 5 errors, every other
section line gets +1, and a page has no negative span exactly when it succeeds; a dropped section costs
the root's closing line; with ``blame: tokens`` the -1 covers only the wrong word; the degenerate pages the old signal paid for (sections dropped, one copied,
``return null``) score below an honest page with one error.
"""

from __future__ import annotations

import random

import pytest

from botgrpo_bench.react import ReactParams, ReactTask
from botgrpo_bench.react_sections import ReactSectionsScorer, SectionsParams
from botgrpo_bench.react_spec import SECTION_ERRORS, ViewSpec, draw_error, render_view, section_line
from botgrpo_core.signals import Sample, SampleError


@pytest.fixture(scope="module")
def scorer() -> ReactSectionsScorer:
    return ReactSectionsScorer(SectionsParams(workers=0))


def _task(n: int) -> ReactTask:
    return ReactTask(ReactParams(grammar="spec", sections=(n, n), error_rate=0.3))


def _score(scorer: ReactSectionsScorer, row: dict, pages: list[str]) -> list:
    return scorer.score([Sample(prompt=row["prompt"], completion=c, row=row) for c in pages])


def _line(page: str, start: int) -> int:
    return page[:start].count("\n")


@pytest.mark.parametrize("errors", [1, 2, 3, 5])
def test_blame_stays_on_the_sections_with_errors(scorer: ReactSectionsScorer, errors: int) -> None:
    """Each erroneous section's line (breaking or only wrong for the spec) gets -1, every correct one
    +1, nothing else is blamed, and the page has no -1 exactly when it succeeds."""
    task = _task(6)
    rng = random.Random(errors)
    rows = task.eval_rows(12, seed=errors)
    pages, cases = [], []
    for row in rows:
        spec = task.parse_row(row)
        chosen = rng.sample(range(len(spec.sections)), errors)
        faults = {i: draw_error(spec.sections[i], spec, rng) for i in chosen}
        pages.append(render_view(spec, faults))
        cases.append((row, spec, faults))
    results = [_score(scorer, row, [page])[0] for (row, _, _), page in zip(cases, pages, strict=True)]
    for (row, spec, faults), page, spans in zip(cases, pages, results, strict=True):
        assert not isinstance(spans, SampleError), spans
        first = 2  # the signature and `return <div>` come first
        bad = {_line(page, s.start) for s in spans if s.value < 0}
        good = {_line(page, s.start) for s in spans if s.value > 0}
        assert bad == {first + i for i in faults}, (page, spans)
        assert good == {first + i for i in range(len(spec.sections)) if i not in faults}, (page, spans)
        assert not task.success(row, page)
    # and the solutions: all +1, no -1, success
    for row, spec, _ in cases:
        solution = render_view(spec)
        (spans,) = _score(scorer, row, [solution])
        assert task.success(row, solution)
        assert [s.value for s in spans] == [1.0] * len(spec.sections), spans


@pytest.mark.parametrize(
    ("blame", "unfinished"),
    [("line", "as_parsed"), ("tokens", "as_parsed"), ("words", "as_parsed"), ("words", "tail")],
)
def test_no_negative_span_exactly_when_the_page_succeeds(blame: str, unfinished: str) -> None:
    """Every error kind of every section kind, alone and in pairs, and pages cut off: success <=> no -1
    span."""
    scorer = ReactSectionsScorer(SectionsParams(workers=0, blame=blame, unfinished=unfinished))
    task = _task(4)
    rng = random.Random(7)
    for row in task.eval_rows(10, seed=3):
        spec = task.parse_row(row)
        pages = [render_view(spec)]
        for i, s in enumerate(spec.sections):
            for _ in SECTION_ERRORS[s.kind]:
                pages.append(render_view(spec, {i: draw_error(s, spec, rng)}))
        for _ in range(4):
            i, j = rng.sample(range(len(spec.sections)), 2)
            pages.append(render_view(spec, {k: draw_error(spec.sections[k], spec, rng) for k in (i, j)}))
        pages += [" " * 40, "\n\n  \n"]  # whitespace only: what react-long seed 0 (ecdab86) learned
        cut = "\n".join(render_view(spec).split("\n")[: 2 + len(spec.sections)])
        pages += [cut, cut + "\n" + " " * 30, cut[:-5]]  # never closed: padded, or cut mid-line
        for page, spans in zip(pages, _score(scorer, row, pages), strict=True):
            assert task.success(row, page) == (not any(s.value < 0 for s in spans)), (page, spans)


def test_an_unfinished_page_is_blamed_on_its_tail_not_its_frame() -> None:
    """A page whose root never closes (react-cold bot-grpo seed 0 learned to end its pages in blank space
    to the length cap): with ``unfinished: tail`` the -1 lands on the blank tail (or the last line when
    nothing follows it) and its correct signature and ``return <div>`` lines carry none, its section
    lines are judged as on the closed page; ``as_parsed`` (the default) blames those two correct lines
    and leaves the tail free."""
    tail = ReactSectionsScorer(SectionsParams(workers=0, blame="words", unfinished="tail"))
    parsed = ReactSectionsScorer(SectionsParams(workers=0, blame="words"))
    task = _task(4)
    rng = random.Random(3)
    for row in task.eval_rows(6, seed=8):
        spec = task.parse_row(row)
        i = rng.randrange(len(spec.sections))
        page = render_view(spec, {i: draw_error(spec.sections[i], spec, rng)})
        lines = page.split("\n")
        body = "\n".join(lines[: 2 + len(spec.sections)])
        head = len(lines[0]) + 1 + len(lines[1])  # the signature and `return <div>` lines
        padded = body + "\n" + " " * 50
        (closed, padded_spans, mid_line) = _score(tail, row, [page, padded, body[:-3]])
        frame_blame = [s for s in padded_spans if s.value < 0 and s.start < head]
        assert not frame_blame, padded_spans
        (end,) = [s for s in padded_spans if s.meta.get("verdict") == "the page never closes its root"]
        assert (end.start, end.end) == (len(body), len(padded)) and end.value < 0
        same = [(s.start, s.end, s.value) for s in padded_spans if s is not end]
        assert same == [(s.start, s.end, s.value) for s in closed if s.end <= len(body)], (
            closed,
            padded_spans,
        )
        assert any(s.value < 0 and s.end > len(body) - len(lines[1 + len(spec.sections)]) for s in mid_line)
        (as_parsed,) = _score(parsed, row, [padded])
        assert any(s.value < 0 and s.start < head for s in as_parsed)
        assert not any(s.end > len(body) for s in as_parsed)


def _dropped(spec: ViewSpec, keep: list[int]) -> str:
    """The correct page with only the sections ``keep`` (the props of every section kept)."""
    lines = render_view(spec).split("\n")
    return "\n".join(lines[:2] + [lines[2 + i] for i in keep] + lines[2 + len(spec.sections) :])


def test_a_dropped_section_costs_the_line_that_closes_the_page(scorer: ReactSectionsScorer) -> None:
    task = _task(4)
    for row in task.eval_rows(6, seed=5):
        spec = task.parse_row(row)
        page = _dropped(spec, [0, 1, 3])
        (spans,) = _score(scorer, row, [page])
        (negative,) = [s for s in spans if s.value < 0]
        assert page[negative.start : negative.end] == "</div>;", spans
        assert "1 of 4 sections missing" in negative.meta["verdict"]
        assert sum(s.value > 0 for s in spans) == 3


@pytest.mark.parametrize("sections", [2, 6])
def test_degenerate_pages_never_score_above_an_honest_page_with_one_error(
    scorer: ReactSectionsScorer, sections: int
) -> None:
    """The pages jsx.units paid for carry a -1, and their sum of span values (one value per line) is never
    above an honest page with one error: below it for empty pages, and from 4 sections for every
    degenerate page (at 2, a copied or dropped section ties a wrong one here, and the outcome, which counts
    repeats and missing sections against a page, separates them: test_react_spec's mixture test)."""
    task = _task(sections)
    rng = random.Random(sections)
    for row in task.eval_rows(6, seed=sections):
        spec = task.parse_row(row)
        name = spec.component
        copied = "\n".join(
            [f"function {name}({{{spec.sections[0].field}, items, show}}) {{", "  return <div>"]
            + ["    " + section_line(spec.sections[0])] * sections
            + ["  </div>;", "}"]
        )
        degenerate = {
            "empty div": f"function {name}() {{\n  return <div>\n  </div>;\n}}",
            "return null": f"function {name}() {{\n  return null;\n}}",
            "one section copied": copied,
            "first section only": _dropped(spec, [0]),
            "whitespace": " " * 60,
        }
        honest = {
            f"error in section {i}": render_view(spec, {i: draw_error(s, spec, rng)})
            for i, s in enumerate(spec.sections)
        }
        pages = {**degenerate, **honest}
        spans = dict(zip(pages, _score(scorer, row, list(pages.values())), strict=True))
        total = {k: sum(s.value for s in v) for k, v in spans.items()}
        assert all(any(s.value < 0 for s in spans[k]) for k in degenerate), spans
        floor = min(total[k] for k in honest)
        assert max(total[k] for k in degenerate) <= floor, (spec.key, total)
        assert total["empty div"] < floor and total["return null"] < floor, (spec.key, total)
        assert total["whitespace"] < floor, (spec.key, total)
        if sections > 2:
            assert max(total[k] for k in degenerate) < floor, (spec.key, total)


def test_rows_without_a_view_spec_fail_that_sample_only(scorer: ReactSectionsScorer) -> None:
    task = _task(2)
    row = task.eval_rows(1)[0]
    good, bad = scorer.score(
        [
            Sample(prompt=row["prompt"], completion=render_view(task.parse_row(row)), row=row),
            Sample(prompt="S: x\n", completion="<div/>", row={"spec": "list Todo"}),
        ]
    )
    assert not isinstance(good, SampleError)
    assert isinstance(bad, SampleError) and "bench.react_sections" in str(bad)


def test_token_blame_lands_on_the_wrong_word_only() -> None:
    """``blame: tokens``: a broken or wrong line's -1 covers exactly the injected wrong word (a closing tag
    of another name, another field, another inner or outer tag) or, for a tag never closed, the line's
    last word; correct lines keep their +1; and a page still has no -1 exactly when it succeeds."""
    scorer = ReactSectionsScorer(SectionsParams(workers=0, blame="tokens"))
    task = _task(4)
    rng = random.Random(11)
    for row in task.eval_rows(8, seed=13):
        spec = task.parse_row(row)
        for i, s in enumerate(spec.sections):
            for _ in SECTION_ERRORS[s.kind]:
                error = draw_error(s, spec, rng)
                page = render_view(spec, {i: error})
                (spans,) = _score(scorer, row, [page])
                blamed = [page[x.start : x.end] for x in spans if x.value < 0]
                assert {_line(page, x.start) for x in spans if x.value < 0} == {2 + i}, (page, spans)
                if error.name == "unclosed":
                    assert blamed == ["}"], (page, blamed)
                elif error.name == "wrong_tag":
                    assert set(blamed) == {error.value}, (page, blamed)
                else:
                    assert blamed == [error.value], (page, blamed)
                assert sum(x.value > 0 for x in spans) == len(spec.sections) - 1
                assert not task.success(row, page)
        (spans,) = _score(scorer, row, [render_view(spec)])
        assert all(x.value > 0 for x in spans) and len(spans) == len(spec.sections)


def test_word_credit_is_symmetric_and_padding_does_not_pay() -> None:
    """``blame: words``: a correct line's +1 covers only its tag and field names, a wrong line's -1 only
    the wrong word, and a page padded past the spec's count with lines that implement nothing new gets
    each extra line -1 whole, so padding scores below the honest page it pads (under ``tokens`` it did
    not: the padded pages of react-long-token-blame)."""
    words = ReactSectionsScorer(SectionsParams(workers=0, blame="words"))
    tokens = ReactSectionsScorer(SectionsParams(workers=0, blame="tokens"))
    task = _task(4)
    rng = random.Random(5)
    for row in task.eval_rows(6, seed=21):
        spec = task.parse_row(row)
        solution = render_view(spec)
        (spans,) = _score(words, row, [solution])
        for span in spans:
            assert span.value > 0 and solution[span.start : span.end] in {
                n for sec in spec.sections for n in (sec.tag, sec.field, sec.outer) if n
            }, spans
        i = rng.randrange(len(spec.sections))
        error = draw_error(spec.sections[i], spec, rng)
        honest = render_view(spec, {i: error})
        lines = honest.split("\n")
        wrong = lines[2 + i]
        padded = "\n".join(lines[: 2 + len(spec.sections)] + [wrong] * 3 + lines[2 + len(spec.sections) :])
        (h, p) = _score(words, row, [honest, padded])
        extra = [x for x in p if x.value < 0 and _line(padded, x.start) >= 2 + len(spec.sections)]
        assert [padded[x.start : x.end] for x in extra] == [wrong.strip()] * 3, p
        assert sum(x.value * (x.end - x.start) for x in p) < sum(x.value * (x.end - x.start) for x in h)
        (ht, pt) = _score(tokens, row, [honest, padded])
        if error.name != "unclosed":  # tokens: the padding costs only the wrong words again
            pad_cost = sum(x.end - x.start for x in pt if x.value < 0) - sum(
                x.end - x.start for x in ht if x.value < 0
            )
            assert pad_cost < 3 * len(wrong.strip()), (pt, ht)
