"""Where one real-model step of the math level goes (issue 57 item 6): generation, scoring, forwards, backward,
optimizer, weight sync, evaluation.

    .venv-vllm/bin/python scripts/profile_math_step.py --variant baseline --steps 2
    .venv-vllm/bin/python scripts/profile_math_step.py --variant no-is-forward --steps 2

Runs ``botgrpo train``'s own :func:`~botgrpo_core.engine.run.run_training` on round 4's math run settings
(benchmarks/bench_real.yaml, level ``math-lr2e-4``: SmolLM2-135M-Instruct, LoRA r16, vLLM CPU rollouts, 4 prompts x
8, <= 256 tokens, temperature 0.7, micro-batches of 4, 2 torch threads) on a multi-step set, BoT-GRPO, with a
variant's ``--set`` overrides (:data:`VARIANTS`), and times each phase by wrapping, in this process only, the
functions the engine calls (nothing in the engine changes): TRL's log-probability passes (with and without
gradient: the loss forward, and the importance-sampling forward TRL adds for vLLM rollouts), accelerate's backward,
the optimizer's step, the colocated engine's weight sync and the held-out evaluation; generation and scoring come
from the run's own ``time/generate_s`` and ``time/score_s``. Each step's split is appended to
benchmarks/results/math_step_profile.json under the variant, with the step's loss and grad norm (a variant that
costs nothing in the result leaves them where the baseline has them, up to float noise).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
RESULT = ROOT / "benchmarks/results/math_step_profile.json"

VARIANTS: dict[str, list[str]] = {
    "baseline": [],
    # TRL computes the policy's log-probabilities once more, without gradient, to correct for vLLM's sampling
    # (vllm_importance_sampling_correction); in float32 on CPU its ratio is 1 within 1e-4 (round 4's metrics)
    "no-is-forward": ["engine.trl_args={vllm_importance_sampling_correction: false}"],
    "mb8": ["training.micro_batch_size=8"],
    "mb16": ["training.micro_batch_size=16"],
    "no-is-mb16": [
        "engine.trl_args={vllm_importance_sampling_correction: false}",
        "training.micro_batch_size=16",
    ],
}


def base_run(problem_set: str) -> dict[str, Any]:
    """The math level's run settings (bench_real.yaml's math-lr2e-4), on ``problem_set``, BoT-GRPO."""
    bench = yaml.safe_load((ROOT / "benchmarks/bench_real.yaml").read_text())
    run = json.loads(json.dumps(bench["tasks"]["math-lr2e-4"]["run"]))  # anchors and merges resolved
    run["data"]["task_params"] = {"problem_set": problem_set, "prompt": "one_shot"}
    run["algorithm"] = {"preset": "bot-grpo"}
    for signal in run["rewards"]["signals"]:
        if signal["name"] == "sympy.steps":
            signal["params"]["truncated_cut"] = "sentence"
    return run


class Timers:
    """Seconds per phase since the last reset, and call counts."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)

    def wrap(self, name: str | Any, fn: Any) -> Any:
        @functools.wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Any:
            import torch

            key = name(torch.is_grad_enabled()) if callable(name) else name
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds[key] += time.perf_counter() - start
                self.calls[key] += 1

        return timed

    def take(self) -> dict[str, Any]:
        out = {k: round(v, 2) for k, v in self.seconds.items()}
        out["calls"] = dict(self.calls)
        self.seconds.clear()
        self.calls.clear()
        return out


def install(timers: Timers) -> None:
    """Wrap the engine's phases (class and module attributes of this process)."""
    import accelerate
    from trl import GRPOTrainer

    import botgrpo_core.engine.run as run_module
    import botgrpo_core.engine.vllm_engine as vllm_engine

    GRPOTrainer._get_per_token_logps_and_entropies = timers.wrap(
        lambda grad: "forward_loss" if grad else "forward_nograd",
        GRPOTrainer._get_per_token_logps_and_entropies,
    )
    accelerate.Accelerator.backward = timers.wrap("backward", accelerate.Accelerator.backward)
    run_module.evaluate = timers.wrap("evaluation", run_module.evaluate)
    patch = vllm_engine.patch_weight_sync

    def patch_and_time(generation: Any) -> None:
        patch(generation)
        generation.sync_weights = timers.wrap("weight_sync", generation.sync_weights)

    vllm_engine.patch_weight_sync = patch_and_time


def callback(timers: Timers, rows: list[dict[str, Any]]) -> Any:
    from transformers import TrainerCallback

    class Profile(TrainerCallback):
        def on_train_begin(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            optimizer = kw["optimizer"]
            optimizer.step = timers.wrap("optimizer", optimizer.step)
            self.start = time.perf_counter()
            rows.append({"step": 0, "phase": "before training", **timers.take()})  # the step-0 evaluation

        def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            now = time.perf_counter()
            import torch

            row = {"step": state.global_step, "wall_s": round(now - self.start, 2), **timers.take()}
            rows.append({**row, "torch_threads": torch.get_num_threads()})
            self.start = now

    return Profile()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", choices=sorted(VARIANTS), default="baseline")
    parser.add_argument("--set", dest="extra", action="append", default=[], help="more key=value overrides")
    parser.add_argument("--problem-set", default="multi23")
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--eval-size", type=int, default=32)
    parser.add_argument("--out", type=Path, default=RESULT)
    args = parser.parse_args()

    from botgrpo_core.config.loading import load_config
    from botgrpo_core.engine.run import run_training

    out_dir = ROOT / "runs/profile-57" / args.variant
    out_dir.mkdir(parents=True, exist_ok=True)
    run = base_run(args.problem_set)
    run["training"].update(steps=args.steps, output_dir=str(out_dir), eval_every=args.steps, save_every=0)
    run["data"]["eval_size"] = args.eval_size
    run_file = out_dir / "run.yaml"
    run_file.write_text(yaml.safe_dump(run, sort_keys=False))
    overrides = [*VARIANTS[args.variant], *args.extra]
    config = load_config(run_file, overrides)
    timers, rows = Timers(), []
    install(timers)
    load = os.getloadavg()
    start = time.perf_counter()
    run_training(
        config, overrides=overrides, overwrite=True, callbacks=[callback(timers, rows)], progress=False
    )
    wall = time.perf_counter() - start
    metrics = [json.loads(x) for x in (out_dir / "metrics.jsonl").read_text().splitlines()]
    train = {m["step"]: m for m in metrics if m["kind"] == "train"}
    for row in rows:
        m = train.get(row["step"], {})
        for key in ("time/generate_s", "time/score_s", "time/batch_s", "step_time", "loss", "grad_norm"):
            if key in m:
                row[key.removeprefix("time/")] = m[key]
        for key in ("completions/mean_length", "completions/clipped_ratio"):
            if key in m:
                row[key.split("/")[1]] = m[key]
    record = json.loads(args.out.read_text()) if args.out.exists() else {"runs": {}}
    record["runs"][f"{args.variant}/{args.problem_set}/{args.steps}steps"] = {
        "overrides": overrides,
        "eval_size": args.eval_size,
        "wall_s": round(wall, 1),
        "load_before": load,
        "load_after": os.getloadavg(),
        "cpus": os.cpu_count(),
        "steps": rows,
    }
    args.out.write_text(json.dumps(record, indent=2) + "\n")
    print(json.dumps(rows, indent=1))
    with contextlib.suppress(OSError):
        print(f"wrote {args.out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
