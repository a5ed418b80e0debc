"""benchmarks/bench_real.yaml (issue 37, SmolLM2-135M-Instruct with vLLM rollouts): every level plans and every
run file it gives is a valid run file, with the same model, data, steps, batch and evaluation for every method.
The runs themselves need .venv-vllm and hours (docs/results.md); tests_vllm trains the same model for real."""

from __future__ import annotations

from pathlib import Path

from botgrpo_bench.config import load_bench
from botgrpo_bench.plan import plan
from botgrpo_core.config.loading import parse_config

ROOT = Path(__file__).resolve().parents[3]
BENCH = ROOT / "benchmarks" / "bench_real.yaml"


def test_every_run_of_the_real_bench_is_a_valid_run_file(tmp_path: Path) -> None:
    bench = load_bench(str(BENCH))
    jobs = plan(bench, tmp_path, {name: None for name in bench.tasks})
    assert jobs and {j.task for j in jobs} == set(bench.tasks)
    for job in jobs:
        config = parse_config(job.run, source=job.label)
        assert config.model.name_or_path == "smollm2-135m-instruct" and config.engine.use_vllm
        assert config.training.save_every > 0  # runs outlive a session: they resume from checkpoints
    for task in bench.tasks:
        same = [
            {k: v for k, v in j.run.items() if k not in ("algorithm", "rewards")}
            | {"training": {k: v for k, v in j.run["training"].items() if k not in ("seed", "output_dir")}}
            for j in jobs
            if j.task == task
        ]
        assert all(s == same[0] for s in same)  # methods differ only in algorithm and (outcome-only) rewards
