"""One real ``botgrpo bench --quick`` at a minimal size, so the pipeline cannot rot: warm starts, both
tasks, the candidate/reference pair, Pass@k, signal quality, the report and its plots, and a resume.

Each run is a fresh process (torch and TRL imported each time), so the size is what keeps it short: one
training step per run, two held-out prompts, one Pass@k prompt.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
BENCH = ROOT / "benchmarks" / "bench_full.yaml"

# The candidate/reference pair (not --quick's three methods), one step, two held-out prompts: each run is a
# fresh process, so every run and evaluation left out is seconds saved.
TINY = {
    "methods": "[bot-grpo,grpo]",
    "tasks.{t}.warm_start.steps": 1,
    "tasks.{t}.warm_start.demonstrations": 8,
    "tasks.{t}.warm_start.eval_size": 2,
    "tasks.{t}.run.training.steps": 1,
    "tasks.{t}.run.training.eval_every": 1,
    "tasks.{t}.run.training.prompts_per_step": 2,
    "tasks.{t}.run.training.group_size": 2,
    "tasks.{t}.run.training.max_new_tokens": 16,
    "tasks.{t}.run.data.eval_size": 2,
    "tasks.{t}.run.data.train_size": 8,
    "tasks.{t}.pass_k": 2,
    "tasks.{t}.pass_k_prompts": 1,
}


def test_quick_bench_runs_end_to_end(tmp_path: Path) -> None:
    sets = [f"cache_dir={tmp_path / 'cache'}", "signal_quality_samples=2"]
    for key, value in TINY.items():
        sets += sorted({f"{key.format(t=t)}={value}" for t in ("math", "react")})
    out = tmp_path / "results"
    cmd = [
        sys.executable,
        "-m",
        "botgrpo_core.cli.main",  # `botgrpo bench`: the core's CLI with the plugin's command
        "bench",
        str(BENCH),
        "--quick",
        "--output",
        str(out),
    ]
    for s in sets:
        cmd += ["--set", s]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=600, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]

    runs = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
    assert {(r["task"], r["method"]) for r in runs} == {
        (t, m) for t in ("math", "react") for m in ("bot-grpo", "grpo")
    }
    assert all(r["machine"]["cpu"] and r["resumed"] is False for r in runs)  # where each run ran
    # what ran (issue 56): the commit of this checkout, the versions, the host; in the bench's meta too
    assert all(r["ran"]["git"]["commit"] and r["ran"]["versions"]["torch"] for r in runs)
    assert all(r["ran"]["plugins"]["botgrpo-bench"] and r["ran"]["host"]["name"] for r in runs)
    assert all(r["status"] == "ok" for r in runs), [r["error"] for r in runs]
    assert all(
        r["pass_k"]["k"] == 2 and 0.0 <= r["pass_k"]["pass@1"] <= r["pass_k"]["pass@2"] <= 1 for r in runs
    )
    assert all(r["s_per_step"] and r["s_per_step"] > 0 for r in runs)
    points = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    for task, metric in (("math", "sampled/answer_accuracy"), ("react", "sampled/compile_rate")):
        for method in ("bot-grpo", "grpo"):
            steps = sorted(p["step"] for p in points if p["task"] == task and p["method"] == method)
            assert steps == [0, 1]  # initial policy, then every step
            assert all(0.0 <= p[metric] <= 1.0 for p in points if p["task"] == task)
    summary = (out / "summary.md").read_text()
    assert "## Task `math`" in summary and "## Task `react`" in summary
    assert "--quick" in summary and "Machine:" in summary and "## Signal quality" in summary
    meta = json.loads((out / "meta.json").read_text())
    assert meta["ran"]["git"] == runs[0]["ran"]["git"] and meta["ran"]["versions"]["botgrpo"]
    assert meta["signal_quality"]["math"]["unit"] == "step line"
    assert meta["signal_quality"]["react"]["samples"] == 2
    for png in ("curves_math.png", "curves_react.png", "step_time.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    # A second invocation reuses every finished run (resume) and rewrites the report from them; the signal
    # quality is not measured again (it is not part of a run's fingerprint, and measuring it costs seconds).
    again = subprocess.run(
        [*cmd, "--set", "signal_quality_samples=0"], capture_output=True, text=True, cwd=ROOT, timeout=300
    )
    assert again.returncode == 0, again.stderr[-3000:]
    assert "4 of 4 runs already finished (reused)" in again.stdout
    history = json.loads((out / "meta.json").read_text())["history"]
    assert [h["runs_started"] for h in history] == [4, 0]
    assert "1 more only rewrote this report from the finished runs" in (out / "summary.md").read_text()

    # A grid completed part-way: scripts/bench_report_finished.py reports the finished runs, starts none,
    # and says which it left out.
    (out / "runs" / "react" / "grpo" / "seed0" / "bench_result.json").unlink()
    script = [sys.executable, str(ROOT / "scripts" / "bench_report_finished.py"), str(BENCH), "--quick"]
    script += ["--output", str(out)] + [a for s in [*sets, "signal_quality_samples=0"] for a in ("--set", s)]
    partial = subprocess.run(script, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert partial.returncode == 0, partial.stderr[-3000:]
    assert "not finished, left out: react/grpo/seed0" in partial.stdout
    runs = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
    assert len(runs) == 3 and ("react", "grpo") not in {(r["task"], r["method"]) for r in runs}
    assert "- Not run (left out of every table): react/grpo/seed0" in (out / "summary.md").read_text()
    assert [h["runs_started"] for h in json.loads((out / "meta.json").read_text())["history"]] == [4, 0, 0]
