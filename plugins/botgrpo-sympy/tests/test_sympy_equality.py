"""Equality by random substitution and implication between equations, against sympy references."""

from __future__ import annotations

import random
from fractions import Fraction

import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from botgrpo_sympy.equality import Verdict, equal, implied, solutions
from botgrpo_sympy.limits import Limits

LIMITS = Limits()
x, y = sympy.symbols("x y")


def _poly(coeffs: list[int], var: sympy.Symbol) -> sympy.Expr:
    return sum(c * var**k for k, c in enumerate(coeffs))


@settings(max_examples=40, deadline=None)
@given(
    a=st.lists(st.integers(-9, 9), min_size=1, max_size=4),
    b=st.lists(st.integers(-9, 9), min_size=1, max_size=4),
    seed=st.integers(0, 10**6),
)
def test_factored_vs_expanded_agrees_with_sympy_expand(a: list[int], b: list[int], seed: int) -> None:
    product = sympy.Mul(_poly(a, x), _poly(b, x), evaluate=False)
    expanded = sympy.expand(_poly(a, x) * _poly(b, x))
    assert equal(product, expanded, LIMITS, random.Random(seed)).verdict is Verdict.TRUE
    wrong = expanded + x ** (len(a) + len(b))  # differs in a coefficient sympy can see
    truth = sympy.expand(product - wrong) == 0
    got = equal(product, wrong, LIMITS, random.Random(seed)).verdict
    assert got is (Verdict.TRUE if truth else Verdict.FALSE)


def test_known_identities_and_non_identities() -> None:
    rng = random.Random(0)
    true = [
        (sympy.sin(x) ** 2 + sympy.cos(x) ** 2, sympy.Integer(1)),
        ((x**2 - 1) / (x - 1), x + 1),
        (sympy.sqrt(8), 2 * sympy.sqrt(2)),
        (sympy.exp(x) * sympy.exp(y), sympy.exp(x + y)),
        (sympy.log(8, 2), sympy.Integer(3)),
        # cancellation: tolerances scale with the largest intermediate value
        (sympy.Integer(10) ** 30 + sympy.sqrt(2) - sympy.Integer(10) ** 30, sympy.sqrt(2)),
    ]
    for a, b in true:
        assert equal(a, b, LIMITS, rng).verdict is Verdict.TRUE, (a, b)
    false = [
        ((x + 1) ** 2, x**2 + 1),
        (sympy.sqrt(x**2), x),  # false for negative x
        (sympy.pi, sympy.Rational(22, 7)),
        (sympy.sqrt(2), sympy.Rational(1414, 1000)),
    ]
    for a, b in false:
        assert equal(a, b, LIMITS, rng).verdict is Verdict.FALSE, (a, b)


def test_fractions_take_the_fast_path() -> None:
    assert equal(Fraction(22), Fraction(44, 2), LIMITS, random.Random(0)).reason == "arithmetic"
    assert equal(Fraction(22), Fraction(23), LIMITS, random.Random(0)).verdict is Verdict.FALSE


@settings(max_examples=40, deadline=None)
@given(a=st.integers(1, 12), root=st.integers(-20, 20), b=st.integers(-30, 30), other=st.integers(-20, 20))
def test_linear_equation_implications(a: int, root: int, b: int, other: int) -> None:
    """a x + b = c implies x = root (c computed with ints), and refutes x = other != root."""
    c = a * root + b
    premise = a * x + b - c
    rng = random.Random(a * 1000 + root)
    assert implied([[premise]], x - root, LIMITS, rng).verdict is Verdict.TRUE
    if other != root:
        assert implied([[premise]], x - other, LIMITS, rng).verdict is Verdict.FALSE


def test_quadratic_branches_and_systems() -> None:
    rng = random.Random(1)
    premise = x**2 - 5 * x + 6
    branch = implied([[premise]], x - 2, LIMITS, rng)
    assert branch.verdict is Verdict.UNKNOWN and branch.branch and branch.total == 2
    assert implied([[premise]], (x - 2) * (x - 3), LIMITS, rng).verdict is Verdict.TRUE
    assert implied([[premise]], x - 4, LIMITS, rng).verdict is Verdict.FALSE
    system = [x + y - 10, x - y - 2]
    assert solutions(system, LIMITS) == [{x: Fraction(6), y: Fraction(4)}]
    assert implied([system], 2 * x - 12, LIMITS, rng).verdict is Verdict.TRUE
    assert implied([system], y - 5, LIMITS, rng).verdict is Verdict.FALSE
    # irrational roots are found numerically and still decide the claim
    irrational = x**2 - 4 * x + 1
    both = implied([[irrational]], (x - 2) ** 2 - 3, LIMITS, rng)
    assert both.verdict is Verdict.TRUE
    assert implied([[irrational]], x - 2 - sympy.sqrt(5), LIMITS, rng).verdict is Verdict.FALSE
