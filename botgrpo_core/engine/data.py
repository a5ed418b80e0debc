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
    eval_note: str = (
        ""  # why the held-out rows are fewer than data.eval_size (the one-fifth cap), if they are
    )


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
        if cut < data.eval_size:
            note = (
                f"data.eval_size {data.eval_size} is capped at a fifth of the {len(rows) + cut} rows of data.path "
                f"({cut} held out): add rows, or set data.eval_path to a held-out file"
            )
            return RunData(rows, eval_rows, None, str(data.path), note)
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


def prompt_problem(prompt: Any) -> str | None:
    """Why a row's prompt cannot be tokenized (not text or chat messages, empty, a lone surrogate), or None."""
    if isinstance(prompt, str):
        return "is empty" if not prompt else _text_problem(prompt)
    if isinstance(prompt, list):
        if not prompt:
            return "is an empty list of chat messages"
        for j, message in enumerate(prompt):
            if (
                not isinstance(message, dict)
                or not isinstance(message.get("role"), str)
                or "content" not in message
            ):
                return f"message {j} is not a {{'role': ..., 'content': ...}} object"
            content = message["content"]
            problem = _text_problem(content) if isinstance(content, str) else None
            if problem:
                return f"message {j}'s content {problem}"
        return None
    shown = json.dumps(prompt, default=str)
    shown = shown if len(shown) <= 40 else shown[:37] + "..."
    return f"is {shown} ({type(prompt).__name__}), not text or a list of chat messages"


def _text_problem(text: str) -> str | None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return (
            f"holds a lone surrogate (\\u{ord(text[exc.start]):04x}) at character {exc.start}, which no "
            "tokenizer encodes"
        )
    return None


def check_prompts(rows: Sequence[Mapping[str, Any]], field: str, where: str) -> None:
    """Every row has a prompt a tokenizer can encode in ``field`` (``data.prompt_field``); the error names the row."""
    for i, row in enumerate(rows):
        if field not in row:
            raise TrainingSetupError(
                f"{where}: row {i} has no field {field!r} (data.prompt_field; row fields: {sorted(row)}); add it "
                "to every row, or set data.prompt_field to the prompt's column"
            )
        problem = prompt_problem(row[field])
        if problem:
            raise TrainingSetupError(f"{where}: row {i}'s {field!r} {problem}; fix that row or remove it")


def prompt_lengths(tokenizer: Any, prompts: Sequence[Any]) -> list[int]:
    """The token count of each prompt as the model reads it (a chat prompt through the chat template)."""
    from botgrpo_core.engine.evaluation import render_prompts

    texts = render_prompts(tokenizer, prompts)
    return [len(ids) for ids in tokenizer(texts, add_special_tokens=False)["input_ids"]]


def check_prompt_tokens(
    config: RunConfig, rows: Sequence[Mapping[str, Any]], tokenizer: Any, where: str
) -> None:
    """``training.max_prompt_tokens``: a prompt longer than it (in the model's tokens) is an error naming its row."""
    limit = config.training.max_prompt_tokens
    if limit is None or not rows:
        return
    lengths = prompt_lengths(tokenizer, [r["prompt"] for r in to_trainer_rows(rows, config)])
    for i, n in enumerate(lengths):
        if n > limit:
            raise TrainingSetupError(
                f"training.max_prompt_tokens is {limit}, but {where} row {i}'s prompt is {n} tokens "
                f"({sum(x > limit for x in lengths)} of {len(lengths)} rows are longer); raise the limit, or "
                "shorten or drop those rows"
            )
