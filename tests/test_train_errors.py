"""Bad input stops before any training, with a message that names the problem and the fix."""

from __future__ import annotations

import json

import pytest
from train_fixtures import arith_plugin, parse, run_dict  # noqa: F401  (fixture)

from botgrpo_core.config.errors import ConfigError
from botgrpo_core.config.loading import parse_config
from botgrpo_core.config.models import RunConfig
from botgrpo_core.engine.run import run_training
from botgrpo_core.engine.setup import TrainingSetupError

QUIET = {"progress": False, "log": lambda m: None}


def _nothing_trained(out):
    assert not list(out.glob("checkpoint-*")) and not (out / "metrics.jsonl").exists()


def test_missing_model_path(tmp_path, arith_plugin):  # noqa: F811
    out = tmp_path / "run"
    config = parse(run_dict(out, model={"name_or_path": str(tmp_path / "no-such-model")}))
    with pytest.raises(TrainingSetupError) as err:
        run_training(config, **QUIET)
    message = str(err.value)
    assert "model.name_or_path" in message and "no-such-model" in message and "fix the path" in message
    _nothing_trained(out)


def test_unknown_hub_id_offline(tmp_path, arith_plugin):  # noqa: F811
    config = parse(run_dict(tmp_path, model={"name_or_path": "botgrpo-no-such-org/no-such-model"}))
    with pytest.raises(
        TrainingSetupError, match=r"model\.name_or_path: .*\(hf download [^ ]+: offline runs then find it"
    ):
        run_training(config, **QUIET)


def test_row_lacking_a_field_a_signal_reads(tmp_path, arith_plugin):  # noqa: F811
    data = tmp_path / "rows.jsonl"
    rows = [{"prompt": "Q: 1+2=\n", "answer": "3"}, {"prompt": "Q: 4+4=\n"}] + [
        {"prompt": f"Q: {i}+1=\n", "answer": str(i + 1)} for i in range(10)
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "run"
    config = parse(
        run_dict(
            out,
            data={"source": "jsonl", "path": str(data), "eval_size": 2},
            rewards={"signals": [{"name": "test_arith.answer"}, {"name": "test_arith.steps"}]},
        )
    )
    with pytest.raises(TrainingSetupError) as err:
        run_training(config, **QUIET)
    message = str(err.value)
    assert "row 1" in message and "'answer'" in message and "test_arith.answer" in message
    assert "Add the field" in message
    _nothing_trained(out)


def test_signal_not_installed(tmp_path, arith_plugin):  # noqa: F811
    data = run_dict(tmp_path, rewards={"signals": [{"name": "nosuch.signal"}]})
    with pytest.raises(ConfigError, match=r"rewards\.signals\[0\]\.name: unknown signal 'nosuch\.signal'"):
        parse(data)
    # run_training checks again (a config built without the signal check, e.g. by a script)
    config = parse_config(data, source="<test>", check_signals=False)
    with pytest.raises(TrainingSetupError) as err:
        run_training(config, **QUIET)
    message = str(err.value)
    assert "rewards.signals[0].name" in message and "pip install" in message
    _nothing_trained(tmp_path)


def test_sequence_ratio_with_token_level_estimator(tmp_path, arith_plugin):  # noqa: F811
    data = run_dict(tmp_path, algorithm={"preset": "bot-grpo", "ratio_level": "sequence"})
    with pytest.raises(ConfigError, match="ratio_level"):
        parse(data)
    # run_training checks again on a config that skipped the file checks
    config = RunConfig.model_validate(data)
    with pytest.raises(TrainingSetupError) as err:
        run_training(config, **QUIET)
    message = str(err.value)
    assert "ratio_level" in message and "Set ratio_level: token" in message
    _nothing_trained(tmp_path)


def test_trainer_refuses_sequence_ratio_for_token_advantages(tmp_path, arith_plugin):  # noqa: F811
    """Using the trainer class directly: GRPOConfig(importance_sampling_level='sequence') with BoT."""
    from trl import GRPOConfig

    from botgrpo_core.config.presets import PRESETS
    from botgrpo_core.engine.trainer import BoTGRPOTrainer
    from botgrpo_core.engine.trl_algorithm import trl_algorithm_args
    from botgrpo_core.rewards.mixture import RewardMixture

    config = parse(run_dict(tmp_path))
    args = GRPOConfig(
        output_dir=str(tmp_path),
        use_cpu=True,
        **{**trl_algorithm_args(PRESETS["bot-grpo"]), "importance_sampling_level": "sequence"},
    )
    with pytest.raises(ValueError, match="ratio_level"):
        BoTGRPOTrainer("unused", args=args, mixture=RewardMixture(config.rewards), preset=PRESETS["bot-grpo"])


def test_bad_batch_split(tmp_path, arith_plugin):  # noqa: F811
    config = parse(
        run_dict(
            tmp_path, training={"prompts_per_step": 3, "group_size": 3, "gradient_accumulation_steps": 2}
        )
    )
    with pytest.raises(TrainingSetupError, match="training.prompts_per_step"):
        run_training(config, **QUIET)


def test_unknown_trl_argument(tmp_path, arith_plugin):  # noqa: F811
    config = parse(run_dict(tmp_path, engine={"device": "cpu", "trl_args": {"not_a_grpo_arg": 1}}))
    with pytest.raises(TrainingSetupError, match=r"engine\.trl_args: not_a_grpo_arg"):
        run_training(config, **QUIET)


def test_a_signal_failing_on_most_rollouts_is_reported(tmp_path, arith_plugin):  # noqa: F811
    """Not a setup error (one bad sample must never stop a run), but the log says what is wrong."""
    messages: list[str] = []
    config = parse(
        run_dict(
            tmp_path,
            rewards={"signals": [{"name": "test_arith.broken"}, {"name": "test_arith.digit_spans"}]},
            training={"steps": 1},
        )
    )
    run_training(config, progress=False, log=messages.append)
    # one warning (the held-out evaluation's result lines and the end-of-run table name the signal too)
    warned = [m for m in messages if "test_arith.broken" in m and m.startswith("warning:")]
    assert len(warned) == 1, messages
    assert "failed on 8/8 rollouts" in warned[0] and "no such binary 'mathcheck'" in warned[0]
