"""A run stopped after N steps and resumed matches an uninterrupted run with the same seed."""

from __future__ import annotations

import json
from collections import Counter

import pytest
import torch
from train_fixtures import arith_plugin, parse, run_dict  # noqa: F401  (fixture)
from transformers import AutoModelForCausalLM, TrainerCallback

from botgrpo_core.engine.run import run_training
from botgrpo_core.engine.setup import TrainingSetupError

STEPS, STOP = 4, 2


class StopAt(TrainerCallback):
    """Interrupts training after ``step`` (the checkpoint of that step is written first)."""

    def __init__(self, step: int) -> None:
        self.step = step

    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step == self.step:
            control.should_training_stop = True


def _config(out):
    return parse(
        run_dict(
            out,
            training={"steps": STEPS, "save_every": STOP, "eval_every": STOP, "seed": 3},
        )
    )


def _records(out):
    return [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]


def test_resume_reaches_the_same_result(tmp_path, arith_plugin):  # noqa: F811
    quiet = {"progress": False, "log": lambda m: None}
    straight, interrupted = tmp_path / "straight", tmp_path / "interrupted"
    run_training(_config(straight), **quiet)

    first = run_training(_config(interrupted), callbacks=[StopAt(STOP)], **quiet)
    assert first["steps"] == STOP
    assert (interrupted / f"checkpoint-{STOP}").is_dir()
    second = run_training(_config(interrupted), resume=True, **quiet)
    assert second["steps"] == STEPS

    # No metrics line lost or duplicated.
    records = _records(interrupted)
    kinds = Counter((r["kind"], r["step"]) for r in records)
    assert all(n == 1 for n in kinds.values()), kinds
    assert sorted(r["step"] for r in records if r["kind"] == "train") == [1, 2, 3, 4]
    assert sorted(r["step"] for r in records if r["kind"] == "eval") == [0, 2, 4]

    # The same trajectory as the uninterrupted run, step by step.
    ref = {r["step"]: r for r in _records(straight) if r["kind"] == "train"}
    for r in records:
        if r["kind"] != "train":
            continue
        for key in ("loss", "reward/token_mean", "advantages/std", "completion/length_mean", "grad_norm"):
            assert r[key] == pytest.approx(ref[r["step"]][key], rel=1e-4, abs=1e-6), (r["step"], key)
    a = AutoModelForCausalLM.from_pretrained(straight / "final_model").state_dict()
    b = AutoModelForCausalLM.from_pretrained(interrupted / "final_model").state_dict()
    for name in a:
        torch.testing.assert_close(a[name], b[name], rtol=1e-5, atol=1e-6)


def test_resume_without_checkpoint_is_an_error(tmp_path, arith_plugin):  # noqa: F811
    with pytest.raises(TrainingSetupError, match="no checkpoint-N folder to resume from"):
        run_training(_config(tmp_path / "empty"), resume=True, progress=False, log=lambda m: None)
