"""The regime report against hand-computed numbers: records from run rows, the speed-up profile (censored
seeds, a method that never reaches, ties, thresholds exactly hit), the jsonl round trip, the target rule,
the section, the plot, and its wiring into write_report and the docs page."""

from __future__ import annotations

import json
import shutil
import typing
from pathlib import Path
from typing import Any

import pytest

from botgrpo_bench.config import BenchFile, TargetRule, TaskBench
from botgrpo_bench.regimes import (
    LEVELS,
    REQUIRED_KEYS,
    metric_key,
    read_regimes_jsonl,
    regime_records,
    speedup_profile,
    target_rule_check,
    write_regimes_jsonl,
)
from botgrpo_bench.regimes_page import describe_params, plot_speedup, render_regime_section

METRIC = "sampled/answer_accuracy"


def _task(level: str | None, target: float, params: dict[str, Any] | None = None) -> dict[str, Any]:
    task: dict[str, Any] = {
        "metric": METRIC,
        "target": target,
        "run": {"rewards": {"signals": []}, "data": {"task_params": params or {}}},
    }
    if level is not None:
        task.update(domain="math", level=level)
    return task


def _bench() -> BenchFile:
    return BenchFile.model_validate(
        {
            "name": "regimes",
            "methods": ["bot-grpo", "grpo"],
            "target_rule": {"gap_fraction": 0.3, "round_to": 0.05},
            "tasks": {
                "math-short": _task("short", 0.6, {"min_operands": 2, "max_operands": 4, "error_rate": 0.6}),
                "math-long": _task("long", 0.5, {"min_operands": 6, "max_operands": 8}),
                "plain": _task(None, 0.5),
            },
        }
    )


def _rec(
    method: str,
    seed: int,
    curve: list[list[float]],
    *,
    level: str = "short",
    domain: str = "math",
    target: float = 0.6,
    steps_to_target: int | None = None,
    run_mean: float | None = None,
    step_time_s: float | None = None,
    no_spread_frac: float | None = None,
) -> dict[str, Any]:
    return {
        "task": domain,
        "bench_task": f"{domain}-{level}",
        "level": level,
        "method": method,
        "seed": seed,
        "metric": METRIC,
        "target": target,
        "steps": 30,
        "eval_every": 10,
        "steps_to_target": steps_to_target,
        "run_mean": run_mean,
        "initial": curve[0][1] if curve and curve[0][0] == 0 else None,
        "curve": curve,
        "step_time_s": step_time_s,
        "no_spread_frac": no_spread_frac,
        "task_params": {"min_operands": 2, "max_operands": 4},
    }


def _c(*values: float) -> list[list[float]]:
    """A curve evaluated every 10 steps from step 0."""
    return [[10 * i, v] for i, v in enumerate(values)]


def _records() -> list[dict[str, Any]]:
    """math short (3 seeds, hand-computed below), math long (runs disagree at step 0), react medium."""
    short = [
        # thresholds at initial 0.4: f 0.5 -> 0.7, f 0.9 -> 0.94 (0.9400000000000001 unrounded)
        _rec(
            "grpo",
            0,
            _c(0.4, 0.5, 0.7, 0.8),
            steps_to_target=20,
            run_mean=0.5,
            step_time_s=1.0,
            no_spread_frac=0.2,
        ),
        _rec(
            "bot-grpo",
            0,
            _c(0.4, 0.7, 0.94, 0.9),
            steps_to_target=10,
            run_mean=0.6,
            step_time_s=1.5,
            no_spread_frac=0.1,
        ),
        _rec(
            "grpo",
            1,
            _c(0.4, 0.6, 0.65, 0.72),
            steps_to_target=10,
            run_mean=0.6,
            step_time_s=2.0,
            no_spread_frac=0.4,
        ),
        _rec(
            "bot-grpo",
            1,
            _c(0.4, 0.72, 0.8, 0.96),
            steps_to_target=10,
            run_mean=0.55,
            step_time_s=2.0,
            no_spread_frac=0.1,
        ),
        _rec(
            "grpo",
            2,
            _c(0.4, 0.7, 0.6, 0.6),
            steps_to_target=10,
            run_mean=0.7,
            step_time_s=1.0,
            no_spread_frac=0.3,
        ),
        _rec(
            "bot-grpo",
            2,
            _c(0.4, 0.75, 0.6, 0.7),
            steps_to_target=10,
            run_mean=0.8,
            step_time_s=1.1,
            no_spread_frac=0.4,
        ),
    ]
    short += [_rec("dapo", s, _c(0.4, 0.4, 0.4, 0.4), run_mean=0.4) for s in range(3)]
    long = [
        _rec("grpo", 0, _c(0.3, 0.5, 0.6), level="long", target=0.5, steps_to_target=10, run_mean=0.5),
        _rec("bot-grpo", 0, _c(0.5, 0.6, 0.7), level="long", target=0.5, steps_to_target=0, run_mean=0.6),
    ]
    react = [
        _rec(m, 0, _c(0.2, 0.3), domain="react", level="medium", target=0.45, run_mean=0.25)
        for m in ("grpo", "bot-grpo")
    ]
    return long + react + short  # out of order on purpose


def test_levels_are_the_config_levels() -> None:
    literal = next(a for a in typing.get_args(TaskBench.model_fields["level"].annotation) if a is not None)
    assert tuple(typing.get_args(literal)) == LEVELS


def test_profile_hand_computed() -> None:
    profile = speedup_profile(_records(), [0.5, 0.9])
    assert [(lv["domain"], lv["level"]) for lv in profile["levels"]] == [
        ("math", "short"),
        ("math", "long"),
        ("react", "medium"),
    ]
    short = profile["levels"][0]
    assert short["methods"] == ["grpo", "bot-grpo", "dapo"] and short["seeds"] == [0, 1, 2]
    assert short["initial"] == 0.4 and short["initial_range"] == (0.4, 0.4)

    half, ninety = short["profile"]
    assert half["threshold"] == 0.7 and ninety["threshold"] == 0.94
    # 0.7 hit exactly by grpo seeds 0 and 2; a tie in seed 2
    assert half["steps"]["grpo"] == {0: 20, 1: 30, 2: 10}
    assert half["steps"]["bot-grpo"] == {0: 10, 1: 10, 2: 10}
    assert half["per_seed"] == {0: 2.0, 1: 3.0, 2: 1.0}
    assert half["ratio"] == pytest.approx(2.0)  # mean 20 / mean 10
    assert half["ratio_per_seed"] == (pytest.approx(2.0), 1.0, 3.0, 3)
    # dapo never reaches: no steps, counted as 0/3
    assert half["steps"]["dapo"] == {0: None, 1: None, 2: None}
    assert half["reached"]["dapo"] == 0 and half["mean_steps"]["dapo"] is None
    # 0.94: hit exactly by bot-grpo seed 0 (needs the rounding), seed 1 at 30, seed 2 never; grpo never
    assert ninety["steps"]["bot-grpo"] == {0: 20, 1: 30, 2: None}
    assert ninety["reached"] == {"bot-grpo": 2, "grpo": 0, "dapo": 0}
    assert ninety["ratio"] is None and ninety["per_seed"] == {} and ninety["ratio_per_seed"] is None
    assert (ninety["candidate_only"], ninety["reference_only"]) == (2, 0)
    assert ninety["mean_steps"]["bot-grpo"] == (25.0, 20, 30, 2)

    # at the file's target: the records' own steps_to_target
    t = short["at_target"]
    assert t["per_seed"] == {0: 2.0, 1: 1.0, 2: 1.0}
    assert t["ratio"] == pytest.approx((40 / 3) / 10)
    d = short["run_mean_diff"]
    assert d["stat"] == (pytest.approx(0.05), pytest.approx(-0.05), pytest.approx(0.1), 3)
    assert d["positive"] == 2
    assert short["step_time_ratio"]["median"] == pytest.approx(1.1)
    assert short["no_spread"]["grpo"] == (pytest.approx(0.3), 0.2, 0.4, 3)
    assert short["run_mean"]["dapo"] == (pytest.approx(0.4), 0.4, 0.4, 3)


def test_profile_disagreeing_initials_and_censoring() -> None:
    profile = speedup_profile(_records(), [0.5])
    long = profile["levels"][1]
    # the runs' step-0 evaluations differ: their mean, threshold 0.4 + 0.5 * 0.6
    assert long["initial"] == pytest.approx(0.4) and long["initial_range"] == (0.3, 0.5)
    row = long["profile"][0]
    assert row["threshold"] == 0.7 and row["steps"] == {"bot-grpo": {0: 20}, "grpo": {0: None}}
    assert row["ratio"] is None and row["candidate_only"] == 1
    # the candidate reached in its only seed, the reference never in its 30 steps: ratio >= 30 / 20
    assert row["ratio_at_least"] == pytest.approx(1.5)
    # a candidate at the target from step 0: no ratio (division by 0), not an error
    assert long["at_target"]["per_seed"] == {} and long["at_target"]["ratio"] is None
    # the reference reaches in every seed, the candidate in one of two: per-seed ratio only
    recs = [
        _rec("grpo", 0, _c(0.4, 0.5, 0.8)),
        _rec("bot-grpo", 0, _c(0.4, 0.8, 0.8)),
        _rec("grpo", 1, _c(0.4, 0.8, 0.8)),
        _rec("bot-grpo", 1, _c(0.4, 0.5, 0.5)),
    ]
    row = speedup_profile(recs, [0.5])["levels"][0]["profile"][0]
    assert row["per_seed"] == {0: 2.0} and row["ratio"] is None and row["reference_only"] == 1
    assert row["ratio_at_least"] is None  # the candidate missed a seed: no bound either way
    # the candidate reaches in every seed, the reference in one: misses counted at the run's length (30)
    recs = [
        _rec("grpo", 0, _c(0.4, 0.5, 0.5, 0.6)),
        _rec("bot-grpo", 0, _c(0.4, 0.7, 0.8, 0.8)),
        _rec("grpo", 1, _c(0.4, 0.5, 0.7, 0.7)),
        _rec("bot-grpo", 1, _c(0.4, 0.5, 0.7, 0.8)),
    ]
    row = speedup_profile(recs, [0.5])["levels"][0]["profile"][0]
    assert row["steps"] == {"grpo": {0: None, 1: 20}, "bot-grpo": {0: 10, 1: 20}}
    assert row["ratio"] is None and row["per_seed"] == {1: 1.0}
    assert row["ratio_at_least"] == pytest.approx(((30 + 20) / 2) / ((10 + 20) / 2))
    section = render_regime_section(speedup_profile(recs, [0.5]))
    assert ">= 1.67 with the misses at the run's length" in section


def test_records_from_run_rows_and_target_rule() -> None:
    bench = _bench()
    base = {"group": "grid", "status": "ok", "steps": 30, "eval_every": 10, "steps_to_target": 20}
    rows = [
        {
            **base,
            "task": "math-short",
            "method": "grpo",
            "seed": 0,
            "curve_mean": 0.5,
            "final": 0.7,
            "curve": [[0, 0.435], [10, 0.5], [20, 0.7]],
            "s_per_step": 2.0,
            "s_per_step_median": 1.5,
            "outcome_zero_spread_frac": 0.25,
        },
        {**base, "task": "math-long", "method": "grpo", "seed": 0, "curve": [[10, 0.2]], "s_per_step": 2.0},
        {**base, "task": "math-short", "method": "grpo", "seed": 1, "status": "failed", "curve": []},
        {**base, "task": "math-short", "method": "grpo", "seed": 2, "group": "sweep", "curve": []},
        {**base, "task": "plain", "method": "grpo", "seed": 0, "curve": []},
    ]
    warm = {
        "math-short": {"eval": {"answer_accuracy": 0.435}},
        "math-long": {"eval": {"answer_accuracy": 0.2}},
    }
    recs = regime_records(bench, rows, warm)
    assert [(r["bench_task"], r["seed"]) for r in recs] == [("math-short", 0), ("math-long", 0)]
    short, long = recs
    assert set(REQUIRED_KEYS) <= set(short)
    assert (short["task"], short["level"], short["initial"], short["run_mean"]) == (
        "math",
        "short",
        0.435,
        0.5,
    )
    assert short["step_time_s"] == 1.5 and long["step_time_s"] == 2.0  # median, else the mean
    assert short["no_spread_frac"] == 0.25 and long["initial"] is None  # no step-0 evaluation
    assert (short["warm_success"], short["rule_target"]) == (0.435, 0.6)
    # 0.2 + 0.3 * 0.8 = 0.44 -> 0.45, but the file says 0.5: a mismatch, reported
    check = target_rule_check(bench, warm)
    assert check["math-short"]["matches"] is True
    assert check["math-long"] == {"warm_success": 0.2, "rule_target": 0.45, "target": 0.5, "matches": False}
    assert "plain" not in check
    assert "overrides" not in short  # only a method with its own settings carries them
    bench.tasks["math-short"].method_overrides = {"grpo": {"training.learning_rate": 4.0e-4}}
    assert regime_records(bench, rows, warm)[0]["overrides"] == {"training.learning_rate": 4.0e-4}
    assert TargetRule(gap_fraction=0.3, round_to=0.05).target(0.435) == 0.6
    assert metric_key("greedy/compile_rate") == "compile_rate" and metric_key("m") == "m"
    profile = speedup_profile(recs, [0.5])
    text = render_regime_section(profile)
    assert (
        "Target rule mismatches (1 of 2 levels): math long: file target 0.5" in text and "gives 0.45" in text
    )


def test_jsonl_round_trip(tmp_path: Path) -> None:
    recs = _records()
    path = write_regimes_jsonl(recs, tmp_path / "out" / "regimes.jsonl")
    assert read_regimes_jsonl(path) == recs
    lines = path.read_text().splitlines()
    assert len(lines) == len(recs) and all(set(REQUIRED_KEYS) <= set(json.loads(x)) for x in lines)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"task": "math"}) + "\n")
    with pytest.raises(ValueError, match="bad.jsonl:1: missing level"):
        read_regimes_jsonl(bad)


def test_section_renders_and_plot_is_written(tmp_path: Path) -> None:
    profile = speedup_profile(_records(), [0.5, 0.9])
    text = render_regime_section(
        profile, plot="regimes_speedup.png", curves={"math-short": "curves_math-short.png"}
    )
    assert text.startswith("## Regimes")
    assert "| math | short | 2-4 operands | 0.400 | 0.6 | 13 (10-20) | 10 |" in text
    assert "**1.33** (per seed 1.00-2.00)" in text and "+0.050 (-0.050..+0.100; higher in 2/3)" in text
    assert "| 1.10 |" in text  # step time
    assert "### math short (`math-short`, 2-4 operands)" in text
    assert (
        "| 0.9 | 0.940 | not reached (0/3) | 25 (20-30) [2/3] | not reached (0/3) | n/a | 0/3, 2/3 |" in text
    )
    assert "![speed-up grpo / bot-grpo vs level](regimes_speedup.png)" in text
    assert "![math-short: success vs step](curves_math-short.png)" in text
    assert "math long: 1 seed(s) only bot-grpo reached" not in text  # at the target both reached
    assert describe_params({"min_sections": 3, "max_sections": 3, "error_rate": 0.5}) == "3 sections"
    assert describe_params({"sections": [2, 3], "error_rate": 0.5}) == "2-3 sections"
    assert describe_params({"sections": [1, 1]}) == "1 section" and describe_params({"kinds": ["a"]}) == ""
    path = plot_speedup(profile, tmp_path / "speedup.png")
    assert path.read_bytes().startswith(b"\x89PNG")
    assert plot_speedup(profile, tmp_path / "f.png", fraction=0.5).is_file()


def _metrics(run_dir: Path, curve: list[list[float]]) -> None:
    run_dir.mkdir(parents=True)
    rows = [{"kind": "eval", "step": s, f"eval/{METRIC}": v} for s, v in curve]
    rows += [{"kind": "train", "step": s, "step_time": t} for s, t in ((1, 1.0), (2, 1.0), (3, 4.0))]
    (run_dir / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_write_report_and_docs_page(tmp_path: Path) -> None:
    from botgrpo_bench.plan import Job
    from botgrpo_bench.report import main, write_report

    bench = BenchFile.model_validate(
        {
            "name": "regimes",
            "methods": ["bot-grpo", "grpo"],
            "seeds": [0],
            "profile_fractions": [0.5],
            "tasks": {"math-short": _task("short", 0.6, {"min_operands": 2, "max_operands": 4})},
        }
    )
    out = tmp_path / "regimes"
    jobs, curves = [], {"grpo": _c(0.4, 0.5, 0.7), "bot-grpo": _c(0.4, 0.7, 0.8)}
    for method, curve in curves.items():
        run_dir = out / "runs" / "math-short" / method / "seed0"
        _metrics(run_dir, curve)
        jobs.append(Job("math-short", method, 0, "grid", {"rewards": {}, "training": {"steps": 20}}, run_dir))
    numbers = write_report(bench, jobs, [{"status": "ok"}] * 2, out, {"warm_starts": {}})
    lv = numbers["regimes"]["levels"][0]
    assert lv["profile"][0]["per_seed"] == {0: 2.0} and lv["step_time_ratio"]["median"] == 1.0
    recs = read_regimes_jsonl(out / "regimes.jsonl")
    assert [r["curve"] for r in recs] == [curves["grpo"], curves["bot-grpo"]]
    assert recs[0]["step_time_s"] == 1.0  # the median of 1, 1, 4
    summary = (out / "summary.md").read_text()
    assert summary.index("## Regimes") < summary.index("## Task `math-short`")
    # one level (as in make demo) is one dot: no speed-up plot, and the summary links none
    assert not (out / "regimes_speedup.png").exists() and "regimes_speedup.png" not in summary
    assert json.loads((out / "meta.json").read_text())["regimes"]["profile_fractions"] == [0.5]

    # the docs page: the combined section first after the preface, then the folders' summaries
    react = tmp_path / "regimes-react"
    react.mkdir()
    write_regimes_jsonl(
        [_rec(m, 0, _c(0.2, 0.3), domain="react", level="long") for m in ("grpo", "bot-grpo")],
        react / "regimes.jsonl",
    )
    (react / "summary.md").write_text("# Bench `regimes-react`\n")
    (tmp_path / "pre.md").write_text("# Results\n")
    doc, joined = tmp_path / "docs" / "results.md", tmp_path / "docs" / "results" / "regimes.jsonl"
    doc.parent.mkdir()
    args = ["--doc", str(doc), "--preface", str(tmp_path / "pre.md"), "--regimes", str(joined)]
    assert main([*args, str(out), str(react)]) == 0
    assert len(read_regimes_jsonl(joined)) == 4
    text = doc.read_text()
    assert text.index("# Results") < text.index("## Regimes") < text.index("## Bench `regimes`")
    assert "](results/regimes_speedup.png)" in text and "](results/regimes/curves_math-short.png)" in text
    assert "| react | long |" in text and (doc.parent / "results" / "regimes_speedup.png").is_file()
    assert text.count("Regimes: speed-up by reasoning length") == 1  # the folders' own copies are left out
    # a later folder with more methods of the same level (an ablation command) keeps the first one's curve
    arm = tmp_path / "regimes-arm"
    arm.mkdir()
    write_regimes_jsonl([_rec("dapo", 0, _c(0.4, 0.5))], arm / "regimes.jsonl")
    (arm / "summary.md").write_text("# Bench `regimes-arm`\n")
    shutil.copy(out / "curves_math-short.png", arm / "curves_math-short.png")
    assert main([*args, str(out), str(react), str(arm)]) == 0
    text = doc.read_text()
    assert "](results/regimes/curves_math-short.png)" in text and "regimes-arm/curves_math-short" not in text
    with pytest.raises(SystemExit):
        main([*args, str(react / "none")])
