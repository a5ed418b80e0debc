"""The plain-text parser: exact values against an independent Fraction evaluation, and refusals."""

from __future__ import annotations

from fractions import Fraction

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st
from sympy_test_helpers import no_eval

from botgrpo_sympy.limits import LimitExceeded, Limits, Undefined, Unsupported
from botgrpo_sympy.mathparse import parse_value
from botgrpo_sympy.plainmath import fraction_value, parse_plain, to_source

LIMITS = Limits()


# A random arithmetic tree, rendered as text in several styles and evaluated independently.
def _trees(depth: int = 3) -> st.SearchStrategy:
    leaf = st.integers(min_value=0, max_value=99).map(lambda n: ("num", n))
    return st.recursive(
        leaf,
        lambda inner: st.one_of(
            st.tuples(st.sampled_from(["+", "-", "*", "/"]), inner, inner),
            st.tuples(st.just("neg"), inner),
            st.tuples(st.just("pow"), inner, st.integers(min_value=0, max_value=3)),
        ),
        max_leaves=8,
    )


def _render(tree: tuple, style: int) -> str:
    kind = tree[0]
    if kind == "num":
        return str(tree[1])
    if kind == "neg":
        return f"-({_render(tree[1], style)})"
    if kind == "pow":
        return f"({_render(tree[1], style)})^{tree[2]}"
    op = {"*": ["*", "×", "·"][style % 3], "/": ["/", "÷", "/"][style % 3]}.get(kind, kind)
    left, right = _render(tree[1], style), _render(tree[2], style)
    if kind == "*" and style == 1:
        return f"({left})({right})"  # implicit multiplication of two groups
    space = " " if style == 2 else ""
    return f"({left}){space}{op}{space}({right})"


def _value(tree: tuple) -> Fraction:
    kind = tree[0]
    if kind == "num":
        return Fraction(tree[1])
    if kind == "neg":
        return -_value(tree[1])
    if kind == "pow":
        return _value(tree[1]) ** tree[2]
    a, b = _value(tree[1]), _value(tree[2])
    if kind == "/":
        if b == 0:
            raise ZeroDivisionError
        return a / b
    return {"+": a + b, "-": a - b, "*": a * b}[kind]


@settings(max_examples=100, deadline=None)
@given(tree=_trees(), style=st.integers(min_value=0, max_value=2))
def test_exact_value_matches_independent_fraction_evaluation(tree: tuple, style: int) -> None:
    text = _render(tree, style)
    try:
        expected = _value(tree)
    except ZeroDivisionError:
        with pytest.raises(Undefined):
            fraction_value(parse_plain(text, LIMITS), LIMITS)
        return
    except OverflowError:  # pragma: no cover - powers are at most 3
        return
    try:
        with no_eval():
            got = fraction_value(parse_plain(text, LIMITS), LIMITS)
    except LimitExceeded:
        return  # a deep random tree can exceed the bracket-depth cap: refusing is allowed
    assert got == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("3x", 3 * sympy.Symbol("x")),
        ("2(x+1)", 2 * sympy.Symbol("x") + 2),
        ("x^2", sympy.Symbol("x") ** 2),
        ("2^3^2", sympy.Integer(512)),  # right-associative, like the usual convention
        ("-2^2", sympy.Integer(-4)),
        ("(x+1)(x-1)", (sympy.Symbol("x") + 1) * (sympy.Symbol("x") - 1)),
        ("x y", sympy.Symbol("x") * sympy.Symbol("y")),
        ("5!", sympy.Integer(120)),
        ("(2+1)!", sympy.Integer(6)),
        ("sqrt(8)", 2 * sympy.sqrt(2)),
        ("0.1 + 0.2", sympy.Rational(3, 10)),
        ("1,000 + 2,500", sympy.Integer(3500)),
        ("−5 × 3 ÷ 5", sympy.Integer(-3)),
        ("2pi", 2 * sympy.pi),
        ("⌊7/2⌋", sympy.Integer(3)),
        ("0.2 x 50", sympy.Integer(10)),
        ("LCM(4, 6)", sympy.Integer(12)),
    ],
)
def test_plain_syntax_builds_the_expected_value(text: str, expected: sympy.Basic) -> None:
    with no_eval():
        value = parse_value(text, LIMITS)
    got = sympy.Rational(value.numerator, value.denominator) if isinstance(value, Fraction) else value
    assert sympy.simplify(got - expected) == 0


@pytest.mark.parametrize(
    "text",
    [
        "__import__('os')",
        "().__class__",
        "x.real",
        "lambda: 1",
        "'abc'",
        "a[0]",
        "{1: 2}",
        "x if y else z",
        "not x",
        "sin(x, y=1)",
        "1 == 1",
        "import os",
        "x; y",
        "x := 1",
        "2 3",
        "x2",
        "1e5",
        "x @ y",
        "x // y",
        "(1,2)",
        "print",
        "\\u005f\\u005fimport\\u005f\\u005f",
    ],
)
def test_anything_outside_the_whitelist_is_refused(text: str) -> None:
    with no_eval() as calls, pytest.raises(Unsupported):
        parse_plain(text, LIMITS)
    assert calls == []


def test_the_source_handed_to_ast_is_over_a_tiny_alphabet() -> None:
    source = to_source("3x^2 + 2(x+1)! - sqrt(4)y", LIMITS)
    assert set(source) <= set("0123456789.+-*/(), xyabcdefghijklmnopqrstuvwz") | set("sqrtfacil")
    assert source == "3 * x ** 2 + 2 * factorial ( ( x + 1 ) ) - sqrt ( 4 ) * y"


@pytest.mark.parametrize(
    ("text", "cap"),
    [
        ("9^9^9", "exponent"),
        ("2^(10^(10^10))", "exponent"),
        ("(x+1)^100000", "exponent"),
        ("1000000!", "factorial"),
        ("factorial(10^7)", "factorial"),
        ("(" * 1000 + "1" + ")" * 1000, "length"),
        ("(" * 60 + "1" + ")" * 60, "nesting depth"),
        ("1" * 100, "digits"),
        ("+".join(["x"] * 190), "node count"),
        ("9" * 50 + "^300", "number size"),
    ],
)
def test_caps_refuse_bombs_before_any_work(text: str, cap: str) -> None:
    with pytest.raises(LimitExceeded, match=cap):
        parse_value(text, LIMITS)


def test_division_by_zero_is_undefined_not_an_error() -> None:
    with pytest.raises(Undefined):
        parse_value("1/(2-2)", LIMITS)
