"""The run's output folder: file names, finding the last complete checkpoint, guarding an earlier run.

An earlier run's outputs (checkpoints, metrics, final model, summary) are never deleted implicitly: a
fresh run into a folder that holds them is refused unless ``--overwrite`` (replace) or ``--resume``
(continue) says what to do. ``--resume`` continues from the last *complete* ``checkpoint-N``: a save cut
by SIGKILL leaves a torn folder (an empty ``config.json``, a truncated ``optimizer.pt``, no
``trainer_state.json``), which is skipped with a warning.
"""

from __future__ import annotations

import json
import re
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from botgrpo_core.engine.setup import TrainingSetupError

METRICS_FILE = "metrics.jsonl"
SUMMARY_FILE = "summary.json"
WARM_START_DIR = "warm_start"
INITIAL_MODEL_DIR = "initial_model"
FINAL_MODEL_DIR = "final_model"
PLOT_FILES = ("training_curves.png", "advantages.png")
#: what HF's Trainer writes last into a checkpoint (``Trainer._save_checkpoint``, after model,
#: optimizer, scheduler and RNG states): its presence and ``global_step`` mark a finished save
TRAINER_STATE_FILE = "trainer_state.json"
_CHECKPOINT = re.compile(r"^checkpoint-(\d+)$")


# ------------------------------------------------------------------------------------------------
# Checkpoints
# ------------------------------------------------------------------------------------------------
def checkpoints(output_dir: Path) -> list[tuple[int, Path]]:
    """``(step, folder)`` of every ``checkpoint-N`` folder, by step."""
    if not output_dir.is_dir():
        return []
    found = [(int(m[1]), p) for p in output_dir.iterdir() if (m := _CHECKPOINT.match(p.name)) and p.is_dir()]
    return sorted(found)


def checkpoint_problem(folder: Path, step: int) -> str | None:
    """Why ``folder`` is not a complete checkpoint of ``step``, or None when it is.

    Complete: ``trainer_state.json`` (written last) parses and says ``global_step == step``, every JSON
    file parses, every ``.safetensors`` file is as long as its header says, and every torch file
    (``.pt``/``.pth``/``.bin``: zip archives) has its end-of-archive record.
    """
    state = folder / TRAINER_STATE_FILE
    if not state.is_file():
        return f"no {TRAINER_STATE_FILE} (the save did not finish)"
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        problem = _file_problem(path)
        if problem:
            return f"{path.relative_to(folder)}: {problem}"
    saved_step = json.loads(state.read_text(encoding="utf-8")).get("global_step")
    if saved_step != step:
        return f"{TRAINER_STATE_FILE} says global_step {saved_step!r}, not {step}"
    return None


def _file_problem(path: Path) -> str | None:
    """A truncated or empty file of the kinds a checkpoint holds, or None."""
    suffix = path.suffix
    try:
        if suffix == ".json":
            json.loads(path.read_text(encoding="utf-8"))
        elif suffix == ".safetensors":
            return _safetensors_problem(path)
        elif suffix in (".pt", ".pth", ".bin") and not zipfile.is_zipfile(path):
            return "not a complete torch file (truncated)"
    except (ValueError, UnicodeDecodeError):
        return "empty or truncated JSON"
    return None


def _safetensors_problem(path: Path) -> str | None:
    """The safetensors layout: 8-byte header length, JSON header, then the tensors' bytes."""
    size = path.stat().st_size
    with path.open("rb") as f:
        head = f.read(8)
        if len(head) < 8:
            return "truncated (no header)"
        n = int.from_bytes(head, "little")
        if 8 + n > size:
            return "truncated header"
        header = json.loads(f.read(n))
    end = max((t["data_offsets"][1] for k, t in header.items() if k != "__metadata__"), default=0)
    return None if 8 + n + end <= size else f"truncated ({size} of {8 + n + end} bytes)"


def last_checkpoint(output_dir: Path, warn: Callable[[str], None]) -> str:
    """The last complete ``checkpoint-N`` folder ``--resume`` continues from; torn ones are named to ``warn``."""
    torn = []
    for step, folder in reversed(checkpoints(output_dir)):
        problem = checkpoint_problem(folder, step)
        if problem is None:
            for name, why in torn:
                warn(f"warning: skipping {name}, a torn checkpoint ({why}); resuming from {folder.name}")
            return str(folder)
        torn.append((folder.name, problem))
    where = f"training.output_dir {str(output_dir)!r}"
    if torn:
        listed = "; ".join(f"{name}: {why}" for name, why in torn)
        raise TrainingSetupError(
            f"--resume: {where} has no complete checkpoint-N folder ({listed}); start again with --overwrite"
        )
    raise TrainingSetupError(
        f"--resume: {where} has no checkpoint-N folder to resume from; "
        "run without --resume to start, or point output_dir at an earlier run"
    )


# ------------------------------------------------------------------------------------------------
# The metrics file
# ------------------------------------------------------------------------------------------------
def parse_metrics(data: bytes) -> tuple[list[dict[str, Any]], list[str]]:
    """The records of ``metrics.jsonl``, and a note for each line that is not one (a torn write: cut
    JSON, cut UTF-8, a NUL-filled tail)."""
    records: list[dict[str, Any]] = []
    dropped: list[str] = []
    for n, raw in enumerate(data.split(b"\n"), 1):
        line = raw.strip(b"\x00 \t\r")
        if not line:
            if b"\x00" in raw:  # a preallocated tail that was never written
                dropped.append(f"line {n} ({len(raw)} NUL bytes)")
            continue
        try:
            record = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            dropped.append(f"line {n} ({len(raw)} bytes, not a JSON record)")
            continue
        if isinstance(record, dict) and isinstance(record.get("step"), int):
            records.append(record)
        else:
            dropped.append(f"line {n} (no step)")
    return records, dropped


# ------------------------------------------------------------------------------------------------
# The folder of a fresh run
# ------------------------------------------------------------------------------------------------
def earlier_run(output_dir: Path) -> list[str]:
    """The outputs of an earlier run in ``output_dir`` (empty: nothing a fresh run could lose).

    ``config.yaml``, ``initial_model/`` and the ``warm_start/`` cache are not a run's results: they are
    rewritten from the run file (the warm start is reused when its settings match).
    """
    if not output_dir.is_dir():
        return []
    found = [p.name for _, p in checkpoints(output_dir)]
    for name in (METRICS_FILE, SUMMARY_FILE, FINAL_MODEL_DIR, *PLOT_FILES):
        if (output_dir / name).exists():
            found.append(name)
    return found


def check_output_dir(output_dir: Path, *, resume: bool, overwrite: bool) -> None:
    """Refuse a fresh run into an earlier run's folder unless ``overwrite``; every rank checks alike."""
    if resume and overwrite:
        raise TrainingSetupError(
            "--resume continues the run in training.output_dir, --overwrite replaces it: give one"
        )
    found = earlier_run(output_dir)
    if resume or overwrite or not found:
        return
    shown = ", ".join(found[:4]) + (f" and {len(found) - 4} more" if len(found) > 4 else "")
    raise TrainingSetupError(
        f"training.output_dir {str(output_dir)!r} holds an earlier run ({shown}); nothing was changed. "
        "Add --resume to continue it, --overwrite to replace it, or set training.output_dir to a new folder"
    )


def prepare_output_dir(output_dir: Path, *, resume: bool, overwrite: bool) -> None:
    """Create the output dir; with ``overwrite``, remove the earlier run's outputs (the warm-start cache stays).

    Called on the main process only, after :func:`check_output_dir` passed on every process.
    """
    output_dir.mkdir(parents=True, exist_ok=True)
    if resume:
        return
    if overwrite:
        for _, old in checkpoints(output_dir):
            shutil.rmtree(old)
        for name in (METRICS_FILE, SUMMARY_FILE, *PLOT_FILES):
            (output_dir / name).unlink(missing_ok=True)
        shutil.rmtree(output_dir / FINAL_MODEL_DIR, ignore_errors=True)
    # initial_model is rebuilt from the current model.tiny spec; warm_start/ is keyed by its settings and kept
    shutil.rmtree(output_dir / INITIAL_MODEL_DIR, ignore_errors=True)
