"""Run-file loading: extra keys, paths in messages, YAML errors, overrides, signal params, dominance."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
import yaml

from botgrpo_core.config.errors import ConfigError, OutcomeDominanceWarning
from botgrpo_core.config.loading import load_config, parse_config

BASE = {
    "rewards": {
        "alpha": 1.0,
        "beta": 0.2,
        "signals": [
            {"name": "core.exact_answer", "weight": 1.0},
            {"name": "core.regex", "weight": 1.0, "params": {"pattern": "bad", "value": -1.0}},
        ],
    }
}


def _write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(data) if not isinstance(data, str) else data)
    return path


def test_valid_file_loads(tmp_path: Path) -> None:
    config = load_config(_write(tmp_path, BASE), ["training.steps=7", "rewards.signals.0.weight=2"])
    assert config.training.steps == 7
    assert config.rewards.signals[0].weight == 2.0


def test_unknown_key_names_path_and_nearest(tmp_path: Path) -> None:
    data = {**BASE, "training": {"lerning_rate": 0.1}}
    with pytest.raises(
        ConfigError, match=r"training\.lerning_rate: unknown key; did you mean 'learning_rate'\?"
    ):
        load_config(_write(tmp_path, data))


def test_bad_value_names_path_and_value(tmp_path: Path) -> None:
    data = {"rewards": {**BASE["rewards"], "beta": "lots"}}
    with pytest.raises(ConfigError, match=r"rewards\.beta: .*got 'lots'"):
        load_config(_write(tmp_path, data))
    data = {"rewards": {**BASE["rewards"], "signals": [{"name": "core.regex", "on_error": "ignore"}]}}
    with pytest.raises(ConfigError, match=r"rewards\.signals\[0\]\.on_error"):
        load_config(_write(tmp_path, data))


def test_malformed_yaml_reports_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"YAML syntax error at line 3"):
        load_config(_write(tmp_path, "rewards:\n  alpha: 1\n   beta: [\n"))
    with pytest.raises(ConfigError, match="must be a mapping"):
        load_config(_write(tmp_path, "- a\n- b\n"))
    with pytest.raises(ConfigError, match="cannot read the run file"):
        load_config(tmp_path / "missing.yaml")


def test_missing_rewards_section(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"rewards: required key is missing"):
        load_config(_write(tmp_path, {"training": {"steps": 3}}))


def test_unknown_signal_lists_installed_and_nearest() -> None:
    data = {"rewards": {"signals": [{"name": "core.exact_answr"}]}}
    with pytest.raises(
        ConfigError,
        match=r"rewards\.signals\[0\]\.name: unknown signal 'core.exact_answr'\. Did you mean 'core.exact_answer'",
    ):
        parse_config(data)


def test_signal_params_checked_against_plugin_model() -> None:
    data = {"rewards": {"beta": 0.1, "signals": [{"name": "core.regex", "params": {"patern": "x"}}]}}
    with pytest.raises(
        ConfigError, match=r"rewards\.signals\[0\]\.params\.patern: unknown param; did you mean 'pattern'"
    ):
        parse_config(data)


def test_duplicate_signal_entries() -> None:
    data = {"rewards": {"signals": [{"name": "core.regex", "params": {"pattern": "x"}}] * 2}}
    with pytest.raises(ConfigError, match="listed twice"):
        parse_config(data)


def test_outcome_dominance_warns_or_errors() -> None:
    weak = {"rewards": {**BASE["rewards"], "beta": 0.6}}  # 1 * 1 > 2 * 0.6 * 1 fails
    with pytest.warns(OutcomeDominanceWarning, match="outcome dominance does not hold"):
        parse_config(weak)
    with pytest.raises(ConfigError, match="outcome dominance"):
        parse_config({"rewards": {**weak["rewards"], "strict": True}})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        parse_config(BASE)  # 1 > 0.4 holds: no warning


def test_unknown_preset_and_sequence_ratio_with_token_estimator() -> None:
    with pytest.raises(
        ConfigError, match=r"algorithm\.preset: unknown preset 'bot-grp'.*Did you mean 'bot-grpo'"
    ):
        parse_config({**BASE, "algorithm": {"preset": "bot-grp"}})
    with pytest.raises(
        ConfigError,
        match=r"algorithm\.ratio_level: estimator 'bot' gives every token its own advantage.*Set ratio_level: token",
    ):
        parse_config({**BASE, "algorithm": {"preset": "bot-grpo", "ratio_level": "sequence"}})
    parse_config(
        {**BASE, "algorithm": {"preset": "gspo"}}
    )  # sequence ratio with an outcome estimator is fine


def test_bad_override(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="expected key.path=value"):
        load_config(_write(tmp_path, BASE), ["training.steps"])
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(_write(tmp_path, BASE), ["training.steps=[1"])


def test_unknown_estimator_is_caught_at_validation() -> None:
    with pytest.raises(
        ConfigError, match=r"algorithm\.estimator: unknown estimator 'bott'\. Did you mean 'bot'"
    ):
        parse_config({**BASE, "algorithm": {"estimator": "bott"}})
    parse_config({**BASE, "algorithm": {"preset": "grpo", "estimator": "dr_grpo"}})


def test_override_addresses_list_items_by_index_or_name(tmp_path: Path) -> None:
    """The notation the error messages print (``rewards.signals[1].weight``) is the one ``--set`` takes; a
    signal can also be picked by its name in brackets, and the old ``signals.0`` form still works."""
    path = _write(tmp_path, BASE)
    config = load_config(
        path,
        [
            "rewards.signals[1].weight=2",
            "rewards.signals[core.exact_answer].weight=3",
            "rewards.signals[core.regex].params.value=-0.5",
            "rewards.signals.1.on_error=nan",
        ],
    )
    exact, regex = config.rewards.signals
    assert (exact.weight, regex.weight, regex.params["value"], regex.on_error) == (3.0, 2.0, -0.5, "nan")
    replaced = load_config(
        path, ["rewards.signals[core.regex]={name: core.length, params: {max_length: 9, cache: 2}}"]
    ).rewards.signals
    assert [s.name for s in replaced] == ["core.exact_answer", "core.length"]
    with pytest.raises(ConfigError, match=r"write rewards\.signals\[core\.regex\]\.params\.value"):
        load_config(path, ["rewards.signals.core.regex.params.value=1"])
    with pytest.raises(
        ConfigError, match=r"engine\.trl_args\.x has 0 item\(s\), so there is no \[0\] \(it is empty\)"
    ):
        load_config(path, ["engine.trl_args.x=[]", "engine.trl_args.x[0]=1"])


def test_strict_scalars_keep_plain_values() -> None:
    """Ints are numbers, YAML floats with exponents written as strings still parse, and numeric bounds hold."""
    config = parse_config(
        {**BASE, "training": {"learning_rate": 1, "steps": 3, "seed": 2**32 - 1, "plots": False}}
    )
    assert config.training.learning_rate == 1.0 and config.training.seed == 2**32 - 1
    config = parse_config({**BASE, "training": {"learning_rate": "1e-4"}})  # PyYAML reads 1e-4 as a string
    assert config.training.learning_rate == 1e-4
    for key, value in [("seed", True), ("steps", 2.5), ("plots", "yes"), ("learning_rate", float("inf"))]:
        with pytest.raises(ConfigError, match=rf"training\.{key}: "):
            parse_config({**BASE, "training": {key: value}})


def test_validate_checks_the_task_name_and_its_params() -> None:
    """data.task and data.task_params are checked at validation, not when training starts."""
    base = {**BASE, "data": {"source": "task", "task": "arithmetc"}}
    with pytest.raises(
        ConfigError, match=r"data\.task: unknown task 'arithmetc'; available tasks: arithmetic"
    ):
        parse_config(base)
    bad_params = {
        **BASE,
        "data": {"source": "task", "task": "arithmetic", "task_params": {"max_operandz": 3}},
    }
    with pytest.raises(
        ConfigError,
        match=r"(?s)task_params of task 'arithmetic'.*max_operandz: unknown key; did you mean 'max_operands'",
    ):
        parse_config(bad_params)
    ok = {**BASE, "data": {"source": "task", "task": "arithmetic", "task_params": {"max_operands": 3}}}
    assert parse_config(ok).data.task_params == {"max_operands": 3}


def test_micro_batch_size_without_auto_accumulation_is_refused() -> None:
    """training.micro_batch_size beside a numeric gradient_accumulation_steps would do nothing: an error naming
    both keys and the fix (a real-model pilot ran out of memory on a silently ignored micro_batch_size: 4)."""
    import pytest

    from botgrpo_core.config.sections import TrainingConfig

    with pytest.raises(
        ValueError, match="micro_batch_size .4. acts only with gradient_accumulation_steps: auto"
    ):
        TrainingConfig(micro_batch_size=4)
    assert TrainingConfig(micro_batch_size=4, gradient_accumulation_steps="auto").micro_batch_size == 4
    assert TrainingConfig(gradient_accumulation_steps=2).gradient_accumulation_steps == 2
