"""Was each level's target fixed before its runs? The commit that last set a task's ``target:`` line in the
bench file (``git blame``), each run's start, and the per-level verdict the regime section shows.

- :func:`target_provenance`: per task, the bench file's line that holds its ``target:`` (found with the YAML
  composer, so anchors, merge keys and comments cannot mislead it), ``git blame --porcelain`` of that line:
  the commit and its committer time (ISO 8601, UTC), or why there is none ("not committed": the file is
  not in a git work tree, not tracked, or the line has uncommitted changes; "unknown": git failed);
- :func:`run_started_at`: a run's start, the ``time`` of its first ``metrics.jsonl`` row (``botgrpo
  train`` writes it after the step-0 evaluation, before the first training step: the first result of the
  run anyone could have seen; a resume keeps that row);
- :func:`level_check` and :func:`provenance_lines`: per level, the target, its commit and time, the
  earliest run start and "fixed before the runs: yes / NO / unknown".

A regimes.jsonl row written before these fields existed lacks them: its provenance is unknown, never a
guess. git records whole seconds, so a commit counts as before a run only when its second ends by the
run's start. The check is as good as the repository's history: committer dates can be set by hand.
"""

from __future__ import annotations

import datetime as dt
import json
import shlex
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from botgrpo_bench.config import BenchFile

#: the record keys this module adds to a regimes.jsonl row (absent on older rows: unknown)
FIELDS = ("started_at", "target_commit", "target_committed_at", "target_where", "target_problem")
#: the hash git blame gives a line that is not committed
_UNCOMMITTED = "0" * 40
#: seconds git blame may take before the provenance is reported unknown
GIT_TIMEOUT_S = 30.0
#: verdicts of :func:`level_check`
YES, NO, NOT_COMMITTED, UNKNOWN = "yes", "NO", "not committed", "unknown"


def iso_utc(epoch: float) -> str:
    """``epoch`` seconds as ISO 8601 in UTC (``2026-12-02T00:22:59+00:00``; milliseconds when it has them)."""
    when = dt.datetime.fromtimestamp(epoch, tz=dt.timezone.utc)
    return when.isoformat(timespec="seconds" if float(epoch).is_integer() else "milliseconds")


def _epoch(iso: str) -> float:
    return dt.datetime.fromisoformat(iso).timestamp()


# --- the target's commit ---------------------------------------------------------------------------------------
def target_lines(text: str) -> dict[str, tuple[int, Any]]:
    """``task name -> (1-based line, value)`` of each ``tasks.<name>.target`` written in a bench file's text
    (tasks without their own ``target:`` key are left out). ``yaml.YAMLError`` when the text is not YAML."""
    import yaml

    root = yaml.compose(text)
    out: dict[str, tuple[int, Any]] = {}
    tasks = _child(root, "tasks")
    if not isinstance(tasks, yaml.MappingNode):
        return out
    for key, task in tasks.value:
        target = _child(task, "target")
        if isinstance(target, yaml.ScalarNode):
            out[str(key.value)] = (target.start_mark.line + 1, yaml.safe_load(target.value))
    return out


def _child(node: Any, name: str) -> Any:
    import yaml

    if not isinstance(node, yaml.MappingNode):
        return None
    return next((value for key, value in node.value if getattr(key, "value", None) == name), None)


def blame_line(path: Path, line: int) -> dict[str, Any]:
    """``git blame --porcelain`` of one line of ``path``: ``{"commit", "committed_at", "problem"}``; the
    commit is None with ``problem`` saying why (``not committed: ...`` or ``unknown: ...``)."""
    path = Path(path).resolve()
    try:
        proc = subprocess.run(
            ["git", "blame", "--porcelain", "-L", f"{line},{line}", "--", str(path)],
            cwd=path.parent,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except FileNotFoundError:
        return _none("unknown: git is not installed")
    except subprocess.TimeoutExpired:
        return _none(f"unknown: git blame took over {GIT_TIMEOUT_S:g} s")
    err = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"exit status {proc.returncode}"
    if proc.returncode != 0:
        if "not a git repository" in err:
            return _none("not committed: the bench file is not in a git work tree")
        if "no such path" in err:
            return _none("not committed: the bench file is not tracked by git")
        return _none(f"unknown: git blame failed ({err})")
    head = proc.stdout.splitlines()
    commit = head[0].split()[0] if head and head[0].split() else ""
    times = [ln.split()[1] for ln in head if ln.startswith("committer-time ")]
    if commit == _UNCOMMITTED:
        return _none(f"not committed: line {line} has uncommitted changes")
    if len(commit) < 40 or not times:
        return _none(f"unknown: unexpected git blame output ({head[:1]})")
    return {"commit": commit, "committed_at": iso_utc(int(times[0])), "problem": None}


def _none(problem: str) -> dict[str, Any]:
    return {"commit": None, "committed_at": None, "problem": problem}


def target_provenance(bench: BenchFile, bench_file: str | Path) -> dict[str, dict[str, Any]]:
    """Per levelled task of ``bench`` (loaded from ``bench_file``): ``target_commit``,
    ``target_committed_at``, ``target_where`` (``file:line``) and ``target_problem`` (None when committed).

    A task whose target in ``bench`` differs from its ``target:`` line (a ``--set`` override, or the file
    edited since it was loaded) has no commit: ``target_problem`` says so."""
    path = Path(bench_file)
    try:
        lines = target_lines(path.read_text(encoding="utf-8"))
    except Exception as exc:  # unreadable or not YAML: the provenance is unknown, never the report lost
        lines, unreadable = {}, f"unknown: {path} could not be read ({type(exc).__name__}: {exc})"
    else:
        unreadable = None
    out: dict[str, dict[str, Any]] = {}
    for name, task in bench.tasks.items():
        if task.level is None:
            continue
        where = f"{path}:{lines[name][0]}" if name in lines else str(path)
        if unreadable:
            found = _none(unreadable)
        elif name not in lines:
            found = _none(f"unknown: {path} has no tasks.{name}.target line")
        elif not isinstance(lines[name][1], (int, float)) or abs(float(lines[name][1]) - task.target) > 1e-9:
            found = _none(
                f"not committed: the run's target {task.target:g} is not the file's "
                f"({lines[name][1]}; a --set override, or the file edited since the bench loaded it)"
            )
        else:
            found = blame_line(path, lines[name][0])
        out[name] = {
            "target_commit": found["commit"],
            "target_committed_at": found["committed_at"],
            "target_where": where,
            "target_problem": found["problem"],
        }
    return out


def bench_file_of(meta: Mapping[str, Any]) -> str | None:
    """The bench file a results folder's ``meta`` was written from: ``meta["bench_file"]``, else the first
    argument of ``meta["command"]`` (``botgrpo bench BENCH.yaml ...``); None when neither says."""
    if meta.get("bench_file"):
        return str(meta["bench_file"])
    command = meta.get("command")
    if not isinstance(command, str):
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    return words[2] if len(words) > 2 and words[:2] == ["botgrpo", "bench"] else None


# --- the runs' start ---------------------------------------------------------------------------------------------
def run_started_at(run_dir: str | Path | None) -> str | None:
    """The ISO (UTC) ``time`` of the first row of ``run_dir/metrics.jsonl`` (None without one)."""
    if not run_dir:
        return None
    path = Path(run_dir) / "metrics.jsonl"
    if not path.is_file():
        return None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if isinstance(row, dict) and isinstance(row.get("time"), (int, float)):
                return iso_utc(float(row["time"]))
    return None


# --- the verdict ---------------------------------------------------------------------------------------------------
def level_check(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One level's runs: ``commit`` / ``committed_at`` (the latest over its records, normally one),
    ``first_start`` (the earliest run start), ``verdict`` (:data:`YES`, :data:`NO`, :data:`NOT_COMMITTED`,
    :data:`UNKNOWN`) and ``why`` (None for yes)."""
    starts = [r["started_at"] for r in records if r.get("started_at")]
    first = min(starts, key=_epoch) if starts else None
    out: dict[str, Any] = {"commit": None, "committed_at": None, "first_start": first}
    known = [r for r in records if "target_commit" in r]
    missing = [r for r in known if not r.get("target_commit")]
    if not known:
        return {**out, "verdict": UNKNOWN, "why": "not recorded with these runs"}
    if missing:
        problem = str(missing[0].get("target_problem") or "unknown: no commit recorded")
        verdict = NOT_COMMITTED if problem.startswith(NOT_COMMITTED) else UNKNOWN
        return {**out, "verdict": verdict, "why": problem.split(": ", 1)[-1]}
    latest = max(known, key=lambda r: _epoch(r["target_committed_at"]))
    out.update(commit=latest["target_commit"], committed_at=latest["target_committed_at"])
    if first is not None and _epoch(latest["target_committed_at"]) + 1 > _epoch(first):
        return {**out, "verdict": NO, "why": "committed after the first run started"}
    lacking = sum(not r.get("started_at") or "target_commit" not in r for r in records)
    if lacking:
        return {
            **out,
            "verdict": UNKNOWN,
            "why": f"{lacking} of {len(records)} runs without a start or commit",
        }
    return {**out, "verdict": YES, "why": None}


def provenance_lines(levels: Sequence[Mapping[str, Any]]) -> list[str]:
    """The regime section's table: per level (``domain``, ``level``, ``target`` and ``provenance``, a
    :func:`level_check`), the target, its commit and time, the first run's start and the verdict."""
    if not levels:
        return []
    lines = [
        "Targets fixed before the runs: the commit that last set each level's `target:` line in the bench "
        "file (`git blame`), and the earliest start of the level's runs (a run's first `metrics.jsonl` row, "
        "its step-0 evaluation). Times in UTC.",
        "",
        "| task | level | target | target commit | committed | first run started | fixed before the runs |",
        "|---|---|---|---|---|---|---|",
    ]
    for lv in levels:
        p = lv["provenance"]
        verdict = {
            YES: "yes",
            NO: f"**NO** ({p['why']})",
            NOT_COMMITTED: f"**NO** (not committed: {p['why']})",
        }.get(p["verdict"], f"unknown ({p['why']})")
        cells = [
            lv["domain"],
            lv["level"],
            f"{lv['target']:g}",
            f"`{p['commit'][:7]}`" if p["commit"] else "-",
            _when(p["committed_at"]),
            _when(p["first_start"]),
            verdict,
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return [*lines, ""]


def _when(iso: str | None) -> str:
    """``2026-12-02T00:22:59.5+00:00`` -> ``2026-12-02 00:22:59``; ``-`` for None."""
    if not iso:
        return "-"
    return dt.datetime.fromtimestamp(int(_epoch(iso)), tz=dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
