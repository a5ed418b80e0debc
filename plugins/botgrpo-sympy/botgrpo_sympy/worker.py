"""What runs inside the checker processes: start-up (warm imports, guards) and the two task functions.

The initializer imports and exercises every parser once, then installs *tripwires* as a second
line of defence behind the parsers (which never hand model text to ``eval``):

- ``builtins.eval`` raises; ``builtins.exec`` and ``compile`` raise unless they are loading a module
  from a ``.py`` file (lazy imports inside sympy still work) or, for ``compile``, only parsing to
  an AST (``ast.parse``, which the plain-math parser uses; a tree is never runnable code). One
  library call site may exec a string: sympy's polynomial code generator, which writes that
  string itself from the number of variables (see :func:`_is_sympy_monomial_codegen`);
- an audit hook (PEP 578) refuses process creation (``os.system``, ``subprocess.Popen``,
  ``os.exec*``, ``os.posix_spawn``, ``os.fork``) and ``ctypes``.

Each tripwire hit is written to the file named by ``tripwire_log`` (when given, e.g. by the
injection tests through ``BOTGRPO_SYMPY_TRIPWIRE_LOG``) and the task fails. Nothing here is
reachable from model text except through the two task functions.
"""

from __future__ import annotations

import ast
import builtins
import os
import re
import sys
import threading
from typing import Any

from botgrpo_core.signals import SampleError, Span

_CONFIG: dict[str, Any] = {}
_GUARD = {"installed": False, "log": None}
_LOG_LOCK = threading.Lock()
_BLOCKED_EVENTS = (
    "os.system",
    "subprocess.Popen",
    "os.exec",
    "os.posix_spawn",
    "os.spawn",
    "os.fork",
    "ctypes.",
    "os.forkpty",
    "pty.spawn",
)


class TripwireError(RuntimeError):
    """Code tried to run something the checker processes never need (eval, exec, a subprocess)."""


def _record(kind: str, detail: str) -> None:
    path = _GUARD["log"]
    if path:
        with _LOG_LOCK, builtins.open(path, "a", encoding="utf-8") as f:
            f.write(f"{os.getpid()}\t{kind}\t{detail[:300]!r}\n")


def _from_module_file(source: Any, filename: Any = None) -> bool:
    name = filename if filename is not None else getattr(source, "co_filename", None)
    return isinstance(name, (str, bytes, os.PathLike)) and os.fsdecode(name).endswith(".py")


def _is_sympy_monomial_codegen(code: Any) -> bool:
    """The one library call site allowed to exec a string: ``sympy.polys.monomials.MonomialOps._build``.

    sympy's polynomial rings generate small functions (``def monomial_mul(A, B): ...``) from the
    *number of variables* only, never from any input text, and exec them once per size (cached).
    """
    filename = code.co_filename.replace(os.sep, "/")
    return code.co_name == "_build" and filename.endswith("/sympy/polys/monomials.py")


#: What ``sympy.nsimplify`` (reached from ``simplify``/``radsimp``/``equals``) hands to ``sympify``: the
#: string ``mpmath.identify`` wrote for a *number* (``4``, ``(1+sqrt(2))/3``), never input text.
_NSIMPLIFY_NAMES = frozenset(
    ["Integer", "Float", "Rational", "Symbol", "sqrt", "pi", "E", "I", "exp", "log", "Mul", "Add", "Pow"]
)


def _in_sympy_nsimplify(frame: Any) -> bool:
    """Is this call made (through ``sympify``) by ``sympy.simplify.simplify.nsimplify_real``?"""
    for _ in range(12):
        if frame is None:
            return False
        code = frame.f_code
        if code.co_name == "nsimplify_real" and code.co_filename.replace(os.sep, "/").endswith(
            "/sympy/simplify/simplify.py"
        ):
            return True
        frame = frame.f_back
    return False


def _is_identified_number(source: Any) -> bool:
    """A sympify string over numbers, a few sympy names and arithmetic (what identify writes)."""
    if not isinstance(source, str) or len(source) > 400 or "__" in source:
        return False
    bare = re.sub(r"Symbol \('[A-Za-z]\w{0,20}'\)", "Symbol", source)
    if not re.fullmatch(r"[A-Za-z0-9 ().+\-*/,]*", bare):
        return False
    return set(re.findall(r"[A-Za-z_]\w*", bare)) <= _NSIMPLIFY_NAMES


def install_tripwires(log_path: str | None) -> None:
    """Replace eval/exec/compile and add the audit hook (once per process)."""
    _GUARD["log"] = log_path
    if _GUARD["installed"]:
        return
    real_eval, real_exec, real_compile = builtins.eval, builtins.exec, builtins.compile

    def guarded_eval(source: Any, *args: Any, **kwargs: Any) -> Any:
        if _is_identified_number(source) and _in_sympy_nsimplify(sys._getframe(1)):
            return real_eval(source, *args, **kwargs)
        _record("eval", str(source))
        raise TripwireError("eval() is disabled in sympy checker processes")

    def guarded_exec(source: Any, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(source, (str, bytes)) and _from_module_file(source):
            return real_exec(source, *args, **kwargs)
        if _is_sympy_monomial_codegen(sys._getframe(1).f_code):
            return real_exec(source, *args, **kwargs)
        if source == "from sympy import *" and _in_sympy_nsimplify(sys._getframe(1)):
            return real_exec(source, *args, **kwargs)  # parse_expr's namespace, for the string above
        _record("exec", str(source))
        raise TripwireError("exec() is disabled in sympy checker processes")

    def guarded_compile(
        source: Any, filename: Any, mode: Any = "exec", flags: int = 0, *args: Any, **kwargs: Any
    ) -> Any:
        # ast.parse() is compile(..., PyCF_ONLY_AST): it returns a tree, never runnable code.
        only_ast = isinstance(source, (str, bytes)) and (kwargs.get("flags", flags) & ast.PyCF_ONLY_AST)
        if only_ast or _from_module_file(source, filename):
            return real_compile(source, filename, mode, flags, *args, **kwargs)
        _record("compile", str(source))
        raise TripwireError("compile() is disabled in sympy checker processes")

    def audit(event: str, args: tuple[Any, ...]) -> None:
        if event.startswith(_BLOCKED_EVENTS):
            _record("audit", f"{event} {args!r}")
            raise TripwireError(f"{event} is disabled in sympy checker processes")

    builtins.eval = guarded_eval
    builtins.exec = guarded_exec
    builtins.compile = guarded_compile
    sys.addaudithook(audit)
    _GUARD["installed"] = True


def guard_active() -> bool:
    """True in a checker process after :func:`init_worker` (used by the self-test)."""
    return bool(_GUARD["installed"]) and builtins.eval is not _REAL_EVAL


_REAL_EVAL = builtins.eval


#: Modules sympy and latex2sympy2 import lazily on some paths, whose import runs exec/eval (a
#: ``namedtuple``, ``parse_expr``, ``from sympy import *``): imported before the tripwires are armed.
_LAZY_MODULES = (
    "latex2sympy2_extended.latex2sympy2",
    "latex2sympy2_extended.math_normalization",
    "sympy.physics.units",
    "sympy.physics.units.util",
    "sympy.simplify.simplify",
    "sympy.simplify.radsimp",
    "sympy.parsing.sympy_parser",
    "mpmath.identification",
)


def _warm_up(kind: str, params: Any) -> None:
    """Import and exercise every parser and sympy path once, before the guards, whatever the params
    (a custom ``answer_pattern`` must not leave the LaTeX parser unimported): later tasks import
    nothing new."""
    import importlib

    import sympy

    from botgrpo_sympy.answer import check_answer
    from botgrpo_sympy.params import AnswerParams, StepsParams
    from botgrpo_sympy.steps import check_steps

    for name in _LAZY_MODULES:
        importlib.import_module(name)
    x = sympy.Symbol("x")
    sympy.simplify(sympy.log(x**2 - (x + 1) ** 2 + 2 * x + 1))  # simplify's own lazy imports
    sympy.nsimplify(sympy.sqrt(2) + sympy.Rational(1, 3))  # identify / sympify machinery
    for answer_params in (params, AnswerParams()) if kind == "answer" else (AnswerParams(),):
        check_answer(answer_params, "\\boxed{\\frac{1}{2}+\\sqrt{2}}", "1/2 + sqrt(2)")
        check_answer(answer_params, "Answer: (1, 2) \\cup [3, \\infty)", "x^2+1")
    for steps_params in (params, StepsParams()) if kind == "steps" else (StepsParams(),):
        check_steps(
            steps_params,
            "Solve 3x + 2 = 11.",
            "3x + 2 = 11 => 3x = 9\nx = 3\n$\\frac{6}{2} = 3$\n17+5=22\n$\\sin 30^\\circ = 0.5$\nA: 22",
        )


def init_worker(kind: str, params_data: dict[str, Any], tripwire_log: str | None = None) -> None:
    """Pool initializer: rebuild the params, warm up, install the tripwires."""
    from botgrpo_sympy.params import AnswerParams, StepsParams

    model = AnswerParams if kind == "answer" else StepsParams
    params = model.model_validate(params_data)
    _CONFIG["kind"] = kind
    _CONFIG["params"] = params
    _warm_up(kind, params)
    install_tripwires(tripwire_log)


def _each(items: list[Any], one: Any) -> list[Any]:
    """Run ``one`` on every item of a chunk; an exception costs only its own item.

    ``MemoryError`` is not caught: the pool must see it and replace the worker (its heap may be
    fragmented past the limit); the scorer then re-runs the chunk's items one by one.
    """
    out = []
    for item in items:
        try:
            out.append(one(item))
        except MemoryError:
            raise
        except Exception as exc:
            out.append(SampleError(f"{type(exc).__name__}: {exc}"[:500]))
    return out


def answer_task(items: list[tuple[str, str]]) -> list[tuple[float, dict[str, Any]]]:
    """``[(completion, reference)] -> [(value, meta)]`` in a checker process."""
    from botgrpo_sympy.answer import check_answer

    params = _CONFIG["params"]
    return _each(items, lambda item: check_answer(params, item[0], item[1]))


def steps_task(items: list[tuple[str, str, bool]]) -> list[list[Span]]:
    """``[(prompt, completion, truncated)] -> [spans]`` in a checker process."""
    from botgrpo_sympy.softdeadline import CheckTimeout, soft_deadline
    from botgrpo_sympy.steps import check_steps

    params = _CONFIG["params"]
    share = params.soft_timeout_share

    def one(item: tuple[str, str, bool]) -> list[Span]:
        # the checker's own deadline before the pool's kill: a refutation found before it stands (issue 56)
        if share is None:
            return [Span(s, e, v, meta) for s, e, v, meta in check_steps(params, item[0], item[1], item[2])]
        spans = None
        try:
            with soft_deadline(share * params.timeout_s) as deadline:
                spans = check_steps(params, item[0], item[1], item[2], deadline=deadline)
        except CheckTimeout:  # the alarm fired after the check ended (or outside a claim it could catch)
            if spans is None:
                return SampleError("the checker's own deadline passed", reason="timeout")  # type: ignore[return-value]
        return [Span(s, e, v, meta) for s, e, v, meta in spans]

    return _each(items, one)


def guard_selftest(_: Any = None) -> str:
    """Diagnostics: is the eval tripwire active in this process? Evaluates only a constant."""
    if not guard_active():
        return "unguarded"  # never evaluates anything outside a guarded process
    try:
        builtins.eval("1 + 1")
    except TripwireError:
        return "blocked"
    return "not blocked"
