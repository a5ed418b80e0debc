"""scripts/real_bench.py's records across checkouts: a finished run's committed records (:func:`record`) put back
into a fresh checkout's ``runs/`` (:func:`restore`) are a run the bench reuses (:func:`execute.saved_result`),
with the same metrics; a committed finished run wins over a folder stopped midway; a finished run of this
checkout is left alone; :func:`committed` names the finished (method, seed) pairs."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from botgrpo_bench.execute import saved_result
from botgrpo_bench.plan import Job

ROOT = Path(__file__).resolve().parents[3]


def _git(root: Path, *args: str) -> str:
    import subprocess

    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


@pytest.fixture
def driver(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The driver with ``ROOT`` a fresh git repository (what is committed is read from git)."""
    spec = importlib.util.spec_from_file_location("real_bench", ROOT / "scripts" / "real_bench.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "ROOT", tmp_path)
    monkeypatch.setattr(module, "COMMIT_WAIT_S", 0.05)
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "config", "user.email", "t@example.com")
    _git(tmp_path, "config", "user.name", "t")
    (tmp_path / "README").write_text("x\n", encoding="utf-8")
    _git(tmp_path, "add", "README")
    _git(tmp_path, "commit", "-q", "-m", "start")
    return module


def _bench_stand_in(real_popen: Any, script: str) -> Any:
    """``subprocess.Popen`` that starts ``script`` in place of ``botgrpo bench`` (git and the rest run as they are)."""
    import sys

    def popen(cmd: Any, *args: Any, **kw: Any) -> Any:
        if isinstance(cmd, list) and str(cmd[0]).endswith("botgrpo"):
            kw.pop("cwd", None)
            return real_popen([sys.executable, "-c", script], **kw)
        return real_popen(cmd, *args, **kw)

    return popen


def _record_and_commit(driver: Any, folder: str) -> None:
    assert driver.commit([driver.record(folder)], f"records of {folder}")


def _finished_run(root: Path, folder: str, level: str, method: str, seed: int, status: str = "ok") -> Job:
    """A bench folder holding one run with the files a finished run leaves; returns its job."""
    run_dir = root / "runs" / "bench" / f"real-{folder}" / "runs" / level / method / f"seed{seed}"
    job = Job(
        level, method, seed, "grid", {"training": {"lr": 2e-4, "seed": seed}, "method": method}, run_dir
    )
    run_dir.mkdir(parents=True)
    rows = [{"kind": "eval", "step": 0, "eval/sampled/compile_rate": 0.08}, {"kind": "train", "step": 1}]
    (run_dir / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (run_dir / "summary.json").write_text(json.dumps({"steps": 1}), encoding="utf-8")
    (run_dir / "config.yaml").write_text("training: {lr: 0.0002}\n", encoding="utf-8")
    result = {"label": job.label, "fingerprint": job.fingerprint, "status": status}
    (run_dir / "bench_result.json").write_text(json.dumps(result), encoding="utf-8")
    (run_dir / "checkpoint-1").mkdir()  # not recorded
    (run_dir.parents[3] / "runs.jsonl").write_text(json.dumps({"task": level}) + "\n", encoding="utf-8")
    return job


def test_record_then_restore_in_a_fresh_checkout_is_a_reused_run(driver: Any, tmp_path: Path) -> None:
    job = _finished_run(tmp_path, "react-tuned", "react-tuned", "bot-grpo", 0)
    metrics = (job.run_dir / "metrics.jsonl").read_bytes()
    _record_and_commit(driver, "react-tuned")
    assert driver.committed("react-tuned") == {("bot-grpo", 0)}
    shutil.rmtree(tmp_path / "runs")  # the next session's checkout: no runs/

    assert saved_result(job) is None
    assert driver.restore("react-tuned") == 1
    assert saved_result(job) is not None  # the bench reuses it rather than training again
    assert (job.run_dir / "metrics.jsonl").read_bytes() == metrics
    assert (job.run_dir / "summary.json").is_file() and (job.run_dir / "config.yaml").is_file()
    assert not (job.run_dir / "checkpoint-1").exists()
    assert (tmp_path / "runs" / "bench" / "real-react-tuned" / "runs.jsonl").is_file()
    assert driver.restore("react-tuned") == 0  # already back


def test_restore_overwrites_a_run_stopped_midway_but_not_a_finished_one(driver: Any, tmp_path: Path) -> None:
    job = _finished_run(tmp_path, "react-tuned", "react-tuned", "grpo", 1)
    driver.record("react-tuned")
    # this checkout: the same run stopped midway (no bench_result.json), a shorter metrics file
    (job.run_dir / "bench_result.json").unlink()
    (job.run_dir / "metrics.jsonl").write_text('{"kind": "eval", "step": 0}\n', encoding="utf-8")
    assert driver.restore("react-tuned") == 1
    assert saved_result(job) is not None
    assert len((job.run_dir / "metrics.jsonl").read_text(encoding="utf-8").splitlines()) == 2

    # a finished run of this checkout is kept as it is
    (job.run_dir / "metrics.jsonl").write_text("{}\n", encoding="utf-8")
    assert driver.restore("react-tuned") == 0
    assert (job.run_dir / "metrics.jsonl").read_text(encoding="utf-8") == "{}\n"


def test_committed_leaves_out_failed_runs_and_a_missing_folder(driver: Any, tmp_path: Path) -> None:
    assert driver.committed("math-tuned") == set()
    assert driver.restore("math-tuned") == 0
    _finished_run(tmp_path, "react-tuned-others", "react-tuned", "dapo", 0, status="failed")
    _finished_run(tmp_path, "react-tuned-others", "react-tuned", "gspo", 0)
    _record_and_commit(driver, "react-tuned-others")
    assert driver.committed("react-tuned-others") == {("gspo", 0)}


def test_finished_reads_the_bench_folder_and_skips_a_result_being_written(
    driver: Any, tmp_path: Path
) -> None:
    assert driver.finished("react-tuned") == set()
    job = _finished_run(tmp_path, "react-tuned", "react-tuned", "grpo", 2)
    _finished_run(tmp_path, "react-tuned", "react-tuned", "bot-grpo", 2, status="failed")
    assert driver.finished("react-tuned") == {("grpo", 2)}
    (job.run_dir / "bench_result.json").write_text('{"label": "react-tu', encoding="utf-8")  # torn
    assert driver.finished("react-tuned") == set()


def test_a_run_finished_midway_through_a_command_is_committed_before_the_command_ends(
    driver: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The driver's loop over a real subprocess standing in for ``botgrpo bench``: a command of two runs whose first
    finishes, then the process lives on; the first run's records are committed while it does."""
    import subprocess
    import sys

    monkeypatch.setattr(driver, "ORDER", [("react-tuned", ["bot-grpo"], [0])])
    monkeypatch.setattr(driver, "POLL_S", 0.2)
    real_commit = driver.commit
    commits: list[str] = []

    def commit(paths: list[Path], message: str) -> bool:
        commits.append(message)
        return real_commit(paths, message)

    monkeypatch.setattr(driver, "commit", commit)
    job = _finished_run(tmp_path, "react-tuned", "react-tuned", "bot-grpo", 0)
    result = (job.run_dir / "bench_result.json").read_text(encoding="utf-8")
    (job.run_dir / "bench_result.json").unlink()
    # the stand-in writes the run's result after a moment, then waits until that run is recorded, then exits 0
    script = (
        "import pathlib, sys, time\n"
        f"run = pathlib.Path({str(job.run_dir)!r})\n"
        "time.sleep(0.5)\n"
        f"(run / 'bench_result.json').write_text({result!r})\n"
        f"rec = pathlib.Path({str(tmp_path / 'docs' / 'results' / 'real-react-tuned' / 'metrics')!r})\n"
        "end = time.time() + 30\n"
        "while not (rec / 'bot-grpo_seed0.bench_result.json').exists() and time.time() < end:\n"
        "    time.sleep(0.1)\n"
        "sys.exit(0)\n"
    )
    real_popen = subprocess.Popen
    monkeypatch.setattr(driver.subprocess, "Popen", _bench_stand_in(real_popen, script))
    monkeypatch.setattr(sys, "argv", ["real_bench.py"])
    assert driver.main() == 0
    assert any("records after bot-grpo seed 0 (finished; the command goes on" in m for m in commits)
    assert "records as the command for bot-grpo x seeds [0] ended (botgrpo bench exit 0" in commits[-1]
    assert driver.committed("react-tuned") == {("bot-grpo", 0)}


def test_a_refused_commit_is_named_and_tried_again(driver: Any, tmp_path: Path, monkeypatch, capsys) -> None:
    """Issue 60 item 3: a stale .git/index.lock made the commit fail, the driver read the work tree, took the run
    for committed and never committed it again (a fresh checkout then lost it); its message showed the pathspec
    error. Now what is committed is read from git, and the message names the lock."""
    monkeypatch.setattr(driver, "COMMIT_TRIES", 2)
    _finished_run(tmp_path, "react-tuned", "react-tuned", "bot-grpo", 0)
    lock = tmp_path / ".git" / "index.lock"
    lock.write_text("", encoding="utf-8")
    assert driver.commit([driver.record("react-tuned")], "records") is False
    err = capsys.readouterr().err
    assert "index.lock" in err and "pathspec" not in err, err
    assert (tmp_path / "docs" / "results" / "real-react-tuned" / "metrics").is_dir()  # in the work tree
    assert driver.committed("react-tuned") == set()  # but not in git: it is committed again
    lock.unlink()
    assert driver._commit_finished("react-tuned") is True
    assert driver.committed("react-tuned") == {("bot-grpo", 0)}
    assert _git(tmp_path, "status", "--porcelain", "--", "docs") == ""


def test_sigterm_stops_the_bench_and_its_runs_and_commits_what_finished(
    driver: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 60 item 27: SIGTERM to the driver left the bench, its job and workers running (6 processes) and their
    records uncommitted. A stand-in bench (a real process) starts a run process that, like a run, takes a moment to
    stop at a step boundary on SIGTERM; the driver passes the signal to the group, waits for both, commits the run
    that finished before, and exits 143."""
    import os
    import signal
    import subprocess
    import sys
    import threading

    monkeypatch.setattr(driver, "ORDER", [("react-tuned", ["bot-grpo", "grpo"], [0])])
    monkeypatch.setattr(driver, "POLL_S", 0.2)
    _finished_run(tmp_path, "react-tuned", "react-tuned", "bot-grpo", 0)  # finished before the stop
    pids = tmp_path / "pids"
    run = (
        "import os, pathlib, signal, sys, time\n"
        "def stop(*a):\n"
        "    time.sleep(0.5)  # the step ends, a checkpoint is saved\n"
        f"    pathlib.Path({str(tmp_path / 'run-stopped')!r}).write_text('yes')\n"
        "    sys.exit(143)\n"
        "signal.signal(signal.SIGTERM, stop)\n"
        "while True: time.sleep(0.1)\n"
    )
    bench = (
        "import os, pathlib, subprocess, sys, time\n"
        f"child = subprocess.Popen([sys.executable, '-c', {run!r}])\n"
        f"pathlib.Path({str(pids)!r}).write_text(f'{{os.getpid()}} {{child.pid}}')\n"
        "while True: time.sleep(0.1)\n"
    )
    real_popen = subprocess.Popen
    monkeypatch.setattr(driver.subprocess, "Popen", _bench_stand_in(real_popen, bench))
    monkeypatch.setattr(sys, "argv", ["real_bench.py"])

    def send_when_started() -> None:
        for _ in range(200):
            if pids.is_file() and len(pids.read_text().split()) == 2:
                break
            threading.Event().wait(0.05)
        threading.Event().wait(0.3)
        os.kill(os.getpid(), signal.SIGTERM)

    before = signal.getsignal(signal.SIGTERM)
    threading.Thread(target=send_when_started, daemon=True).start()
    assert driver.main() == 128 + signal.SIGTERM
    assert signal.getsignal(signal.SIGTERM) == before  # the driver's handler is gone again
    for pid in map(int, pids.read_text().split()):
        assert not driver._running(pid), pid  # neither the bench nor its run is left running
    assert (tmp_path / "run-stopped").read_text() == "yes"  # the run stopped at its own pace, not killed
    assert driver.committed("react-tuned") == {("bot-grpo", 0)}


def test_each_bench_runs_its_own_file_and_order(
    driver: Any, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    """``--bench multistep`` runs benchmarks/bench_multistep.yaml in MULTISTEP_ORDER (its pilot first), and every
    level it names is a task of that file; the default stays issue 37's bench."""
    import yaml

    monkeypatch.setattr("sys.argv", ["real_bench.py", "--bench", "multistep", "--dry-run"])
    assert driver.main() == 0
    lines = capsys.readouterr().out.splitlines()
    assert all(" bench benchmarks/bench_multistep.yaml " in line for line in lines)
    assert "include=[multi23-pilot]" in lines[0] and "seeds=[100]" in lines[0]
    tasks = yaml.safe_load((ROOT / "benchmarks" / "bench_multistep.yaml").read_text(encoding="utf-8"))[
        "tasks"
    ]
    assert {level for level, *_ in driver.MULTISTEP_ORDER} <= set(tasks)
    monkeypatch.setattr("sys.argv", ["real_bench.py", "--dry-run"])
    assert driver.main() == 0
    assert all(" bench benchmarks/bench_real.yaml " in line for line in capsys.readouterr().out.splitlines())


@pytest.mark.parametrize(
    "bench_file", ["bench_multistep.yaml", "bench_multistep45.yaml", "bench_react_checks.yaml"]
)
def test_the_study_benches_plan_valid_run_files(bench_file: str, tmp_path: Path) -> None:
    """Every level of the issue 57 and 58 benches, both methods, gives a run file ``botgrpo train`` accepts
    (plugins, params and the dominance check), so a settings commit cannot hold a level that fails at its start."""
    from botgrpo_bench.config import load_bench
    from botgrpo_bench.plan import plan

    bench = load_bench(ROOT / "benchmarks" / bench_file)
    jobs = plan(bench, tmp_path, {name: None for name in bench.tasks})
    assert {(j.task, j.method) for j in jobs} >= {(t, m) for t in bench.tasks for m in ("bot-grpo", "grpo")}


def test_benches_named_twice_run_one_after_the_other(
    driver: Any, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    monkeypatch.setattr(
        "sys.argv", ["real_bench.py", "--bench", "multistep", "--bench", "react-checks", "--dry-run"]
    )
    assert driver.main() == 0
    files = [line.split(" bench ")[1].split()[0] for line in capsys.readouterr().out.splitlines()]
    first_react = files.index("benchmarks/bench_react_checks.yaml")
    assert set(files[:first_react]) == {"benchmarks/bench_multistep.yaml"}
    assert set(files[first_react:]) == {"benchmarks/bench_react_checks.yaml"}


def test_the_react_level_runs_between_multi23s_headline_and_its_controls(
    driver: Any, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    """This round's command: multi23's pilot and paired seeds, the React level, then ``--bench multistep`` again,
    whose pilot and paired commands are the headline's (each says done once committed) and whose controls follow,
    then the 4-5 operation level's pilot and paired seeds."""
    argv = [
        "real_bench.py",
        "--bench",
        "multistep-headline",
        "--bench",
        "react-checks",
        "--bench",
        "multistep",
        "--bench",
        "multistep45",
    ]
    monkeypatch.setattr("sys.argv", [*argv, "--dry-run"])
    assert driver.main() == 0
    lines = capsys.readouterr().out.splitlines()
    levels = [line.split("include=[")[1].split("]")[0] for line in lines]
    first_react, last_react = (
        levels.index("react-checks-pilot"),
        len(levels) - 1 - levels[::-1].index("react-checks"),
    )
    assert set(levels[:first_react]) == {"multi23-pilot", "multi23"}
    pure = max(i for i, line in enumerate(lines) if "methods=[pure]" in line)
    assert set(levels[last_react + 1 : pure + 1]) == {"multi23-pilot", "multi23", "multi23-shuffled"}
    assert (
        lines[:first_react] == lines[last_react + 1 : last_react + 1 + first_react]
    )  # the same commands again
    assert "seeds=[0, 1, 2, 3]" in lines[pure]
    assert all(" bench benchmarks/bench_multistep45.yaml " in line for line in lines[pure + 1 :])
    assert "include=[multi45-pilot]" in lines[pure + 1] and "seeds=[0, 1, 2, 3, 4, 5, 6, 7]" in lines[-1]


def test_a_runs_records_go_in_with_the_pages_written_from_them(driver: Any, tmp_path: Path) -> None:
    """The study page's statistic and the README's table move with each committed run: the driver writes the
    pages again from the records and commits them together (the pages' own test rebuilds them from the committed
    records and must find them equal)."""
    (tmp_path / "docs").mkdir()
    shutil.copy2(ROOT / "README.md", tmp_path / "README.md")
    shutil.copytree(ROOT / "docs" / "results", tmp_path / "docs" / "results")
    shutil.copy2(ROOT / "docs" / "results.md", tmp_path / "docs" / "results.md")
    shutil.copytree(ROOT / "benchmarks" / "results_prefaces", tmp_path / "benchmarks" / "results_prefaces")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "the pages and their records")
    src = tmp_path / "runs" / "bench" / "real-multi23"
    src.mkdir(parents=True)
    rows = [
        {"method": m, "seed": 0, "status": "ok", "curve_mean": v}
        for m, v in (("bot-grpo", 0.05), ("grpo", 0.03))
    ]
    (src / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    paths = driver.record_and_pages("multi23")
    names = {str(p.relative_to(tmp_path)) for p in paths}
    assert {
        "docs/results/real-multi23",
        "README.md",
        "docs/results.md",
        "docs/results/real-multistep.md",
    } <= names
    assert "+0.020 (per seed +0.020; 1 of 8 paired seeds" in (tmp_path / "README.md").read_text(
        encoding="utf-8"
    )
    assert driver.commit(paths, "records and pages")
    assert not _git(tmp_path, "status", "--porcelain", "--", "README.md", "docs").strip()
