"""``botgrpo train`` on a real pretrained model with vLLM rollouts on CPU: examples/smollm2-math-cpu.yaml
(SmolLM2-135M-Instruct, LoRA, chat-format prompts, sympy.answer + sympy.steps) for 2 real steps."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("vllm")
ROOT = Path(__file__).resolve().parents[1]


def test_two_steps_of_the_example_run_file(smollm2: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    overrides = {
        "training.steps": 2,
        "training.prompts_per_step": 2,
        "training.group_size": 4,
        "training.max_new_tokens": 64,
        "training.learning_rate": 1e-4,
        "training.logging_steps": 1,
        "training.plots": False,
        "data.eval_size": 2,  # evaluated on the engine (after a sync) at steps 0 and 2
        "training.eval_samples": 2,
        "training.eval_every": 2,
        "training.eval_greedy": "false",
        "training.output_dir": str(out),
    }
    command = [sys.executable, "-m", "botgrpo_core.cli.main", "train", "examples/smollm2-math-cpu.yaml"]
    for key, value in overrides.items():
        command += ["--set", f"{key}={value}"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-4000:]
    assert "Traceback" not in done.stderr, done.stderr[-4000:]  # vLLM's shutdown runs before the group goes
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    steps = [r for r in records if r["kind"] == "train"]
    assert [r["step"] for r in steps] == [1, 2]
    for r in steps:
        assert math.isfinite(r["loss"]) and r["grad_norm"] > 0
        # the engine sampled from the policy's own numbers (TRL's measure; was 0.03 mean / 0.58 max)
        assert r["sampling/sampling_logp_difference/max"] < 1e-3, r
        assert r["time/generate_s"] > 0 and r["time/score_s"] > 0
        assert "signals/sympy.steps/mean" in r
    evals = [r for r in records if r["kind"] == "eval"]
    assert [r["step"] for r in evals] == [0, 2]
    for r in evals:
        # sympy.answer: 1 right, 0 wrong, params.unanswered (-1) for no answer or one the cap cut (2ab9afd)
        assert (
            0 < r["eval/sampled/length"] <= 64 and -1 <= r["eval/sampled/signals/sympy.answer/mean"] <= 1
        ), r
    assert "evaluating the initial policy on 2 held-out prompts" in done.stderr
    from safetensors.torch import load_file

    adapter = load_file(str(out / "final_model" / "adapter_model.safetensors"))
    lora_b = [t for name, t in adapter.items() if "lora_B" in name]
    assert lora_b and any(float(t.abs().max()) > 0 for t in lora_b)  # B starts at 0: the update happened
