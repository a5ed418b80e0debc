"""Targets committed before their runs, checked with a real git repository: a bench file committed at a
known time, runs whose first metrics.jsonl row comes before or after, through write_report into
regimes.jsonl and the regime section (yes, NO, not committed), and regimes.jsonl rows written before the
check (unknown)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from botgrpo_bench.config import load_bench
from botgrpo_bench.regimes import read_regimes_jsonl, speedup_profile
from botgrpo_bench.regimes_page import render_regime_section
from botgrpo_bench.target_provenance import (
    FIELDS,
    NO,
    NOT_COMMITTED,
    UNKNOWN,
    YES,
    bench_file_of,
    blame_line,
    iso_utc,
    level_check,
    run_started_at,
    target_lines,
)

METRIC = "sampled/answer_accuracy"
T0 = 1_767_225_600  # 2026-01-01 00:00:00 UTC: the first commit (every target)
HOUR = 3600

BENCH = """\
name: regimes
methods: [bot-grpo, grpo]
seeds: [0]
profile_fractions: [0.5]
tasks:
  math-short:
    domain: math
    level: short
    metric: sampled/answer_accuracy
    # target: 0.1 in a comment is not the key
    target: 0.6            # SHORT
    run: &run
      rewards: {signals: []}
      data: {task_params: {min_operands: 2, max_operands: 4}}
  math-medium:
    domain: math
    level: medium
    metric: sampled/answer_accuracy
    run: *run
    target: 0.55           # MEDIUM
  math-long:
    domain: math
    level: long
    target: 0.5            # LONG
    metric: sampled/answer_accuracy
    run:
      <<: *run
      data: {task_params: {min_operands: 6, max_operands: 8}}
"""


def _git(repo: Path, *args: str, when: int | None = None) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "bench",
        "GIT_AUTHOR_EMAIL": "bench@example.org",
        "GIT_COMMITTER_NAME": "bench",
        "GIT_COMMITTER_EMAIL": "bench@example.org",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    if when is not None:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"@{when} +0000"
    proc = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True)
    return proc.stdout.strip()


def _line_of(text: str, marker: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if marker in line)


def _run_dir(root: Path, task: str, method: str, start: float, curve: list[list[float]]) -> Path:
    run_dir = root / "runs" / task / method / "seed0"
    run_dir.mkdir(parents=True)
    rows = [{"kind": "eval", "step": s, "time": start + s, f"eval/{METRIC}": v} for s, v in curve]
    (run_dir / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return run_dir


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))  # no repository above tmp_path
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "bench.yaml").write_text(BENCH)
    _git(repo, "add", "bench.yaml")
    _git(repo, "commit", "-q", "-m", "targets", when=T0)
    return repo


def test_target_lines_are_the_keys_not_comments() -> None:
    lines = target_lines(BENCH)
    assert lines == {
        "math-short": (_line_of(BENCH, "# SHORT"), 0.6),
        "math-medium": (_line_of(BENCH, "# MEDIUM"), 0.55),
        "math-long": (_line_of(BENCH, "# LONG"), 0.5),
    }
    assert target_lines("name: x\n") == {}


def test_yes_no_and_not_committed_through_write_report(repo: Path, tmp_path: Path) -> None:
    from botgrpo_bench.plan import Job
    from botgrpo_bench.report import write_report

    bench_file = repo / "bench.yaml"
    first = _git(repo, "rev-parse", "HEAD")
    # the long target edited in a commit of its own two hours after the first, after its runs started
    text = BENCH.replace("0.5            # LONG", "0.45           # LONG")
    bench_file.write_text(text)
    _git(repo, "commit", "-q", "-am", "long target", when=T0 + 2 * HOUR)
    second = _git(repo, "rev-parse", "HEAD")
    # the medium target edited and left uncommitted
    bench_file.write_text(text.replace("0.55           # MEDIUM", "0.5            # MEDIUM"))
    bench = load_bench(bench_file)

    out = tmp_path / "results"
    starts = {"math-short": T0 + HOUR, "math-medium": T0 + HOUR, "math-long": T0 + HOUR}
    jobs = []
    for task, start in starts.items():
        for i, method in enumerate(("grpo", "bot-grpo")):
            run_dir = _run_dir(out, task, method, start + 60 * i + 0.25, [[0, 0.4], [10, 0.7]])
            jobs.append(Job(task, method, 0, "grid", {"rewards": {}, "training": {"steps": 10}}, run_dir))
    meta = {"command": f"botgrpo bench {bench_file} --set seeds=[0]", "warm_starts": {}}
    write_report(bench, jobs, [{"status": "ok"}] * len(jobs), out, meta)

    recs = {(r["bench_task"], r["method"]): r for r in read_regimes_jsonl(out / "regimes.jsonl")}
    short = recs["math-short", "grpo"]
    assert set(FIELDS) <= set(short)
    assert short["started_at"] == "2026-01-01T01:00:00.250+00:00"
    assert recs["math-short", "bot-grpo"]["started_at"] == "2026-01-01T01:01:00.250+00:00"
    assert (short["target_commit"], short["target_committed_at"]) == (first, "2026-01-01T00:00:00+00:00")
    assert short["target_where"] == f"{bench_file}:{_line_of(BENCH, '# SHORT')}"
    assert short["target_problem"] is None
    long = recs["math-long", "grpo"]
    assert (long["target"], long["target_commit"]) == (0.45, second)
    assert long["target_committed_at"] == "2026-01-01T02:00:00+00:00"
    medium = recs["math-medium", "grpo"]
    assert medium["target_commit"] is None and medium["target_committed_at"] is None
    assert (
        medium["target_problem"]
        == f"not committed: line {_line_of(BENCH, '# MEDIUM')} has uncommitted changes"
    )

    summary = (out / "summary.md").read_text()
    assert (
        f"| math | short | 0.6 | `{first[:7]}` | 2026-01-01 00:00:00 | 2026-01-01 01:00:00 | yes |" in summary
    )
    assert (
        f"| math | long | 0.45 | `{second[:7]}` | 2026-01-01 02:00:00 | 2026-01-01 01:00:00 | "
        "**NO** (committed after the first run started) |" in summary
    )
    assert "| math | medium | 0.5 | - | - | 2026-01-01 01:00:00 | **NO** (not committed: line " in summary


def test_not_a_work_tree_untracked_and_override(repo: Path, tmp_path: Path) -> None:
    loose = tmp_path / "loose" / "bench.yaml"  # no repository: GIT_CEILING_DIRECTORIES stops the search
    loose.parent.mkdir()
    loose.write_text(BENCH)
    assert blame_line(loose, 3) == {
        "commit": None,
        "committed_at": None,
        "problem": "not committed: the bench file is not in a git work tree",
    }
    (repo / "new.yaml").write_text(BENCH)
    assert (
        blame_line(repo / "new.yaml", 3)["problem"] == "not committed: the bench file is not tracked by git"
    )

    from botgrpo_bench.target_provenance import target_provenance

    bench = load_bench(repo / "bench.yaml", overrides=["tasks.math-short.target=0.9"])
    prov = target_provenance(bench, repo / "bench.yaml")
    assert prov["math-short"]["target_commit"] is None
    assert prov["math-short"]["target_problem"].startswith(
        "not committed: the run's target 0.9 is not the file's"
    )
    assert prov["math-long"]["target_commit"] == _git(repo, "rev-parse", "HEAD")
    assert target_provenance(bench, tmp_path / "missing.yaml")["math-short"]["target_problem"].startswith(
        "unknown: "
    )


def _rec(start: int | None, commit_at: int | None, *, level: str = "short", **extra: Any) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "task": "react",
        "bench_task": f"react-{level}",
        "level": level,
        "method": "grpo",
        "seed": 0,
        "target": 0.8,
        "steps": 10,
        "steps_to_target": None,
        "run_mean": 0.5,
        "curve": [[0, 0.1], [10, 0.5]],
    }
    if start is not None:
        rec["started_at"] = iso_utc(start)
    if commit_at is not None:
        rec.update(target_commit="a" * 40, target_committed_at=iso_utc(commit_at), target_problem=None)
    return {**rec, **extra}


def test_verdicts_old_rows_and_the_second_boundary() -> None:
    assert level_check([_rec(T0 + 1, T0), _rec(T0 + 5, T0)])["verdict"] == YES
    # git keeps whole seconds: a commit in the run's own second may have come after it
    same = level_check([_rec(T0, T0)])
    assert (same["verdict"], same["why"]) == (NO, "committed after the first run started")
    # the earliest start decides, whatever the order
    assert level_check([_rec(T0 + 10, T0 + 5), _rec(T0 + 1, T0 + 5)])["first_start"] == iso_utc(T0 + 1)
    assert level_check([_rec(T0 + 10, T0 + 5), _rec(T0 + 1, T0 + 5)])["verdict"] == NO
    # rows written before the check: no fields, unknown; a mix cannot say yes
    old = level_check([_rec(None, None), _rec(None, None)])
    assert (old["verdict"], old["first_start"], old["commit"]) == (UNKNOWN, None, None)
    assert level_check([_rec(None, None), _rec(T0 + 10, T0)])["verdict"] == UNKNOWN
    uncommitted = _rec(
        T0 + 10, None, target_commit=None, target_problem="not committed: line 3 has uncommitted"
    )
    assert level_check([uncommitted])["verdict"] == NOT_COMMITTED

    recs = [_rec(None, None, level="short"), _rec(T0 + 10, T0, level="long")]
    text = render_regime_section(speedup_profile(recs, [0.5]))
    assert "| react | short | 0.8 | - | - | - | unknown (not recorded with these runs) |" in text
    assert "| react | long | 0.8 | `aaaaaaa` | 2026-01-01 00:00:00 | 2026-01-01 00:00:10 | yes |" in text


def test_run_start_and_bench_file_of(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    assert run_started_at(run) is None and run_started_at(None) is None
    (run / "metrics.jsonl").write_text('{"torn\n{"kind": "eval", "step": 0, "time": 1767225600.5}\n')
    assert run_started_at(run) == "2026-01-01T00:00:00.500+00:00"
    assert bench_file_of({"command": "botgrpo bench benchmarks/b.yaml --set a=1"}) == "benchmarks/b.yaml"
    assert bench_file_of({"bench_file": "x.yaml", "command": "botgrpo bench y.yaml"}) == "x.yaml"
    assert bench_file_of({"warm_starts": {}}) is None and bench_file_of({"command": "make demo"}) is None
