"""Size caps applied to model-written math before any sympy object is built.

Every cap exists because a short string can otherwise cost unbounded time or memory: ``9^9^9``
(a power tower), ``(x+1)^100000`` (expansion), ``1000000!``, 100k nested parentheses (recursion),
a megabyte of digits. Inputs over a cap are *not checkable* (value 0), never an error; the worker
pool's timeout and memory limit stay as the last line of defence for whatever slips through.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Limits(BaseModel):
    """Caps on one expression (both the plain-text and the LaTeX path)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_chars: int = Field(400, gt=0, description="longest expression text parsed (characters)")
    max_nodes: int = Field(300, gt=0, description="most syntax-tree nodes in one expression")
    max_depth: int = Field(40, gt=0, description="deepest bracket nesting (parentheses, braces)")
    max_digits: int = Field(60, gt=0, description="longest number literal (digits)")
    max_exponent: int = Field(400, gt=0, description="largest |exponent| of a numeric power")
    max_bits: int = Field(40_000, gt=0, description="largest exact rational built by a power (bits)")
    max_factorial: int = Field(300, gt=0, description="largest n in n! or factorial(n)")
    max_symbols: int = Field(6, gt=0, description="most distinct variables in one claim")


class LimitExceeded(Exception):
    """An expression is over a cap: the claim is not checkable (value 0), not an error."""

    def __init__(self, what: str) -> None:
        super().__init__(f"over the {what} cap")
        self.what = what


class Unsupported(Exception):
    """The text is not math this checker understands (prose, unknown function, bad syntax)."""


class DigitOutsideBase(Unsupported):
    """A numeral with a digit its base does not have (``2058_7``): no value, and no reading gives it one."""


class Undefined(Exception):
    """The expression has no value (division by zero, 0^-1...)."""


#: What reading a side raises when it is not checkable (not math, over a cap, no value): the side keeps the
#: reason and its claim scores 0.
UNREADABLE: tuple[type[Exception], ...] = (Unsupported, LimitExceeded, Undefined)

#: Failures deep inside sympy/mpmath while one claim or answer is checked (``OverflowError`` from a
#: float conversion of a huge exact value, ``IndexError`` from a library corner case...): that claim
#: or answer scores 0 instead of the whole completion becoming an error. Not ``MemoryError``, not the
#: worker's ``TripwireError`` (a ``RuntimeError``): those must reach the worker and the pool.
CHECK_FAILURES: tuple[type[BaseException], ...] = (
    ArithmeticError,
    IndexError,
    KeyError,
    ValueError,
    TypeError,
    AttributeError,
    NotImplementedError,
    RecursionError,
)
