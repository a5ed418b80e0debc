"""Answer comparison: shapes, spellings, partial credit, tolerance."""

from __future__ import annotations

import pytest

from botgrpo_sympy.answer import check_answer, read_answer
from botgrpo_sympy.limits import Limits
from botgrpo_sympy.params import AnswerParams

PARAMS = AnswerParams()


def score(pred: str, ref: str, params: AnswerParams = PARAMS) -> float:
    return check_answer(params, f"Reasoning...\nThe final answer is $\\boxed{{{pred}}}$.", ref)[0]


@pytest.mark.parametrize(
    ("pred", "ref", "expected"),
    [
        ("14", "14", 1.0),
        ("15", "14", 0.0),
        ("14.0", "14", 1.0),
        ("x = 14", "14", 1.0),
        ("1,000", "1000", 1.0),
        ("\\frac{1}{2}", "0.5", 1.0),
        ("\\dfrac{2}{4}", "1/2", 1.0),
        ("0.333", "1/3", 0.0),
        ("\\sqrt{8}", "2\\sqrt{2}", 1.0),
        ("3 \\sqrt 2", "\\sqrt{18}", 1.0),
        ("\\frac{\\pi}{2}", "pi/2", 1.0),
        ("x^2+2x+1", "(x+1)^2", 1.0),
        ("x^2+1", "(x+1)^2", 0.0),
        ("(1, 2)", "(1,2)", 1.0),
        ("(2, 1)", "(1,2)", 0.0),
        ("\\{2, 1\\}", "\\{1, 2\\}", 1.0),
        ("1, 2", "\\{2, 1\\}", 1.0),
        ("[0, 1)", "[0,1)", 1.0),
        ("[0, 1]", "[0,1)", 0.0),
        ("x > 3", "(3, \\infty)", 1.0),
        ("(-\\infty, 2] \\cup (3, \\infty)", "(3,\\infty)\\cup(-\\infty,2]", 1.0),
        ("1 \\pm \\sqrt{2}", "\\{1 + \\sqrt{2}, 1 - \\sqrt{2}\\}", 1.0),
        ("50\\%", "50", 1.0),
        ("30^\\circ", "30", 1.0),
        ("\\text{(B)}", "\\text{(B)}", 1.0),
        ("\\text{12 cm}", "12", 1.0),  # a unit word after the number
        ("\\sqrt{2} cm", "\\sqrt{2}", 1.0),
        ("13 apples", "12", 0.0),
        ("e^2", "e^{2}", 1.0),  # a plain e in an answer is Euler's number, as in LaTeX
        ("e^2", "7.389", 0.0),
    ],
)
def test_answers(pred: str, ref: str, expected: float) -> None:
    assert score(pred, ref) == expected


def test_answer_patterns_and_missing_answers() -> None:
    assert check_answer(PARAMS, "17+5=22\n22-8=14\nA: 14", "14")[0] == 1.0
    # no answer stated: below a wrong answer's 0 (issue 56: saying nothing never out-ranks an honest attempt)
    assert check_answer(PARAMS, "17+5=22\n22-8=14", "14") == (-1.0, {"status": "no answer found"})
    assert check_answer(PARAMS, "17+5=22\n22-8=14\nA: 13", "14")[0] == 0.0
    old = AnswerParams(unanswered=0.0)  # the behaviour before issue 56
    assert check_answer(old, "17+5=22\n22-8=14", "14") == (0.0, {"status": "no answer found"})
    demo = AnswerParams(answer_pattern=r"A:\s*(.+)")
    assert check_answer(demo, "A: 13\nA: 14", "14")[0] == 1.0  # the last match counts


def test_partial_credit_and_tolerance() -> None:
    partial = AnswerParams(partial_credit=True)
    assert score("(1, 2, 4)", "(1, 2, 3)", partial) == pytest.approx(2 / 3)
    assert score("\\{1, 5\\}", "\\{1, 2\\}", partial) == 0.5
    assert score("(1, 2, 4)", "(1, 2, 3)") == 0.0
    assert score("3.1416", "\\pi", AnswerParams(rel_tol=1e-4)) == 1.0
    assert score("3.1416", "\\pi") == 0.0


def test_shapes() -> None:
    limits = Limits()
    assert read_answer("(1, 2, 3)", limits).kind == "tuple"
    assert read_answer("[1, 2)", limits).kind == "interval"
    assert read_answer("\\{1\\}", limits).kind == "set"
    assert read_answer("x \\leq 5", limits).kind == "interval"
    assert read_answer("(0,1) \\cup (2,3)", limits).kind == "union"


def test_a_cut_completion_is_unanswered_whatever_it_says() -> None:
    """The length cap cut it: its answer is not read (a run-on is never paid), unless truncated: score."""
    import dataclasses

    from botgrpo_core.signals.testing import make_samples
    from botgrpo_sympy.plugin import ANSWER
    from botgrpo_sympy.scorers import AnswerScorer

    texts = ["9 + 5 = 14\nA: 14", "9 + 5 = 14\nA: 14\nA: 14\nA: 1", "9 + 5 = 14", "9 + 5 = 14\nA: 13"]
    samples = make_samples(texts, rows=[{"answer": "14"}] * 4)
    cut = [dataclasses.replace(s, truncated=i == 1) for i, s in enumerate(samples)]
    with AnswerScorer(AnswerParams(workers=1)) as scorer:
        assert scorer.score(cut) == [1.0, -1.0, -1.0, 0.0]
        assert scorer.explain(cut)[1][1]["status"].startswith("cut by the length cap")
    with AnswerScorer(AnswerParams(workers=1, truncated="score")) as scorer:
        assert scorer.score(cut) == [1.0, 0.0, -1.0, 0.0]  # the cut one read: its last answer is 1
    assert ANSWER.resolve_bounds(AnswerParams()) == (-1.0, 1.0)
    assert ANSWER.resolve_bounds(AnswerParams(unanswered=0.0)) == (0.0, 1.0)
    assert ANSWER.resolve_gap(AnswerParams()) == 1.0  # -1, 0, 1: outcome dominance's d stays 1, not 2
    assert ANSWER.resolve_gap(AnswerParams(unanswered=-0.5)) == 0.5


def test_outcome_dominance_reads_the_answers_gap_not_its_range() -> None:
    from botgrpo_core.config.checks import outcome_dominance, signal_bounds
    from botgrpo_core.config.models import RewardsConfig

    for beta, holds in ((0.25, True), (0.5, False)):  # 1 * d = 1 against 2 * beta * |sympy.steps| = 4 * beta
        rewards = RewardsConfig(
            alpha=1.0, beta=beta, signals=[{"name": "sympy.answer"}, {"name": "sympy.steps"}]
        )
        result = outcome_dominance(rewards, signal_bounds(rewards))
        assert result["outcome_gap"] == 1.0 and result["holds"] is holds
