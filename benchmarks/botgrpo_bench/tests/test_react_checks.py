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
    assert report["trivial_zero"] == report["trivial"] == 4
