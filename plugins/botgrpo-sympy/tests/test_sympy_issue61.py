"""Issue 61: the families of false flags and answer misses held-out competition solutions found, one shape per cause
with its false twin (lines written here, values by hand; the real checker in process). A false flag is worse than a
silence: where a reading is ambiguous the line scores 0, and true arithmetic errors stay -1."""

from __future__ import annotations

import pytest

from botgrpo_sympy.answer import check_answer
from botgrpo_sympy.answerforms import equation_sides, matrix_entries, same_digits_in_base
from botgrpo_sympy.metrics import line_values
from botgrpo_sympy.numberformat import fractions_in, repeating_decimal, rounds_to
from botgrpo_sympy.params import AnswerParams, StepsParams
from botgrpo_sympy.steps import check_steps

LINES = StepsParams(step_split="lines")


def _values(prompt: str, completion: str) -> list[int]:
    """One value per line (``metrics.line_values``: -1 if a span of the line is -1, else +1 if one is +1)."""
    return [int(v) for v in line_values(completion, check_steps(LINES, prompt, completion))]


@pytest.mark.parametrize(
    ("family", "prompt", "completion", "expected"),
    [
        # 1. an equation derived by squaring is no failed identity (it was "not an identity: the sides differ")
        (
            "squaring",
            "Solve $2\\sqrt{x^2 + 1} = x + 3$.",
            "Squaring both sides, $4(x^2 + 1) = (x + 3)^2$.\nSo $3x^2 - 6x - 5 = 0$.",
            [0, 1],  # the next line is checked against the squared equation
        ),
        (
            "squaring, false twin",
            "Solve $2\\sqrt{x^2 + 1} = x + 3$.",
            "$4(x^2 + 1) = (x + 3)^2$\n$3x^2 - 6x - 4 = 0$",
            [0, -1],
        ),
        ("a wrong expansion stays refuted", "", "$(x+1)^2 = x^2 + 1$", [-1]),
        # 2. a repeating decimal is its value (was read as the truncated decimal: 10x = 5.555... refuted)
        (
            "repeating",
            "",
            "Let $x = 0.555...$. Then $10x = 5.555...$.\n$9x = 5$, so $x = \\frac{5}{9}$.",
            [1, 1],
        ),
        ("repeating, false twin", "", "Let $x = 0.555...$. Then $10x = 6.555...$.", [-1]),
        ("a decimal that does not repeat is not read", "", "$\\pi = 3.14159...$\n$1/3 = 0.444...$", [0, -1]),
        # 2. values found in one case are not checked against the next case's lines
        (
            "another case of the prompt's equation",
            "Solve $|2x - 1| = 7$.",
            "$2x - 1 = 7$ gives $x = 4$.\n$2x - 1 = -7$ gives $x = -3$.",
            [1, 0],
        ),
        (
            "a wrong value in the next case",
            "Solve $|2x - 1| = 7$.",
            "$2x - 1 = 7$ gives $x = 4$.\n$x = 4$, so $2x = 9$.",
            [1, -1],
        ),
        (
            "a hypothesis drops the last one's values",
            "Find n.",
            "When $n$ is even, $n = 2k$ and $2k = 10$, so $k = 5$.\nWhen $n$ is odd, $n = 2k + 1$ and $2k + 1 = 9$, so $k = 4$.",
            [1, 1],
        ),
        ("a marked case (ii)", "", "(i) $2x - 1 = 7$, $x = 4$.\n(ii) $2x - 1 = -7$, $x = -3$.", [1, 1]),
        # 3. degrees dropped: true in degrees is never refuted (0); false in both stays -1
        ("degrees dropped", "", "$\\sin 100 = \\sin 80$\n$\\cos 120 = -\\cos 60$", [0, 0]),
        ("degrees dropped, false twin", "", "$\\sin 100 = \\sin 70$", [-1]),
        ("degree marks", "", "$\\sin 100^\\circ = \\sin 80^\\circ$", [1]),
        # 4. number misreads: "* 100%" makes a percent; a malformed numeral is not read; ".3x" is 0.3x
        ("times 100%", "", "32/96*100% = 33.333%\n32/96 * 100% = 33.333\n32/96*100% = 35%", [1, 1, -1]),
        (
            "a malformed numeral",
            "",
            "2.785 * 100 = 2,78.5\n2.785 * 100 = 278.5\n2.785 * 100 = 27.85",
            [0, 1, -1],
        ),
        (
            "leading-dot decimal beside a letter",
            "Solve $.3x + .2 = 2.6$.",
            "$.3x = 2.4$, so $x = 8$.\n$x = 7$",
            [1, -1],
        ),
        # 5. a remark in brackets after a false claim hides nothing
        (
            "a remark in brackets",
            "",
            "115,000 / 80,000 ≈ 2.785 (approximately)\n1 + 2.785 ≈ 4.25 (thousand dollar profit)\n"
            "115,000 / 80,000 ≈ 1.4375 (approximately)",
            [-1, -1, 1],
        ),
        # true arithmetic errors stay caught
        ("a real error", "", "650*90=585000\n650 * 90 = 58,500", [-1, 1]),
        # 6. an answer line written above as a fraction (or that fraction rounded) is no number from nowhere
        (
            "answer written above as a fraction",
            "A bag has 5 red and 7 blue balls.",
            "There are $5 + 7 = 12$ balls, so the probability is $\\frac{5}{12}$.\n# Answer\n5/12",
            [1, 0, 0],
        ),
        (
            "a rounded fraction",
            "",
            "$5 + 7 = 12$; the chance is $\\dfrac{5}{12}$.\nThe answer is 0.4167.",
            [1, 0],
        ),
        (
            "answer from nowhere",
            "",
            "$5 + 7 = 12$; the chance is $\\dfrac{5}{12}$.\nThe answer is 5/13.",
            [1, -1],
        ),
    ],
)
def test_each_family(family: str, prompt: str, completion: str, expected: list[int]) -> None:
    assert _values(prompt, completion) == expected, family


@pytest.mark.parametrize(
    ("pred", "gold", "expected"),
    [
        ("4210_{5}", "4210", 1.0),  # the base named against the bare digits (was 0: 555 != 4210)
        ("4210", "4210_5", 1.0),
        ("4211_{5}", "4210", 0.0),
        ("2x + 3 = y", "y = 2x + 3", 1.0),  # an equation's sides the other way round (was "not parsed")
        ("5 = y + x", "x + y = 5", 1.0),
        ("2x + 2y = 10", "x + y = 5", 1.0),  # a constant multiple: the same equation
        ("x + y = 6", "x + y = 5", 0.0),
        ("y - x = 1", "x - y = 1", 0.0),
        (
            "\\begin{pmatrix} \\frac{1}{2} \\end{pmatrix}",
            "\\frac{1}{2}",
            1.0,
        ),  # was "\\begin is not supported"
        (
            "\\begin{pmatrix} \\frac{1}{2} \\\\ 3 \\end{pmatrix}",
            "\\begin{pmatrix} 1/2 \\\\ 3 \\end{pmatrix}",
            1.0,
        ),
        (
            "\\begin{pmatrix} \\frac{1}{3} \\\\ 3 \\end{pmatrix}",
            "\\begin{pmatrix} 1/2 \\\\ 3 \\end{pmatrix}",
            0.0,
        ),
        ("\\begin{bmatrix} 2 & 0.75 \\end{bmatrix}", "\\begin{pmatrix} 2 & \\frac{3}{4} \\end{pmatrix}", 1.0),
        ("\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}", "(1, 2)", 1.0),
        (
            "\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}",
            "\\begin{pmatrix} 1 & 2 \\end{pmatrix}",
            0.0,
        ),  # shapes differ
    ],
)
def test_answer_forms(pred: str, gold: str, expected: float) -> None:
    assert check_answer(AnswerParams(), f"The final answer is $\\boxed{{{pred}}}$.", gold)[0] == expected


def test_the_helpers_against_hand_values() -> None:
    from fractions import Fraction

    assert repeating_decimal("0", "555") == Fraction(5, 9)
    assert repeating_decimal("0", "1666") == Fraction(1, 6)
    assert repeating_decimal("0", "142857142857") == Fraction(1, 7)
    assert repeating_decimal("3", "14159") is None
    assert fractions_in("so $\\frac{5}{12}$ and 3/4, not 1.5/2") == {Fraction(5, 12), Fraction(3, 4)}
    assert rounds_to(Fraction(5, 12), Fraction(4167, 10000)) and not rounds_to(
        Fraction(5, 12), Fraction(43, 100)
    )
    assert same_digits_in_base("244_{6}", "244") and not same_digits_in_base("244", "244")
    assert matrix_entries("\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}") == [["1", "2"], ["3", "4"]]
    assert matrix_entries("\\begin{pmatrix} 1 & 2 \\\\ 3 \\end{pmatrix}") is None  # ragged: not read
    assert equation_sides("f(x, y) = 2") == ("f(x, y)", "2") and equation_sides("a = b = c") is None
