"""Fail at once, with the fix, when worker processes would re-run a script that has no main guard.

Worker pools start their processes with ``forkserver`` (safe beside threads and torch). Like ``spawn``, it imports
the parent's ``__main__`` file in the new process (``multiprocessing.spawn.get_preparation_data``). A script whose
training code sits at module level, outside ``if __name__ == "__main__":``, then runs again there: it loads the
model a second time and tries to start workers of its own, which Python refuses during bootstrapping; the parent
would only see workers that never report ready (a minute later, naming the wrong cause). The standard fix is the
guard (Python's multiprocessing guide, "Safe importing of main module").
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

FIX = (
    'put the script\'s training code under `if __name__ == "__main__":` (signal workers are started with '
    "forkserver, which imports the script again in each worker; see docs/python-api.md)"
)


def _has_guard(tree: ast.Module) -> bool:
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Compare):
            names = [n for n in ast.walk(node.test) if isinstance(n, ast.Name) and n.id == "__name__"]
            strings = [
                n for n in ast.walk(node.test) if isinstance(n, ast.Constant) and n.value == "__main__"
            ]
            if names and strings:
                return True
    return False


def unguarded_main_script() -> Path | None:
    """The ``__main__`` file that a worker would re-run without a guard, or None when starting workers is safe.

    Safe: no ``__main__`` file (an interactive session, a notebook, ``python -c``), a module run with ``-m`` or an
    installed console script (``botgrpo``), a file with a top-level ``if __name__ == "__main__":``, or a file
    that cannot be read or parsed (left to Python's own error).
    """
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if main is None or not path or getattr(main, "__spec__", None) is not None:
        return None  # -m and console-script entry points are imported by name, with their own guards
    file = Path(path)
    if file.suffix != ".py":
        return None
    try:
        tree = ast.parse(file.read_bytes(), filename=str(file))
    except (OSError, SyntaxError, ValueError):
        return None
    return None if _has_guard(tree) else file


def check_main_guard(who: str) -> None:
    """Raise at once when a worker would re-run an unguarded script (see the module docstring).

    :param who: what starts the workers, for the message (e.g. "signal sympy.steps's worker pool").
    :raises RuntimeError: naming the script and the fix.
    """
    script = unguarded_main_script()
    if script is not None:
        raise RuntimeError(f"{who} cannot start from {script.name}: it has no main guard; {FIX}")
