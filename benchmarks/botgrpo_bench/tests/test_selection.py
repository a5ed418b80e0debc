"""botgrpo_bench.selection: the stage-1 rule of the real-model bench (the higher seed-0 run mean per method, ties the
lower value), checked on hand-written records, on the real bench file's levels, and on the records it refuses."""

from __future__ import annotations

from pathlib import Path

import pytest

from botgrpo_bench.config import load_bench
from botgrpo_bench.selection import level_values, select_setting

ROOT = Path(__file__).resolve().parents[3]
VALUES = {"t-lo": 5e-5, "t-hi": 2e-4}


def _rec(level: str, method: str, mean: float | None, seed: int = 0) -> dict:
    return {"bench_task": level, "method": method, "seed": seed, "run_mean": mean}


def test_each_method_takes_its_own_higher_run_mean() -> None:
    records = [
        _rec("t-lo", "bot-grpo", 0.20),
        _rec("t-hi", "bot-grpo", 0.31),
        _rec("t-lo", "grpo", 0.18),
        _rec("t-hi", "grpo", 0.05),
        _rec("t-hi", "grpo", 0.99, seed=1),  # another seed: not the rule's
        _rec("other", "grpo", 0.99),  # another level: ignored
    ]
    got = select_setting(records, VALUES, ["bot-grpo", "grpo"])
    assert got["bot-grpo"]["level"] == "t-hi" and got["bot-grpo"]["value"] == 2e-4
    assert got["grpo"]["level"] == "t-lo" and got["grpo"]["run_mean"] == 0.18
    assert got["grpo"]["candidates"] == {"t-lo": 0.18, "t-hi": 0.05}


@pytest.mark.parametrize("order", [["t-lo", "t-hi"], ["t-hi", "t-lo"]])
def test_a_tie_goes_to_the_lower_value_whatever_the_order(order: list[str]) -> None:
    values = {k: VALUES[k] for k in order}
    records = [_rec("t-hi", "grpo", 0.25), _rec("t-lo", "grpo", 0.25)]
    assert select_setting(records, values, ["grpo"])["grpo"]["level"] == "t-lo"


@pytest.mark.parametrize(
    ("records", "message"),
    [
        ([_rec("t-lo", "grpo", 0.1)], "'t-hi', method 'grpo', seed 0: no record"),
        ([_rec("t-lo", "grpo", 0.1), _rec("t-hi", "grpo", None)], "no run mean"),
        ([_rec("t-lo", "grpo", 0.1), _rec("t-hi", "grpo", float("nan"))], "no run mean"),
        ([_rec("t-lo", "grpo", 0.1), _rec("t-hi", "grpo", 0.2), _rec("t-hi", "grpo", 0.3)], "2 records"),
    ],
)
def test_the_rule_refuses_a_missing_or_unfinished_run(records: list[dict], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        select_setting(records, VALUES, ["grpo"])


def test_level_values_read_the_real_bench_file() -> None:
    bench = load_bench(str(ROOT / "benchmarks" / "bench_real.yaml"))
    values = level_values(bench, ["react-lr5e-5", "react-lr2e-4"], "training.learning_rate")
    assert values == {"react-lr5e-5": 5e-5, "react-lr2e-4": 2e-4}
    with pytest.raises(ValueError, match="not a task"):
        level_values(bench, ["react-lr1"], "training.learning_rate")
    with pytest.raises(ValueError, match="does not set 'training.nope'"):
        level_values(bench, ["react-lr5e-5"], "training.nope")
    with pytest.raises(ValueError, match="share a value"):
        level_values(bench, ["react-lr5e-5", "math-lr5e-5"], "training.learning_rate")
