"""Plain-text math (``3x + 2``, ``2(x+1)^2``, ``17+5``) parsed without evaluating anything.

Model text never reaches ``eval``, ``sympify`` or ``parse_expr`` (they run arbitrary Python: a
``__subclasses__`` walk reaches ``os.system`` even with ``__builtins__`` emptied). Instead:

1. A tokenizer accepts only digits, single-letter variables, a fixed list of function names and the
   operators ``+ - * / ^ ( ) , !`` (no quotes, underscores, dots outside numbers, brackets, colons),
   inserts implicit multiplications (``3x``, ``2(x+1)``, ``(a)(b)``) and rewrites ``^`` as ``**``.
   The result is a string over that tiny alphabet, checked for length and bracket depth.
2. ``ast.parse`` *parses* that string (it executes nothing), and every node of the tree is checked
   against a whitelist (numbers, names, + - * / **, unary signs, calls of whitelisted names) with
   caps on node count, digits and exponents.
3. The checked tree is evaluated either with exact ``Fraction`` arithmetic (the fast path: plain
   integer arithmetic never touches sympy) or built into sympy objects directly, node by node.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from botgrpo_sympy import numberformat
from botgrpo_sympy.limits import LimitExceeded, Limits, Undefined, Unsupported

if TYPE_CHECKING:
    import sympy

#: Function names accepted in plain text, with their arity (sympy builder in ``_sympy_call``).
FUNCTIONS: dict[str, tuple[int, ...]] = {
    "sqrt": (1,),
    "cbrt": (1,),
    "sin": (1,),
    "cos": (1,),
    "tan": (1,),
    "cot": (1,),
    "sec": (1,),
    "csc": (1,),
    "asin": (1,),
    "acos": (1,),
    "atan": (1,),
    "arcsin": (1,),
    "arccos": (1,),
    "arctan": (1,),
    "sinh": (1,),
    "cosh": (1,),
    "tanh": (1,),
    "exp": (1,),
    "log": (1, 2),
    "ln": (1,),
    "abs": (1,),
    "floor": (1,),
    "ceil": (1,),
    "factorial": (1,),
    "gcd": (2,),
    "lcm": (2,),
    "binomial": (2,),
}
#: Named constants accepted in plain text.
CONSTANTS = frozenset({"pi", "oo", "inf", "infinity"})

_TOKEN = re.compile(r"(?P<ws>\s+)|(?P<num>\d+(?:\.\d+)?|\.\d+)|(?P<name>[A-Za-z]+)|(?P<op>\*\*|[-+*/^(),!])")
#: Notation characters of plain math (number formats and signs are in ``numberformat``).
_NOTATION = str.maketrans(
    {
        "²": "^2",
        "³": "^3",
        "π": "pi",
        "∞": "oo",
        "⌊": "floor(",
        "⌋": ")",
        "⌈": "ceil(",
        "⌉": ")",
    }
)


@dataclass(frozen=True)
class Parsed:
    """A whitelisted expression tree and the (tiny-alphabet) source it was parsed from."""

    tree: ast.expr
    source: str


@dataclass(frozen=True)
class _Tok:
    kind: str  # num | var | const | func | op
    text: str


def normalize(text: str) -> str:
    """Number formats and signs (:func:`botgrpo_sympy.numberformat.normalize`), then notation
    (``²`` -> ``^2``, ``π`` -> ``pi``)."""
    return numberformat.normalize(text).translate(_NOTATION)


def tokenize(text: str, limits: Limits) -> list[_Tok]:
    """Split plain math into tokens; anything outside the alphabet is :class:`Unsupported`."""
    if len(text) > limits.max_chars:
        raise LimitExceeded("length")
    text = normalize(text)
    tokens: list[_Tok] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise Unsupported(f"character {text[pos]!r} is not plain math")
        pos = m.end()
        kind = m.lastgroup
        value = m.group()
        if kind == "ws":
            continue
        if kind == "num":
            if sum(c.isdigit() for c in value) > limits.max_digits:
                raise LimitExceeded("digits")
            tokens.append(_Tok("num", value))
        elif kind == "name":
            if value in ("LCM", "GCD", "Lcm", "Gcd"):
                value = value.lower()
            if value in FUNCTIONS:
                tokens.append(_Tok("func", value))
            elif value in CONSTANTS:
                tokens.append(_Tok("const", value))
            elif len(value) == 1:
                tokens.append(_Tok("var", value))
            else:
                # Multi-letter words are prose ("of", "is"), not products of variables.
                raise Unsupported(f"word {value!r} is not plain math")
        else:
            tokens.append(_Tok("op", "**" if value == "^" else value))
    if not tokens:
        raise Unsupported("empty expression")
    # "0.2 x 50": a lone x between two numbers is a multiplication sign.
    for i in range(1, len(tokens) - 1):
        if tokens[i].text == "x" and tokens[i - 1].kind == "num" and tokens[i + 1].kind == "num":
            tokens[i] = _Tok("op", "*")
    return tokens


_OPERAND_END = {"num", "var", "const"}


def _insert_implicit(tokens: list[_Tok]) -> list[_Tok]:
    """Insert ``*`` where juxtaposition means a product: ``3x``, ``2(x+1)``, ``(a)(b)``, ``x y``."""
    out: list[_Tok] = []
    for tok in tokens:
        if out:
            prev = out[-1]
            prev_ends = prev.kind in _OPERAND_END or prev.text in (")", "!")
            cur_starts = tok.kind in ("num", "var", "const", "func") or tok.text == "("
            if prev_ends and cur_starts:
                if prev.kind == "num" and tok.kind == "num":
                    raise Unsupported("two numbers side by side")
                if prev.kind in ("var", "const") and tok.kind == "num":
                    raise Unsupported("a number right after a variable (x2) is ambiguous")
                out.append(_Tok("op", "*"))
        out.append(tok)
    return out


def _rewrite_factorials(tokens: list[_Tok]) -> list[_Tok]:
    """Turn postfix ``n!`` and ``(...)!`` into calls ``factorial(...)``."""
    out: list[_Tok] = []
    for tok in tokens:
        if tok.text != "!":
            out.append(tok)
            continue
        if not out:
            raise Unsupported("'!' without an operand")
        if out[-1].kind in ("num", "var"):
            operand = [out.pop()]
        elif out[-1].text == ")":
            depth, i = 0, len(out) - 1
            while i >= 0:
                depth += out[i].text == ")"
                depth -= out[i].text == "("
                if depth == 0:
                    break
                i -= 1
            if i < 0:
                raise Unsupported("unbalanced parentheses before '!'")
            if i > 0 and out[i - 1].kind == "func":  # f(x)! : include the function name
                i -= 1
            operand = out[i:]
            del out[i:]
        else:
            raise Unsupported("'!' after an operator")
        out.extend([_Tok("func", "factorial"), _Tok("op", "("), *operand, _Tok("op", ")")])
    return out


def to_source(text: str, limits: Limits) -> str:
    """The checked, tiny-alphabet Python-syntax source for ``text`` (raises on anything else)."""
    tokens = _rewrite_factorials(tokenize(text, limits))
    depth = 0
    for tok in tokens:
        if tok.text == "(":
            depth += 1
            if depth > limits.max_depth:
                raise LimitExceeded("nesting depth")
        elif tok.text == ")":
            depth -= 1
            if depth < 0:
                raise Unsupported("unbalanced parentheses")
    if depth:
        raise Unsupported("unbalanced parentheses")
    tokens = _insert_implicit(tokens)
    return " ".join(t.text for t in tokens)


_BINOPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)
_UNARY = (ast.USub, ast.UAdd)


def _check_tree(tree: ast.expr, limits: Limits, allow_tuple: bool) -> None:
    """Reject every node outside the whitelist; count nodes."""
    count = 0
    stack: list[tuple[ast.AST, bool]] = [(tree, allow_tuple)]
    while stack:
        node, tuple_ok = stack.pop()
        count += 1
        if count > limits.max_nodes:
            raise LimitExceeded("node count")
        if isinstance(node, ast.Constant):
            if type(node.value) not in (int, float):
                raise Unsupported("only numbers are allowed as constants")
        elif isinstance(node, ast.Name):
            if not (len(node.id) == 1 or node.id in CONSTANTS) or not isinstance(node.ctx, ast.Load):
                raise Unsupported(f"name {node.id!r} is not allowed")
        elif isinstance(node, ast.BinOp):
            if not isinstance(node.op, _BINOPS):
                raise Unsupported(f"operator {type(node.op).__name__} is not allowed")
            stack += [(node.left, False), (node.right, False)]
        elif isinstance(node, ast.UnaryOp):
            if not isinstance(node.op, _UNARY):
                raise Unsupported(f"operator {type(node.op).__name__} is not allowed")
            stack.append((node.operand, False))
        elif isinstance(node, ast.Call):
            func = node.func
            if not isinstance(func, ast.Name) or func.id not in FUNCTIONS:
                raise Unsupported("only whitelisted functions can be called")
            if node.keywords or len(node.args) not in FUNCTIONS[func.id]:
                raise Unsupported(f"{func.id}() takes {FUNCTIONS[func.id]} arguments")
            stack += [(a, False) for a in node.args]
        elif isinstance(node, ast.Tuple) and tuple_ok:
            stack += [(e, False) for e in node.elts]
        else:
            raise Unsupported(f"syntax {type(node).__name__} is not allowed")


def parse_plain(text: str, limits: Limits, *, allow_tuple: bool = False) -> Parsed:
    """Parse plain math into a whitelisted tree. Raises :class:`Unsupported` or :class:`LimitExceeded`."""
    source = to_source(text, limits)
    try:
        # Parsing only: the source is over the tiny alphabet checked above, and nothing is executed.
        module = ast.parse(source, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise Unsupported(f"not an expression: {exc.__class__.__name__}") from None
    tree = module.body
    _check_tree(tree, limits, allow_tuple)
    return Parsed(tree=tree, source=source)


# --- exact rational evaluation (the fast path) ------------------------------------------------------------
class NotRational(Exception):
    """The expression needs sympy (a variable, a function, a fractional power)."""


def _literal(node: ast.Constant, source: str) -> Fraction:
    if isinstance(node.value, int):
        return Fraction(node.value)
    # A decimal literal: read its digits from the source so 0.1 is exactly 1/10, not a binary float.
    segment = ast.get_source_segment(source, node)
    if segment is None:  # pragma: no cover - Constant nodes always carry positions
        raise Unsupported("decimal literal without a position")
    return Fraction(segment)


def check_power(base: Fraction, exponent: int, limits: Limits) -> None:
    """Raise unless ``base ** exponent`` fits the exponent and bit caps."""
    if abs(exponent) > limits.max_exponent:
        raise LimitExceeded("exponent")
    bits = max(base.numerator.bit_length(), base.denominator.bit_length())
    if bits * abs(exponent) > limits.max_bits:
        raise LimitExceeded("number size")
    if base == 0 and exponent < 0:
        raise Undefined("0 to a negative power")


def fraction_value(parsed: Parsed, limits: Limits) -> Fraction:
    """Exact value of a variable-free rational expression, else :class:`NotRational`."""
    return _frac(parsed.tree, parsed.source, limits)


def _frac(node: ast.expr, source: str, limits: Limits) -> Fraction:
    if isinstance(node, ast.Constant):
        return _literal(node, source)
    if isinstance(node, ast.BinOp):
        left = _frac(node.left, source, limits)
        right = _frac(node.right, source, limits)
        op = node.op
        if isinstance(op, ast.Add):
            return left + right
        if isinstance(op, ast.Sub):
            return left - right
        if isinstance(op, ast.Mult):
            return left * right
        if isinstance(op, ast.Div):
            if right == 0:
                raise Undefined("division by zero")
            return left / right
        if right.denominator != 1:
            raise NotRational("fractional power")
        check_power(left, int(right), limits)
        return left ** int(right)
    if isinstance(node, ast.UnaryOp):
        value = _frac(node.operand, source, limits)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        name = node.func.id
        if name in ("abs", "factorial", "gcd", "lcm", "binomial", "floor", "ceil"):
            args = [_frac(a, source, limits) for a in node.args]
            return _exact_call(name, args, limits)
    raise NotRational("needs sympy")


def _as_int(value: Fraction, what: str) -> int:
    if value.denominator != 1:
        raise Undefined(f"{what} of a non-integer")
    return int(value)


def _exact_call(name: str, args: list[Fraction], limits: Limits) -> Fraction:
    if name == "abs":
        return abs(args[0])
    if name == "floor":
        return Fraction(math.floor(args[0]))
    if name == "ceil":
        return Fraction(math.ceil(args[0]))
    if name == "factorial":
        n = _as_int(args[0], "factorial")
        if n < 0:
            raise Undefined("factorial of a negative number")
        if n > limits.max_factorial:
            raise LimitExceeded("factorial")
        return Fraction(math.factorial(n))
    a, b = (_as_int(x, name) for x in args)
    if name == "gcd":
        return Fraction(math.gcd(a, b))
    if name == "lcm":
        return Fraction(math.lcm(a, b))
    if a > limits.max_factorial:  # binomial
        raise LimitExceeded("binomial")
    return Fraction(math.comb(a, b)) if a >= 0 and b >= 0 else Fraction(0)


# --- sympy construction ----------------------------------------------------------------------------------
def to_sympy(parsed: Parsed, limits: Limits, *, euler: bool = False) -> Any:
    """Build the sympy object for a whitelisted tree, node by node (a ``Tuple`` for tuples).

    ``euler``: read the letter ``e`` as Euler's number (final answers, as in LaTeX), not a variable.
    """
    import sympy

    from botgrpo_sympy import build

    def conv(node: ast.expr) -> sympy.Basic:
        if isinstance(node, ast.Constant):
            value = _literal(node, parsed.source)
            return sympy.Rational(value.numerator, value.denominator)
        if isinstance(node, ast.Name):
            if node.id == "e" and euler:
                return sympy.E
            if node.id == "pi":
                return sympy.pi
            if node.id in ("oo", "inf", "infinity"):
                return sympy.oo
            return build.symbol(node.id)
        if isinstance(node, ast.BinOp):
            left, right = conv(node.left), conv(node.right)
            op = node.op
            if isinstance(op, ast.Add):
                return build.add(left, right)
            if isinstance(op, ast.Sub):
                return build.add(left, build.neg(right))
            if isinstance(op, ast.Mult):
                return build.mul(left, right)
            if isinstance(op, ast.Div):
                return build.div(left, right)
            return build.power(left, right, limits)
        if isinstance(node, ast.UnaryOp):
            value = conv(node.operand)
            return build.neg(value) if isinstance(node.op, ast.USub) else value
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            return build.call(node.func.id, [conv(a) for a in node.args], limits)
        if isinstance(node, ast.Tuple):
            return sympy.Tuple(*[conv(e) for e in node.elts])
        raise Unsupported(f"syntax {type(node).__name__}")  # unreachable after _check_tree

    return conv(parsed.tree)
