"""Guarded sympy constructors shared by the plain-text and the LaTeX path.

Both parsers build (or rebuild) expressions only through these functions, so the caps in
:class:`~botgrpo_sympy.limits.Limits` hold whichever syntax the model used: a power is built only
when its exponent and the size of its exact value are bounded, a factorial only for small
integers, and nothing outside a fixed list of functions is ever constructed.
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy

from botgrpo_sympy.limits import LimitExceeded, Limits, Undefined, Unsupported


def symbol(name: str) -> sympy.Symbol:
    """A plain (complex) symbol; sympy caches symbols by name."""
    return sympy.Symbol(name)


def add(a: sympy.Basic, b: sympy.Basic) -> sympy.Basic:
    return sympy.Add(a, b)


def neg(a: sympy.Basic) -> sympy.Basic:
    return sympy.Mul(sympy.S.NegativeOne, a)


def mul(a: sympy.Basic, b: sympy.Basic) -> sympy.Basic:
    return sympy.Mul(a, b)


def div(a: sympy.Basic, b: sympy.Basic) -> sympy.Basic:
    if b.is_zero:
        raise Undefined("division by zero")
    return sympy.Mul(a, sympy.Pow(b, sympy.S.NegativeOne))


def _bits(value: sympy.Rational) -> int:
    return max(int(value.p).bit_length(), int(value.q).bit_length())


def power(base: sympy.Basic, exponent: sympy.Basic, limits: Limits) -> sympy.Basic:
    """``base ** exponent`` unless it is a power tower or too large an exact number."""
    if exponent.is_Rational:
        p, q = int(exponent.p), int(exponent.q)
        if abs(p) > limits.max_exponent or q > limits.max_exponent:
            raise LimitExceeded("exponent")
        if base.is_Rational:
            if _bits(base) * abs(p) > limits.max_bits:
                raise LimitExceeded("number size")
            if base.is_zero and p < 0:
                raise Undefined("0 to a negative power")
    elif exponent.is_number and exponent.has(sympy.oo, sympy.zoo, sympy.nan):
        raise Undefined("infinite exponent")
    # Symbolic or irrational exponents stay unevaluated by sympy (2**x, 2**sqrt(2)); substitution
    # evaluates them with the bounded evaluator in ``numeval``.
    return sympy.Pow(base, exponent)


def _integer_arg(value: sympy.Basic, name: str, cap: int) -> sympy.Integer | None:
    if value.is_Integer:
        if int(value) > cap:
            raise LimitExceeded(name)
        return value
    if value.is_number:
        raise Unsupported(f"{name} of a non-integer number")
    return None


def call(name: str, args: Sequence[sympy.Basic], limits: Limits) -> sympy.Basic:
    """Build one of the whitelisted functions (the names of ``plainmath.FUNCTIONS``)."""
    one = args[0]
    simple = {
        "sqrt": sympy.sqrt,
        "sin": sympy.sin,
        "cos": sympy.cos,
        "tan": sympy.tan,
        "cot": sympy.cot,
        "sec": sympy.sec,
        "csc": sympy.csc,
        "asin": sympy.asin,
        "arcsin": sympy.asin,
        "acos": sympy.acos,
        "arccos": sympy.acos,
        "atan": sympy.atan,
        "arctan": sympy.atan,
        "sinh": sympy.sinh,
        "cosh": sympy.cosh,
        "tanh": sympy.tanh,
        "exp": sympy.exp,
        "ln": sympy.log,
        "abs": sympy.Abs,
        "floor": sympy.floor,
        "ceil": sympy.ceiling,
    }
    if name in simple and len(args) == 1:
        if name == "exp" and one.is_Rational and abs(one) > limits.max_exponent:
            raise LimitExceeded("exponent")
        return simple[name](one)
    if name == "cbrt":
        return power(one, sympy.Rational(1, 3), limits)
    if name == "log":
        if len(args) == 2:
            if args[1].is_zero or args[1] == 1:
                raise Undefined("log base 0 or 1")
            return sympy.log(one, args[1])
        return sympy.log(one)
    if name == "factorial":
        if _integer_arg(one, "factorial", limits.max_factorial) is not None and one.is_negative:
            raise Undefined("factorial of a negative integer")
        return sympy.factorial(one)
    if name in ("gcd", "lcm"):
        a, b = args
        if not (a.is_Integer and b.is_Integer):
            raise Unsupported(f"{name} needs integer arguments")
        return sympy.Integer(sympy.igcd(a, b) if name == "gcd" else sympy.ilcm(a, b))
    if name == "binomial":
        _integer_arg(one, "binomial", limits.max_factorial)
        return sympy.binomial(one, args[1])
    raise Unsupported(f"function {name!r} is not supported")
