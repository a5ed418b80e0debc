"""A results folder's report is never shrunk by another command: ``botgrpo bench --output DIR`` refuses,
before any warm start or training, a plan that leaves out runs DIR's record (``runs.jsonl``) holds, or a
record of another bench (``meta.json``); the same plan (a resume) or a wider one goes on. So does
``scripts/bench_report_finished.py``, which rewrites the report from the finished runs.

The record is written by the bench's own writer (:func:`~botgrpo_bench.report.write_report`) from a real
plan, without training anything, so these checks take seconds.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from test_bench_e2e import BENCH, ROOT  # bench_full.yaml (tests/ is on sys.path)

import botgrpo_bench.bench as bench_module
import botgrpo_bench.warm as warm_module
from botgrpo_bench.bench import check_output_record, run_bench
from botgrpo_bench.config import BenchError, BenchFile, load_bench
from botgrpo_bench.execute import RESULT_FILE
from botgrpo_bench.plan import plan
from botgrpo_bench.report import write_report

# 2 seeds x 2 methods of the math task and bench_full.yaml's sweep on it (4 betas x its 3 seeds): 16 runs
RECORDED = ["include=[math]", "seeds=[0, 1]", "methods=[bot-grpo, grpo]"]


def _bench(sets: Sequence[str]) -> BenchFile:
    return load_bench(BENCH, overrides=list(sets))


def _record(out: Path, sets: Sequence[str] = RECORDED) -> BenchFile:
    """``out`` as a finished bench leaves it: the report of ``sets``' plan (its runs failed: no training)."""
    bench = _bench(sets)
    out.mkdir(parents=True)
    jobs = plan(bench, out, {})
    meta = {"bench": bench.name, "command": "botgrpo bench " + " ".join(sets), "quick": False}
    write_report(bench, jobs, [{"status": "failed", "error": "not run"} for _ in jobs], out, meta)
    return bench


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


class _WarmStartReached(Exception):
    pass


@pytest.fixture
def no_warm_start(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """``run_bench``'s warm start replaced by one that stops the bench there (and says it was reached)."""
    reached: list[str] = []

    def stop(bench: BenchFile, log: object) -> None:
        reached.append(bench.name)
        raise _WarmStartReached

    monkeypatch.setattr(bench_module, "warm_starts", stop)
    return reached


@pytest.mark.parametrize(
    ("sets", "left_out", "fix"),
    [
        (
            ["include=[math]", "seeds=[0]", "methods=[bot-grpo, grpo]"],
            "leaves out 2 of them: math/bot-grpo/seed1, math/grpo/seed1.",
            ' (--set "seeds=[0, 1]");',
        ),
        (
            ["include=[react]", "seeds=[0, 1]", "methods=[bot-grpo, grpo]"],
            "leaves out 16 of them: math/bot-grpo/seed0, math/grpo/seed0, math/bot-grpo/seed1, math/grpo/seed1, "
            "math/bot-grpo/seed0 a=1 b=0.1, math/bot-grpo/seed1 a=1 b=0.1, math/bot-grpo/seed2 a=1 b=0.1, "
            "math/bot-grpo/seed0 a=1 b=0.25 and 8 more.",
            ' (--set "include=[react, math]");',
        ),
        (
            ["include=[math]", "seeds=[0, 1]", "methods=[bot-grpo, dapo]"],
            "leaves out 2 of them: math/grpo/seed0, math/grpo/seed1.",
            ' (--set "methods=[bot-grpo, dapo, grpo]");',
        ),
        (  # the sweep points alone: the grid's tasks, methods and seeds are all there, no --set to add
            [*RECORDED, "sweep=null"],
            "leaves out 12 of them: math/bot-grpo/seed0 a=1 b=0.1,",
            "(and sweep points) in this command; its finished runs",
        ),
    ],
)
def test_a_plan_that_drops_recorded_runs_is_refused_before_the_warm_start(
    tmp_path: Path, no_warm_start: list[str], sets: list[str], left_out: str, fix: str
) -> None:
    out = tmp_path / "results"
    _record(out)
    before = _files(out)
    with pytest.raises(BenchError) as refused:
        run_bench(_bench(sets), out, command="botgrpo bench", quick=False, log=lambda line: None)
    message = str(refused.value)
    assert message.startswith(f"--output {out} holds a bench report of 16 run(s), and this command's plan ")
    assert left_out in message
    assert (
        "Use another --output folder, or include those tasks/methods/seeds (and sweep points) in this command"
        in message
    )
    assert fix in message
    assert no_warm_start == []  # refused before the warm start
    assert _files(out) == before and not (out / "runs").exists()  # nothing written


@pytest.mark.parametrize(
    "sets",
    [
        RECORDED,  # the same command again: a resume
        # more seeds and methods (seed 2's sweep point at the task's alpha/beta then shares its grid run's
        # folder: still the same point of the report)
        ["include=[math]", "seeds=[0, 1, 2]", "methods=[bot-grpo, grpo, dapo]"],
        ["seeds=[1, 0]", "methods=[grpo, bot-grpo]"],  # every task, the seeds and methods in another order
    ],
)
def test_the_same_or_a_wider_plan_goes_on(tmp_path: Path, no_warm_start: list[str], sets: list[str]) -> None:
    out = tmp_path / "results"
    _record(out)
    check_output_record(_bench(sets), out)
    with pytest.raises(_WarmStartReached):
        run_bench(_bench(sets), out, command="botgrpo bench", quick=False, log=lambda line: None)
    assert no_warm_start == ["full"]


def test_a_record_of_another_bench_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "results"
    _record(out)
    other = _bench(RECORDED).model_copy(update={"name": "regimes"})
    with pytest.raises(BenchError, match=r"holds the report of bench 'full' .*Use another --output folder"):
        check_output_record(other, out)


def test_a_folder_without_a_record_goes_on(tmp_path: Path) -> None:
    check_output_record(_bench(RECORDED), tmp_path / "new")
    (tmp_path / "started" / "runs" / "math").mkdir(parents=True)  # an interrupted first bench: no report yet
    check_output_record(_bench(["include=[react]"]), tmp_path / "started")


def test_the_command_line_refuses_with_exit_code_2_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "results"
    _record(out)
    before = _files(out)
    cache = tmp_path / "cache"
    cmd = [sys.executable, "-m", "botgrpo_core.cli.main", "bench", str(BENCH), "--output", str(out)]
    for s in ["include=[math]", "seeds=[0]", "methods=[bot-grpo, grpo]", f"cache_dir={cache}"]:
        cmd += ["--set", s]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=300, check=False)
    assert proc.returncode == 2, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert proc.stderr.startswith(f"error: --output {out} holds a bench report of 16 run(s)")
    assert (
        "math/bot-grpo/seed1, math/grpo/seed1" in proc.stderr and "Use another --output folder" in proc.stderr
    )
    assert _files(out) == before and not (out / "runs").exists() and not cache.exists()


# scripts/bench_report_finished.py rewrites a folder's report from its finished runs (it starts none): the
# same guard applies, so it cannot drop runs an earlier command recorded there either.
REPORT_FINISHED = ROOT / "scripts" / "bench_report_finished.py"


def test_the_report_of_finished_runs_refuses_a_plan_that_drops_recorded_runs(tmp_path: Path) -> None:
    out = tmp_path / "results"
    _record(out)
    before = _files(out)
    cache = tmp_path / "cache"
    cmd = [sys.executable, str(REPORT_FINISHED), str(BENCH), "--output", str(out)]
    for s in ["include=[math]", "seeds=[0]", "methods=[bot-grpo, grpo]", f"cache_dir={cache}"]:
        cmd += ["--set", s]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=300, check=False)
    assert proc.returncode == 2, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert proc.stderr.startswith(f"error: --output {out} holds a bench report of 16 run(s)")
    assert "leaves out 2 of them: math/bot-grpo/seed1, math/grpo/seed1." in proc.stderr
    assert "Use another --output folder, or include those" in proc.stderr
    assert ' (--set "seeds=[0, 1]");' in proc.stderr
    assert _files(out) == before and not (out / "runs").exists() and not cache.exists()  # nothing written


@pytest.mark.parametrize(
    "sets",
    [RECORDED, ["include=[math]", "seeds=[0, 1, 2]", "methods=[bot-grpo, grpo]"]],  # the same, a wider plan
)
def test_the_report_of_finished_runs_goes_on_when_every_recorded_run_is_included(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], sets: list[str]
) -> None:
    out = tmp_path / "results"
    _record(out)
    bench = _bench(sets)
    # two of the plan's runs finished (their saved results, the bench's reuse rule); no warm start trained
    finished = [job for job in plan(bench, out, {}) if job.group == "grid" and job.seed == 0]
    for job in finished:
        job.run_dir.mkdir(parents=True, exist_ok=True)
        result = {"status": "ok", "fingerprint": job.fingerprint, "wall_s": 1.0}
        (job.run_dir / RESULT_FILE).write_text(json.dumps(result), encoding="utf-8")
    monkeypatch.setattr(warm_module, "warm_starts", lambda bench, log: {})
    spec = importlib.util.spec_from_file_location("bench_report_finished", REPORT_FINISHED)
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)

    argv = [str(BENCH), "--output", str(out)]
    for s in [*sets, "signal_quality_samples=0"]:
        argv += ["--set", s]
    assert script.main(argv) == 0, capsys.readouterr().err
    runs = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines() if line.strip()]
    assert {(r["task"], r["method"], r["seed"]) for r in runs} == {(j.task, j.method, 0) for j in finished}
    assert "not finished, left out: math/grpo/seed1" in capsys.readouterr().out
