"""Issue 60 item 11: digits of other scripts, "The answer is 7!", zero-width characters inside numbers (the real
checker in process; each case failed before the fix, each false twin is still caught)."""

from __future__ import annotations

import pytest

from botgrpo_sympy.answer import check_answer
from botgrpo_sympy.params import AnswerParams, StepsParams
from botgrpo_sympy.steps import check_steps

ANSWER = AnswerParams()
LINES = StepsParams(step_split="lines")


@pytest.mark.parametrize(
    ("completion", "reference", "expected"),
    [
        ("The answer is ٧", "7", 1.0),  # Arabic-Indic
        ("The answer is ۷.", "7", 1.0),  # Extended Arabic-Indic (Persian)
        ("The answer is ７.", "7", 1.0),  # full-width
        ("$\\boxed{١٢٫٥}$", "12.5", 1.0),  # with the Arabic decimal separator
        ("The answer is ٨", "7", 0.0),  # a different number stays wrong
        ("The answer is 7!", "7", 1.0),  # the sentence's '!', not 7 factorial
        ("Answer: 7!", "7", 1.0),
        ("The answer is 7!", "5040", 0.0),
        ("$\\boxed{3!}$", "6", 1.0),  # in math, '!' is still a factorial
        ("The answer is $3!$.", "6", 1.0),
        ("The answer is 1\u200b000.", "1000", 1.0),  # a zero-width space inside the number
        ("The answer is 1\u200b001.", "1000", 0.0),
    ],
)
def test_answers_in_other_digits_and_punctuation(completion: str, reference: str, expected: float) -> None:
    assert check_answer(ANSWER, completion, reference)[0] == expected


@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        ("١٢ + ٥ = ١٧", [1]),
        ("١٢ + ٥ = ١٨", [-1]),
        ("１２ + ５ = １７", [1]),
        ("１２ + ５ = ２７", [-1]),
        ("1\u200b000 + 5 = 1005", [1]),  # was -1: "5 != 1005"
        ("1\u200b000 + 5 = 1006", [-1]),
        ("She has 1\u2060200 pens, 1200 / 4 = 3\u200b00.", [1]),
        ("17 + 5 = 22\nThe answer is 22!", [1, 1]),  # was -1: "22!" appears nowhere above
    ],
)
def test_steps_in_other_digits_and_zero_width_characters(completion: str, expected: list[int]) -> None:
    assert [int(v) for *_, v, _ in check_steps(LINES, "", completion)] == expected


def test_spans_keep_the_completions_own_offsets() -> None:
    completion = "So 1\u200b000 + 5 = 1005.\n2\u200b0 * 3 = 61"
    spans = check_steps(LINES, "", completion)
    assert [completion[s:e] for s, e, *_ in spans] == ["So 1\u200b000 + 5 = 1005.", "2\u200b0 * 3 = 61"]
    assert [v for *_, v, _ in spans] == [1.0, -1.0]
