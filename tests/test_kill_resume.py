"""Issue 26, findings 2, 3 and 4, on real ``botgrpo train`` processes killed with SIGKILL.

Every resumed run must equal the uninterrupted one, file by file where the files are deterministic
(weights, optimizer, scheduler and RNG states of every kept checkpoint, the final model, the plots, the
metrics without wall-clock values, the summary's evaluations); a finished run is left as it is; one run
at a time trains in a folder. The runs are forked from one helper process that imported torch once
(tests/kill_points.py), so a run costs ~3-4 s of CPU. A larger sweep: scripts/kill_resume_sweep.py.
"""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from kill_points import ROOT, TrainServer, differences, digest, finish, records, run_file

#: kill points beyond the forced ones, drawn from the reference run's ops by a seeded RNG
RANDOM_POINTS, SEED = 3, 26


@pytest.fixture(scope="module")
def server():
    with TrainServer() as s:
        yield s


@pytest.fixture(scope="module")
def reference(server, tmp_path_factory):
    """The uninterrupted run: its folder and the ops it performed, in order."""
    run = run_file(tmp_path_factory.mktemp("reference"))
    result = server.train(run)
    assert result.code == 0, result
    return run.parent / "run", result.ops


def _hashes(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): digest(p) for p in sorted(folder.rglob("*")) if p.is_file()}


def test_resume_of_a_finished_run_changes_nothing(server, reference, tmp_path):
    """Finding 2: `--resume` of a complete run (steps: 3) trained step 4 and replaced final_model and
    summary.json; now it says the run is complete and leaves every file as it was."""
    ref, _ = reference
    run = run_file(tmp_path)
    assert server.train(run).code == 0
    before = _hashes(run.parent / "run")
    result = server.train(run, "--resume")
    assert result.code == 0, result
    assert (
        "holds a complete run (3 steps, training.steps 3" in result.log
        and "nothing was changed" in result.log
    )
    assert _hashes(run.parent / "run") == before
    assert result.ops == []  # not one write, not one removal
    assert json.loads((run.parent / "run" / "summary.json").read_text())["steps"] == 3
    assert differences(run.parent / "run", ref) == []


@pytest.mark.parametrize(
    "kill",
    [
        "safetensors:final_model.tmp/model.safetensors",  # mid-write of the final weights
        "replace:run/summary.json",  # everything but the mark of completion written
        "rmtree:run/checkpoint-1",  # checkpoint-3 saved, HF's rotation of checkpoint-1 not done (sweep find)
    ],
)
def test_a_kill_after_the_last_checkpoint_resumes_to_the_same_final_model(server, reference, tmp_path, kill):
    """Finding 2: killed between checkpoint-3 (the last step) and the final files, the resumed run trained a
    4th step; now it trains none and writes the same final model, plots and summary."""
    ref, _ = reference
    run = run_file(tmp_path)
    assert server.train(run, kill=kill).code == -signal.SIGKILL
    assert not (run.parent / "run" / "summary.json").exists()
    [result] = finish(server, run)
    assert "checkpoint-3 is the run's last step (training.steps 3): no step to train" in result.log, result
    assert not any(op.startswith(("metrics:train", "safetensors:checkpoint")) for op in result.ops)
    assert differences(run.parent / "run", ref) == []


def test_a_kill_during_the_metrics_rewrite_keeps_the_history(server, reference, tmp_path):
    """Finding 3: `--resume` rewrote metrics.jsonl in place; killed mid-rewrite it was 0 bytes and the next
    resume continued silently. Now the rewrite goes to a temporary file renamed over the old one."""
    ref, _ = reference
    run = run_file(tmp_path)
    assert server.train(run, kill="torch.save:checkpoint-3/optimizer.pt").code == -signal.SIGKILL
    metrics = run.parent / "run" / "metrics.jsonl"
    history = metrics.read_bytes()
    assert [r["step"] for r in records(run.parent / "run") if r["kind"] == "train"] == [1, 2, 3]
    kill = "write:run/.metrics.jsonl.tmp"  # the rewrite cut in the middle
    killed = server.train(run, "--resume", kill=kill)
    assert killed.code == -signal.SIGKILL and killed.ops[-1] == kill
    assert metrics.read_bytes() == history  # not one line lost to the kill
    results = finish(server, run)
    assert any("resuming from" in r.log and "(step 2)" in r.log for r in results)
    assert differences(run.parent / "run", ref) == []


def test_seeded_kill_points_all_resume_to_the_uninterrupted_run(server, reference, tmp_path):
    """The kill-and-resume test: SIGKILL at points drawn from the reference run's ops (a seeded RNG), the
    first resume killed too at a drawn point, then resumed to the end: every run equals the reference."""
    ref, ops = reference
    rng = random.Random(SEED)
    for n, (first, second) in enumerate(
        (rng.randrange(len(ops)), rng.randrange(len(ops))) for _ in range(RANDOM_POINTS)
    ):
        run = run_file(tmp_path / f"point{n}")
        killed = server.train(run, kill=first)
        assert killed.code == -signal.SIGKILL and len(killed.ops) == first + 1, (ops[first], killed)
        finish(server, run, kill_resume=second)
        assert differences(run.parent / "run", ref) == [], (ops[first], second)


# ------------------------------------------------------------------------------------------------
# Finding 4: one run per output folder
# ------------------------------------------------------------------------------------------------
def test_a_second_start_into_a_busy_folder_is_refused_and_a_stale_lock_is_taken_over(
    server, reference, tmp_path
):
    """Two `botgrpo train` into one folder were both admitted; one died with a raw `OSError: [Errno 39]
    Directory not empty: 'initial_model.tmp' -> 'initial_model'`. Now the second (a real CLI process:
    plain, --overwrite, --resume) is refused naming the first; once the first is dead, its lock is taken
    over with a warning."""
    ref, _ = reference
    run = run_file(tmp_path)
    out = run.parent / "run"
    first = server.train(run, stop="metrics:train-1")  # holds the folder, stopped mid-run
    try:
        owner = json.loads((out / "train.lock").read_text())
        assert owner["pid"] == first.pid and owner["host"] == socket.gethostname()
        before = _hashes(out)
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
        for flags in ([], ["--overwrite"], ["--resume"]):
            second = subprocess.run(
                [sys.executable, "-m", "botgrpo_core.cli.main", "train", str(run), *flags],
                cwd=ROOT,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert second.returncode == 2, second.stderr[-3000:]
            assert "Traceback" not in second.stderr
            assert (
                f"is in use by botgrpo train pid {first.pid} on host {socket.gethostname()}" in second.stderr
            )
            assert f"kill {first.pid}" in second.stderr and "nothing was changed" in second.stderr
            assert _hashes(out) == before  # no initial_model.tmp, no file touched
    finally:
        os.kill(first.pid, signal.SIGKILL)
        os.kill(first.pid, signal.SIGCONT)
    assert server.wait(first).code == -signal.SIGKILL
    assert (out / "train.lock").is_file()  # the dead run's lock is still there: stale
    again = server.train(run, "--overwrite")  # killed before its first checkpoint: start again
    assert again.code == 0, again
    assert f"taking over a stale lock of botgrpo train pid {first.pid}" in again.log, again.log[-2000:]
    assert not (out / "train.lock").exists()
    assert differences(out, ref) == []


def test_a_lock_left_by_another_host_is_not_taken(server, tmp_path):
    """Whether a process on another host lives cannot be checked from here: refused, with what to do."""
    run = run_file(tmp_path)
    out = run.parent / "run"
    out.mkdir()
    (out / "train.lock").write_text(json.dumps({"pid": 4242, "host": "node-7", "command": "botgrpo train x"}))
    result = server.train(run)
    assert result.code == 2, result
    assert "locked by botgrpo train pid 4242 on host node-7" in result.log
    assert "delete" in result.log and "train.lock" in result.log
    assert sorted(p.name for p in out.iterdir()) == ["train.lock"] and not result.ops
