"""The bench file: loading with ``quick`` and ``--set``, errors that name the key and the fix, the fairness
rules of derived run files, method variants, and the plan's pairing and outcome-dominance marks."""

from __future__ import annotations

from pathlib import Path

import pytest

from botgrpo_bench.config import BenchError, load_bench
from botgrpo_bench.plan import derive_run, plan

ROOT = Path(__file__).resolve().parents[3]
BENCH = ROOT / "benchmarks" / "bench_full.yaml"


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


def test_method_overrides_change_only_their_method(tmp_path: Path) -> None:
    bench = load_bench(
        BENCH,
        overrides=[
            "include=[react]",
            "methods=[bot-grpo, grpo]",
            "tasks.react.method_overrides={grpo: {training.learning_rate: 4.0e-4}}",
        ],
    )
    task = bench.tasks["react"]
    runs = {j.method: j.run for j in plan(bench, tmp_path, {}) if j.seed == 0}
    assert runs["grpo"]["training"]["learning_rate"] == 4.0e-4
    assert runs["bot-grpo"]["training"]["learning_rate"] == task.run["training"]["learning_rate"] != 4.0e-4
    assert task.run["training"]["learning_rate"] != 4.0e-4  # the task's own section is not touched
    # apart from the override (and the fairness rules' algorithm and mixture), the two runs are the same
    for method in runs:
        runs[method]["training"].pop("learning_rate")
        runs[method]["training"].pop("output_dir")
    assert runs["grpo"]["training"] == runs["bot-grpo"]["training"]
    assert (
        runs["grpo"]["data"] == runs["bot-grpo"]["data"]
        and runs["grpo"]["model"] == runs["bot-grpo"]["model"]
    )


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ("{gpro: {training.learning_rate: 1.0e-4}}", "unknown preset 'gpro'"),
        ("{grpo: {algorithm.kl_coef: 0.1}}", "write it as a method variant"),
        ("{grpo: {training.seed: 3}}", "is set by the bench for every run"),
    ],
)
def test_method_overrides_errors_name_the_key_and_the_fix(overrides: str, message: str) -> None:
    with pytest.raises(BenchError, match="method_overrides") as info:
        load_bench(BENCH, overrides=[f"tasks.react.method_overrides={overrides}"])
    assert message in str(info.value)


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
