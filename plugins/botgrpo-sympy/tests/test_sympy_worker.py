"""Regression tests on the real worker path (guarded checker processes, tripwire log) for the crashes
and resource findings of issues 14 and 17: benign sympy internals never trip the wire, bombs that
went around the caps are refused, a failure is cached, a library error costs one claim."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from botgrpo_core.rewards.pool import WorkerPool
from botgrpo_core.signals import Sample, SampleError
from botgrpo_sympy import worker
from botgrpo_sympy.params import AnswerParams, StepsParams
from botgrpo_sympy.plugin import ANSWER, STEPS
from botgrpo_sympy.scorers import TRIPWIRE_ENV


def _scorer(spec, params, log: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(TRIPWIRE_ENV, str(log))
    return spec.make_scorer(params)


def _log_text(log: Path) -> str:
    return log.read_text() if log.exists() else ""


def test_custom_answer_pattern_reads_latex_answers_without_tripping(tmp_path: Path, monkeypatch) -> None:
    """Crash 1: with a custom answer_pattern the warm-up never reached the LaTeX parser, whose
    import (a namedtuple: eval) then ran under the tripwire and failed every LaTeX answer."""
    log = tmp_path / "tripwire.log"
    params = AnswerParams(workers=1, answer_pattern=r"ANS:\s*(.+)")
    with _scorer(ANSWER, params, log, monkeypatch) as scorer:
        rows = {"answer": "\\frac{1}{2}"}
        results = scorer.score(
            [
                Sample(prompt="", completion="so ANS: \\frac{2}{4}", row=rows),
                Sample(prompt="", completion="ANS: \\sqrt{2}", row=rows),
            ]
        )
    assert results == [1.0, 0.0]
    assert _log_text(log) == ""


@pytest.mark.parametrize(
    "claim",
    [
        # symbolic fallback (no point evaluates): simplify lazily imports sympy.physics.units,
        # whose import runs parse_expr (exec 'from sympy import *')
        "$\\log(x^2 - (x+1)^2 + 2x + 1) = \\log(x - x)$",
        # ... and simplify -> nsimplify -> mpmath.identify -> sympify('...') on a radical denominator
        "floor(sqrt(-1-x^2)) + 1/(sqrt(2)+sqrt(3)) = 1",
    ],
)
def test_simplify_internals_do_not_trip_the_wire(claim: str, tmp_path: Path, monkeypatch) -> None:
    log = tmp_path / "tripwire.log"
    with _scorer(STEPS, StepsParams(workers=1), log, monkeypatch) as scorer:
        (spans,) = scorer.score([Sample(prompt="", completion=f"{claim}\n2 + 2 = 4")])
    assert not isinstance(spans, SampleError), spans
    assert [s.value for s in spans] == [0.0, 1.0]
    assert _log_text(log) == ""


def test_the_nsimplify_allowance_is_narrow(tmp_path: Path) -> None:
    """Inside a guarded worker, model text that reaches sympify is still blocked and logged."""
    log = tmp_path / "control.log"
    with WorkerPool(
        worker.guard_selftest,
        workers=1,
        initializer=worker.init_worker,
        initargs=("steps", StepsParams().model_dump(), str(log)),
    ) as pool:
        assert pool.map([None]) == ["blocked"]
    assert "\teval\t'1 + 1'" in log.read_text()
    assert worker._is_identified_number("(Integer (1 )+sqrt (Integer (2 )))/Integer (3 )")
    for text in ("__import__('os')", "Integer (1 ).__class__", "open ('x')", "lambda : 1", "[1]"):
        assert not worker._is_identified_number(text), text


@pytest.mark.parametrize(
    "bomb",
    [
        "$\\gcd(9^{9^{9}}, 3) = 3$",
        "$\\lcm(9^{9^{9}}, 2) = 2$",
        "$\\sqrt[9^{9^{9}}]{2} = 1$",
        "$(a+b+c+d+f+g)^{400} = (a+b)^{400}$",
        "(a+b+c+d+f+g)^400 = (a+b)^400\n(a+b+c+d+f+g)^400 = 1",
    ],
)
def test_cap_bypasses_are_refused_in_bounded_time(bomb: str) -> None:
    """Issue 17: these went around the caps (the LaTeX converter evaluates gcd/lcm and the root
    index eagerly; Poly/expand expand the power); now they are 0 for that claim, quickly."""
    scorer = STEPS.make_scorer(StepsParams(workers=1, timeout_s=5.0))
    try:
        scorer.score([Sample(prompt="", completion="1 + 1 = 2")])  # start the pool outside the timing
        start = time.monotonic()
        (spans,) = scorer.score([Sample(prompt="", completion=bomb + "\n1 + 1 = 2")])
        elapsed = time.monotonic() - start
        assert not isinstance(spans, SampleError), spans
        assert [s.value for s in spans][-1] == 1.0 and set(s.value for s in spans[:-1]) == {0.0}
        assert elapsed < 5.0 + 10.0, elapsed  # not a timeout (that would be a SampleError): timeout_s + slack
        assert scorer.pool.restarts == 0
    finally:
        scorer.close()


def test_a_timeout_is_cached_and_not_rerun() -> None:
    """The same hanging input costs one deadline and one worker restart, not one per step."""
    lifted = {"max_exponent": 10**12, "max_bits": 10**13}
    scorer = STEPS.make_scorer(StepsParams(workers=1, timeout_s=1.0, limits=lifted, soft_timeout_share=None))
    try:
        hang = Sample(prompt="", completion="9^9^9 = 1")
        (first,) = scorer.score([hang])
        assert isinstance(first, SampleError) and first.reason == "timeout"
        restarts = scorer.pool.restarts
        real_map, sent = scorer.pool.map, []
        scorer.pool.map = lambda items, **kw: sent.extend(items) or real_map(items, **kw)
        (again,) = scorer.score([hang])  # answered from the cache: no task is sent at all
        assert sent == []  # (was a < 0.5 s wall-clock bound, which a loaded machine could miss)
        assert isinstance(again, SampleError) and again.reason == "timeout" and "cached" in str(again)
        again, good = scorer.score([hang, Sample(prompt="", completion="2 + 2 = 4")])
        assert isinstance(again, SampleError) and [s.value for s in good] == [1.0]
        assert scorer.pool.restarts == restarts
    finally:
        scorer.close()


def test_a_library_overflow_costs_one_claim_not_the_completion() -> None:
    """OverflowError (a float conversion of 999^300) in one claim: that claim is 0, the rest scored."""
    scorer = STEPS.make_scorer(StepsParams(workers=1))
    answer = ANSWER.make_scorer(AnswerParams(workers=1, rel_tol=1e-3))
    try:
        (spans,) = scorer.score([Sample(prompt="", completion="999^300 ≈ 998^300\n2 + 2 = 5")])
        assert not isinstance(spans, SampleError), spans
        assert [s.value for s in spans] == [0.0, -1.0]
        assert "OverflowError" in spans[0].meta["claims"][0]["reason"]
        (value,) = answer.score(
            [Sample(prompt="", completion="\\boxed{999^{300}}", row={"answer": "998^{300}"})]
        )
        assert value == 0.0
    finally:
        scorer.close()
        answer.close()
