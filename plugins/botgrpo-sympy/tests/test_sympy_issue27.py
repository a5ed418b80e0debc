"""sympy.steps on competition-math shapes (issue 27): one example per cause, each with a wrong twin refuted.

Relations derived from earlier lines are checked given them (or score 0), never as identities; carried values
follow the text's scope; base subscripts; inequality chains; claims the text calls false; answer lines read
whole; a percent sign between numbers. The corpus figures are in test_sympy_prose.py. Values by hand.
"""

from __future__ import annotations

import random
from fractions import Fraction

import pytest
import sympy

from botgrpo_sympy.equality import constant_difference, solutions
from botgrpo_sympy.limits import Unsupported
from botgrpo_sympy.mathparse import parse_value
from botgrpo_sympy.metrics import line_values
from botgrpo_sympy.numberformat import normalize, percent_between_numbers
from botgrpo_sympy.params import StepsParams
from botgrpo_sympy.steps import check_steps

PROSE = StepsParams(step_split="lines")
LIMITS = PROSE.limits


def _values(prompt: str, completion: str) -> list[int]:
    return [int(v) for v in line_values(completion, check_steps(PROSE, prompt, completion))]  # one per line


@pytest.mark.parametrize(
    ("cause", "prompt", "completion", "expected"),
    [
        (
            "a relation derived from an earlier one",
            "",
            "We have $x^2 + y^2 = 3x^2$.\nSo $y^2 = 2x^2$.\nSo $y^2 = 4x^2$.",
            [0, 1, 0],  # a relation, not an identity (0); implied by it (+1); neither implied nor refuted (0)
        ),
        (
            "a relation checked given the prompt's equations",
            "Real $x, y$ have $x^2 + y^2 = 3x^2$ and $x = 2$.",
            "So $y^2 = 2x^2$.\nSo $y^2 = 4x^2$.",
            [1, -1],
        ),
        (
            "a chain of relations between unknowns",
            "",
            "$7a + 4 = 9b + 4 = 11c + 4$, so $7a = 9b = 11c$.",
            [0],
        ),
        ("a substitution into a chain", "", "Setting $x = 1$ in $3x = 4y = -z$ gives $3 = 4y = -z$.", [0]),
        (
            "a substitution into the prompt's chain",
            "Suppose $3x = 4y = -z$.",
            "Setting $x = 1$ gives $3 = 4y = -z$, so $y = 3/4$.\nSo $z = 3$.",
            [1, -1],
        ),
        ("a Lagrange condition", "", "The conditions give $b^2 c = 3ab$ and $a^2 c = 3ab$.", [0]),
        ("an inequality chain", "", "By AM-GM, $ab \\le ((a+b)/2)^2 = ((1-c)/2)^2$.", [0]),
        (
            "an inequality chain with numbers",
            "",
            "$ab \\le ((a+b)/2)^2 = (6/2)^2 = 9$\n$ab \\le (6/2)^2 = 8$",
            [1, -1],
        ),
        (
            "a wrong linear rewrite: no value makes it true",
            "",
            "Expanding, $2(x + 3) = 2x + 6$.\nExpanding, $2(x + 3) = 2x + 5$.",
            [1, -1],
        ),
        (
            "two roots in one step",
            "",
            "So $x = -5$ or $x = 2$, and $x - 2 = 0$ for the second.\nThe roots are $x = -5$ and $x = 2$, so $x + 5 = 0$.",
            [0, 1],  # x = -5 after "x - 2 = 0": one of the listed roots (0); x = 2 follows from it (+1)
        ),
        (
            "a wrong root among alternatives is still refuted",
            "",
            "$(x + 5)(x - 2) = 0$, so $x = -5$ or $x = 2$.\n$(x + 5)(x - 2) = 0$, so $x = -5$ or $x = 3$.",
            [1, -1],
        ),
        (
            "cases of an absolute value in one step",
            "Solve $|x - 1| = 4$.",
            "In the first case $x - 1 = 4$ and $x = 5$; in the second, $x - 1 = -4$ and $x = -3$.\n"
            "In the first case $x - 1 = 4$ and $x = 6$.",
            [1, -1],
        ),
        (
            "a candidate, then the solution",
            "",
            "Try $a = 1$, $b = 2$, $c = 4$: then $a + b + c = 7$, too big.\n"
            "So $a = 1$, $b = 2$, $c = 3$ is the solution, and $a + b + c = 6$.\n$a + b + c = 7$",
            [1, 1, -1],
        ),
        ("a value right after its equation still counts", "", "5x = 20\nx = 4\nx = 5", [0, 1, -1]),
        (
            "degrees inside trigonometry",
            "",
            "$\\sin 110^\\circ = \\sin(180^\\circ - 110^\\circ) = \\sin 70^\\circ$\n"
            "$\\sin 110^\\circ = \\sin 60^\\circ$",
            [1, -1],
        ),
        (
            "base subscripts",
            "",
            "$724_{10} = 2053_7$\n$1011_2 + 101_2 = 16 = 10000_2$\n$724_{10} = 2054_7$",
            [1, 1, -1],
        ),
        (
            "a false claim the text calls false",
            "",
            "$x = 9$ gives $2 = \\sqrt{9} + 5$, which is clearly not true.\n"
            "Then $2x + 4 = 2x + 6$ gives $4 = 6$, a contradiction.\nSo $\\sqrt{9} + 5 = 9$.",
            [0, 0, -1],
        ),
        (
            "an equation in an unknown is a condition",
            "",
            "2M + 14 = 60\n2M = 60 - 14 = 46\nM = 23",
            [0, 1, 1],
        ),
        (
            "an equation in an unknown after an identity",
            "",
            "(K+6)+K = 2K+6 = 30\n2K = 24\nK = 12\n2K = 26",
            [1, 1, 1, -1],  # the identity link +1, the equation 0; the twin refuted right after K = 12
        ),
        (
            "a percent sign between numbers",
            "",
            "He saves 40/100%500 = 200 dollars.\n40/100*500 = 250",
            [0, -1],
        ),
        (
            "a claim opening its own $...$ does not continue the words before it",
            "",
            "The lcm is $30$, since $30 = 2 \\cdot 3 \\cdot 5$.\nThe lcm is $30$, since $30 = 2 \\cdot 3 \\cdot 7$.\n"
            "The product of 3 and 4 = 12",
            [1, -1, 0],
        ),
    ],
)
def test_each_cause(cause: str, prompt: str, completion: str, expected: list[int]) -> None:
    assert _values(prompt, completion) == expected, cause


@pytest.mark.parametrize(
    ("cause", "completion", "expected"),
    [
        (
            "# Answer, then the answer on a line of its own",
            "So $x = \\sqrt{28}/2 = \\sqrt{7}$.\n# Answer\n\n\\sqrt{7}",
            [1, 0, 1],
        ),
        ("# Answer with a radical", "So $x = \\sqrt{12} = 2\\sqrt{3}$.\n# Answer 2\\sqrt{3}", [1, 1]),
        # issue 36: an answer copying a value no claim verified (a definition) earns nothing
        ("# Answer after a definition", "So $x = 2\\sqrt{3}$.\n# Answer 2\\sqrt{3}", [0, 0]),
        ("an irrational answer is not refuted", "So $x = 2\\sqrt{3}$.\n# Answer 3\\sqrt{2}", [0, 0]),
        ("cents after a result in dollars", "So $p = 0.93/3 = 0.31$.\nThe answer is 31 cents.", [1, 1]),
        ("a wrong number of cents", "So $p = 0.93/3 = 0.31$.\nThe answer is 34 cents.", [1, -1]),
        ("a result in hundredths", "Three quarters of a dollar is 3/4 = 0.75 dollars.\n#### 75", [1, 0]),
        (
            "a wrong answer is still refuted",
            "Three quarters of a dollar is 3/4 = 0.75 dollars.\n#### 76",
            [1, -1],
        ),
    ],
)
def test_answer_lines_read_whole(cause: str, completion: str, expected: list[int]) -> None:
    assert _values("", completion) == expected, cause


def test_number_formats() -> None:
    assert normalize("724_{10} = 2053_7") == "724 = 724"
    assert normalize("A3_{16} + 10_{16}") == "A3_{16} + 16"  # a numeral starts with a digit
    assert normalize("2058_7") == "2058_7"  # 8 is no digit of base 7: left as written, so not parsed
    assert normalize("x_1 + 12_{1}") == "x_1 + 12_{1}"
    with pytest.raises(Unsupported):
        parse_value("2058_7", LIMITS, latex=True)
    assert percent_between_numbers("40/100%500") and percent_between_numbers("40\\% 500")
    assert not percent_between_numbers("25% * 80") and not percent_between_numbers("25%")
    with pytest.raises(Unsupported, match="percent"):
        parse_value("40/100%500", LIMITS, latex=True)
    assert parse_value("25% * 80", LIMITS) == 20


def test_constant_difference_and_pinned_solutions() -> None:
    x, y, z = sympy.symbols("x y z")
    rng = random.Random(0)
    assert constant_difference(2 * (x + 3), 2 * x + 5, LIMITS, rng) == 1
    assert constant_difference(2 * (x + 3), 2 * x + 6, LIMITS, rng) is None  # an identity
    assert constant_difference(x**2, 2 * x, LIMITS, rng) is None  # an equation with solutions
    assert constant_difference(x + 1 / y, x, LIMITS, rng) is None
    # x = 2 fixed by a linear equation, substituted: y^2 = 8
    found = solutions([x**2 + y**2 - 3 * x**2, x - 2], LIMITS)
    assert found is not None and len(found) == 2
    assert all(s[x] == 2 and abs(complex(s[y]) ** 2 - 8) < 1e-12 for s in found)
    assert solutions([x - 1, 3 * x - 4 * y, 4 * y + z], LIMITS) == [
        {x: Fraction(1), y: Fraction(3, 4), z: Fraction(-3)}
    ]
    assert solutions([x - 1, x * y - 2, x + y * y - 9], LIMITS) == []  # y = 2 then 1 + 4 = 9: none
