"""Built-in tasks: synthetic problem generators with demonstrations and evaluation (no torch).

A task gives training and held-out rows (``prompt`` plus the fields its signals read),
demonstrations for a supervised warm start, and an evaluation (answer accuracy, step error rate).
``data.source: task`` in a run file uses one; the benchmarks use them too.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError

from botgrpo_core.tasks.arithmetic import ArithmeticParams, ArithmeticTask
from botgrpo_core.tasks.react import ReactParams, ReactTask

#: task name -> (task class, its params model)
TASKS: dict[str, tuple[type[ArithmeticTask], type[BaseModel]]] = {
    "arithmetic": (ArithmeticTask, ArithmeticParams),
    "react": (ReactTask, ReactParams),  # type: ignore[dict-item]
}

__all__ = ["TASKS", "ArithmeticParams", "ArithmeticTask", "get_task"]


def get_task(name: str, params: dict[str, Any] | None = None) -> ArithmeticTask:
    """Build a task by name, validating ``params`` (``data.task_params``) against its model."""
    if name not in TASKS:
        raise ValueError(f"data.task: unknown task {name!r}; built-in tasks: {sorted(TASKS)}")
    cls, params_model = TASKS[name]
    try:
        validated = params_model(**(params or {}))
    except ValidationError as exc:
        raise ValueError(f"data.task_params for task {name!r} are invalid:\n{exc}") from None
    return cls(validated)
