"""The run's output folder: file names, checkpoints, preparing the folder for a new or resumed run."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass
from botgrpo_core.engine.setup import TrainingSetupError

METRICS_FILE = "metrics.jsonl"
SUMMARY_FILE = "summary.json"
WARM_START_DIR = "warm_start"
INITIAL_MODEL_DIR = "initial_model"
FINAL_MODEL_DIR = "final_model"


# ------------------------------------------------------------------------------------------------
# The run
# ------------------------------------------------------------------------------------------------
def _last_checkpoint(output_dir: Path) -> str:
    """The ``checkpoint-N`` folder ``--resume`` continues from."""
    from transformers.trainer_utils import get_last_checkpoint

    last = get_last_checkpoint(str(output_dir)) if output_dir.is_dir() else None
    if last is None:
        raise TrainingSetupError(
            f"--resume: training.output_dir {str(output_dir)!r} has no checkpoint-N folder to resume from; "
            "run without --resume to start, or point output_dir at an earlier run"
        )
    return last


def _prepare_output_dir(output_dir: Path, resume: bool) -> None:
    """Create the output dir; for a fresh run remove an earlier run's outputs (the warm-start cache stays)."""
    output_dir.mkdir(parents=True, exist_ok=True)
    if resume:
        return
    for old in output_dir.glob("checkpoint-*"):
        shutil.rmtree(old, ignore_errors=True)
    for name in (METRICS_FILE, SUMMARY_FILE, "training_curves.png", "advantages.png"):
        (output_dir / name).unlink(missing_ok=True)
    # initial_model is rebuilt from the current model.tiny spec; warm_start/ is keyed by its settings and kept
    for name in (FINAL_MODEL_DIR, INITIAL_MODEL_DIR):
        shutil.rmtree(output_dir / name, ignore_errors=True)
