"""Issue 39 findings 6-12: the run lock never follows a link, and settings that passed ``validate`` and then
did nothing (or failed late, after the model was built) are refused by ``validate`` with the key named."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
import yaml
from train_fixtures import core_run_file

from botgrpo_core.cli.main import main
from botgrpo_core.config.models import SignalFailurePolicy
from botgrpo_core.engine.run_lock import LOCK_FILE, OutputDirLock
from botgrpo_core.engine.setup import TrainingSetupError
from botgrpo_core.engine.signal_health import SignalFailureError, SignalHealth
from botgrpo_core.signals import SampleError

BASE = {
    "model": {"name_or_path": "tiny"},
    "rewards": {
        "signals": [{"name": "core.exact_answer"}, {"name": "core.regex", "params": {"pattern": "x"}}],
    },
    "training": {"steps": 10},
}


def _validate(tmp_path: Path, capsys: pytest.CaptureFixture[str], *sets: str) -> tuple[int, str]:
    run = tmp_path / "run.yaml"
    run.write_text(yaml.safe_dump(BASE), encoding="utf-8")
    code = main(["validate", str(run), *(f"--set={s}" for s in sets)])
    return code, capsys.readouterr().err


# --- 6, 7: the run lock -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dangling", [False, True])
def test_a_lock_that_is_a_symlink_is_refused_and_its_target_untouched(tmp_path, dangling) -> None:
    """Was: the link's target truncated and overwritten (a dangling link: its target created)."""
    out, target = tmp_path / "out", tmp_path / "precious.txt"
    out.mkdir()
    if not dangling:
        target.write_text("keep me\n")
    (out / LOCK_FILE).symlink_to(target)
    lock = OutputDirLock(out, print)
    with pytest.raises(TrainingSetupError, match=r"train.lock is a symbolic link.*nothing was changed"):
        lock.__enter__()
    assert (target.read_text() == "keep me\n") if not dangling else not target.exists()
    assert (out / LOCK_FILE).is_symlink()


def test_a_lock_that_is_a_folder_is_refused_with_a_message(tmp_path, capsys) -> None:
    """Was: a raw IsADirectoryError traceback from `botgrpo train`."""
    run = core_run_file(tmp_path)
    out = Path(yaml.safe_load(run.read_text())["training"]["output_dir"])
    (out / LOCK_FILE).mkdir(parents=True)
    assert main(["train", str(run)]) == 2
    err = capsys.readouterr().err
    assert "train.lock is a folder" in err and "Traceback" not in err
    assert sorted(os.listdir(out)) == [LOCK_FILE]


# --- 8: the failure guard's threshold -----------------------------------------------------------------------------
def test_threshold_one_still_stops_a_signal_failing_on_every_rollout() -> None:
    """Was: a step failed only above the threshold, so threshold 1 never acted (100% errors trained on)."""

    class Out:
        results = [SampleError("down", reason="error")] * 4

    class Mix:
        def __init__(self) -> None:
            self.signals = {"s.x": Out()}

    health = SignalHealth(SignalFailurePolicy(threshold=1.0, steps=2), lambda m: None)
    health.observe(1, {"signals/s.x/error_frac": 1.0}, Mix())  # type: ignore[arg-type]
    with pytest.raises(SignalFailureError, match="failed on 100%"):
        health.observe(2, {"signals/s.x/error_frac": 1.0}, Mix())  # type: ignore[arg-type]
    below = SignalHealth(SignalFailurePolicy(threshold=1.0, steps=1), lambda m: None)
    below.observe(1, {"signals/s.x/error_frac": 0.99}, Mix())  # type: ignore[arg-type]  # under it: no action


# --- 9-12: validate refuses what would do nothing or fail late -----------------------------------------------------
@pytest.mark.parametrize(
    ("sets", "message"),
    [
        (
            ["rewards.signals[0].placement=last"],
            r"rewards.signals\[0\].placement is 'last' but 'core.exact_answer' is a global signal",
        ),
        (
            ["rewards.signals[1].params.value=1", "rewards.signals[1].after_first_error=zero"],
            r"rewards.signals\[1\].after_first_error is 'zero' but 'core.regex' never gives a negative value",
        ),
        (
            ["rewards.on_signal_failure.steps=50"],
            r"rewards.on_signal_failure.steps is 50 but the run trains training.steps = 10",
        ),
        (["engine.trl_args={no_such_field: 1}"], r"engine.trl_args: no_such_field is not a trl.GRPOConfig"),
        (
            ["engine.trl_args={scale_rewards: batch}"],
            r"engine.trl_args: scale_rewards is set by the algorithm",
        ),
        (
            ["engine.trl_args={multi_objective_aggregation: normalize_then_sum}"],
            r"engine.trl_args: GRPOConfig.multi_objective_aggregation=.normalize_then_sum. is not supported",
        ),
        (["model.peft={target_modules: []}"], r"model.peft.target_modules: an empty list adapts nothing"),
        (["model.peft={target_modules: [lm_head]}"], r"model.peft.target_modules: lm_head: the output head"),
        (
            ["model.peft={target_modules: [no_such_proj]}"],
            r"model.peft.target_modules: 'no_such_proj' names no linear layer of the tiny model \(its layers: "
            r"down_proj, gate_proj, k_proj, o_proj, q_proj, up_proj, v_proj\)",
        ),
        (
            ["training.report_to=[tensorboard, tensorboard]"],
            r"training.report_to: tensorboard is listed more than once",
        ),
    ],
)
def test_validate_refuses_settings_that_would_do_nothing_or_fail_late(
    tmp_path, capsys, sets, message
) -> None:
    code, err = _validate(tmp_path, capsys, *sets)
    assert code == 2 and "Traceback" not in err
    assert len([line for line in err.splitlines() if line.strip()]) <= 2, err
    assert re.search(message, err), err


def test_the_defaults_and_real_settings_still_validate(tmp_path, capsys) -> None:
    """The guard's default steps (5) on a shorter run, a local signal that can be negative, LoRA targets of the
    tiny model and a trl_args field botgrpo passes through."""
    sets = [
        "training.steps=2",
        "rewards.signals[1].after_first_error=zero",
        "model.peft={target_modules: [q_proj, v_proj]}",
        "engine.trl_args={max_grad_norm: 0.5}",
    ]
    code, err = _validate(tmp_path, capsys, *sets)
    assert code == 0, err


def test_the_tiny_models_layer_names_are_the_ones_validate_knows() -> None:
    from botgrpo_core.config.sections import TinyModelSpec
    from botgrpo_core.engine.lora import TINY_LINEAR, linear_module_names
    from botgrpo_core.engine.tiny import build_tiny_model, char_tokenizer

    model = build_tiny_model(char_tokenizer(), TinyModelSpec(hidden_size=16, num_layers=1, num_heads=2))
    assert {n.rsplit(".", 1)[-1] for n in linear_module_names(model)} == set(TINY_LINEAR)


@pytest.mark.timeout(300)
def test_train_refuses_lora_targets_of_a_built_model_and_leaves_nothing(tmp_path, capsys) -> None:
    """A local model folder (its layers are known only once built): was a peft traceback after config.yaml,
    initial_model and metrics.jsonl were written."""
    from botgrpo_core.config.sections import TinyModelSpec
    from botgrpo_core.engine.tiny import build_tiny_model, char_tokenizer, save_pretrained

    tokenizer = char_tokenizer()
    spec = TinyModelSpec(hidden_size=16, num_layers=1, num_heads=2)
    folder = save_pretrained(build_tiny_model(tokenizer, spec), tokenizer, tmp_path / "model")
    run = core_run_file(tmp_path)
    data = yaml.safe_load(run.read_text())
    data["model"] = {"name_or_path": str(folder), "peft": {"target_modules": ["no_such_proj"]}}
    run.write_text(yaml.safe_dump(data))
    out = Path(data["training"]["output_dir"])
    assert main(["train", str(run)]) == 2
    err = capsys.readouterr().err
    assert "model.peft.target_modules: 'no_such_proj' names no linear layer of" in err and "q_proj" in err
    assert "Traceback" not in err
    assert not out.exists() or os.listdir(out) == []
