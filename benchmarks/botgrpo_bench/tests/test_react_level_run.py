"""The React long and cold levels of benchmarks/bench_regimes.yaml at a minimal size, in this process (CI:
seconds): the bench's own run files for bot-grpo and grpo (planned by the bench, fairness rules applied)
train two steps on 6-section (long) or 4-section (cold, its tail-blame arm) view pages from a tiny model; each step logs the outcome and the share of trivial
pages, each evaluation the task's spec_rate; the trivial-share plot reads them back; a re-run of the same
seed reproduces its metrics exactly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from botgrpo_bench.config import load_bench
from botgrpo_bench.plan import plan
from botgrpo_bench.react_plots import TRIVIAL_KEY, plot_trivial_share

ROOT = Path(__file__).resolve().parents[3]
BENCH = ROOT / "benchmarks" / "bench_regimes.yaml"
#: the minimal size: two steps of 2 prompts x 2 rollouts, short completions, two held-out pages
TINY = {
    "steps": 2,
    "eval_every": 1,
    "prompts_per_step": 2,
    "group_size": 2,
    "max_new_tokens": 24,
    "plots": False,
}


def _train(run: dict, out: Path) -> list[dict]:
    from botgrpo_core.config.loading import parse_config
    from botgrpo_core.engine.run import run_training

    run = json.loads(json.dumps(run))
    run["training"].update(TINY, output_dir=str(out))
    run["data"].update(eval_size=2, train_size=8)
    run["model"]["name_or_path"] = "tiny"  # no warm start: a tiny model built from the seed
    config = parse_config(run, source="react level (minimal)")
    run_training(config, progress=False, log=lambda _m: None)
    return [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines() if line.strip()]


@pytest.mark.timeout(600)
@pytest.mark.parametrize(
    ("task", "error_rate", "sections"), [("react-long", 0.3, 6), ("react-cold-tail", 0.75, 4)]
)
def test_react_level_trains_logs_trivial_share_and_reproduces(
    tmp_path: Path, task: str, error_rate: float, sections: int
) -> None:
    bench = load_bench(BENCH, overrides=[f"include=[{task}]", "seeds=[0]", "methods=[bot-grpo,grpo]"])
    jobs = {job.method: job for job in plan(bench, tmp_path / "plan", {task: None})}
    assert jobs["bot-grpo"].run["data"]["task_params"] == {
        "grammar": "spec",
        "error_rate": error_rate,
        "sections": [sections, sections],
    }
    # fairness: grpo sees the global signals only (the outcome and the logged trivial share)
    assert [s["name"] for s in jobs["grpo"].run["rewards"]["signals"]] == [
        "bench.react_spec",
        "bench.react_trivial",
    ]

    rows = {m: _train(job.run, tmp_path / m) for m, job in jobs.items()}
    for method, metrics in rows.items():
        train = [r for r in metrics if r.get("kind") == "train"]
        evals = [r for r in metrics if r.get("kind") == "eval"]
        assert len(train) == 2, method
        assert all(0.0 <= r[TRIVIAL_KEY] <= 1.0 for r in train), method
        assert all(0.0 <= r["signals/bench.react_spec/mean"] <= 1.0 for r in train), method
        assert {"eval/sampled/spec_rate", "eval/sampled/trivial_rate"} <= set(evals[-1]), method

    run_rows = [
        {"task": task, "method": m, "group": "grid", "status": "ok", "run_dir": str(tmp_path / m)}
        for m in rows
    ]
    plots = plot_trivial_share(run_rows, tmp_path)
    assert (tmp_path / plots[f"trivial_{task}"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    # deterministic: the same seed's run again gives the same log, number for number
    again = _train(jobs["grpo"].run, tmp_path / "again")

    def numbers(metrics: list[dict]) -> list[dict]:
        return [
            {k: v for k, v in r.items() if isinstance(v, float) and "time" not in k and "per_second" not in k}
            for r in metrics
            if r.get("kind") in ("train", "eval")
        ]

    assert numbers(again) == numbers(rows["grpo"])


def test_the_tuned_cold_level_is_the_tail_arm_at_its_selected_rate(tmp_path: Path) -> None:
    """react-cold-tuned (settings 12) trains exactly react-cold-tail's run files, every method at lr 1e-4 (the
    rate stage 1's rule selected for both), so the minimal run above covers it; stage 1's 1e-4 arm is the
    same run file (the re-run check), its 4e-4 and stage 3's 5e-5 arms differ only in the rate."""
    names = ["react-cold-tail", "react-cold-tuned", "react-cold-lr1", "react-cold-lr4", "react-cold-lr05"]
    bench = load_bench(BENCH, overrides=[f"include=[{','.join(names)}]", "seeds=[0]"])
    runs = {(j.task, j.method): j.run for j in plan(bench, tmp_path, dict.fromkeys(names))}
    for method in bench.methods:
        arms = [runs[name, method] for name in names]
        rates = [r["training"].pop("learning_rate") for r in arms]
        assert rates == [2.0e-4, 1.0e-4, 1.0e-4, 4.0e-4, 5.0e-5], method
        for run in arms:
            run["training"].pop("output_dir")
        assert all(run == arms[0] for run in arms), method
