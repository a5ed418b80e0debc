"""The React prompt set's behaviour checks (issue 58 items 2-3): one suite per request, and their truth."""

from __future__ import annotations

import pytest

from botgrpo_bench.react_checks import all_react_checks, react_checks
from botgrpo_bench.react_prompts import load_react_prompts
from botgrpo_bench.react_requests import ReactRequestsTask


def test_every_request_train_and_held_out_has_a_valid_suite_on_its_row() -> None:
    from botgrpo_jsx.checks_schema import parse_suite

    suites = all_react_checks()
    assert set(suites) == {r["id"] for r in load_react_prompts()}
    assert all(len(parse_suite(s).checks) >= 1 for s in suites.values())
    task = ReactRequestsTask()
    heldout, train = task.eval_rows(50), task.train_rows(230, seed=0)
    assert all(r["checks"] == react_checks(r["id"]) for r in heldout + train)
    held = {r["id"] for r in load_react_prompts("heldout")}
    assert not {r["id"] for r in train} & held  # a held-out suite never reaches a training row
    with pytest.raises(KeyError, match="no suite for 'react-999'"):
        react_checks("react-999")


def test_truth_correct_pages_pass_twins_fail_trivial_pages_score_zero() -> None:
    """A slice of `python -m botgrpo_bench.react_check_truth` (the whole run: the issue note), one batch."""
    from botgrpo_jsx import nodeenv

    if nodeenv.unavailable_reason() is not None:
        pytest.skip(f"jsx.checks needs Node: {nodeenv.unavailable_reason()}")
    from botgrpo_bench.react_check_truth import evaluate

    report = evaluate(["react-001", "react-017", "react-021"], trivial_ids=["react-017"])
    by = {(r["id"], r["kind"], r["family"]): r for r in report["results"]}
    assert [by[(i, "correct", "")]["value"] for i in ("react-001", "react-017", "react-021")] == [1.0] * 3
    # an inert handler, a missing button and a list without its items: each fails one check or more
    twins = {
        i: by[(i, "twin", f)] for i, f in (("react-001", "inert_handler"), ("react-017", "missing_button"))
    }
    twins["react-021"] = by[("react-021", "twin", "empty_list")]
    assert all(t["value"] < 1.0 for t in twins.values())
    assert "decrease: no number 1 on the page" in twins["react-001"]["failed"]
    assert report["trivial_zero"] == report["trivial"] == 5


def test_the_gate_cascade_pays_nothing_for_a_trivial_page() -> None:
    """bench.react_cascade with its default credits (0.15 substance, 0.15 compile, 0.15 render, 0.55 x the check
    share): an honest page with a typo (substance, no compile) out-ranks every trivial page (issue 56)."""
    from botgrpo_jsx import nodeenv

    if nodeenv.unavailable_reason() is not None:
        pytest.skip(f"bench.react_cascade needs Node: {nodeenv.unavailable_reason()}")
    from botgrpo_bench.react_cascade import CascadeParams, make_cascade
    from botgrpo_bench.react_check_truth import fenced, trivial_pages, truth_cases
    from botgrpo_core.signals import Sample

    case = next(c for c in truth_cases() if c.id == "react-001")
    crash = case.code.replace(
        "const [count, setCount] = useState(0);", "const [count, setCount] = useState(0);\n  null.x;"
    )
    trivial = trivial_pages("Counter")
    pages = [
        fenced(case.code),  # every check: 0.15 + 0.15 + 0.15 + 0.55
        fenced(case.twin_code),  # decrease does nothing: 3 of 4 checks
        fenced(crash),  # compiles, has substance, throws when it renders: the substance and compile credits
        trivial["null"],
        trivial["shortcut"],  # round 4's collapsed page: one element
        trivial["padding"],  # twenty <p>0</p>: elements but no logic, passes no check: nothing
        fenced(case.code.replace("</div>\n  );", "</div\n  );")),  # does not compile: the substance credit
    ]
    scorer = make_cascade(CascadeParams(workers=0))
    try:
        values = scorer.score([Sample("", p, row={"checks": react_checks("react-001")}) for p in pages])
    finally:
        scorer.close()
    assert [round(v.value, 4) for v in values] == [1.0, 0.8625, 0.3, 0.0, 0.0, 0.0, 0.15]
    stages = ["renders", "renders", "compiles", "trivial", "trivial", "trivial", "does not compile"]
    assert [v.meta["stage"] for v in values] == stages
    assert "decrease" in values[1].meta["failed"]
    with pytest.raises(ValueError, match="must be below 1"):
        CascadeParams(compile_credit=0.5, render_credit=0.4)
