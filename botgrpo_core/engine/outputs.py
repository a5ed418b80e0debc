"""The run's output folder: file names, finding the last complete checkpoint, guarding an earlier run.

An earlier run's outputs (checkpoints, metrics, final model, summary) are never deleted implicitly: a
fresh run into a folder that holds them is refused unless ``--overwrite`` (replace) or ``--resume``
(continue) says what to do. ``--resume`` continues from the last *complete* ``checkpoint-N``: a save cut
by SIGKILL leaves a torn folder (an empty ``config.json``, a truncated ``optimizer.pt``, no
``trainer_state.json``), which is skipped with a warning.

Every other file a run rewrites (``metrics.jsonl`` trimmed on resume, ``summary.json``, ``config.yaml``, the
plots, ``final_model/``) is written beside its place under a temporary name and renamed over it
(:func:`atomic_write`, :func:`replace_dir`): a kill leaves the old version or the new one, never a cut one.
``summary.json`` is written last: a run is complete when it is there and says ``training.steps`` were done
(:func:`completed_run`); ``--resume`` then changes nothing.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import time
import zipfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
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
#: the suffix of a file or folder being written in place of another (:func:`atomic_path`, :func:`replace_dir`)
TMP_SUFFIX = ".tmp"


# ------------------------------------------------------------------------------------------------
# Atomic rewrites
# ------------------------------------------------------------------------------------------------
@contextmanager
def atomic_path(path: Path, *, durable: bool = True) -> Iterator[Path]:
    """A temporary path beside ``path`` to write; renamed over ``path`` (``os.replace``) when the block ends
    without an error, removed when it raises. ``durable``: the file and its folder are fsynced, so after a
    crash of the machine too ``path`` holds the old content or the new one."""
    tmp = path.with_name(f".{path.name}{TMP_SUFFIX}")
    try:
        yield tmp
        if durable:
            _fsync(tmp)
        os.replace(tmp, path)
        if durable:
            _fsync(path.parent)
    finally:
        tmp.unlink(missing_ok=True)


def atomic_write(path: Path, data: str | bytes, *, durable: bool = True) -> None:
    """Replace ``path``'s content with ``data`` (text as UTF-8) through :func:`atomic_path`."""
    with atomic_path(path, durable=durable) as tmp:
        tmp.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)


def replace_dir(src: Path, dest: Path) -> None:
    """Put the finished folder ``src`` in place of ``dest`` (files and folder fsynced first).

    A folder cannot be renamed over a non-empty one: the old ``dest`` moves aside to ``dest.old`` first and
    is removed after, so a kill in between leaves no ``dest`` (a run then is not complete: ``--resume``
    writes it again) but never a mixed one.
    """
    for path in sorted(src.rglob("*")):
        if path.is_file():
            _fsync(path)
    _fsync(src)
    old = dest.with_name(dest.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if dest.exists():
        os.replace(dest, old)
    os.replace(src, dest)
    _fsync(dest.parent)
    shutil.rmtree(old, ignore_errors=True)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# ------------------------------------------------------------------------------------------------
# Checkpoints
# ------------------------------------------------------------------------------------------------
def checkpoints(output_dir: Path) -> list[tuple[int, Path]]:
    """``(step, folder)`` of every ``checkpoint-N`` folder, by step."""
    if not output_dir.is_dir():
        return []
    found = [(int(m[1]), p) for p in output_dir.iterdir() if (m := _CHECKPOINT.match(p.name)) and p.is_dir()]
    return sorted(found)


def checkpoint_step(checkpoint: str | Path) -> int:
    """The step of a ``checkpoint-N`` folder."""
    match = _CHECKPOINT.match(Path(checkpoint).name)
    if match is None:
        raise ValueError(f"{checkpoint} is not a checkpoint-N folder")
    return int(match[1])


def restore_checkpoint(trainer: Any, checkpoint: str) -> None:
    """The trainer as ``train()`` leaves it after the checkpoint's step: its weights, its state, and no
    more checkpoints than ``training.save_total_limit`` (a resume whose last checkpoint is the last step)."""
    from transformers import TrainerState
    from transformers.trainer_utils import rotate_checkpoints

    trainer._load_from_checkpoint(checkpoint)
    trainer.state = TrainerState.load_from_json(str(Path(checkpoint) / TRAINER_STATE_FILE))
    if trainer.args.should_save:  # a kill after the last save, before HF rotated the old ones: rotate now
        rotate_checkpoints(
            output_dir=trainer.args.output_dir,
            save_total_limit=trainer.args.save_total_limit,
            best_model_checkpoint=trainer.state.best_model_checkpoint,
        )


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


def completed_run(output_dir: Path, steps: int) -> dict[str, Any] | None:
    """The ``summary.json`` of a run in ``output_dir`` that finished at least ``steps`` steps (its final
    model written: the summary is written after it), or None when the run is not complete."""
    try:
        summary = json.loads((output_dir / SUMMARY_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    done = summary.get("steps") if isinstance(summary, dict) else None
    if not isinstance(done, int) or done < steps or not (output_dir / FINAL_MODEL_DIR).is_dir():
        return None
    return summary


# ------------------------------------------------------------------------------------------------
# The metrics file
# ------------------------------------------------------------------------------------------------
class MetricsLog:
    """Append-only ``metrics.jsonl``; on resume, lines after the checkpoint's step are dropped first."""

    def __init__(self, path: Path, enabled: bool = True) -> None:
        self.path = path
        self.enabled = enabled

    def truncate_after(self, step: int) -> list[str]:
        """Keep the records up to ``step`` (no summary); returns what was unreadable and dropped.

        A run killed mid-write leaves a torn last line (cut JSON, a NUL-filled tail, cut UTF-8): it is
        dropped, and the caller warns, instead of failing the resume. The kept records go to a new file
        renamed over the old one: a kill during the rewrite leaves the whole history.
        """
        if not self.enabled or not self.path.is_file():
            return []
        records, dropped = parse_metrics(self.path.read_bytes())
        keep = [r for r in records if r.get("kind") != "summary" and r["step"] <= step]
        atomic_write(self.path, "".join(json.dumps(r) + "\n" for r in keep))
        return dropped

    def write(self, kind: str, step: int, values: Mapping[str, Any]) -> None:
        if not self.enabled:
            return
        record = {"kind": kind, "step": int(step), "time": round(time.time(), 3)}
        record.update({k: _jsonable(v) for k, v in values.items()})
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")

    def read(self) -> list[dict[str, Any]]:
        if not self.path.is_file():
            return []
        return parse_metrics(self.path.read_bytes())[0]


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if hasattr(value, "item"):
        return _jsonable(value.item())
    return value


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
        for name in (FINAL_MODEL_DIR, FINAL_MODEL_DIR + TMP_SUFFIX, FINAL_MODEL_DIR + ".old"):
            shutil.rmtree(output_dir / name, ignore_errors=True)
    # initial_model is rebuilt from the current model.tiny spec; warm_start/ is keyed by its settings and kept
    shutil.rmtree(output_dir / INITIAL_MODEL_DIR, ignore_errors=True)
