"""GPU check: a few BoT-GRPO steps of a tiny model saved to disk, rollouts from vLLM (colocate mode).

One command on any CUDA machine with vLLM installed (``pip install -e ".[trl,vllm]"``)::

    python scripts/gpu_check_train.py                # 6 steps, vLLM colocate
    python scripts/gpu_check_train.py --no-vllm      # the same with HF generate (compare the step time)
    python scripts/gpu_check_train.py --cpu          # the CPU path of this script (no GPU needed)

It builds a tiny Llama (width 128, 2 layers, 2 heads of 64: a head size vLLM's kernels support) with the
arithmetic task's character tokenizer, saves it to ``OUT/model``, and runs ``run_training`` with
``engine.use_vllm`` on the built-in arithmetic task and the core signals (``core.exact_answer`` outcome,
``core.regex`` spans on digits), so no plugin is needed. It prints the device, the vLLM version, the step
times and the last step's metrics, and writes them to ``OUT/gpu_check.json``. Exit code 0 means every
step ran with a finite loss and token-level advantages reached the loss.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path


def run_config(out: Path, steps: int, use_vllm: bool, cpu: bool) -> dict:
    """The run file (as a mapping) of the check."""
    return {
        "model": {"name_or_path": str(out / "model")},
        "data": {"source": "task", "task": "arithmetic", "train_size": 2000, "eval_size": 32},
        "algorithm": {"preset": "bot-grpo"},
        "rewards": {
            "alpha": 1.0,
            "beta": 0.2,
            "signals": [
                {"name": "core.exact_answer", "params": {"reference_field": "answer"}},
                # every run of digits gets a small bonus span: a plumbing signal that fires even for the
                # untrained model, so token-level advantages reach the loss from the first step
                {"name": "core.regex", "params": {"pattern": r"\d+", "value": 0.5}},
            ],
        },
        "training": {
            "steps": steps,
            "prompts_per_step": 16,
            "group_size": 8,
            "max_new_tokens": 40,
            "learning_rate": 1e-4,
            "output_dir": str(out / "run"),
            "eval_every": 0,
            "eval_greedy": False,
            "save_every": 0,
            "plots": False,
        },
        "engine": {
            "device": "cpu" if cpu else "cuda",
            "use_vllm": use_vllm,
            "vllm_mode": "colocate",
            "vllm_gpu_memory_utilization": 0.2,
            "bf16": False,
        },
    }


def save_tiny_model(path: Path) -> int:
    """Build the tiny model and its tokenizer and save them; returns the parameter count."""
    from botgrpo_core.config.sections import TinyModelSpec
    from botgrpo_core.engine.tiny import build_tiny_model, char_tokenizer, count_parameters, save_pretrained

    tokenizer = char_tokenizer()
    model = build_tiny_model(tokenizer, TinyModelSpec(hidden_size=128, num_layers=2, num_heads=2), seed=0)
    save_pretrained(model, tokenizer, path)
    return count_parameters(model)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=6, help="training steps (default 6)")
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "/tmp/botgrpo-gpu-check")))
    parser.add_argument("--no-vllm", action="store_true", help="generate with HF generate instead of vLLM")
    parser.add_argument(
        "--cpu", action="store_true", help="run on CPU without vLLM (checks the script itself)"
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

    import torch

    use_vllm = not (args.no_vllm or args.cpu)
    info: dict = {"torch": torch.__version__, "cuda": torch.cuda.is_available(), "use_vllm": use_vllm}
    if not args.cpu:
        if not torch.cuda.is_available():
            print("no CUDA device visible: run on a GPU machine, or pass --cpu", file=sys.stderr)
            return 2
        info["device"] = torch.cuda.get_device_name(0)
    if use_vllm:
        try:
            import vllm
        except ImportError:
            print("vLLM is not installed: pip install -e '.[trl,vllm]', or pass --no-vllm", file=sys.stderr)
            return 2
        info["vllm"] = vllm.__version__
    elif args.cpu:
        torch.set_num_threads(1)

    from transformers import TrainerCallback

    from botgrpo_core.config.loading import parse_config
    from botgrpo_core.engine.run import run_training

    info["parameters"] = save_tiny_model(args.out / "model")
    config = parse_config(run_config(args.out, args.steps, use_vllm, args.cpu), source="gpu_check_train")
    step_times: list[float] = []

    class Timer(TrainerCallback):
        def on_step_begin(self, a, state, control, **kw):
            self.t0 = time.perf_counter()

        def on_step_end(self, a, state, control, **kw):
            step_times.append(time.perf_counter() - self.t0)

    t0 = time.perf_counter()
    summary = run_training(
        config, callbacks=[Timer()], progress=False, overwrite=True
    )  # its own scratch folder
    info["wall_s"] = round(time.perf_counter() - t0, 2)
    info["step_s"] = [round(t, 3) for t in step_times]
    records = [json.loads(line) for line in (args.out / "run" / "metrics.jsonl").read_text().splitlines()]
    train = [r for r in records if r["kind"] == "train"]
    keys = ("loss", "reward/token_mean", "success_rate", "advantages/std", "groups/zero_spread_frac")
    info["last_step"] = {k: train[-1].get(k) for k in keys} if train else {}
    ok = (
        summary["steps"] == args.steps
        and len(train) == args.steps
        and all(isinstance(r.get("loss"), float) and math.isfinite(r["loss"]) for r in train)
        and any((r.get("advantages/std") or 0) > 0 for r in train)
    )
    info["ok"] = ok
    (args.out / "gpu_check.json").write_text(json.dumps(info, indent=2) + "\n")
    print(json.dumps(info, indent=2))
    print("GPU check " + ("passed" if ok else "FAILED") + f" ({args.out / 'gpu_check.json'})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
