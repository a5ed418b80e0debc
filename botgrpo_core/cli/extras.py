"""What a command needs beyond the core's own dependencies, and the one line that says how to get it.

The core installs without the TRL engine (``pip install botgrpo-core``): ``plugins`` and ``validate`` work,
while ``train`` and ``score`` need the ``[trl]`` extra (transformers for tokenizers, TRL, accelerate and
datasets for training). Without it they stop with this module's message instead of a traceback ending in
``ModuleNotFoundError: transformers``. Standard library only (the CLI's start-up stays instant).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable

#: the extra that brings the engine, as ``pip install`` takes it
TRL_EXTRA = "botgrpo-core[trl]"
#: top-level modules that the ``[trl]`` extra installs (pyproject.toml, ``[project.optional-dependencies]``)
TRL_EXTRA_MODULES = ("trl", "transformers", "accelerate", "datasets", "matplotlib")
#: what each command imports from the extra before it does any work
COMMAND_NEEDS = {
    "train": ("trl", "transformers", "accelerate", "datasets"),
    "score": ("transformers",),
    "sample": ("transformers",),
}


def missing_modules(modules: Iterable[str]) -> list[str]:
    """The ``modules`` that cannot be imported here (found without importing them)."""
    missing = []
    for name in modules:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):  # a broken install, or a module set to None in sys.modules
            found = False
        if not found:
            missing.append(name)
    return missing


def install_hint(command: str, missing: Iterable[str]) -> str:
    """``botgrpo <command>``'s one-line error for the missing modules of the ``[trl]`` extra."""
    names = ", ".join(missing)
    return (
        f'error: botgrpo {command} needs {names}, which come with the TRL extra: pip install "{TRL_EXTRA}" '
        '(in a source checkout: pip install -e ".[trl]")'
    )


def check_command(command: str) -> str | None:
    """The install hint when a module ``command`` needs (:data:`COMMAND_NEEDS`) is missing, else None."""
    missing = missing_modules(COMMAND_NEEDS.get(command, ()))
    return install_hint(command, missing) if missing else None


def extra_module(exc: ModuleNotFoundError) -> str | None:
    """The ``[trl]`` extra's module that ``exc`` failed to import (None for any other module)."""
    root = (exc.name or "").partition(".")[0]
    return root if root in TRL_EXTRA_MODULES else None
