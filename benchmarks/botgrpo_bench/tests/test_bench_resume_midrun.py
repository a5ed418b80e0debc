"""A bench run killed midway continues from its last checkpoint when the bench runs again (runs of a real
model take hours and outlive a session), and starts again when its run file changed."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from botgrpo_bench.execute import JOB_FILE, LOG_FILE, RESULT_FILE, resumable, run_job, runner_env
from botgrpo_bench.plan import Job

STEPS = 60


def _run(folder: Path, steps: int = STEPS) -> dict:
    return {
        "model": {"name_or_path": "tiny", "tiny": {"hidden_size": 32, "num_layers": 1, "num_heads": 2}},
        "data": {"source": "task", "task": "arithmetic", "train_size": 64, "eval_size": 2},
        "algorithm": {"preset": "bot-grpo"},
        "rewards": {
            "alpha": 1.0,
            "beta": 0.25,
            "signals": [
                {"name": "core.exact_answer"},
                {"name": "core.regex", "params": {"pattern": r"\d+", "value": 1.0}},
            ],
        },
        "training": {
            "steps": steps,
            "prompts_per_step": 2,
            "group_size": 4,
            "max_new_tokens": 8,
            "learning_rate": 1e-3,
            "output_dir": str(folder),
            "eval_every": 0,
            "eval_greedy": False,
            "save_every": 2,
            "plots": False,
        },
    }


def _start_and_kill(job: Job) -> None:
    """Start the job's process as the bench does and SIGKILL it once checkpoint-2 is complete."""
    job.run_dir.mkdir(parents=True)
    spec = {"label": job.label, "run": job.run, "fingerprint": job.fingerprint, "threads": 1, "resume": False}
    (job.run_dir / JOB_FILE).write_text(json.dumps(spec))
    with open(job.run_dir / LOG_FILE, "w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "botgrpo_bench.job", str(job.run_dir / JOB_FILE)],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=runner_env(1),
        )
    deadline = time.monotonic() + 300
    try:
        while not (job.run_dir / "checkpoint-2" / "trainer_state.json").is_file():
            assert proc.poll() is None, (job.run_dir / LOG_FILE).read_text()[-2000:]
            assert time.monotonic() < deadline, "no checkpoint-2 within 300 s"
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert not (job.run_dir / RESULT_FILE).exists(), "the run ended before the kill: raise STEPS"


def test_a_killed_run_resumes_from_its_checkpoint(tmp_path: Path) -> None:
    run_dir = tmp_path / "math" / "bot-grpo" / "seed0"
    job = Job("math", "bot-grpo", 0, "grid", _run(run_dir), run_dir)
    _start_and_kill(job)
    killed_at = sorted(int(p.name.split("-")[1]) for p in run_dir.glob("checkpoint-*"))
    assert killed_at and killed_at[-1] < STEPS
    assert resumable(job)

    result = run_job(job, threads=1, timeout_s=600, extra={})
    assert result["status"] == "ok", result.get("error")
    log = (run_dir / LOG_FILE).read_text()
    assert "resuming math/bot-grpo/seed0 from its last checkpoint" in log
    assert "resuming from" in log  # the trainer's own line: it continued, it did not start again
    assert result["resumed"] is True  # the record says this stretch continued a checkpoint, and where it ran
    assert result["machine"]["cpu_capability"] and result["machine"]["torch"]
    steps = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    trained = [r["step"] for r in steps if r["kind"] == "train"]
    assert trained == list(range(1, STEPS + 1))  # each step once: none lost, none trained twice
    assert json.loads((run_dir / "summary.json").read_text())["steps"] == STEPS


def test_a_changed_run_file_starts_again(tmp_path: Path) -> None:
    run_dir = tmp_path / "math" / "grpo" / "seed0"
    job = Job("math", "grpo", 0, "grid", _run(run_dir), run_dir)
    _start_and_kill(job)
    assert resumable(job)
    changed = Job("math", "grpo", 0, "grid", _run(run_dir, steps=4), run_dir)
    assert not resumable(changed)  # another fingerprint: the checkpoints are not this run's
    result = run_job(changed, threads=1, timeout_s=600, extra={})
    assert result["status"] == "ok", result.get("error")
    assert "resuming" not in (run_dir / LOG_FILE).read_text()
    assert result["resumed"] is False
    trained = [
        json.loads(line)["step"]
        for line in (run_dir / "metrics.jsonl").read_text().splitlines()
        if json.loads(line)["kind"] == "train"
    ]
    assert trained == [1, 2, 3, 4]


def test_a_killed_run_process_is_not_reported_as_a_timeout(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The OOM killer's SIGKILL was reported as 'timed out after 86400 s' (the first real-model pilot)."""
    import botgrpo_bench.execute as execute

    run_dir = tmp_path / "math" / "grpo" / "seed0"
    job = Job("math", "grpo", 0, "grid", _run(run_dir), run_dir)
    real_run = subprocess.run

    def killed(cmd, **kw):  # type: ignore[no-untyped-def]
        return real_run(
            [sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"], **kw
        )

    monkeypatch.setattr(execute.subprocess, "run", killed)
    result = run_job(job, threads=1, timeout_s=600, extra={})
    assert result["status"] == "failed"
    assert "killed by SIGKILL: out of memory?" in result["error"] and "timed out" not in result["error"]
