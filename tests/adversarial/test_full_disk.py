"""Issue 26, finding 8: a full disk during a save was a raw ``SafetensorError``/``RuntimeError`` traceback.

A real ``botgrpo train`` writes its run onto a 400 KiB tmpfs (a mount namespace of its own, via ``unshare
-rm``): the initial model and checkpoint-1 fit, checkpoint-2 does not. The run stops with one line saying
the disk is full and which checkpoint ``--resume`` continues from; the folder, copied to a disk with room,
resumes to the end. Skipped where unprivileged user namespaces are off.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _namespaces() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-rm", "true"], capture_output=True)
    return probe.returncode == 0


pytestmark = pytest.mark.skipif(not _namespaces(), reason="needs unprivileged user and mount namespaces")


def _run_file(tmp_path: Path, output_dir: Path) -> Path:
    run = {
        "model": {"name_or_path": "tiny", "tiny": {"hidden_size": 32, "num_layers": 1, "num_heads": 2}},
        "data": {"source": "task", "task": "arithmetic", "train_size": 64, "eval_size": 2},
        "rewards": {"alpha": 1.0, "beta": 0.25, "signals": [{"name": "core.exact_answer"}]},
        "training": {
            "steps": 3,
            "prompts_per_step": 2,
            "group_size": 4,
            "max_new_tokens": 12,
            "output_dir": str(output_dir),
            "eval_every": 0,
            "eval_greedy": False,
            "save_every": 1,
            "plots": False,
        },
        "engine": {"device": "cpu"},
    }
    path = tmp_path / "run.yaml"
    path.write_text(json.dumps(run), encoding="utf-8")
    return path


def test_a_full_disk_stops_the_run_with_the_checkpoint_to_resume_from(tmp_path):
    mount, copy = tmp_path / "small-disk", tmp_path / "copy"
    mount.mkdir()
    copy.mkdir()
    run = _run_file(tmp_path, mount)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    script = (
        'mount -t tmpfs -o size=400k tmpfs "$1" || exit 99; '
        '"$2" -m botgrpo_core.cli.main train "$3"; rc=$?; cp -a "$1"/. "$4"/; exit $rc'
    )
    full = subprocess.run(
        ["unshare", "-rm", "sh", "-c", script, "sh", str(mount), sys.executable, str(run), str(copy)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert full.returncode == 1, full.stderr[-3000:]
    assert "Traceback" not in full.stderr, full.stderr[-3000:]
    [line] = [x for x in full.stderr.splitlines() if x.startswith("botgrpo: stopped:")]
    assert f"the disk holding training.output_dir {str(mount)!r} is full" in line, line
    assert "checkpoint-1 is complete, continue from it with --resume" in line, line
    assert line.endswith(f"botgrpo train {run} --resume"), line
    assert (copy / "checkpoint-1" / "trainer_state.json").is_file()
    assert not (copy / "summary.json").exists()

    # The same folder on a disk with room: --resume skips the torn checkpoint-2 and finishes.
    resumed = subprocess.run(
        [
            sys.executable,
            "-m",
            "botgrpo_core.cli.main",
            "train",
            str(run),
            "--resume",
            "--set",
            f"training.output_dir={copy}",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "skipping checkpoint-2, a torn checkpoint" in resumed.stderr, resumed.stderr[-3000:]
    assert json.loads((copy / "summary.json").read_text())["steps"] == 3
