"""``botgrpo bench``: the bench file, the fairness rules, the report's numbers, the React task, and one
real ``--quick`` run at a minimal size (a couple of steps per run) so the pipeline cannot rot."""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
from itertools import combinations
from pathlib import Path

import pytest

from botgrpo_core.bench import BenchError, derive_run, load_bench, plan
from botgrpo_core.bench_report import pass_at_k, ratio_summary, steps_to_target
from botgrpo_core.tasks import get_task
from botgrpo_core.tasks.react import ERRORS, REACT_CHARS, ReactTask, _render

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks" / "bench_full.yaml"


# --- the bench file ------------------------------------------------------------------------------------------------
def test_bench_file_loads_and_quick_applies_before_set() -> None:
    full = load_bench(BENCH)
    assert set(full.methods) == {
        "bot-grpo",
        "grpo",
        "dapo",
        "gspo",
        "dr-grpo",
        "pure",
        "process",
        "token-pool",
    }
    assert len(full.seeds) >= 3
    quick = load_bench(BENCH, quick=True, overrides=["seeds=[5]"])
    assert quick.seeds == [5]  # --set wins over the file's quick section
    assert len(quick.methods) == 3 and quick.sweep is None
    assert quick.tasks["math"].run["training"]["steps"] < full.tasks["math"].run["training"]["steps"]
    only = load_bench(BENCH, overrides=["include=[react]"])
    assert list(only.tasks) == ["react"] and only.sweep is None  # the sweep's task is not run


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("tasks.math.metrc=x", "did you mean 'metric'"),
        ("tasks.react.warm_start.stepz=3", "did you mean 'steps'"),
        ("methods=[grpo,gpro]", "unknown preset 'gpro'"),
        ("include=[chess]", "unknown task(s) chess"),
        ("sweep.task=chess", "sweep.task 'chess'"),
    ],
)
def test_bench_file_errors_name_the_key_and_the_fix(override: str, message: str) -> None:
    with pytest.raises(BenchError) as info:
        load_bench(BENCH, overrides=[override])
    assert message in str(info.value)


def test_outcome_only_methods_see_only_global_signals(tmp_path: Path) -> None:
    task = load_bench(BENCH).tasks["react"]
    kinds = {"jsx.compiles": "global", "jsx.syntax": "local", "jsx.rules": "local"}
    common = {
        "seed": 1,
        "warm_path": tmp_path / "warm",
        "run_dir": tmp_path / "run",
        "threads": 1,
        "kinds": kinds,
    }
    for method in ("grpo", "dapo", "gspo", "dr-grpo"):
        run = derive_run(task, method=method, **common)
        assert [s["name"] for s in run["rewards"]["signals"]] == ["jsx.compiles"]
        assert run["rewards"]["beta"] == 0.0
    for method in ("bot-grpo", "process", "pure", "token-pool"):
        run = derive_run(task, method=method, **common)
        assert [s["name"] for s in run["rewards"]["signals"]] == ["jsx.compiles", "jsx.syntax", "jsx.rules"]
        assert run["rewards"]["beta"] == task.run["rewards"]["beta"]
    run = derive_run(task, method="grpo", **common)
    # everything but the algorithm and the mixture is identical
    assert run["model"]["name_or_path"] == str(tmp_path / "warm")
    assert run["training"]["seed"] == 1 and run["training"]["output_dir"] == str(tmp_path / "run")
    assert run["training"]["steps"] == task.run["training"]["steps"]


def test_method_variants_carry_algorithm_overrides(tmp_path: Path) -> None:
    bench = load_bench(
        BENCH, overrides=["methods=[bot-grpo, 'bot-grpo:aggregation=token,eps_high=0.28', grpo]"]
    )
    variant = next(j for j in plan(bench, tmp_path, {}) if ":" in j.method)
    assert variant.run["algorithm"] == {"preset": "bot-grpo", "aggregation": "token", "eps_high": 0.28}
    assert len(variant.run["rewards"]["signals"]) > 1  # a bot-grpo variant keeps the local signals
    assert ":" not in str(variant.run_dir.relative_to(tmp_path))
    with pytest.raises(BenchError, match="invalid algorithm overrides"):
        load_bench(BENCH, overrides=["methods=['grpo:agregation=token']"])


def test_plan_pairs_runs_and_marks_outcome_dominance(tmp_path: Path) -> None:
    bench = load_bench(BENCH)
    jobs = plan(bench, tmp_path, {})
    grid = [j for j in jobs if j.group == "grid"]
    assert len(grid) == len(bench.tasks) * len(bench.methods) * len(bench.seeds)
    assert [j.method for j in grid[:2]] == ["bot-grpo", "grpo"]  # paired: side by side on the 2 cores
    sweep = {(j.beta, j.seed): j for j in jobs if j.group == "sweep"}
    # alpha 1, sympy.answer in [0, 1] (d = 1), sympy.steps in [-1, 1] (b = 1): holds iff 1 > 2 * beta
    for (beta, _), job in sweep.items():
        assert job.dominance is not None and job.dominance["holds"] == (2 * beta < 1.0)
    # the sweep point equal to the grid's bot-grpo setting reuses the grid run's folder
    default_beta = bench.tasks["math"].run["rewards"]["beta"]
    assert sweep[(default_beta, 0)].run_dir == next(
        j.run_dir for j in grid if (j.task, j.method, j.seed) == ("math", "bot-grpo", 0)
    )


# --- the report's numbers -----------------------------------------------------------------------------------------
def test_pass_at_k_matches_enumeration() -> None:
    rng = random.Random(0)
    for _ in range(30):
        n = rng.randint(1, 8)
        c = rng.randint(0, n)
        k = rng.randint(1, n)
        outcomes = [1] * c + [0] * (n - c)
        subsets = list(combinations(range(n), k))
        expected = sum(any(outcomes[i] for i in s) for s in subsets) / len(subsets)
        assert pass_at_k(n, c, k) == pytest.approx(expected)


def test_steps_to_target_is_the_first_crossing() -> None:
    points = [(0, {"m": 0.5}), (10, {"m": 0.79}), (20, {"m": 0.81}), (30, {"m": 0.7}), (40, {"m": 0.9})]
    assert steps_to_target(points, "m", 0.8) == 20
    assert steps_to_target(points, "m", 0.95) is None
    assert steps_to_target([(0, {"err": 0.4}), (5, {"err": 0.1})], "err", 0.2, higher=False) == 5


def _run(method: str, seed: int, steps_to: int | None, s_per_step: float = 1.0) -> dict:
    return {
        "group": "grid",
        "task": "t",
        "method": method,
        "seed": seed,
        "status": "ok",
        "steps": 100,
        "steps_to_target": steps_to,
        "s_per_step": s_per_step,
    }


def test_ratio_pairs_seeds_and_flags_censoring() -> None:
    runs = [
        _run("grpo", 0, 60, 1.0),
        _run("bot-grpo", 0, 30, 1.2),
        _run("grpo", 1, 40),
        _run("bot-grpo", 1, 40, 1.2),
    ]
    r = ratio_summary(runs, "t", "grpo", "bot-grpo")
    assert r is not None
    mean, lo, hi, n = r["ratio"]
    assert (mean, lo, hi, n) == (pytest.approx(1.5), 1.0, 2.0, 2)
    assert r["wins"] == 1 and not r["censored"]
    assert r["step_time_ratio"] == pytest.approx(1.2)
    # the reference never reaches the target: its run length (100) stands in, and the ratio is flagged
    runs = [_run("grpo", 0, None), _run("bot-grpo", 0, 50), _run("grpo", 1, None), _run("bot-grpo", 1, None)]
    r = ratio_summary(runs, "t", "grpo", "bot-grpo")
    assert r is not None and r["ratio"][0] == pytest.approx(2.0) and r["ratio"][3] == 1 and r["censored"]
    # no run reaches the target: no ratio, but the curve means are still compared per seed
    runs = [
        {**_run(m, seed, None), "curve_mean": c}
        for m, seed, c in [("grpo", 0, 0.5), ("bot-grpo", 0, 0.6), ("grpo", 1, 0.5), ("bot-grpo", 1, 0.45)]
    ]
    r = ratio_summary(runs, "t", "grpo", "bot-grpo")
    assert r is not None and r["ratio"] is None
    mean, lo, hi, n = r["curve_mean_diff"]
    assert (mean, lo, hi, n) == (pytest.approx(0.025), pytest.approx(-0.05), pytest.approx(0.1), 2)
    assert r["curve_mean_better"] == 1


def test_docs_page_collects_summaries_and_plots(tmp_path: Path) -> None:
    from botgrpo_core.bench_report import main

    for name in ("full", "checks"):
        d = tmp_path / name
        d.mkdir()
        (d / "summary.md").write_text(f"# Bench `{name}`\n\n## Task\n\n![curve](curves.png)\n")
        (d / "curves.png").write_bytes(b"\x89PNG\r\n\x1a\n" + name.encode())
    (tmp_path / "pre.md").write_text("# Results\n\nIntro.\n")
    doc = tmp_path / "docs" / "results.md"
    doc.parent.mkdir()
    assert (
        main(
            [
                "--doc",
                str(doc),
                "--preface",
                str(tmp_path / "pre.md"),
                str(tmp_path / "full"),
                str(tmp_path / "checks"),
            ]
        )
        == 0
    )
    text = doc.read_text()
    assert text.startswith("# Results") and "## Bench `full`" in text and "### Task" in text
    assert "](results/checks/curves.png)" in text
    assert (doc.parent / "results" / "checks" / "curves.png").read_bytes().endswith(b"checks")


# --- the React task ----------------------------------------------------------------------------------------------
def test_react_splits_are_disjoint_and_deterministic() -> None:
    task = ReactTask()
    n_train, n_held = task.num_specs
    assert n_held > 300 and n_train > 3 * n_held // 2
    held = {r["spec"] for r in task.eval_rows(n_held)}
    assert len(held) == n_held
    train = task.train_rows(3000, seed=1)
    assert not held & {r["spec"] for r in train}
    assert task.eval_rows(50, seed=0) == task.eval_rows(50, seed=0)
    assert get_task("react", {"error_rate": 0.2}).params.error_rate == 0.2


def test_react_text_fits_the_alphabet_and_the_length_budget() -> None:
    from botgrpo_core.engine.tiny import char_tokenizer

    task = ReactTask()
    rows = task.train_rows(400)
    demos = task.demonstrations(rows)
    texts = [r["prompt"] for r in rows] + demos
    assert set("".join(texts)) <= set(REACT_CHARS)
    tok = char_tokenizer(task.chars)
    ids = tok(texts, add_special_tokens=False)["input_ids"]
    assert all(len(i) == len(t) for i, t in zip(ids, texts, strict=True))  # one token per character
    assert tok.unk_token_id not in {x for seq in ids for x in seq}
    longest = max(
        len(_render(task.parse_row(r), e.lstrip("*"))) for r in rows for e in ERRORS[r["spec"].split()[0]]
    )
    assert longest <= task.max_completion_chars


def test_react_demonstrations_carry_errors_at_the_configured_rate() -> None:
    task = get_task("react", {"error_rate": 0.4})
    rows = task.train_rows(3000, seed=2)
    demos = task.demonstrations(rows, seed=2)
    flawed = sum(d != task.solution(task.parse_row(r)) for r, d in zip(rows, demos, strict=True)) / len(rows)
    assert abs(flawed - 0.4) < 4 * math.sqrt(0.4 * 0.6 / len(rows))


def test_react_solutions_compile_and_injected_errors_are_caught() -> None:
    """Correct components compile and break no rule; each injected error breaks compilation exactly when
    ERRORS marks it with '*', and otherwise breaks a React rule (what jsx.rules must see)."""
    task = ReactTask()
    rows = task.eval_rows(40) + task.train_rows(20)
    solutions = [task.solution(task.parse_row(r)) for r in rows]
    assert task.evaluate(rows, solutions) == {"compile_rate": 1.0, "rule_clean_rate": 1.0}
    cases = []
    for kind, errors in ERRORS.items():
        spec = ReactTask.parse_key(
            next(r["spec"] for r in task.train_rows(500) if r["spec"].startswith(kind)), True
        )
        for error in errors:
            cases.append((task.row(spec), _render(spec, error.lstrip("*")), error.startswith("*")))
    results = task.check([c[0] for c in cases], [c[1] for c in cases])
    for (_row, code, breaks), (compiles, clean) in zip(cases, results, strict=True):
        assert compiles == (not breaks), code
        assert not clean, code


# --- a real quick run -------------------------------------------------------------------------------------------------
# Two methods (not --quick's three) keep the test near a minute on 2 cores: each run is a fresh process.
TINY = {
    "methods": "[bot-grpo,grpo]",
    "tasks.{t}.warm_start.steps": 2,
    "tasks.{t}.warm_start.demonstrations": 16,
    "tasks.{t}.warm_start.eval_size": 4,
    "tasks.{t}.run.training.steps": 2,
    "tasks.{t}.run.training.eval_every": 1,
    "tasks.{t}.run.training.prompts_per_step": 2,
    "tasks.{t}.run.training.group_size": 2,
    "tasks.{t}.run.training.max_new_tokens": 16,
    "tasks.{t}.run.data.eval_size": 4,
    "tasks.{t}.run.data.train_size": 32,
    "tasks.{t}.pass_k": 2,
    "tasks.{t}.pass_k_prompts": 2,
}


def test_quick_bench_runs_end_to_end(tmp_path: Path) -> None:
    sets = [f"cache_dir={tmp_path / 'cache'}", "signal_quality_samples=4"]
    for key, value in TINY.items():
        sets += sorted({f"{key.format(t=t)}={value}" for t in ("math", "react")})
    out = tmp_path / "results"
    cmd = [
        sys.executable,
        "-m",
        "botgrpo_core.cli.main",
        "bench",
        str(BENCH),
        "--quick",
        "--output",
        str(out),
    ]
    for s in sets:
        cmd += ["--set", s]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=600, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]

    runs = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
    assert {(r["task"], r["method"]) for r in runs} == {
        (t, m) for t in ("math", "react") for m in ("bot-grpo", "grpo")
    }
    assert all(r["status"] == "ok" for r in runs), [r["error"] for r in runs]
    assert all(
        r["pass_k"]["k"] == 2 and 0.0 <= r["pass_k"]["pass@1"] <= r["pass_k"]["pass@2"] <= 1 for r in runs
    )
    assert all(r["s_per_step"] and r["s_per_step"] > 0 for r in runs)
    points = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    for task, metric in (("math", "sampled/answer_accuracy"), ("react", "sampled/compile_rate")):
        for method in ("bot-grpo", "grpo"):
            steps = sorted(p["step"] for p in points if p["task"] == task and p["method"] == method)
            assert steps == [0, 1, 2]  # initial policy, then every step
            assert all(0.0 <= p[metric] <= 1.0 for p in points if p["task"] == task)
    summary = (out / "summary.md").read_text()
    assert "## Task `math`" in summary and "## Task `react`" in summary
    assert "--quick" in summary and "Machine:" in summary and "## Signal quality" in summary
    meta = json.loads((out / "meta.json").read_text())
    assert meta["signal_quality"]["math"]["unit"] == "step line"
    assert meta["signal_quality"]["react"]["samples"] == 4
    for png in ("curves_math.png", "curves_react.png", "step_time.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    # A second invocation reuses every finished run (resume) and rewrites the same report.
    again = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=300, check=False)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "4 of 4 runs already finished (reused)" in again.stdout
