"""Every ``trl.GRPOConfig`` field (introspected from the installed TRL) has a stated fate under BoTGRPOTrainer:
passed through, honoured, or refused; refused values stop the trainer with the reason; the table in
docs/python-api.md is the one ``botgrpo_core.engine.trl_fields`` renders."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

pytest.importorskip("trl")

ROOT = Path(__file__).resolve().parents[1]


def test_every_grpo_config_field_is_classified() -> None:
    from trl import GRPOConfig

    from botgrpo_core.engine.trl_fields import (
        GRPO_FIELDS,
        HONOURED,
        PASSED,
        TRAINING_FIELDS,
        field_rule,
        grpo_config_fields,
    )

    fields = grpo_config_fields()
    assert [name for name, _ in fields] == [f.name for f in dataclasses.fields(GRPOConfig)]
    own = [name for name, is_own in fields if is_own]
    assert set(own) == set(GRPO_FIELDS), (
        f"unclassified: {sorted(set(own) - set(GRPO_FIELDS))}; stale: {sorted(set(GRPO_FIELDS) - set(own))}"
    )
    assert set(TRAINING_FIELDS) <= {name for name, is_own in fields if not is_own}
    statuses = {name: field_rule(name, is_own) for name, is_own in fields}
    assert all(rule.status in (PASSED, HONOURED) for rule in statuses.values())
    # the settings that shape TRL's advantages are decided, never silently passed through
    for name in (
        "scale_rewards",
        "multi_objective_aggregation",
        "loss_type",
        "reward_weights",
        "beta",
        "epsilon",
    ):
        assert statuses[name].status == HONOURED, name
    assert set(statuses["scale_rewards"].refused) == {"batch", "none"}
    assert set(statuses["multi_objective_aggregation"].refused) == {"normalize_then_sum"}


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        (
            "scale_rewards",
            "none",
            r"scale_rewards='none' is not supported by BoTGRPOTrainer: botgrpo's estimators",
        ),
        ("scale_rewards", False, r"scale_rewards='none'"),  # TRL turns False into 'none'
        ("scale_rewards", "batch", r"scale_rewards='batch'"),
        ("multi_objective_aggregation", "normalize_then_sum", r"GDPO normalises each reward function"),
    ],
)
def test_refused_values_stop_the_trainer_with_the_reason(field: str, value: object, reason: str) -> None:
    from trl import GRPOConfig

    from botgrpo_core import BoTGRPOTrainer

    def reward(completions, **kwargs):  # type: ignore[no-untyped-def]
        return [0.0] * len(completions)

    args = GRPOConfig(output_dir="unused", use_cpu=True, report_to="none", **{field: value})
    with pytest.raises(ValueError, match=reason):
        BoTGRPOTrainer("never-loaded", [reward], args)


def test_honoured_values_pass_the_check() -> None:
    from trl import GRPOConfig

    from botgrpo_core.engine.trl_fields import check_grpo_config

    check_grpo_config(GRPOConfig(output_dir="unused", use_cpu=True, report_to="none"))  # TRL's defaults
    check_grpo_config(
        GRPOConfig(output_dir="unused", use_cpu=True, multi_objective_aggregation="sum_then_normalize")
    )


def test_the_docs_table_is_the_generated_one() -> None:
    from botgrpo_core.engine.trl_fields import TABLE_END, TABLE_START, field_table, grpo_config_fields

    page = (ROOT / "docs" / "python-api.md").read_text(encoding="utf-8")
    assert TABLE_START in page and TABLE_END in page
    shown = page[page.index(TABLE_START) : page.index(TABLE_END) + len(TABLE_END)]
    assert shown == field_table(), (
        "docs/python-api.md's GRPOConfig table is stale; run "
        "`.venv/bin/python -m botgrpo_core.engine.trl_fields docs/python-api.md`"
    )
    assert shown.count("\n| `") == len(grpo_config_fields())  # one row per field


def test_trl_losses_cover_trls_list_and_the_algorithms_page() -> None:
    """``TRL_LOSSES`` holds every ``loss_type`` the installed GRPOConfig documents, and docs/algorithms.md
    has a row for each."""
    import re

    from trl import GRPOConfig

    from botgrpo_core.engine.trl_algorithm import TRL_LOSSES

    help_text = {f.name: f for f in dataclasses.fields(GRPOConfig)}["loss_type"].metadata["help"]
    documented = set(re.findall(r"'(\w+)'", help_text)) - {"sequence", "token"}
    assert documented == set(TRL_LOSSES)
    page = (ROOT / "docs" / "algorithms.md").read_text(encoding="utf-8")
    section = page[page.index("### TRL loss types") : page.index("## Presets")]
    assert {name for name in TRL_LOSSES if f"| `{name}` |" in section} == set(TRL_LOSSES)
