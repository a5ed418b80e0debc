"""LaTeX math parsed with latex2sympy2_extended (an ANTLR grammar), guarded, then rebuilt under caps.

What was checked in latex2sympy2_extended 1.11 (``latex2sympy2.py``): the converter walks the ANTLR
parse tree and calls sympy constructors; it never calls ``eval``/``exec`` itself. Two paths reach
``sympify`` (and so ``parse_expr`` and ``eval``) on input text, both on number tokens:
``_Latex2Sympy.parse_number`` (``sympy.Number(text)``) and the module function ``convert_number``
used for ``1,000``-style numbers. The grammar lets only digits, commas and dots into those tokens,
but the rule is "no eval on model text", so both are replaced here: :class:`_GuardedConverter`
overrides ``parse_number`` with an exact, capped parser, and comma-grouped numbers are handled
before the converter sees them. (``parse_expr`` also runs on ``variable_values``, never passed here.)

On top of that:
- only an allowlist of LaTeX commands is accepted (no ``\\operatorname``, matrices, integrals,
  sums, limits: they either evaluate eagerly inside the converter or are not claims we check);
- length and brace depth are capped before the grammar runs (the ANTLR runtime recurses);
- the converter's result is rebuilt node by node through :mod:`botgrpo_sympy.build`, so the same
  caps hold as for plain text (``2^{10^{10}}`` is refused, not computed), and any class outside a
  whitelist (undefined functions such as ``__import__(x)``, integrals, matrices) is refused.
"""

from __future__ import annotations

import functools
import re
from fractions import Fraction
from typing import Any

import sympy
from latex2sympy2_extended.latex2sympy2 import ConversionConfig, _Latex2Sympy
from latex2sympy2_extended.math_normalization import NormalizationConfig, normalize_latex

from botgrpo_sympy import build
from botgrpo_sympy.limits import LimitExceeded, Limits, Undefined, Unsupported
from botgrpo_sympy.numberformat import COMMA_NUMBER

#: LaTeX commands accepted (without the backslash). Everything else makes the text not checkable.
ALLOWED_COMMANDS = frozenset(
    [
        "frac",
        "dfrac",
        "tfrac",
        "cfrac",
        "sqrt",
        "cdot",
        "times",
        "div",
        "pi",
        "infty",
        "infinity",
        "left",
        "right",
        "sin",
        "cos",
        "tan",
        "cot",
        "sec",
        "csc",
        "arcsin",
        "arccos",
        "arctan",
        "sinh",
        "cosh",
        "tanh",
        "log",
        "ln",
        "exp",
        "le",
        "leq",
        "ge",
        "geq",
        "lt",
        "gt",
        "ne",
        "neq",
        "text",
        "textbf",
        "mathrm",
        "mathbf",
        "boxed",
        "quad",
        "qquad",
        "cup",
        "emptyset",
        "varnothing",
        "circ",
        "binom",
        "gcd",
        "lcm",
        "lfloor",
        "rfloor",
        "lceil",
        "rceil",
        "vert",
        "lvert",
        "rvert",
        "mid",
        "displaystyle",
        "alpha",
        "beta",
        "gamma",
        "delta",
        "epsilon",
        "varepsilon",
        "theta",
        "vartheta",
        "lambda",
        "mu",
        "nu",
        "xi",
        "rho",
        "sigma",
        "tau",
        "phi",
        "varphi",
        "chi",
        "psi",
        "omega",
        "Delta",
        "Omega",
        "dots",
        "ldots",
        "cdots",
        "max",
        "min",
    ]
)
_COMMAND = re.compile(r"\\([A-Za-z]+)")
_SPACING = re.compile(r"\\[,;:! ]|~")
#: ``2(5)``: a number right before a parenthesis is a product. The grammar reads it as ``2 + 5`` inside braces
#: (``\\sqrt{11 - 2(5)}`` was ``\\sqrt{4}``), so the product is written out first.
#: (Not after ``^`` / ``_``: ``\\sin^2 \\left(...\\right)`` is a power of a function.)
_NUMBER_BEFORE_PAREN = re.compile(r"(?<![\w.\\^_])(\d+(?:\.\d+)?)\s*(?=(?:\\left\s*)?\()")
_NUMBER = re.compile(r"^(\d*)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$")
_BINOM = re.compile(r"\\binom\s*\{\s*(\d{1,3})\s*\}\s*\{\s*(\d{1,3})\s*\}")

#: ``units=False``: upstream's unit removal deletes single letters that are variables in math text
#: (``2h + s`` -> ``2``, ``a_1 + 9d`` -> ``a_1 + 9``); units are the checker's business (``claimtext``).
_NORMALIZATION = NormalizationConfig(
    basic_latex=True, units=False, malformed_operators=True, nits=True, boxed="all", equations=False
)
_CONVERSION = ConversionConfig(lowercase_symbols=False)


def exact_number(text: str, limits: Limits) -> sympy.Rational:
    """``123``, ``0.25``, ``1.5e3`` -> an exact Rational, within the digit and exponent caps."""
    text = text.replace(",", "").replace(" ", "")
    m = _NUMBER.match(text)
    if m is None or not (m.group(1) or m.group(2)):
        raise Unsupported(f"not a number: {text[:40]!r}")
    whole, frac, exp = m.group(1) or "0", m.group(2) or "", m.group(3)
    if len(whole) + len(frac) > limits.max_digits:
        raise LimitExceeded("digits")
    value = Fraction(int(whole + frac), 10 ** len(frac))
    if exp is not None:
        if len(exp) > 6 or abs(int(exp)) > limits.max_exponent:
            raise LimitExceeded("exponent")
        value *= Fraction(10) ** int(exp)
    return sympy.Rational(value.numerator, value.denominator)


class _GuardedConverter(_Latex2Sympy):
    """latex2sympy2's converter with its two number paths that reach ``sympify`` replaced."""

    def __init__(self, limits: Limits) -> None:
        super().__init__(variable_values=None, is_real=None, convert_degrees=False, config=_CONVERSION)
        self.limits = limits

    def parse_number(self, text: str) -> sympy.Rational:
        return exact_number(text, self.limits)

    def parse(self, latex_str: str) -> Any:
        # The base class sends "1,000"-style input to convert_number(), which calls sympify.
        m = COMMA_NUMBER.match(latex_str)
        if m is not None:
            value = exact_number(m.group(2) + (m.group(3) or ""), self.limits)
            return -value if m.group(1) else value
        return super().parse(latex_str)


def check_latex_text(text: str, limits: Limits) -> None:
    """Length, brace depth and command allowlist, before the grammar sees the text."""
    if len(text) > limits.max_chars:
        raise LimitExceeded("length")
    depth = 0
    for ch in text:
        if ch in "{([":
            depth += 1
            if depth > limits.max_depth:
                raise LimitExceeded("nesting depth")
        elif ch in "})]":
            depth = max(0, depth - 1)  # intervals like [0, 1) are unbalanced on purpose
    for name in _COMMAND.findall(text):
        if name not in ALLOWED_COMMANDS:
            raise Unsupported(f"LaTeX command \\{name} is not supported")
    if "\\binom" in text and len(_BINOM.findall(text)) != text.count("\\binom"):
        # The converter evaluates binomials eagerly: only small literal arguments are allowed.
        raise Unsupported("\\binom needs small literal arguments")
    _check_eager_calls(text, limits)


def _check_eager_calls(text: str, limits: Limits) -> None:
    """The converter evaluates ``\\gcd``/``\\lcm`` (through ``nsimplify``) and the index of
    ``\\sqrt[n]`` before any cap can see them: ``\\gcd(9^{9^{9}}, 3)`` or ``\\sqrt[9^{9^{9}}]{2}``
    would compute the tower. Only literal integers are accepted there."""
    digits = limits.max_digits
    if "\\sqrt" in text:
        indices = re.findall(r"\\sqrt\s*\[([^\]]*)\]", text)
        if any(not re.fullmatch(r"\s*\d{1,2}\s*", index) for index in indices):
            raise Unsupported("\\sqrt[n] needs a small literal index")
    for name in ("gcd", "lcm"):
        calls = len(re.findall(rf"\\{name}(?![A-Za-z])", text))
        literal = rf"\\{name}\s*(?:\\left\s*)?\(\s*-?\d{{1,{digits}}}(?:\s*,\s*-?\d{{1,{digits}}})+\s*(?:\\right\s*)?\)"
        if calls and len(re.findall(literal, text)) != calls:
            raise Unsupported(f"\\{name} needs literal integer arguments")


def parse_latex(text: str, limits: Limits) -> Any:
    """Parse a LaTeX math fragment (no ``$``) into a rebuilt, capped sympy object.

    Results are cached per process (sympy objects are immutable): a reference answer or a
    repeated step is parsed by the slow pure-Python ANTLR runtime once, not once per completion.
    """
    if len(text) > limits.max_chars:
        raise LimitExceeded("length")
    return _parse_latex_cached(text, limits)


@functools.lru_cache(maxsize=4096)
def _parse_latex_cached(text: str, limits: Limits) -> Any:
    check_latex_text(text, limits)
    text = _NUMBER_BEFORE_PAREN.sub(r"\1 \\cdot ", _SPACING.sub(" ", text))
    try:
        normalized = normalize_latex(text, _NORMALIZATION)
    except Exception as exc:
        raise Unsupported(f"LaTeX normalization failed: {exc.__class__.__name__}") from None
    check_latex_text(normalized, limits)  # normalization must not have introduced anything new
    if not normalized.strip():
        raise Unsupported("empty LaTeX")
    try:
        raw = _GuardedConverter(limits).parse(normalized)
    except (LimitExceeded, Undefined):
        raise
    except RecursionError:
        raise LimitExceeded("nesting depth") from None
    except Exception as exc:  # ANTLR syntax errors and converter errors
        raise Unsupported(f"LaTeX not understood: {str(exc).splitlines()[0][:80]}") from None
    return Rebuilder(limits).rebuild(raw)


# --- rebuilding the converter's output under the caps ----------------------------------------------------
_FUNCTIONS_BY_CLASS = {
    "sin": "sin",
    "cos": "cos",
    "tan": "tan",
    "cot": "cot",
    "sec": "sec",
    "csc": "csc",
    "asin": "asin",
    "acos": "acos",
    "atan": "atan",
    "sinh": "sinh",
    "cosh": "cosh",
    "tanh": "tanh",
    "exp": "exp",
    "Abs": "abs",
    "floor": "floor",
    "ceiling": "ceil",
    "factorial": "factorial",
    "binomial": "binomial",
}
_RELATIONS = {
    "Equality": sympy.Eq,
    "Unequality": sympy.Ne,
    "StrictLessThan": sympy.Lt,
    "LessThan": sympy.Le,
    "StrictGreaterThan": sympy.Gt,
    "GreaterThan": sympy.Ge,
}


class Rebuilder:
    """Rebuild a converter result through the guarded constructors, refusing unknown classes."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.nodes = 0

    def rebuild(self, e: Any) -> Any:
        self.nodes += 1
        if self.nodes > self.limits.max_nodes:
            raise LimitExceeded("node count")
        name = type(e).__name__
        if isinstance(e, sympy.Rational):
            if max(len(str(abs(int(e.p)))), len(str(int(e.q)))) > self.limits.max_digits:
                raise LimitExceeded("digits")
            return e
        if isinstance(e, sympy.Float):
            return exact_number(sympy.sstr(e, full_prec=False), self.limits)
        if isinstance(e, sympy.Symbol):
            if len(e.name) > 30:
                raise Unsupported("symbol name too long")
            return build.symbol(e.name)
        if e in (sympy.pi, sympy.E, sympy.I, sympy.oo, -sympy.oo) or e is sympy.S.EmptySet:
            return e
        if isinstance(e, sympy.UnevaluatedExpr):
            return self.rebuild(e.args[0])
        if isinstance(e, sympy.Add):
            out = self.rebuild(e.args[0])
            for arg in e.args[1:]:
                out = build.add(out, self.rebuild(arg))
            return out
        if isinstance(e, sympy.Mul):
            out = self.rebuild(e.args[0])
            for arg in e.args[1:]:
                out = build.mul(out, self.rebuild(arg))
            return out
        if isinstance(e, sympy.Pow):
            return build.power(self.rebuild(e.base), self.rebuild(e.exp), self.limits)
        if isinstance(e, sympy.log):
            args = [self.rebuild(a) for a in e.args]
            return build.call("log", args, self.limits)
        if name in _FUNCTIONS_BY_CLASS and isinstance(e, sympy.Function):
            args = [self.rebuild(a) for a in e.args]
            return build.call(_FUNCTIONS_BY_CLASS[name], args, self.limits)
        if name in ("Min", "Max"):
            args = [self.rebuild(a) for a in e.args]
            return (sympy.Min if name == "Min" else sympy.Max)(*args)
        if name in _RELATIONS:
            return _RELATIONS[name](self.rebuild(e.lhs), self.rebuild(e.rhs), evaluate=False)
        if name == "And":
            return sympy.And(*[self.rebuild(a) for a in e.args], evaluate=False)
        if isinstance(e, sympy.Tuple):
            return sympy.Tuple(*[self.rebuild(a) for a in e.args])
        if isinstance(e, sympy.FiniteSet):
            return sympy.FiniteSet(*[self.rebuild(a) for a in _ordered_args(e)])
        if isinstance(e, sympy.Interval):
            return sympy.Interval(
                self.rebuild(e.start), self.rebuild(e.end), bool(e.left_open), bool(e.right_open)
            )
        if isinstance(e, sympy.Union):
            return sympy.Union(*[self.rebuild(a) for a in e.args], evaluate=False)
        raise Unsupported(f"{name} is not a supported kind of math")


def _ordered_args(e: Any) -> tuple[Any, ...]:
    # latex2sympy2's FiniteSet keeps the written order in _unsorted_args (used for tuples vs sets).
    return tuple(getattr(e, "_unsorted_args", None) or e.args)
