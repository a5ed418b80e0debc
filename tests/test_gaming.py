"""The gaming monitor: its metrics on a real batch, its rules replayed on round 4's committed runs, and a real
tiny run that logs ``gaming/*`` and, under ``training.gaming_monitor: stop``, ends at the step a rule fires."""

from __future__ import annotations

import gzip
import itertools
import json
import random
from pathlib import Path

import pytest
import torch
from train_fixtures import arith_plugin, build_trainer, parse, run_dict  # noqa: F401  (a fixture)

from botgrpo_core.engine.gaming import RULES, GamingMonitor, Rule, coin_p, gaming_metrics, repeats, replay
from botgrpo_core.rewards.mixture import MixtureOutput, SignalOutcome

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


def _batch(outcome: list[float], local_mean: list[float]) -> MixtureOutput:
    """A real :class:`MixtureOutput` of one local signal, two tokens a rollout, its value ``local_mean`` on both."""
    B = len(outcome)
    mask = torch.ones(B, 2, dtype=torch.bool)
    values = torch.tensor(local_mean, dtype=torch.float32)[:, None].expand(B, 2).clone()  # (B, T)
    steps = SignalOutcome("steps", "local", 1.0, [[]] * B, values, [False] * B)
    return MixtureOutput(
        token_rewards=values.clone(),
        mask=mask,
        valid=torch.ones(B, dtype=torch.bool),
        outcome=torch.tensor(outcome),
        local=values.clone(),
        signals={"steps": steps},
        metrics={},
        signal_table=torch.zeros(B, 0, dtype=torch.float64),
        scorer_metrics={},
    )


def test_against_outcome_counts_only_groups_with_outcome_spread() -> None:
    batch = _batch(
        # group 0: the best rollout has the lowest local mean (against); group 1: the highest (with);
        # group 2: every outcome equal (no spread, not counted)
        outcome=[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.5, 0.5, 0.5, 0.5],
        local_mean=[-1.0, 0.5, 0.5, 0.5, 1.0, -0.5, -0.5, -0.5, 1.0, -1.0, 0.0, 0.0],
    )
    out = gaming_metrics(["a"] * 12, [False] * 12, batch, group_size=4)
    assert out["gaming/steps/against_outcome_frac"] == 0.5
    assert out["gaming/steps/outcome_spread_groups"] == 2.0


def _against_rows(shares: list[float], groups: list[int]) -> list[dict]:
    return [
        {
            "kind": "train",
            "step": step,
            "gaming/sympy.steps/against_outcome_frac": share,
            "gaming/sympy.steps/outcome_spread_groups": float(n),
        }
        for step, (share, n) in enumerate(zip(shares, groups, strict=True), start=1)
    ]


def test_signal_rules_name_the_signal_and_pool_the_last_steps_groups() -> None:
    rows = _against_rows([0.0] * 5 + [1.0] * 6, [4] * 11)
    (only,) = replay(rows)
    # steps 6-8 pooled: 12 of 12 groups against (p = 1/4096); step 7's window (8 of 12, p = 0.19) does not fire
    assert (only.cause, only.step) == ("local against outcome", 8)
    assert "sympy.steps" in only.message and "12 of 12 groups" in only.message


def test_coin_p_is_the_binomial_tail_by_enumeration() -> None:
    for n in range(0, 9):
        tosses = list(itertools.product((0, 1), repeat=n))
        for hits in range(0, n + 1):
            tail = sum(sum(t) >= hits for t in tosses) / len(tosses)
            assert coin_p(hits, n) == pytest.approx(tail, abs=1e-12)


def _simulated_firing(rules: tuple[Rule, ...], p_against: float, runs: int = 400) -> float:
    """Share of simulated 15-step runs that warn: 1-4 groups with outcome spread per step (what the multi23
    level's BoT-GRPO runs had at 4 prompts a step), each against the outcome with probability ``p_against``."""
    rng = random.Random(0)
    fired = 0
    for _ in range(runs):
        groups = [rng.randint(1, 4) for _ in range(15)]
        shares = [sum(rng.random() < p_against for _ in range(n)) / n for n in groups]
        fired += bool(replay(_against_rows(shares, groups), rules=rules))
    return fired / runs


def test_local_against_outcome_stays_silent_on_a_coin_and_fires_on_a_signal_that_pulls_against() -> None:
    rule = next(r for r in RULES if r.cause == "local against outcome")
    # the per-step rule it replaced (a share >= 0.5 three steps running) warned on chance: in 3 of 5 real runs
    per_step = Rule("per-step", "gaming/*/against_outcome_frac", lambda v, b: v >= 0.5, "{value}", "")
    assert _simulated_firing((per_step,), 0.5) > 0.5
    assert _simulated_firing((rule,), 0.5) < 0.10
    assert _simulated_firing((rule,), 0.9) > 0.8


def test_runs_logged_without_the_group_count_get_no_against_outcome_warning() -> None:
    rows = [
        {"kind": "train", "step": s, "gaming/sympy.steps/against_outcome_frac": 1.0} for s in range(1, 20)
    ]
    assert replay(rows) == []


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
    assert logged[0]["gaming/test_arith.steps/outcome_spread_groups"] >= 0
