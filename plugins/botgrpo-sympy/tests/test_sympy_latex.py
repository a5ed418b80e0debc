"""The LaTeX path: values, the guarded number path (no eval), the command allowlist, the caps."""

from __future__ import annotations

from fractions import Fraction

import pytest
import sympy
from latex2sympy2_extended import latex2sympy
from sympy_test_helpers import no_eval

from botgrpo_sympy.latexmath import exact_number, parse_latex
from botgrpo_sympy.limits import LimitExceeded, Limits, Unsupported
from botgrpo_sympy.mathparse import parse_value

LIMITS = Limits()
x = sympy.Symbol("x")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("\\frac{1}{2} + \\frac{1}{3}", sympy.Rational(5, 6)),
        ("2\\sqrt{2}", 2 * sympy.sqrt(2)),
        ("\\sqrt{50}", 5 * sympy.sqrt(2)),
        ("\\sqrt[3]{27}", sympy.Integer(3)),
        ("\\dfrac{3}{4} \\cdot 8", sympy.Integer(6)),
        ("3 \\times 5 - 2", sympy.Integer(13)),
        ("\\log_2 8", sympy.Integer(3)),
        ("x^{2} + 2x + 1", (x + 1) ** 2),
        ("\\frac{x^2 - 1}{x - 1}", (x**2 - 1) / (x - 1)),
        ("1,000 + 0.5", sympy.Rational(2001, 2)),
        ("2\\frac{1}{2}", sympy.Rational(5, 2)),
        ("|{-5}|", sympy.Integer(5)),
        ("\\pi/2", sympy.pi / 2),
        ("5!", sympy.Integer(120)),
    ],
)
def test_latex_values(text: str, expected: sympy.Basic) -> None:
    with no_eval() as calls:
        value = parse_value(text, LIMITS, latex=True)
    got = sympy.Rational(value.numerator, value.denominator) if isinstance(value, Fraction) else value
    assert sympy.simplify(got - expected) == 0
    assert calls == []


def test_upstream_number_path_reaches_eval_and_the_guarded_one_does_not() -> None:
    """Why the converter is subclassed: latex2sympy2's own number parsing calls sympify -> eval."""
    with no_eval() as calls, pytest.raises(AssertionError, match="(eval|exec) was called"):
        latex2sympy("12 + 0.5")
    assert calls, "upstream is expected to call eval for number tokens (if this changes, re-audit)"
    with no_eval() as calls:
        assert parse_latex("12 + 0.5", LIMITS) == sympy.Rational(25, 2)
        assert parse_latex("1,234,567", LIMITS) == sympy.Integer(1234567)
        assert parse_latex("0.25 \\cdot 8", LIMITS) == sympy.Integer(2)
    assert calls == []


def test_exact_number_is_exact_and_capped() -> None:
    assert exact_number("0.1", LIMITS) == sympy.Rational(1, 10)
    assert exact_number("2.5e-2", LIMITS) == sympy.Rational(1, 40)
    with pytest.raises(LimitExceeded):
        exact_number("1e99999", LIMITS)
    with pytest.raises(LimitExceeded):
        exact_number("9" * 100, LIMITS)
    with pytest.raises(Unsupported):
        exact_number("__import__", LIMITS)


@pytest.mark.parametrize(
    "text",
    [
        "\\operatorname{__import__}(x)",
        "\\operatorname{eval}('1')",
        "\\input{/etc/passwd}",
        "\\def\\x{1}",
        "\\int_0^1 x dx",
        "\\sum_{i=1}^{n} i",
        "\\lim_{x \\to 0} x",
        "\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}",
        "\\binom{1000000}{500000}",
        "\\mathcal{E}",
    ],
)
def test_commands_outside_the_allowlist_are_refused(text: str) -> None:
    with no_eval() as calls, pytest.raises(Unsupported):
        parse_latex(text, LIMITS)
    assert calls == []


def test_undefined_functions_from_the_grammar_are_refused() -> None:
    # The grammar turns unknown letters + parentheses into an undefined function f(x); the
    # rebuild whitelist refuses it, so no "function named __import__" object ever leaves the parser.
    with pytest.raises(Unsupported):
        parse_latex("\\mathrm{f}(x) + g(x, y)", LIMITS)


@pytest.mark.parametrize(
    ("text", "cap"),
    [
        ("9^{9^{9}}", "exponent"),
        ("2^{10^{10}}", "exponent"),
        ("(x+1)^{100000}", "exponent"),
        ("1000000!", "factorial"),
        ("{" * 100 + "1" + "}" * 100, "nesting depth"),
        ("\\frac{1}{2}" * 100, "length"),
    ],
)
def test_latex_caps(text: str, cap: str) -> None:
    with pytest.raises(LimitExceeded, match=cap):
        parse_latex(text, LIMITS)
