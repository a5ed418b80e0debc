"""The quickstart and the recipes are valid run files whose settings TRL accepts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from botgrpo_core.config.loading import load_config

ROOT = Path(__file__).resolve().parents[1]
RECIPES = sorted((ROOT / "examples" / "recipes").glob("*.yaml"))
CPU = [
    "engine.device=cpu",
    "engine.use_vllm=false",
    "engine.bf16=false",
    "engine.gradient_checkpointing=false",
]


def test_there_are_recipes_for_the_documented_models():
    names = {p.name for p in RECIPES}
    assert {"react-qwen2.5-3b.yaml", "math-qwen2.5-3b.yaml", "math-smollm3-3b.yaml"} <= names
    assert "math-phi4-mini-reasoning.yaml" in names


@pytest.mark.parametrize("path", [ROOT / "examples" / "quickstart.yaml", *RECIPES], ids=lambda p: p.name)
def test_run_file_is_valid_and_trl_accepts_it(path, tmp_path, recwarn):
    from botgrpo_core.engine.setup import resolve_preset
    from botgrpo_core.engine.trl_args import grpo_args

    config = load_config(path)
    assert not [w for w in recwarn if "outcome dominance" in str(w.message)]
    cpu = load_config(path, [*CPU, f"training.output_dir={tmp_path}"])
    args = grpo_args(cpu, resolve_preset(cpu), tmp_path)
    t = config.training
    assert (
        args.per_device_train_batch_size * t.gradient_accumulation_steps == t.prompts_per_step * t.group_size
    )
    assert args.num_generations == t.group_size and args.max_completion_length == t.max_new_tokens


def test_every_quickstart_key_is_commented():
    for n, line in enumerate((ROOT / "examples" / "quickstart.yaml").read_text().splitlines(), 1):
        if re.match(r"^\s*(- )?[A-Za-z_]+:", line):
            assert "#" in line, f"quickstart.yaml line {n} has no comment: {line!r}"
