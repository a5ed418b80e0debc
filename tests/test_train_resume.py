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


# ------------------------------------------------------------------------------------------------
# Torn checkpoints and a torn metrics tail (a SIGKILL during a save or a write): issue 17
# ------------------------------------------------------------------------------------------------
def _truncate(path, keep=0.5):
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])


#: how a SIGKILL during ``Trainer._save_checkpoint`` leaves ``checkpoint-N`` (and what the check says)
TEARS = {
    "empty config.json": (lambda d: (d / "config.json").write_bytes(b""), "config.json"),
    "truncated optimizer.pt": (lambda d: _truncate(d / "optimizer.pt"), "optimizer.pt"),
    "zero-filled optimizer.pt": (
        lambda d: (d / "optimizer.pt").write_bytes(b"\0" * (d / "optimizer.pt").stat().st_size),
        "optimizer.pt",
    ),
    "truncated model.safetensors": (lambda d: _truncate(d / "model.safetensors", 0.9), "model.safetensors"),
    "no trainer_state.json": (lambda d: (d / "trainer_state.json").unlink(), "trainer_state.json"),
    "cut trainer_state.json": (lambda d: _truncate(d / "trainer_state.json"), "trainer_state.json"),
    "truncated rng_state.pth": (lambda d: _truncate(d / "rng_state.pth", 0.3), "rng_state.pth"),
}


def _two_checkpoints(out):
    """A real 2-step run that saved checkpoint-1 and checkpoint-2."""
    return run_training(
        parse(run_dict(out, training={"steps": 2, "save_every": 1, "seed": 3})),
        progress=False,
        log=lambda m: None,
    )


def test_a_torn_checkpoint_is_never_picked(tmp_path, arith_plugin):  # noqa: F811
    import shutil

    from botgrpo_core.engine.outputs import checkpoint_problem, last_checkpoint

    out = tmp_path / "run"
    _two_checkpoints(out)
    pristine = tmp_path / "pristine"
    shutil.copytree(out / "checkpoint-2", pristine)
    warnings: list[str] = []
    assert last_checkpoint(out, warnings.append) == str(out / "checkpoint-2") and not warnings
    for name, (tear, culprit) in TEARS.items():
        shutil.rmtree(out / "checkpoint-2")
        shutil.copytree(pristine, out / "checkpoint-2")
        tear(out / "checkpoint-2")
        warnings.clear()
        assert last_checkpoint(out, warnings.append) == str(out / "checkpoint-1"), name
        assert len(warnings) == 1 and "checkpoint-2" in warnings[0] and culprit in warnings[0], (
            name,
            warnings,
        )
        assert checkpoint_problem(out / "checkpoint-1", 1) is None
    # A checkpoint whose state says another step (a folder reused by hand) is not that step's either.
    assert "global_step 2, not 1" in checkpoint_problem(pristine, 1)
    # No complete checkpoint at all: the error says so and how to start again.
    TEARS["no trainer_state.json"][0](out / "checkpoint-1")
    with pytest.raises(TrainingSetupError, match=r"no complete checkpoint-N folder .*--overwrite"):
        last_checkpoint(out, warnings.append)


def test_resume_skips_a_torn_checkpoint_and_trims_a_torn_metrics_tail(tmp_path, arith_plugin):  # noqa: F811
    from botgrpo_core.engine.outputs import checkpoint_problem

    out = tmp_path / "run"
    _two_checkpoints(out)
    (out / "checkpoint-2" / "trainer_state.json").unlink()  # killed while saving step 2
    with (out / "metrics.jsonl").open("ab") as f:
        f.write(b'{"kind": "train", "step": 3, "loss": 0.1' + b"\0" * 64)  # killed mid-line: a NUL tail
    messages: list[str] = []
    config = parse(run_dict(out, training={"steps": 3, "save_every": 1, "seed": 3}))
    summary = run_training(config, resume=True, progress=False, log=messages.append)
    assert summary["steps"] == 3
    assert any("resuming from" in m and m.rstrip().endswith("(step 1)") for m in messages), messages
    assert any("skipping checkpoint-2" in m and "trainer_state.json" in m for m in messages), messages
    assert any("metrics.jsonl" in m and "torn" in m for m in messages), messages
    records = _records(out)  # every line parses again
    assert sorted(r["step"] for r in records if r["kind"] == "train") == [1, 2, 3]
    assert checkpoint_problem(out / "checkpoint-3", 3) is None


@pytest.mark.parametrize(
    "tail",
    [
        b'{"kind": "train", "step": 3, "lo',  # cut mid-record
        b"\0" * 4096,  # the file's tail preallocated, never written
        '{"kind": "train", "step": 3, "note": "\u00e9'.encode()[:-1],  # cut inside a UTF-8 character
        b'{"kind": "train", "step": 3, "loss": 0.5}\n\0\0\0',  # a whole record, then NULs
    ],
    ids=["cut-json", "nul-tail", "cut-utf8", "record-then-nul"],
)
def test_metrics_log_trims_a_torn_tail(tmp_path, tail):
    from botgrpo_core.engine.run import MetricsLog

    path = tmp_path / "metrics.jsonl"
    log = MetricsLog(path)
    for step in (1, 2):
        log.write("train", step, {"loss": 0.5})
    with path.open("ab") as f:
        f.write(tail)
    dropped = log.truncate_after(5)
    steps = [r["step"] for r in log.read()]
    whole = tail.startswith(b'{"kind": "train", "step": 3, "loss": 0.5}\n')
    assert steps == ([1, 2, 3] if whole else [1, 2])
    assert len(dropped) == 1 and f"line {4 if whole else 3}" in dropped[0], dropped
    assert b"\0" not in path.read_bytes()
    assert [json.loads(line)["step"] for line in path.read_text().splitlines()] == steps
