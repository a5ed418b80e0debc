"""Params: defaults valid, mistakes rejected with messages that say what to fix."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from botgrpo_judge.params import OutcomeParams, StepsParams
from botgrpo_judge.plugin import OUTCOME, STEPS, judge_required_fields


def test_defaults_and_bounds() -> None:
    params = StepsParams(model="m")
    assert params.mode == "logprob" and params.backend == "transformers" and params.layout == "prefix"
    assert STEPS.resolve_bounds(params) == (-1.0, 1.0)
    assert OUTCOME.resolve_bounds(OutcomeParams(model="m", range=(0, 2))) == (0.0, 2.0)
    assert "Step k: correct" in (params.generate_template or "")
    assert StepsParams(model="m", generate_per="step").generate_template != params.generate_template


def test_value_mapping_onto_range() -> None:
    params = StepsParams(model="m", range=(0, 1))
    assert params.to_value(-1) == 0.0 and params.to_value(1) == 1.0 and params.to_value(0) == 0.5
    assert params.to_value(1.0000001) == 1.0  # rounding never leaves the bounds
    assert params.unparsed() == 0.0
    assert StepsParams(model="m", range=(1, 3)).unparsed() == 2.0  # 0 outside the range: midpoint
    assert StepsParams(model="m", unparsed_value=-1).unparsed() == -1


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"prompt_template": "{{ question "}, "invalid Jinja template"),
        ({"verdict_template": "{{ nope }}"}, "known variables"),
        ({"range": (1, 1)}, "finite low < high"),
        ({"split": "regex"}, "needs a pattern"),
        ({"split": "separator"}, "separator needs a pattern"),
        ({"split": "sentences"}, "split"),
        ({"pattern": "("}, "not a valid regular expression"),
        ({"unparsed_value": 5}, "outside range"),
        ({"chat": True}, "needs backend 'openai'"),
        ({"backend": "tgi"}, "backend"),
        ({"temperature": 0.1}, "Extra inputs are not permitted"),
        ({"openai": {"base_url": "localhost:8000"}}, "http://"),
        ({"yes_tokens": []}, "yes_tokens"),
        ({"split_timeout_s": float("inf")}, "split_timeout_s"),
    ],
)
def test_mistakes_are_rejected(kwargs: dict, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        StepsParams(model="m", **kwargs)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"timeout_s": float("inf")}, r"openai\.timeout_s\n.*finite number"),
        ({"batch_timeout_s": float("inf")}, r"openai\.batch_timeout_s\n.*finite number"),
        ({"batch_timeout_s": 0}, r"openai\.batch_timeout_s\n.*greater than 0"),
        ({"breaker_failures": -1}, r"openai\.breaker_failures\n.*greater than or equal to 0"),
        ({"breaker_cooldown_s": float("nan")}, r"openai\.breaker_cooldown_s\n.*finite number"),
        ({"max_response_bytes": 10}, r"openai\.max_response_bytes\n.*greater than or equal to 1024"),
        ({"backoff_max_s": float("inf")}, r"openai\.backoff_max_s\n.*finite number"),
        ({"extra_body": {"seed": float("nan")}}, r"openai\.extra_body\n.*plain JSON"),
    ],
)
def test_http_bounds_are_checked_and_named(options: dict, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        StepsParams(model="m", backend="openai", openai=options)
    defaults = StepsParams(model="m").openai
    assert defaults.batch_timeout_s == 600 and defaults.breaker_failures == 5
    assert defaults.max_response_bytes == 1 << 20


def test_secret_never_in_params() -> None:
    params = StepsParams(model="m", backend="openai", openai={"api_key_env": "JUDGE_KEY"})
    dumped = params.model_dump_json()
    assert "JUDGE_KEY" in dumped and 'api_key"' not in dumped


def test_required_fields_follow_params() -> None:
    assert judge_required_fields(OutcomeParams(model="m", reference_field="answer")) == ("answer",)
    assert judge_required_fields(StepsParams(model="m", question_field="q")) == ("q",)
    assert judge_required_fields(StepsParams(model="m")) == ()


def test_readme_run_file_validates() -> None:
    import re
    from pathlib import Path

    import yaml

    from botgrpo_core.config.models import RewardsConfig

    readme = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```yaml\n(.*?)```", readme, re.DOTALL)
    assert block is not None
    rewards = RewardsConfig.model_validate(yaml.safe_load(block.group(1))["rewards"])
    (judge,) = [s for s in rewards.signals if s.name == "judge.steps"]
    params = StepsParams.model_validate(judge.params)
    assert params.transformers.device == "cuda:1" and params.split == "lines"
