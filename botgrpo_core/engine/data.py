"""The run's rows: from a built-in task, a JSONL file or a saved dataset; field checks; TRL's row format."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from botgrpo_core.config.models import RunConfig
from botgrpo_core.engine.setup import TrainingSetupError


# ------------------------------------------------------------------------------------------------
# Data
# ------------------------------------------------------------------------------------------------
@dataclass
class RunData:
    """Training and held-out rows, each ``{"prompt": ..., <fields the signals read>}``."""

    train: list[dict[str, Any]]
    eval: list[dict[str, Any]]
    task: Any = None  # a botgrpo_core.tasks task when data.source is 'task'
    source: str = ""


def _read_jsonl(path: Path, key: str) -> list[dict[str, Any]]:
    if not path.is_file():
        raise TrainingSetupError(
            f"{key}: no such file {str(path)!r}; fix the path (a relative one is read from the working "
            "folder, else from the run file's folder)"
        )
    rows = []
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise TrainingSetupError(
                    f"{key}: {path}:{n} is not valid JSON ({exc.msg}); fix that line"
                ) from None
            if not isinstance(row, dict):
                raise TrainingSetupError(f"{key}: {path}:{n} is not a JSON object; each line must be one row")
            rows.append(row)
    if not rows:
        raise TrainingSetupError(f"{key}: {path} has no rows")
    return rows


def _read_disk(path: Path, key: str) -> list[dict[str, Any]]:
    if not path.is_dir():
        raise TrainingSetupError(
            f"{key}: no such folder {str(path)!r}; point it at a datasets.save_to_disk folder"
        )
    import datasets

    try:
        ds = datasets.load_from_disk(str(path))
    except (FileNotFoundError, ValueError) as exc:
        raise TrainingSetupError(
            f"{key}: {path} is not a saved dataset ({exc}); use Dataset.save_to_disk"
        ) from None
    if isinstance(ds, datasets.DatasetDict):
        if "train" not in ds:
            raise TrainingSetupError(f"{key}: {path} holds splits {list(ds)} but no 'train' split")
        ds = ds["train"]
    return ds.to_list()


def load_data(config: RunConfig) -> RunData:
    """Rows for training and evaluation, per ``data``."""
    data = config.data
    if data.source == "task":
        from botgrpo_core.tasks import get_task

        try:
            task = get_task(data.task or "", data.task_params)
        except ValueError as exc:
            raise TrainingSetupError(str(exc)) from None
        eval_rows = task.eval_rows(data.eval_size, seed=0) if data.eval_size else []
        train_rows = task.train_rows(data.train_size, seed=config.training.seed, exclude=eval_rows)
        return RunData(train_rows, eval_rows, task, f"task {data.task}")
    assert data.path is not None  # checked by DataConfig
    reader = _read_jsonl if data.source == "jsonl" else _read_disk
    rows = reader(Path(data.path), "data.path")
    if data.eval_path is not None:
        eval_reader = _read_disk if Path(data.eval_path).is_dir() else _read_jsonl
        eval_rows = eval_reader(Path(data.eval_path), "data.eval_path")[: data.eval_size]
    else:
        cut = min(data.eval_size, len(rows) // 5)  # never more than a fifth of the data
        eval_rows, rows = rows[len(rows) - cut :], rows[: len(rows) - cut]
    return RunData(rows, eval_rows, None, str(data.path))


def check_rows(rows: Sequence[Mapping[str, Any]], needed: Mapping[str, Sequence[str]], where: str) -> None:
    """Every row has every field a consumer reads: ``needed`` maps a consumer (signal) to its fields."""
    for field_owner, fields in needed.items():
        for name in fields:
            for i, row in enumerate(rows):
                if name not in row or row[name] is None:
                    raise TrainingSetupError(
                        f"{where}: row {i} has no field {name!r}, which {field_owner} reads "
                        f"(row fields: {sorted(row)}). Add the field to every row, or point the signal at an "
                        "existing column in its params (e.g. reference_field)."
                    )


def to_trainer_rows(rows: Sequence[Mapping[str, Any]], config: RunConfig) -> list[dict[str, Any]]:
    """Rename the prompt field to ``prompt`` and wrap it as chat messages when ``data.chat``."""
    data = config.data
    out = []
    for row in rows:
        new = {k: v for k, v in row.items() if k != data.prompt_field}
        prompt = row[data.prompt_field]
        if data.chat and isinstance(prompt, str):
            messages = [{"role": "system", "content": data.system_prompt}] if data.system_prompt else []
            prompt = [*messages, {"role": "user", "content": prompt}]
        new["prompt"] = prompt
        out.append(new)
    return out
