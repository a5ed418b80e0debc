"""Behaviour checks of the React prompt set (issue 58): one ``jsx.checks`` suite per request.

``data/react_checks.yaml`` maps every id of ``data/react_prompts.jsonl`` (train and held out) to a
:class:`botgrpo_jsx.checks_schema.CheckSuite`, written for this project by hand (its header says how). The
``react-requests`` task puts a request's suite on its row as ``checks``, so ``jsx.checks`` scores the page
against it; a held-out suite is only ever on a held-out row (the train split never returns a held-out request).
"""

from __future__ import annotations

import copy
from functools import cache
from importlib import resources
from typing import Any

_FILE = "react_checks.yaml"


@cache
def _suites() -> dict[str, dict[str, Any]]:
    import yaml

    from botgrpo_bench.react_prompts import load_react_prompts
    from botgrpo_jsx.checks import suite_problem

    text = resources.files("botgrpo_bench").joinpath("data", _FILE).read_text(encoding="utf-8")
    suites = yaml.safe_load(text)
    if not isinstance(suites, dict):
        raise ValueError(f"botgrpo_bench/data/{_FILE}: expected a mapping of request id -> check suite")
    ids = {r["id"] for r in load_react_prompts()}
    missing, extra = sorted(ids - suites.keys()), sorted(suites.keys() - ids)
    if missing or extra:
        raise ValueError(
            f"botgrpo_bench/data/{_FILE}: every request needs one suite; missing {missing[:5]}, unknown {extra[:5]}"
        )
    for row_id, suite in suites.items():
        problem = suite_problem(suite)
        if problem is not None:
            raise ValueError(f"botgrpo_bench/data/{_FILE} {row_id}: {problem}")
    return suites


def react_checks(row_id: str) -> dict[str, Any]:
    """The check suite of request ``row_id`` (a copy, JSON-ready).

    :raises KeyError: an id that is not in the prompt set.
    """
    suites = _suites()
    if row_id not in suites:
        raise KeyError(f"react checks: no suite for {row_id!r} (ids are react-001 ... react-280)")
    return copy.deepcopy(suites[row_id])


def all_react_checks() -> dict[str, dict[str, Any]]:
    """Every request's suite by id (copies)."""
    return copy.deepcopy(_suites())
