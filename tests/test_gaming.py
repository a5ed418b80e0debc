"""The gaming monitor: its metrics on a real batch, its rules replayed on round 4's committed runs, and a real
tiny run that logs ``gaming/*`` and, under ``training.gaming_monitor: stop``, ends at the step a rule fires."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from train_fixtures import arith_plugin, build_trainer, parse, run_dict  # noqa: F401  (a fixture)

from botgrpo_core.engine.gaming import RULES, GamingMonitor, Rule, repeats, replay

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results"


def _replayed(path: str) -> tuple[list, int]:
    with gzip.open(RESULTS / path, "rt") as handle:
        rows = [json.loads(line) for line in handle]
    last = max(r["step"] for r in rows if r.get("kind") == "train")
    return replay(rows), last


@pytest.mark.parametrize(
    ("path", "cause", "step"),
    [
        ("real-react-tuned/metrics/bot-grpo_seed2.metrics.jsonl.gz", "shrinks", 15),  # ~20-token pages
        ("real-react-tuned/metrics/grpo_seed2.metrics.jsonl.gz", "shrinks", 15),
        (
            "real-math-lr2e-4-cutfix/metrics/bot-grpo_seed0.metrics.jsonl.gz",
            "runs to the cap",
            36,
        ),  # 256 tokens
    ],
)
def test_the_collapsed_runs_are_flagged_before_their_end(path: str, cause: str, step: int) -> None:
    warnings, last = _replayed(path)
    first = warnings[0]
    assert (first.cause, first.step) == (cause, step) and first.step < last
    assert f"at step {step}" in first.message and "Likely fix" in first.message


def test_reward_rising_without_success_is_flagged() -> None:
    """React seed 2: the outcome (0.5 compile + 0.25 render + 0.25 substance) rose to 0.75 on trivial pages while
    the task's success (compiles and not trivial) fell to 0."""
    warnings, _ = _replayed("real-react-tuned/metrics/bot-grpo_seed2.metrics.jsonl.gz")
    assert ("reward without success", 15) in [(w.cause, w.step) for w in warnings]


def test_grpos_react_seed_0_which_kept_its_pages_is_not_flagged() -> None:
    warnings, _ = _replayed("real-react-tuned/metrics/grpo_seed0.metrics.jsonl.gz")
    assert warnings == []


@pytest.mark.parametrize("method", ["bot-grpo", "grpo"])
def test_the_toy_demos_runs_are_not_flagged(method: str) -> None:
    """`make demo`'s two runs (200 steps each; a fresh clone at 3f9200e, tests/data/gaming/)."""
    path = Path(__file__).parent / "data" / "gaming" / f"demo_math-medium_{method}_seed0.metrics.jsonl.gz"
    with gzip.open(path, "rt") as handle:
        rows = [json.loads(line) for line in handle]
    assert len([r for r in rows if r.get("kind") == "train"]) == 200 and replay(rows) == []


def test_a_flat_run_never_warns_and_each_cause_warns_once() -> None:
    flat = [
        {"kind": "train", "step": s, "gaming/length_mean": 80.0, "gaming/cut_frac": 0.05}
        for s in range(1, 60)
    ]
    assert replay(flat) == []
    rising = [
        {"kind": "train", "step": s, "gaming/cut_frac": 0.05 if s < 10 else 0.9, "gaming/length_mean": 80.0}
        for s in range(1, 60)
    ]
    (only,) = replay(rising)
    assert (only.cause, only.step) == ("runs to the cap", 12)  # steps 10, 11, 12 in a row: patience 3


def test_a_streak_must_be_unbroken() -> None:
    values = [0.05] * 3 + [0.9, 0.9, 0.05, 0.9, 0.9, 0.05] * 5
    rows = [{"kind": "train", "step": s + 1, "gaming/cut_frac": v} for s, v in enumerate(values)]
    assert replay(rows) == []


def test_signal_rules_name_the_signal() -> None:
    rows = [
        {"kind": "train", "step": s, "gaming/sympy.steps/against_outcome_frac": 0.1 if s < 6 else 0.8}
        for s in range(1, 12)
    ]
    (only,) = replay(rows)
    assert only.cause == "local against outcome" and "sympy.steps" in only.message


def test_repeats_sees_lines_and_loops_not_short_lines() -> None:
    assert repeats("3 + 4 = 7\nso 7 apples\n3 + 4 = 7")
    assert repeats("the answer is 7 " * 5)
    assert not repeats("}\n}\n</div>\n</div>\n3 + 4 = 7\n7 - 2 = 5")
    assert not repeats("a b c d e f g h")


def test_every_rule_is_documented() -> None:
    doc = (Path(__file__).resolve().parents[1] / "docs" / "gaming.md").read_text()
    for rule in RULES:
        assert rule.cause in doc, rule.cause


# --- a real run -------------------------------------------------------------------------------------------------
def test_a_tiny_run_logs_gaming_metrics_and_stops_when_asked(tmp_path, arith_plugin) -> None:  # noqa: F811
    lines: list[str] = []
    config = parse(run_dict(tmp_path, training={"steps": 3, "gaming_monitor": "stop"}))
    trainer, _, _ = build_trainer(config, log_fn=lines.append, gaming_monitor="stop")
    always = Rule("always", "loss", lambda v, b: True, "the loss is {value:.3f}", "none")
    trainer._gaming = GamingMonitor(patience=1, baseline_steps=0, log=lines.append, rules=(always,))
    trainer.train()
    assert trainer.state.global_step == 1  # the rule fired at step 1: the run ended there
    assert any("(always) at step 1" in line for line in lines)
    assert any("ends at this step" in line for line in lines)
    logged = [h for h in trainer.state.log_history if "loss" in h]
    assert 0.0 <= logged[0]["gaming/cut_frac"] <= 1.0 and logged[0]["gaming/length_mean"] > 0
    assert "gaming/test_arith.steps/uncovered_frac" in logged[0]
