"""Run-file errors: ``ConfigError`` and the formatter that names each bad key path and the nearest valid key."""

from __future__ import annotations

import difflib
from typing import Any

from pydantic import BaseModel, ValidationError

from botgrpo_core.config.models import RunConfig


class ConfigError(ValueError):
    """A run file problem. The message names the key path, the bad value and the fix."""


class OutcomeDominanceWarning(UserWarning):
    """Local signals are strong enough to reorder rollouts with different outcomes."""


# --- error formatting --------------------------------------------------------------------------------------------
def _path(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def _model_at(loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The pydantic model that holds the key at ``loc`` (to suggest valid keys)."""
    model: Any = RunConfig
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        field = (
            model.model_fields.get(part) if isinstance(model, type) and issubclass(model, BaseModel) else None
        )
        if field is None:
            return None
        annotation = field.annotation
        args = getattr(annotation, "__args__", ())
        candidates = [annotation, *args]
        model = next((c for c in candidates if isinstance(c, type) and issubclass(c, BaseModel)), None)
        if model is None:
            return None
    return model if isinstance(model, type) and issubclass(model, BaseModel) else None


def format_validation_error(exc: ValidationError, source: str, root: tuple[Any, ...] = ()) -> str:
    lines = [f"{source}: invalid run file"]
    for err in exc.errors():
        loc = root + tuple(err["loc"])
        path = _path(loc)
        if err["type"] == "extra_forbidden":
            model = _model_at(tuple(err["loc"])) if not root else None
            valid = sorted(model.model_fields) if model else []
            close = difflib.get_close_matches(str(loc[-1]), valid, n=1)
            fix = f"did you mean {close[0]!r}?" if close else "remove it"
            if valid:
                fix += f" Valid keys here: {', '.join(valid)}."
            lines.append(f"  - {path}: unknown key; {fix}")
        elif err["type"] == "missing":
            lines.append(f"  - {path}: required key is missing; add it (see docs/configuration.md)")
        else:
            value = err.get("input")
            shown = repr(value) if not isinstance(value, dict) else "{...}"
            if len(shown) > 80:
                shown = shown[:77] + "..."
            lines.append(f"  - {path}: {err['msg']} (got {shown}); fix the value (see docs/configuration.md)")
    return "\n".join(lines)
