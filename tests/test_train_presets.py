"""Every algorithm preset trains a few steps of the tiny model through `run_training` (offline, CPU)."""

from __future__ import annotations

import json
import math

import pytest
import torch
from train_fixtures import arith_plugin, parse, run_dict  # noqa: F401  (fixture)

from botgrpo_core.config.presets import PRESETS
from botgrpo_core.engine.trl_algorithm import LOSS_TYPES, trl_algorithm_args


def _lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def _weights(folder):
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(folder)
    return {k: v.clone() for k, v in model.state_dict().items()}


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_preset_trains(preset, tmp_path, arith_plugin):  # noqa: F811
    from botgrpo_core.engine.run import run_training

    config = parse(run_dict(tmp_path, algorithm={"preset": preset}))
    summary = run_training(config, progress=False, log=lambda m: None)

    assert summary["steps"] == 2
    records = _lines(tmp_path / "metrics.jsonl")
    train = [r for r in records if r["kind"] == "train"]
    assert [r["step"] for r in train] == [1, 2]
    for r in train:
        assert math.isfinite(r["loss"])
        assert math.isfinite(r["advantages/std"])
        assert 0.0 <= r["groups/zero_spread_frac"] <= 1.0
        assert "signals/test_arith.steps/mean" in r and "signals/test_arith.digits/mean" in r
    if PRESETS[preset].dynamic_sampling:
        assert all("dynamic_sampling/rounds" in r for r in train)
    # The policy moved (the digit share differs between rollouts, so every estimator has a signal).
    before, after = _weights(tmp_path / "initial_model"), _weights(tmp_path / "final_model")
    assert any(not torch.equal(before[k], after[k]) for k in before)
    assert [r["step"] for r in records if r["kind"] == "eval"] == [0, 2]


def test_preset_settings_reach_trl():
    """Each preset's loss settings map onto GRPOConfig fields as documented."""
    for preset in PRESETS.values():
        args = trl_algorithm_args(preset)
        assert args["loss_type"] == LOSS_TYPES[preset.aggregation]
        assert args["importance_sampling_level"] == preset.ratio_level
        assert (args["epsilon"], args["epsilon_high"], args["beta"]) == (
            preset.eps_low,
            preset.eps_high,
            preset.kl_coef,
        )
    assert trl_algorithm_args(PRESETS["dapo"])["loss_type"] == "dapo"
    assert trl_algorithm_args(PRESETS["gspo"])["importance_sampling_level"] == "sequence"
    assert trl_algorithm_args(PRESETS["dr-grpo"])["loss_type"] == "dr_grpo"


def test_kl_penalty_uses_saved_reference(tmp_path, arith_plugin):  # noqa: F811
    """kl_coef > 0: TRL builds the reference model from the saved tiny model and logs the KL."""
    from botgrpo_core.engine.run import run_training

    config = parse(run_dict(tmp_path, algorithm={"preset": "bot-grpo", "kl_coef": 0.05}))
    run_training(config, progress=False, log=lambda m: None)
    train = [r for r in _lines(tmp_path / "metrics.jsonl") if r["kind"] == "train"]
    assert all(r["kl"] is not None and r["kl"] >= 0.0 for r in train)
    assert train[0]["kl"] == pytest.approx(0.0, abs=1e-6)  # policy == reference at the first step


def test_plugin_estimator_trains(tmp_path, arith_plugin):  # noqa: F811
    """An estimator registered by a plugin hook is usable as algorithm.estimator (the (B, T) gather path)."""
    from botgrpo_core.engine.run import run_training

    config = parse(
        run_dict(
            tmp_path,
            algorithm={
                "preset": "bot-grpo",
                "estimator": "test_centered",
                "estimator_options": {"scale": 2.0},
            },
        )
    )
    summary = run_training(config, progress=False, log=lambda m: None)
    assert summary["estimator"] == "test_centered" and summary["steps"] == 2
    train = [r for r in _lines(tmp_path / "metrics.jsonl") if r["kind"] == "train"]
    assert all(r["advantages/std"] > 0 for r in train)
