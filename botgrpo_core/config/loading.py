"""Reading a run file: YAML, ``--set key.path=value`` overrides, validation."""

from __future__ import annotations

import os
import re
from typing import Any

import yaml
from pydantic import ValidationError

from botgrpo_core.config.checks import check_algorithm, check_data, check_rewards, check_training
from botgrpo_core.config.errors import ConfigError, bounded_repr, format_validation_error
from botgrpo_core.config.models import RunConfig
from botgrpo_core.config.yaml_text import YAMLTextError, parse_yaml, read_text

# --- loading ---------------------------------------------------------------------------------------------------------
_KEY_PATH = re.compile(r"(?:[^.\[\]]+|\[[^\]]+\])(?:\.[^.\[\]]+|\[[^\]]+\])*")
_KEY_PART = re.compile(r"\[([^\]]+)\]|([^.\[\]]+)")


def key_parts(key: str, *, where: str) -> list[tuple[str, bool]]:
    """``rewards.signals[0].weight`` -> ``[("rewards", False), ("signals", False), ("0", True), ("weight",
    False)]``: each part and whether it was written in brackets (an index, or a list item's name)."""
    key = key.strip()
    if not _KEY_PATH.fullmatch(key):
        raise ConfigError(
            f"{where}: {key!r} is not a key path; write section.key, a list item by index "
            "(rewards.signals[0].weight) or by name (rewards.signals[core.regex].weight)"
        )
    return [(bracket or plain, bool(bracket)) for bracket, plain in _KEY_PART.findall(key)]


def _list_item(items: list[Any], part: str, rest: list[str], at: str, where: str) -> int:
    """The index that ``part`` (an index, or an item's ``name``) picks in the list at ``at``."""
    names = [item.get("name") for item in items if isinstance(item, dict)]
    if part.isdigit() and int(part) < len(items):
        return int(part)
    if part in names:
        return names.index(part)
    if part.isdigit():
        indices = f"indices 0-{len(items) - 1}" if items else "it is empty"
        raise ConfigError(
            f"{where}: {at} has {len(items)} item(s), so there is no [{part}] ({indices}); "
            f"to add an item, set the whole list: {at}=[...]"
        )
    dotted = [".".join([part, *rest[:k]]) for k in range(len(rest), -1, -1)]
    named = next((d for d in dotted if d in names), None)
    if named is not None:  # rewards.signals.core.regex.weight: a name with dots needs brackets
        tail = "".join(f".{r}" for r in rest[named.count(".") - part.count(".") :])
        raise ConfigError(f"{where}: a list item's name goes in brackets: write {at}[{named}]{tail}")
    listed = ", ".join(str(n) for n in names if n is not None) or "(items have no name)"
    raise ConfigError(
        f"{where}: {at} has no item {part!r}; pick one by index ({at}[0]) or by name ({listed})"
    )


def set_key(data: dict[str, Any], key: str, value: Any, *, where: str) -> None:
    """Set ``a.b.c`` in a nested mapping, creating mappings on the way; list items by index
    (``signals[0].weight``, or ``signals.0.weight``) or by their ``name`` (``signals[core.regex].weight``).
    ``where`` starts the error message (e.g. ``--set 'x=1'``)."""
    parts = key_parts(key, where=where)
    node: Any = data
    at = ""  # the path so far, as the error messages print it
    for i, (part, bracket) in enumerate(parts):
        last = i == len(parts) - 1
        if isinstance(node, list):
            index = _list_item(node, part, [p for p, _ in parts[i + 1 :]], at, where)
            at += f"[{index}]"
            if last:
                node[index] = value
            else:
                node = node[index]
        elif isinstance(node, dict):
            at += f"[{part}]" if bracket else (f".{part}" if at else part)
            if last:
                node[part] = value
            else:
                node = node.setdefault(part, {})
        else:
            raise ConfigError(f"{where}: {at} is not a section (it holds {bounded_repr(node)})")


def apply_override(data: dict[str, Any], assignment: str) -> None:
    """Apply one ``--set key.path=value`` (the value read as YAML) to a file's mapping, in place."""
    key, sep, raw = assignment.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"--set {assignment!r}: expected key.path=value, e.g. training.steps=50")
    try:
        value = parse_yaml(raw)
    except (yaml.YAMLError, YAMLTextError) as exc:
        raise ConfigError(f"--set {assignment!r}: the value is not valid YAML ({exc})") from None
    set_key(data, key, value, where=f"--set {assignment!r}")


def read_yaml(
    path: str | os.PathLike[str], *, what: str = "run file", keys: str = "model, rewards, ..."
) -> dict[str, Any]:
    """Parse a YAML mapping (a ``what`` whose top-level ``keys`` the error names), turning syntax errors
    into a :class:`ConfigError` with line and column, and refusing what :mod:`~botgrpo_core.config.yaml_text`
    bounds (duplicate keys, alias bombs, deep nesting, non-UTF-8 text)."""
    source = str(path)
    try:
        data = parse_yaml(read_text(path, what))
    except OSError as exc:
        raise ConfigError(f"{source}: cannot read the {what} ({exc.strerror}); check the path") from exc
    except YAMLTextError as exc:
        raise ConfigError(f"{source}: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(
            f"{source}: YAML syntax error{where}: {problem}; fix the indentation/quoting there"
        ) from exc
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: the {what} must be a mapping of sections ({keys})")
    return data


def parse_config(data: dict[str, Any], *, source: str = "<config>", check_signals: bool = True) -> RunConfig:
    """Validate a run-file mapping; with ``check_signals`` also check signal names and params."""
    try:
        config = RunConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(exc, source)) from None
    check_algorithm(config, source)
    check_training(config, source)
    if check_signals:
        check_data(config, source)
        check_rewards(config.rewards, source)
    return config


def load_config(
    path: str | os.PathLike[str], overrides: list[str] | tuple[str, ...] = (), *, check_signals: bool = True
) -> RunConfig:
    """Read, override (``key.path=value``) and validate a run file."""
    data = read_yaml(path)
    for assignment in overrides:
        apply_override(data, assignment)
    resolve_data_paths(data, path)
    return parse_config(data, source=str(path), check_signals=check_signals)


#: the ``data`` keys naming a file or folder that :func:`resolve_data_paths` looks up
DATA_PATH_KEYS = ("path", "eval_path")


def resolve_data_paths(data: dict[str, Any], run_file: str | os.PathLike[str]) -> None:
    """A relative ``data.path`` / ``data.eval_path`` is read from the current folder when it exists there (what
    every run file has meant so far), else from the run file's folder when it exists there (a run file kept
    beside its data runs from anywhere); a path found in neither is left as written, for the error naming it.
    Changes ``data`` in place; the resolved paths are what ``config.yaml`` of the run records."""
    section = data.get("data")
    if not isinstance(section, dict):
        return
    folder = os.path.dirname(os.fspath(run_file))
    for key in DATA_PATH_KEYS:
        value = section.get(key)
        if not isinstance(value, str) or not value or os.path.isabs(value) or os.path.exists(value):
            continue
        beside = os.path.join(folder, value)
        if folder and os.path.exists(beside):
            section[key] = beside
