"""Is ``a = b``? Does equation ``g`` follow from equations ``F``? Bounded answers to both.

Equality is decided by random substitution first: each variable gets a random small rational, both
sides are evaluated with the bounded evaluator (exact for rational arithmetic), and one point where
they differ refutes the claim while agreement at several points verifies it (for polynomials of
degree d the chance of a false "equal" at one point is at most d / (number of distinct sample
values), ~1/1000 here, and several independent points multiply it). Only when no point can be
evaluated (division by zero everywhere, say) does a size-capped symbolic ``simplify`` run.

Implication (``3x + 2 = 11 => x = 3``) is verified when ``g`` is a constant multiple of one earlier
equation (equivalent), or when the solutions of the earlier equations (real roots of one polynomial
equation, or the unique solution of a linear system) all satisfy ``g``; it is refuted when none do.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from fractions import Fraction
from typing import Any

import mpmath
import sympy

from botgrpo_sympy.limits import LimitExceeded, Limits, Undefined, Unsupported
from botgrpo_sympy.numeval import Evaluator, Value, mpf_to_fraction, same, show_fraction


class Verdict(Enum):
    TRUE = 1
    FALSE = -1
    UNKNOWN = 0


@dataclass(frozen=True)
class Outcome:
    verdict: Verdict
    reason: str
    #: The claim picks some solutions of the previous equations but not all (``x^2 = 4 => x = 2``).
    branch: bool = False
    #: For a branch: which of the ``total`` solutions it holds on (``x = 2 or x = -2`` covers both).
    covered: frozenset[int] = frozenset()
    total: int = 0
    #: For a refutation by earlier equations: the solutions it was refuted at.
    solutions: tuple[Mapping[sympy.Symbol, Value], ...] = ()


#: Numerators and denominators of random sample values (about 1,500 distinct rationals).
_NUMERATORS = [n for n in range(-97, 98) if n != 0]
_DENOMINATORS = [1, 1, 1, 2, 3, 5, 7, 11, 13]
#: Largest polynomial degree the implication solver works with.
MAX_SOLVE_DEGREE = 8
#: Largest expression (sympy count_ops) the symbolic fallback is allowed to simplify.
MAX_SIMPLIFY_OPS = 60
#: Most terms an expansion may produce before ``Poly``/``expand``/``simplify`` is refused: these
#: expand powers of sums, and ``(a+b+c+d+f+g)^400`` has ~10^11 terms though it is short to write.
MAX_EXPANDED_TERMS = 2000


def expanded_terms(expr: Any, cap: int = MAX_EXPANDED_TERMS) -> int:
    """An upper bound on the number of terms of ``expand(expr)``, saturating just above ``cap``."""
    if not isinstance(expr, sympy.Basic) or not expr.args:
        return 1
    if expr.is_Add:
        return min(cap + 1, sum(expanded_terms(a, cap) for a in expr.args))
    if expr.is_Mul:
        total = 1
        for a in expr.args:
            total = min(cap + 1, total * expanded_terms(a, cap))
        return total
    if expr.is_Pow and expr.exp.is_Integer:
        n, k = expanded_terms(expr.base, cap), abs(int(expr.exp))
        if n == 1:
            return 1
        if k > cap:
            return cap + 1
        return min(cap + 1, math.comb(n + k - 1, k))  # monomials of degree k in n terms
    return max([expanded_terms(a, cap) for a in expr.args] + [1])


def expandable(*exprs: Any) -> bool:
    """Can ``exprs`` be expanded (``Poly``, ``expand``, ``simplify``) within the term cap?"""
    return all(expanded_terms(e) <= MAX_EXPANDED_TERMS for e in exprs)


def same_degree_polynomials(f: Any, g: Any) -> bool:
    """Are ``f = 0`` and ``g = 0`` polynomial equations in one and the same variable, of one degree >= 2?

    Two such equations written one after the other restate each other (``x^2 + x - 6 = 0``, that is
    ``(x + 3)(x - 2) = 0``): with another root set the restatement is wrong, even where a root is shared.
    """
    variables = free_symbols(f, g)
    if len(variables) != 1 or not expandable(f, g):
        return False
    (x,) = variables
    try:
        pf, pg = sympy.Poly(f, x), sympy.Poly(g, x)
    except (sympy.PolynomialError, sympy.GeneratorsNeeded, ValueError, TypeError):
        return False
    return pf.degree() == pg.degree() >= 2


def free_symbols(*exprs: Any) -> set[sympy.Symbol]:
    out: set[sympy.Symbol] = set()
    for e in exprs:
        if isinstance(e, sympy.Basic):
            out |= e.free_symbols
    return out


def random_point(symbols: Sequence[sympy.Symbol], rng: random.Random) -> dict[sympy.Symbol, Value]:
    return {s: Fraction(rng.choice(_NUMERATORS), rng.choice(_DENOMINATORS)) for s in symbols}


def _value(expr: Any, ev: Evaluator) -> Value:
    return expr if isinstance(expr, Fraction) else ev(expr)


def _fmt(point: Mapping[sympy.Symbol, Value]) -> str:
    return ", ".join(f"{s}={v}" for s, v in sorted(point.items(), key=lambda kv: str(kv[0])))


def equal(
    a: Any,
    b: Any,
    limits: Limits,
    rng: random.Random,
    *,
    fixed: Mapping[sympy.Symbol, Value] | None = None,
    points: int = 4,
) -> Outcome:
    """Decide ``a == b`` (Fractions or sympy expressions) for all values of the free variables.

    ``fixed`` gives some variables a known value (carried from earlier steps); the others vary.
    """
    if isinstance(a, Fraction) and isinstance(b, Fraction):  # the fast path: plain arithmetic
        if a == b:
            return Outcome(Verdict.TRUE, "arithmetic")
        return Outcome(Verdict.FALSE, f"{show_fraction(a)} != {show_fraction(b)}")
    fixed = dict(fixed or {})
    variables = sorted(free_symbols(a, b) - set(fixed), key=str)
    if len(variables) > limits.max_symbols:
        return Outcome(Verdict.UNKNOWN, "too many variables")
    tries = points if variables else 1
    agreed = 0
    for _ in range(3 * tries):
        point = {**fixed, **random_point(variables, rng)}
        ev = Evaluator(point, limits)
        try:
            va, vb = _value(a, ev), _value(b, ev)
        except Undefined:
            continue
        except (Unsupported, LimitExceeded) as exc:
            return Outcome(Verdict.UNKNOWN, str(exc))
        if not same(va, vb, ev.scale):
            shown = _fmt({s: point[s] for s in variables}) if variables else ""
            return Outcome(Verdict.FALSE, f"sides differ{' at ' + shown if shown else ''}")
        agreed += 1
        if agreed >= tries:
            return Outcome(Verdict.TRUE, "identity" if variables else "arithmetic")
    return _symbolic_equal(a, b)


def _symbolic_equal(a: Any, b: Any) -> Outcome:
    """The bounded symbolic fallback, for claims no random point could evaluate."""
    a = sympy.Rational(a.numerator, a.denominator) if isinstance(a, Fraction) else a
    b = sympy.Rational(b.numerator, b.denominator) if isinstance(b, Fraction) else b
    diff = a - b
    if sympy.count_ops(diff) > MAX_SIMPLIFY_OPS or not expandable(diff):
        return Outcome(Verdict.UNKNOWN, "no evaluable point and too large to simplify")
    if sympy.simplify(diff) == 0:
        return Outcome(Verdict.TRUE, "symbolic")
    return Outcome(Verdict.UNKNOWN, "undefined at every sample point")


def _to_sympy(x: Any) -> Any:
    return sympy.Rational(x.numerator, x.denominator) if isinstance(x, Fraction) else x


def proportional(f: Any, g: Any, limits: Limits, rng: random.Random, points: int = 4) -> bool:
    """``g == c * f`` for one constant ``c != 0`` (so ``g = 0`` is equivalent to ``f = 0``)?"""
    variables = sorted(free_symbols(f, g), key=str)
    if not variables or len(variables) > limits.max_symbols:
        return False
    ratio: Value | None = None
    agreed = 0
    for _ in range(3 * points):
        ev = Evaluator(random_point(variables, rng), limits)
        try:
            vf, vg = _value(f, ev), _value(g, ev)
        except (Undefined, Unsupported, LimitExceeded):
            continue
        if same(vf, 0, ev.scale):
            if not same(vg, 0, ev.scale):
                return False
            continue
        r = vg / vf if isinstance(vf, Fraction) and isinstance(vg, Fraction) else _num_div(vg, vf)
        if ratio is None:
            if same(r, 0, ev.scale):
                return False
            ratio = r
        elif not same(r, ratio, ev.scale):
            return False
        agreed += 1
        if agreed >= points:
            return True
    return False


def _num_div(a: Value, b: Value) -> mpmath.mpc:
    from botgrpo_sympy.numeval import _num

    with mpmath.workdps(60):
        return _num(a) / _num(b)


def constant_difference(a: Any, b: Any, limits: Limits, rng: random.Random, points: int = 3) -> Value | None:
    """``a - b`` when it is one nonzero constant at every point (``2(x + 3)`` vs ``2x + 5``: 1), else None.

    Such an equation holds for no value of its variables. Checked at ``points`` random points (exact where
    rational); a point where either side is undefined or the difference changes gives None.
    """
    variables = sorted(free_symbols(a, b), key=str)
    if not variables or len(variables) > limits.max_symbols:
        return None
    found: Value | None = None
    for _ in range(points):
        ev = Evaluator(random_point(variables, rng), limits)
        try:
            diff = _value(a, ev) - _value(b, ev)
        except (Undefined, Unsupported, LimitExceeded):
            return None
        if not isinstance(diff, Fraction) or diff == 0 or (found is not None and diff != found):
            return None
        found = diff
    return found


def _pin_linear(exprs: list[Any]) -> tuple[dict[sympy.Symbol, Fraction], list[Any]] | None:
    """Values fixed by equations linear in one variable (``x - 2``), substituted into the rest.

    ``(pinned, rest)``; None when a substitution leaves a nonzero constant (no solution).
    """
    pinned: dict[sympy.Symbol, Fraction] = {}
    rest = list(exprs)
    changed = True
    while changed:
        changed = False
        for f in rest:
            fs = free_symbols(f)
            if len(fs) != 1:
                continue
            (x,) = fs
            poly = sympy.Poly(sympy.expand(f), x)
            if poly.degree() != 1 or not all(c.is_Rational for c in poly.all_coeffs()):
                continue
            c1, c0 = poly.all_coeffs()
            value = -c0 / c1
            pinned[x] = Fraction(int(value.p), int(value.q))
            others = [sympy.expand(g.subs(x, value)) for g in rest if g is not f]
            if any(g.is_number and g != 0 for g in others):
                return None
            rest, changed = [g for g in others if not g.is_number], True
            break
    return pinned, rest


def solutions(system: Sequence[Any], limits: Limits) -> list[dict[sympy.Symbol, Value]] | None:
    """Real solutions of ``f = 0`` for every ``f`` in ``system``, when cheaply computable.

    One polynomial equation in one variable (degree <= 8): its real roots, numerically. A linear
    system with a unique solution: that solution, exactly. A system where equations linear in one
    variable fix it (``x = 2``): those values substituted into the rest, then one of the above.
    Anything else: None (unknown).
    """
    exprs = [_to_sympy(f) for f in system]
    variables = sorted(free_symbols(*exprs), key=str)
    if not variables or len(variables) > limits.max_symbols or not expandable(*exprs):
        return None
    if len(variables) > 1 and len(exprs) > 1 and not _all_linear(exprs, variables):
        try:
            reduced = _pin_linear(exprs)
        except (sympy.PolynomialError, sympy.GeneratorsNeeded, ValueError, TypeError, NotImplementedError):
            return None
        if reduced is None:
            return []
        pinned, rest = reduced
        if pinned:
            if not rest:
                return [dict(pinned)]
            found = solutions(rest, limits)
            return None if found is None else [{**pinned, **sol} for sol in found]
    try:
        if len(variables) == 1:
            x = variables[0]
            polys = []
            for f in exprs:
                num = sympy.numer(sympy.together(f))
                poly = sympy.Poly(num, x)
                if not poly.is_univariate or poly.degree() > MAX_SOLVE_DEGREE or poly.degree() < 1:
                    return None
                if not all(c.is_Rational for c in poly.all_coeffs()):
                    return None
                polys.append(poly)
            roots = _real_roots(polys[-1])
            if roots is None:
                return None
            ok = []
            for r in roots:
                if all(_near_zero(p, r) for p in polys):
                    ok.append({x: r})
            return ok
        # A linear system: every equation of degree <= 1 in all variables.
        for f in exprs:
            poly = sympy.Poly(sympy.expand(f), *variables)
            if poly.total_degree() > 1 or not all(c.is_Rational for c in poly.coeffs()):
                return None
        solved = sympy.linsolve(exprs, *variables)
        if not isinstance(solved, sympy.FiniteSet) or len(solved) != 1:
            return [] if solved == sympy.S.EmptySet else None
        (tup,) = tuple(solved)
        if not all(v.is_Rational for v in tup):
            return None  # underdetermined: parametric solution
        return [{s: Fraction(int(v.p), int(v.q)) for s, v in zip(variables, tup, strict=True)}]
    except (sympy.PolynomialError, sympy.GeneratorsNeeded, ValueError, TypeError, NotImplementedError):
        return None


def _all_linear(exprs: Sequence[Any], variables: Sequence[sympy.Symbol]) -> bool:
    try:
        return all(sympy.Poly(sympy.expand(f), *variables).total_degree() <= 1 for f in exprs)
    except (sympy.PolynomialError, sympy.GeneratorsNeeded):
        return False


def _real_roots(poly: sympy.Poly) -> list[Value] | None:
    """Real roots, exact when rational, else 60-digit numbers; None if the root finder fails."""
    with mpmath.workdps(60):
        coeffs = [mpmath.mpf(int(c.p)) / int(c.q) for c in poly.all_coeffs()]
        try:
            found = mpmath.polyroots(coeffs, maxsteps=300, extraprec=120)
        except mpmath.libmp.NoConvergence:
            return None
        out: list[Value] = []
        for r in found:
            r = mpmath.mpc(r)
            if abs(r.imag) > mpmath.mpf(10) ** -25 * max(1, abs(r)):
                continue
            guess = mpf_to_fraction(r.real).limit_denominator(10**6)
            if poly.eval(sympy.Rational(guess.numerator, guess.denominator)) == 0:
                root: Value = guess
            else:
                root = mpmath.mpc(r.real)
            if not any(same(root, seen) for seen in out):  # a double root is found twice
                out.append(root)
        return out


def _near_zero(poly: sympy.Poly, root: Value) -> bool:
    if isinstance(root, Fraction):
        return poly.eval(sympy.Rational(root.numerator, root.denominator)) == 0
    with mpmath.workdps(60):
        coeffs = [mpmath.mpf(int(c.p)) / int(c.q) for c in poly.all_coeffs()]
        value = mpmath.polyval(coeffs, root)
        scale = max([mpmath.mpf(1)] + [abs(c) for c in coeffs]) * max(1, abs(root)) ** poly.degree()
        return abs(value) <= scale * mpmath.mpf(10) ** -35


def implied(systems: Sequence[Sequence[Any]], g: Any, limits: Limits, rng: random.Random) -> Outcome:
    """Does ``g = 0`` follow from the equations of one of ``systems`` (each a list of ``f = 0``)?

    TRUE as soon as one system implies it; FALSE if some system was solved and no solution
    satisfies ``g``; UNKNOWN otherwise (including "holds on some solutions but not all", e.g.
    ``x^2 = 4 => x = 2``, a branch choice rather than an error).
    """
    refuted: str | None = None
    refuted_at: tuple[Mapping[sympy.Symbol, Value], ...] = ()
    partial: Outcome | None = None
    for system in systems:
        if not system:
            continue
        if len(system) == 1 and proportional(system[0], g, limits, rng):
            return Outcome(Verdict.TRUE, "equivalent to the previous equation")
        sols = solutions(system, limits)
        if not sols:
            continue
        holds = []
        for sol in sols:
            ev = Evaluator(sol, limits)
            try:
                extra = free_symbols(g) - set(sol)
                if extra:
                    holds.append(None)
                    continue
                holds.append(same(_value(g, ev), 0, ev.scale))
            except (Undefined, Unsupported, LimitExceeded):
                holds.append(None)
        if holds and all(h is True for h in holds):
            return Outcome(Verdict.TRUE, "implied by the previous equations")
        if holds and all(h is False for h in holds):
            shown = "; ".join(_fmt(s) for s in sols[:3])
            if refuted is None:
                refuted, refuted_at = f"does not hold at the solution {shown}", tuple(sols)
        elif any(h is True for h in holds) and partial is None:
            covered = frozenset(i for i, h in enumerate(holds) if h is True)
            partial = Outcome(
                Verdict.UNKNOWN,
                "holds on some solutions only",
                branch=True,
                covered=covered,
                total=len(holds),
            )
    if refuted and partial is None:
        return Outcome(Verdict.FALSE, refuted, solutions=refuted_at)
    if partial is not None:
        return partial
    return Outcome(Verdict.UNKNOWN, "cannot relate to the previous equations")
