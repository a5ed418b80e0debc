"""Run-file errors: ``ConfigError`` and the formatter that names each bad key path and the nearest valid key."""

from __future__ import annotations

import difflib
import reprlib
from collections.abc import Mapping, Sequence
from types import UnionType
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from botgrpo_core.config.models import RunConfig


class ConfigError(ValueError):
    """A run file problem. The message names the key path, the bad value and the fix."""


class OutcomeDominanceWarning(UserWarning):
    """Local signals are strong enough to reorder rollouts with different outcomes."""


# --- error formatting --------------------------------------------------------------------------------------------
_REPR = reprlib.Repr()  # keyword arguments need Python 3.12
_REPR.maxlevel, _REPR.maxlist, _REPR.maxdict = 2, 4, 4
_REPR.maxstring, _REPR.maxother, _REPR.maxlong = 60, 60, 40
#: most errors one message lists (the others are counted)
MAX_LISTED = 20


def bounded_repr(value: Any, limit: int = 80) -> str:
    """``repr(value)`` in bounded work and at most ``limit`` characters (the value came from the user:
    a YAML alias bomb is a tiny file whose full ``repr`` is gigabytes)."""
    shown = _REPR.repr(value)
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."


def _path(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def _resolve(annotation: Any) -> Any:
    """``X | None`` (or any union) -> the part that is a model or a container; other types unchanged."""
    if get_origin(annotation) in (Union, UnionType):
        return next(
            (
                a
                for a in get_args(annotation)
                if (isinstance(a, type) and issubclass(a, BaseModel)) or get_origin(a) in _CONTAINERS
            ),
            None,
        )
    return annotation


_CONTAINERS = (list, tuple, set, frozenset, dict, Sequence, Mapping)


def _model_at(loc: tuple[Any, ...], root: type[BaseModel]) -> type[BaseModel] | None:
    """The pydantic model that holds the keys under ``loc`` in ``root`` (to suggest valid keys).

    Walks fields, list items (an index in ``loc``) and mapping values (a key in ``loc``, e.g. the task
    name in a bench file's ``tasks.<name>.metric``).
    """
    node: Any = root
    for part in loc:
        node = _resolve(node)
        if isinstance(node, type) and issubclass(node, BaseModel):
            field = node.model_fields.get(str(part))
            if field is None:
                return None
            node = field.annotation
        elif get_origin(node) in _CONTAINERS:
            args = get_args(node)
            node = (args[-1] if get_origin(node) in (dict, Mapping) else args[0]) if args else None
        else:
            return None
    node = _resolve(node)
    return node if isinstance(node, type) and issubclass(node, BaseModel) else None


def format_validation_error(
    exc: ValidationError,
    source: str,
    *,
    model: type[BaseModel] = RunConfig,
    what: str = "run file",
    docs: str = "docs/configuration.md",
) -> str:
    """One line per error of ``exc``, validating a ``what`` (``model``) read from ``source``: the key path,
    what is wrong and the fix (the nearest valid key for an unknown one; ``docs`` for the rest)."""
    lines = [f"{source}: invalid {what}"]
    errors = exc.errors()
    for err in errors[:MAX_LISTED]:
        loc = tuple(err["loc"])
        path = _path(loc)
        if err["type"] == "extra_forbidden":
            parent = _model_at(loc[:-1], model)
            valid = sorted(parent.model_fields) if parent else []
            close = difflib.get_close_matches(str(loc[-1]), valid, n=1)
            fix = f"did you mean {close[0]!r}?" if close else "remove it"
            if valid:
                fix += f" Valid keys here: {', '.join(valid)}."
            lines.append(f"  - {path}: unknown key; {fix}")
        elif err["type"] == "missing":
            lines.append(f"  - {path}: required key is missing; add it (see {docs})")
        else:
            value = err.get("input")
            shown = bounded_repr(value) if not isinstance(value, dict) else "{...}"
            message = err["msg"].removeprefix("Value error, ")  # a validator's own sentence
            lines.append(f"  - {path}: {message} (got {shown}); fix the value (see {docs})")
    return "\n".join(lines + more_errors(len(errors)))


def more_errors(count: int) -> list[str]:
    """The closing line of an error list cut at :data:`MAX_LISTED` (50,000 unknown keys: 20 lines, not
    50,000, and no nearest-key search for the rest)."""
    return [f"  - ... and {count - MAX_LISTED:,} more errors; fix these first"] if count > MAX_LISTED else []
