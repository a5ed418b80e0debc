"""The one home of number formats: each format read back to its exact value (hypothesis, against
Python's own formatting and Fraction), and every parser of the plugin reading it the same way."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from botgrpo_sympy.answer import check_answer
from botgrpo_sympy.limits import Limits
from botgrpo_sympy.mathparse import parse_value
from botgrpo_sympy.numberformat import degrees, normalize, numbers_in, percent_label
from botgrpo_sympy.params import AnswerParams

LIMITS = Limits()


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1000, 10**9),
    sep=st.sampled_from([",", " ", "\u00a0", "\u202f", "\u2009"]),
    cur=st.booleans(),
)
def test_grouped_thousands_read_back(n: int, sep: str, cur: bool) -> None:
    text = ("$" if cur else "") + f"{n:,}".replace(",", sep)
    assert parse_value(text, LIMITS) == n
    assert parse_value(f"{text} + 1", LIMITS) == n + 1
    assert n in numbers_in(f"so she has {text} left")


@settings(max_examples=60, deadline=None)
@given(whole=st.integers(0, 50), num=st.integers(1, 30), den=st.integers(2, 31), k=st.integers(1, 9))
def test_mixed_numbers_and_leading_dots(whole: int, num: int, den: int, k: int) -> None:
    if num >= den:
        num = den - 1
    assert parse_value(f"{whole} {num}/{den} * {k}", LIMITS) == (whole + Fraction(num, den)) * k
    assert parse_value(f"{k}*.{num:02d}", LIMITS) == k * Fraction(num, 100)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("25% * 80", Fraction(20)),
        ("80 * 12.5\\%", Fraction(10)),
        ("3 × 4 ÷ 2", Fraction(6)),
        ("10 − 3 – 2", Fraction(5)),
        ("2 1/2 ÷ 1/4", Fraction(10)),
        ("1{,}000 + 1", Fraction(1001)),
        ("\\$40 \\cdot 3", Fraction(120)),
    ],
)
def test_formats_in_plain_text_and_latex(text: str, value: Fraction) -> None:
    assert parse_value(text, LIMITS, latex="\\" in text) == value


def test_commas_inside_brackets_separate_arguments() -> None:
    assert normalize("gcd(12,345)") == "gcd(12,345)"
    assert normalize("12,345 + 1") == "12345 + 1"


def test_percent_label_and_degrees() -> None:
    assert percent_label("24%") == "24" and percent_label("3 * 24%") is None
    assert degrees("180° - 50°", latex=False) == "180 - 50"
    assert parse_value("$\\sin 30^\\circ$"[1:-1], LIMITS, latex=True) == Fraction(1, 2)
    assert parse_value("cos 60°", LIMITS) == Fraction(1, 2)


def test_answers_use_the_same_formats() -> None:
    params = AnswerParams()
    assert check_answer(params, "#### 1 200", "1200")[0] == 1.0
    assert check_answer(params, "The answer is $1,200.", "1200")[0] == 1.0
    assert check_answer(params, "Answer: .5", "1/2")[0] == 1.0
    assert check_answer(params, "Answer: −7", "-7")[0] == 1.0
