"""A bounded evaluator: the value of a sympy expression at given variable values.

sympy's own ``subs`` + ``evalf`` would compute ``x**(x**x)`` at ``x = 97`` exactly (a number with
~10^190 digits) and never return. This evaluator walks the tree itself: values stay exact
``Fraction`` s while every operation is rational and the power caps hold; anything else (an
irrational constant, a fractional power, a function) continues as an ``mpmath`` complex number at
fixed precision, whose size cannot explode. It also tracks the largest magnitude met, so equality
tolerances scale with the cancellation an expression does (``10^30 + sqrt(2) - 10^30``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction

import mpmath
import sympy

from botgrpo_sympy.limits import LimitExceeded, Limits, Undefined, Unsupported
from botgrpo_sympy.plainmath import check_power

Value = Fraction | mpmath.mpc

#: Working precision of the numeric (non-rational) path, in decimal digits.
DPS = 50

_MP_FUNCS = {
    sympy.sin: mpmath.sin,
    sympy.cos: mpmath.cos,
    sympy.tan: mpmath.tan,
    sympy.cot: mpmath.cot,
    sympy.sec: mpmath.sec,
    sympy.csc: mpmath.csc,
    sympy.asin: mpmath.asin,
    sympy.acos: mpmath.acos,
    sympy.atan: mpmath.atan,
    sympy.acot: mpmath.acot,
    sympy.sinh: mpmath.sinh,
    sympy.cosh: mpmath.cosh,
    sympy.tanh: mpmath.tanh,
    sympy.exp: mpmath.exp,
    sympy.gamma: mpmath.gamma,
}


def _num(v: Value) -> mpmath.mpc:
    if isinstance(v, Fraction):
        return mpmath.mpc(mpmath.mpf(v.numerator) / v.denominator)
    return v


def _finite(v: mpmath.mpc) -> mpmath.mpc:
    if not mpmath.isfinite(v.real) or not mpmath.isfinite(v.imag):
        raise Undefined("not a finite number")
    return v


class Evaluator:
    """Evaluate expressions at one assignment of values to their symbols."""

    def __init__(self, values: Mapping[sympy.Symbol, Value], limits: Limits) -> None:
        self.values = values
        self.limits = limits
        #: Largest magnitude of any intermediate value (for cancellation-aware tolerances).
        self.scale = mpmath.mpf(1)

    def __call__(self, expr: sympy.Basic) -> Value:
        with mpmath.workdps(DPS):
            return self._eval(expr)

    def _seen(self, v: Value) -> Value:
        if not isinstance(v, Fraction):
            v = _finite(v)
            mag = abs(v)
        else:
            # Bit lengths are cheap; converting a 40,000-bit Fraction to mpf is not needed for a bound.
            if v.numerator.bit_length() - v.denominator.bit_length() < 3000:
                mag = abs(mpmath.mpf(v.numerator) / v.denominator)
            else:
                mag = mpmath.mpf(2) ** (v.numerator.bit_length() - v.denominator.bit_length())
        if mag > self.scale:
            self.scale = mag
        return v

    def _eval(self, e: sympy.Basic) -> Value:
        if e.is_Rational:
            return Fraction(int(e.p), int(e.q))
        if e.is_Symbol:
            if e not in self.values:
                raise Unsupported(f"no value for {e}")
            return self.values[e]
        if e is sympy.pi:
            return mpmath.mpc(mpmath.pi)
        if e is sympy.E:
            return mpmath.mpc(mpmath.e)
        if e is sympy.I:
            return mpmath.mpc(0, 1)
        if e.is_Float:
            return mpmath.mpc(mpmath.mpf(e))
        if e in (sympy.oo, -sympy.oo, sympy.zoo, sympy.nan):
            raise Undefined("infinite")
        if e.is_Add:
            total: Value = Fraction(0)
            for arg in e.args:
                total = self._combine(total, self._eval(arg), "+")
            return self._seen(total)
        if e.is_Mul:
            prod: Value = Fraction(1)
            for arg in e.args:
                prod = self._combine(prod, self._eval(arg), "*")
            return self._seen(prod)
        if e.is_Pow:
            return self._seen(self._pow(self._eval(e.base), self._eval(e.exp)))
        return self._seen(self._func(e))

    @staticmethod
    def _combine(a: Value, b: Value, op: str) -> Value:
        if isinstance(a, Fraction) and isinstance(b, Fraction):
            return a + b if op == "+" else a * b
        a, b = _num(a), _num(b)
        return a + b if op == "+" else a * b

    def _pow(self, base: Value, exp: Value) -> Value:
        if isinstance(base, Fraction) and isinstance(exp, Fraction):
            if exp.denominator == 1:
                check_power(base, int(exp), self.limits)
                return base ** int(exp)
            root = _exact_root(base, exp, self.limits)
            if root is not None:
                return root
        b, x = _num(base), _num(exp)
        if b == 0:
            if x.real > 0:
                return Fraction(0)
            raise Undefined("0 to a non-positive power")
        return _finite(mpmath.power(b, x))

    def _func(self, e: sympy.Basic) -> Value:
        args = [self._eval(a) for a in e.args]
        func = e.func
        if func is sympy.Abs:
            a = args[0]
            return abs(a) if isinstance(a, Fraction) else mpmath.mpc(abs(a))
        if func in (sympy.floor, sympy.ceiling):
            a = args[0]
            if isinstance(a, Fraction):
                return Fraction(math.floor(a) if func is sympy.floor else math.ceil(a))
            r = _real(a)
            return Fraction(int(mpmath.floor(r) if func is sympy.floor else mpmath.ceil(r)))
        if func is sympy.factorial:
            a = args[0]
            if isinstance(a, Fraction) and a.denominator == 1:
                if a < 0:
                    raise Undefined("factorial of a negative integer")
                if a > self.limits.max_factorial:
                    raise LimitExceeded("factorial")
                return Fraction(math.factorial(int(a)))
            return _finite(mpmath.gamma(_num(a) + 1))
        if func is sympy.binomial:
            n, k = args
            if all(isinstance(v, Fraction) and v.denominator == 1 for v in (n, k)):
                if n > self.limits.max_factorial:
                    raise LimitExceeded("binomial")
                return Fraction(math.comb(int(n), int(k)) if n >= 0 and k >= 0 else 0)
            return _finite(mpmath.binomial(_num(n), _num(k)))
        if func is sympy.log:
            if len(args) == 2:
                return _finite(mpmath.log(_num(args[0])) / mpmath.log(_num(args[1])))
            if args[0] == 1:
                return Fraction(0)
            if _num(args[0]) == 0:
                raise Undefined("log of 0")
            return _finite(mpmath.log(_num(args[0])))
        if func in (sympy.Min, sympy.Max):
            reals = [_real(_num(a)) for a in args]
            pick = min if func is sympy.Min else max
            best = pick(range(len(args)), key=lambda i: reals[i])
            return args[best]
        if func is sympy.sign:
            r = _real(_num(args[0]))
            return Fraction((r > 0) - (r < 0))
        mp = _MP_FUNCS.get(func)
        if mp is None:
            raise Unsupported(f"cannot evaluate {func}")
        if args == [Fraction(0)] and func in (sympy.sin, sympy.tan, sympy.asin, sympy.atan, sympy.sinh):
            return Fraction(0)
        return _finite(mp(_num(args[0])))


def show_fraction(v: Fraction) -> str:
    """``str(v)`` for span meta, abbreviated for huge values (Python refuses int -> str past 4300 digits)."""
    if max(v.numerator.bit_length(), v.denominator.bit_length()) <= 1000:
        return str(v)
    with mpmath.workdps(12):
        return f"{mpmath.nstr(mpmath.mpf(v.numerator) / v.denominator, 12)} (exact value too long to show)"


def mpf_to_fraction(x: mpmath.mpf) -> Fraction:
    """The exact binary value of an mpf (``man_exp`` drops the sign, so read ``_mpf_``)."""
    sign, man, exp, _ = x._mpf_
    if not man and exp:  # inf / nan have special encodings
        raise Undefined("not a finite number")
    value = Fraction(int(man)) * Fraction(2) ** int(exp)
    return -value if sign else value


def _real(v: mpmath.mpc) -> mpmath.mpf:
    if abs(v.imag) > mpmath.mpf(10) ** (-(DPS - 10)) * max(1, abs(v)):
        raise Undefined("not a real number")
    return v.real


def _exact_root(base: Fraction, exp: Fraction, limits: Limits) -> Fraction | None:
    """``base ** (p/q)`` when it is rational (``4^(1/2) = 2``), else None."""
    if base < 0:
        return None  # principal branch is complex; leave it to mpmath
    p, q = exp.numerator, exp.denominator
    if q > 64:
        return None
    num = sympy.integer_nthroot(base.numerator, q)
    den = sympy.integer_nthroot(base.denominator, q)
    if not (num[1] and den[1]):
        return None
    root = Fraction(int(num[0]), int(den[0]))
    if root == 0 and p < 0:
        raise Undefined("0 to a negative power")
    check_power(root, p, limits)
    return root**p


def same(a: Value, b: Value, scale: mpmath.mpf | float = 1) -> bool:
    """Exact equality for two rationals, else agreement far below the working precision."""
    if isinstance(a, Fraction) and isinstance(b, Fraction):
        return a == b
    with mpmath.workdps(DPS):
        x, y = _num(a), _num(b)
        bound = max(mpmath.mpf(1), abs(x), abs(y), mpmath.mpf(scale))
        return abs(x - y) <= bound * mpmath.mpf(10) ** (-(DPS - 12))
