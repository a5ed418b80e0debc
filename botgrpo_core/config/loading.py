"""Reading a run file: YAML, ``--set key.path=value`` overrides, validation."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from botgrpo_core.config.checks import check_algorithm, check_rewards
from botgrpo_core.config.errors import ConfigError, format_validation_error
from botgrpo_core.config.models import RunConfig


# --- loading ---------------------------------------------------------------------------------------------------------
def _set_override(data: dict[str, Any], assignment: str) -> None:
    key, sep, raw = assignment.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"--set {assignment!r}: expected key.path=value, e.g. training.steps=50")
    try:
        value = yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        raise ConfigError(f"--set {assignment!r}: the value is not valid YAML ({exc})") from exc
    node: Any = data
    parts = key.strip().split(".")
    for part in parts[:-1]:
        if isinstance(node, list):
            node = node[int(part)]
            continue
        node = node.setdefault(part, {})
        if not isinstance(node, (dict, list)):
            raise ConfigError(f"--set {assignment!r}: {part!r} is not a section")
    if isinstance(node, list):
        node[int(parts[-1])] = value
    else:
        node[parts[-1]] = value


def read_yaml(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Parse a YAML mapping, turning syntax errors into a :class:`ConfigError` with line and column."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{source}: cannot read the run file ({exc.strerror}); check the path") from exc
    try:
        data = yaml.safe_load(text)
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
        raise ConfigError(f"{source}: the run file must be a mapping of sections (model, rewards, ...)")
    return data


def parse_config(data: dict[str, Any], *, source: str = "<config>", check_signals: bool = True) -> RunConfig:
    """Validate a run-file mapping; with ``check_signals`` also check signal names and params."""
    try:
        config = RunConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(exc, source)) from None
    check_algorithm(config, source)
    if check_signals:
        check_rewards(config.rewards, source)
    return config


def load_config(
    path: str | os.PathLike[str], overrides: list[str] | tuple[str, ...] = (), *, check_signals: bool = True
) -> RunConfig:
    """Read, override (``key.path=value``) and validate a run file."""
    data = read_yaml(path)
    for assignment in overrides:
        _set_override(data, assignment)
    return parse_config(data, source=str(path), check_signals=check_signals)
