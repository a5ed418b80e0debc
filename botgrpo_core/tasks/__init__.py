"""Tasks: synthetic problem generators with demonstrations and evaluation (no torch).

A task gives training and held-out rows (``prompt`` plus the fields its signals read),
demonstrations for a supervised warm start, and an evaluation (answer accuracy, step error rate).
``data.source: task`` in a run file uses one. The core ships ``arithmetic`` (the demo's task);
plugins add more through the ``botgrpo_register_tasks`` hook (botgrpo-bench adds ``react``), found
only when a run names a task that is not built in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from botgrpo_core.tasks.arithmetic import ArithmeticParams, ArithmeticTask

#: built-in task name -> (task class, its params model)
TASKS: dict[str, tuple[type, type[BaseModel]]] = {"arithmetic": (ArithmeticTask, ArithmeticParams)}

#: shown when a task name is unknown: where more tasks come from
MORE_TASKS = (
    "plugins add tasks (botgrpo_register_tasks); e.g. botgrpo-bench (benchmarks/botgrpo_bench) adds 'react'"
)

__all__ = [
    "TASKS",
    "ArithmeticParams",
    "ArithmeticTask",
    "RegisteredTask",
    "available_tasks",
    "get_task",
    "plugin_tasks",
    "task_entry",
]


@dataclass(frozen=True)
class RegisteredTask:
    """A task a plugin registers: its class, its params model and where it comes from."""

    task_class: type
    params_model: type[BaseModel]
    plugin: str
    distribution: str


def plugin_tasks() -> dict[str, RegisteredTask]:
    """The tasks installed plugins register (``botgrpo_register_tasks``), by name; loads every allowed plugin.

    :raises PluginError: a plugin registers a built-in name, or two plugins the same name.
    """
    from botgrpo_core.signals.manager import (
        ALLOWLIST_ENV,
        BUILTIN_DISTRIBUTION,
        PluginError,
        get_plugin_manager,
    )

    found: dict[str, RegisteredTask] = {}
    for plugin, distribution, caller in get_plugin_manager().each_plugin("botgrpo_register_tasks"):

        def collect(
            name: str,
            task_class: type,
            params_model: type[BaseModel],
            _p: str = plugin,
            _d: str = distribution,
        ) -> None:
            previous = found.get(name)
            if name in TASKS or (previous is not None and previous.task_class is not task_class):
                other = f"plugin {previous.plugin!r}" if previous is not None else BUILTIN_DISTRIBUTION
                raise PluginError(
                    f"task {name!r} is registered by both {other} and plugin {_p!r} ({_d}); rename it in the "
                    f"plugin, or limit loading with {ALLOWLIST_ENV}"
                )
            found[name] = RegisteredTask(task_class, params_model, _p, _d)

        caller(register=collect)
    return found


def available_tasks() -> dict[str, str]:
    """``task name -> distribution`` of the built-in tasks and of those installed plugins register."""
    from botgrpo_core.signals.manager import BUILTIN_DISTRIBUTION

    builtin = {name: BUILTIN_DISTRIBUTION for name in TASKS}
    return builtin | {name: t.distribution for name, t in plugin_tasks().items()}


def task_entry(name: str) -> tuple[type, type[BaseModel]]:
    """``(task class, params model)`` of a task: built in, else registered by a plugin.

    :raises ValueError: an unknown name, with the tasks that exist and where more come from.
    """
    if name in TASKS:
        return TASKS[name]
    registered = plugin_tasks()
    if name in registered:
        return registered[name].task_class, registered[name].params_model
    known = ", ".join(f"{n} ({d})" for n, d in sorted(available_tasks().items()))
    raise ValueError(f"data.task: unknown task {name!r}; available tasks: {known}. {MORE_TASKS}")


def get_task(name: str, params: dict[str, Any] | None = None) -> Any:
    """Build a task by name, validating ``params`` (``data.task_params``) against its model."""
    cls, params_model = task_entry(name)
    try:
        validated = params_model(**(params or {}))
    except ValidationError as exc:
        raise ValueError(f"data.task_params for task {name!r} are invalid:\n{exc}") from None
    return cls(validated)
