"""What a bench shows while it runs and when it ends: a line per running run (its step and latest
evaluation) every ``progress_every_s``, and the closing side-by-side table."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from botgrpo_bench.bench import describe_progress, side_by_side
from botgrpo_bench.config import load_bench
from botgrpo_bench.execute import _Heartbeat
from botgrpo_bench.plan import Job

ROOT = Path(__file__).resolve().parents[3]
REGIMES = ROOT / "benchmarks" / "bench_regimes.yaml"


def _job(tmp_path: Path, task: str = "math-medium") -> Job:
    bench = load_bench(REGIMES)
    return Job(task, "bot-grpo", 0, "grid", bench.tasks[task].run, tmp_path)


def test_progress_line_reads_the_runs_metrics(tmp_path: Path) -> None:
    bench = load_bench(REGIMES)
    job = _job(tmp_path)
    assert describe_progress(bench, job) is None  # nothing written yet
    rows = [
        {"kind": "eval", "step": 0, "eval/sampled/answer_accuracy": 0.33},
        {"kind": "train", "step": 1, "loss": 0.1},
        {"kind": "train", "step": 12, "loss": 0.1},
        {"kind": "eval", "step": 10, "eval/sampled/answer_accuracy": 0.41},
    ]
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows) + '{"torn', "utf-8")
    assert (
        describe_progress(bench, job) == "step 12/200, sampled/answer_accuracy 0.410 (evaluated at step 10)"
    )


def test_heartbeat_logs_running_jobs_and_survives_a_failing_description(tmp_path: Path) -> None:
    job = _job(tmp_path)
    lines: list[str] = []
    logged = threading.Event()
    calls = []

    def describe(j: Job) -> str:
        calls.append(j)
        if len(calls) == 1:
            raise RuntimeError("a torn file")  # costs one line, never the bench
        return "step 3/200"

    def log(line: str) -> None:
        lines.append(line)
        logged.set()

    with _Heartbeat(0.01, describe, log) as beat:
        beat.started(0, job)
        assert logged.wait(5.0)
        beat.finished(0)
    assert lines[0] == f"  {job.label}: step 3/200"


def test_side_by_side_table_means_over_seeds_and_counts_censored_runs(tmp_path: Path) -> None:
    bench = load_bench(REGIMES, overrides=["include=[math-long]", "seeds=[0, 1]", "methods=[bot-grpo, grpo]"])
    base = {"task": "math-long", "group": "grid", "status": "ok", "s_per_step": 0.5}
    rows = [
        {
            **base,
            "method": "bot-grpo",
            "seed": 0,
            "steps_to_target": 40,
            "initial": 0.3,
            "final": 0.8,
            "curve_mean": 0.6,
        },
        {
            **base,
            "method": "bot-grpo",
            "seed": 1,
            "steps_to_target": 60,
            "initial": 0.3,
            "final": 0.7,
            "curve_mean": 0.5,
        },
        {
            **base,
            "method": "grpo",
            "seed": 0,
            "steps_to_target": 120,
            "initial": 0.3,
            "final": 0.6,
            "curve_mean": 0.45,
        },
        {
            **base,
            "method": "grpo",
            "seed": 1,
            "steps_to_target": None,
            "initial": 0.3,
            "final": 0.5,
            "curve_mean": 0.4,
        },
    ]
    (tmp_path / "curves_math-long.png").write_bytes(b"\x89PNG")
    text = side_by_side(bench, rows, tmp_path)
    assert "math-long: sampled/answer_accuracy, target 0.5 (means over 2 seed(s))" in text
    bot = next(line for line in text.splitlines() if line.strip().startswith("bot-grpo"))
    grpo = next(line for line in text.splitlines() if line.strip().startswith("grpo"))
    assert bot.split()[1:] == ["50", "(2/2", "reached)", "0.300", "0.750", "0.550", "0.50"]
    assert grpo.split()[1:] == ["120", "(1/2", "reached)", "0.300", "0.550", "0.425", "0.50"]
    assert f"curves: {tmp_path / 'curves_math-long.png'}" in text
