"""``botgrpo bench BENCH.yaml``: a grid of presets x seeds x tasks from one cached warm start.

A bench file (:mod:`botgrpo_bench.config`) names the tasks (each a run-file section plus the success
metric, its target and the warm start), the methods (algorithm presets), the seeds, an optional
alpha/beta sweep of BoT-GRPO, and the overrides ``--quick`` applies. The steps, one module each:

1. warm starts (:mod:`botgrpo_bench.warm`): trained once per task and cached;
2. the plan (:mod:`botgrpo_bench.plan`): a run file per (task, method, seed) under the fairness rules;
3. execution (:mod:`botgrpo_bench.execute`): one process per run, ``parallel`` at a time, resumable;
4. the report (:mod:`botgrpo_bench.report`): ``results.jsonl``, ``runs.jsonl``, ``summary.md``, plots.

A results folder holding a report that this plan would shrink (runs it leaves out, or another bench's) is
refused before step 1 (:func:`check_output_record`); the same plan again, or a wider one, goes on.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from botgrpo_bench.config import BenchError, BenchFile, load_bench
from botgrpo_bench.execute import execute
from botgrpo_bench.machine import machine_note
from botgrpo_bench.plan import Job, plan, planned_labels, run_label
from botgrpo_bench.runs import read_jsonl
from botgrpo_bench.warm import warm_starts

#: the lock a bench holds on its results folder (one bench per folder)
BENCH_LOCK = "bench.lock"


def _load_average() -> tuple[float, float, float] | None:
    return os.getloadavg() if hasattr(os, "getloadavg") else None


def run_bench(
    bench: BenchFile, out_dir: Path, *, command: str, quick: bool, log: Callable[[str], None] = print
) -> Path:
    """Warm starts, the grid, the sweep, then the report; returns the results folder.

    The folder is held (``bench.lock``, :class:`~botgrpo_core.engine.run_lock.OutputDirLock`) for the whole bench:
    a second bench on it is refused, naming the first, before it reads or writes anything (two benches on one
    folder each took the other's runs for failed)."""
    import contextlib

    from botgrpo_core.engine.run_lock import OutputDirLock
    from botgrpo_core.engine.setup import TrainingSetupError

    lock = OutputDirLock(
        out_dir,
        log,
        lock_file=BENCH_LOCK,
        key="the results folder (--output)",
        holder="botgrpo bench",
        rule="One bench runs in a results folder at a time",
    )
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(lock)
        except TrainingSetupError as exc:
            raise BenchError(str(exc)) from None
        return _run_bench(bench, out_dir, command=command, quick=quick, log=log)


def _run_bench(
    bench: BenchFile, out_dir: Path, *, command: str, quick: bool, log: Callable[[str], None]
) -> Path:
    """:func:`run_bench` once the folder is this bench's."""
    from botgrpo_bench.report import write_report

    check_output_record(bench, out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    warm = warm_starts(bench, log)
    warm_s = time.perf_counter() - t0
    jobs = plan(bench, out_dir, warm)
    n_grid = sum(j.group == "grid" for j in jobs)
    log(
        f"bench {bench.name}: {n_grid} grid runs ({len(bench.tasks)} tasks x {len(bench.methods)} methods x "
        f"{len(bench.seeds)} seeds) + {len(jobs) - n_grid} sweep runs, {bench.parallel} at a time -> {out_dir}"
    )

    t1 = time.perf_counter()
    results = execute(
        jobs,
        parallel=bench.parallel,
        threads=bench.threads_per_run,
        timeout_s=bench.run_timeout_s,
        job_extra=lambda job: pass_k_request(bench, job),
        log=log,
        together=lambda a, b: paired(bench, a, b),
        progress_every_s=bench.progress_every_s,
        describe=lambda job: describe_progress(bench, job),
    )
    runs_s = time.perf_counter() - t1
    quality = signal_quality_all(bench, warm, log) if bench.signal_quality_samples else {}
    # one run per folder (a sweep point equal to a grid run shares its folder), failed ones included
    ran = len({j.run_dir for j, r in zip(jobs, results, strict=True) if not r.get("reused")})
    meta = {
        "history": invocation_history(out_dir, command=command, runs_s=runs_s, runs_started=ran),
        "signal_quality": quality,
        "bench": bench.name,
        "command": command,
        "quick": quick,
        "machine": machine_note(),
        "ran": _what_ran(),  # commit, versions, host: botgrpo_core.engine.provenance
        "date": time.strftime("%Y-%m-%d %H:%M %Z"),
        "warm_start_s": warm_s,
        "runs_s": runs_s,
        "total_s": time.perf_counter() - t0,
        "parallel": bench.parallel,
        "threads_per_run": bench.threads_per_run,
        "load_average": _load_average(),
        "warm_starts": {k: str(v) if v else None for k, v in warm.items()},
    }
    write_report(bench, jobs, results, out_dir, meta)
    failed = [j.label for j, r in zip(jobs, results, strict=True) if r.get("status") != "ok"]
    log(f"bench {bench.name}: done in {meta['total_s'] / 60:.1f} min -> {out_dir / 'summary.md'}")
    if failed:
        log(f"bench {bench.name}: {len(failed)} run(s) failed: {', '.join(failed)} (see their bench.log)")
    return out_dir


def check_output_record(bench: BenchFile, out_dir: Path, *, shown: int = 8) -> None:
    """Refuse (:class:`BenchError`) a results folder whose report this bench would shrink, before anything
    trains: ``out_dir`` holds another bench's record (``meta.json``'s ``bench``), or a record
    (``runs.jsonl``) with runs that this plan leaves out, which the rewritten report would drop.

    A plan that covers every recorded run (the same one, or more seeds, methods or tasks) passes; so does a
    folder without a record. Runs are compared by :func:`~botgrpo_bench.plan.run_label` (the label of the
    bench's log lines); ``shown``: how many left-out runs the message names.
    """
    meta_path, runs_path = out_dir / "meta.json", out_dir / "runs.jsonl"
    if meta_path.is_file():
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise BenchError(
                f"--output {out_dir}: its meta.json cannot be read ({exc}); use another --output folder"
            ) from None
        recorded = meta.get("bench") if isinstance(meta, dict) else None
        if recorded is not None and recorded != bench.name:
            raise BenchError(
                f"--output {out_dir} holds the report of bench {recorded!r} (its meta.json), not of this "
                f"bench {bench.name!r}: writing here would replace that report. Use another --output folder."
            )
    planned = set(planned_labels(bench, out_dir))
    recorded_runs = {
        run_label(r["task"], r["method"], r["seed"], r.get("group", "grid"), r.get("alpha"), r.get("beta")): r
        for r in read_jsonl(runs_path)
        if all(k in r for k in ("task", "method", "seed"))
    }
    left_out = [key for key in recorded_runs if key not in planned]
    if not left_out:
        return
    # the --set that brings the left-out grid runs back (a sweep point comes back with the bench's sweep)
    grid_left_out = [recorded_runs[k] for k in left_out if recorded_runs[k].get("group", "grid") == "grid"]
    sets = []
    for key, now, field in (
        ("include", list(bench.tasks), "task"),
        ("methods", bench.methods, "method"),
        ("seeds", [str(seed) for seed in bench.seeds], "seed"),
    ):
        wider = list(dict.fromkeys([*now, *(str(r[field]) for r in grid_left_out)]))
        if len(wider) > len(now):
            sets.append(f'--set "{key}=[{", ".join(wider)}]"')
    more = f" and {len(left_out) - shown} more" if len(left_out) > shown else ""
    raise BenchError(
        f"--output {out_dir} holds a bench report of {len(recorded_runs)} run(s), and this command's plan "
        f"leaves out {len(left_out)} of them: {', '.join(left_out[:shown])}{more}. Its report would be "
        "rewritten without them (their folders stay under runs/, no longer reported). Use another --output "
        "folder, or include those tasks/methods/seeds (and sweep points) in this command"
        + (f" ({' '.join(sets)})" if sets else "")
        + "; its finished runs are reused, not trained again."
    )


def describe_progress(bench: BenchFile, job: Job) -> str | None:
    """A running job's progress line: its training step and its latest evaluation of the task metric."""
    from botgrpo_bench.runs import run_curves

    points, train = run_curves(job.run_dir)
    if not points and not train:
        return None
    metric = bench.tasks[job.task].metric
    steps = job.run.get("training", {}).get("steps", "?")
    step = max([int(r.get("step", 0)) for r in train] or [0])
    line = f"step {step}/{steps}"
    if points:
        at, values = points[-1]
        if metric in values:
            line += f", {metric} {values[metric]:.3f} (evaluated at step {at})"
    return line


def side_by_side(bench: BenchFile, run_rows: list[dict[str, Any]], out_dir: Path) -> str:
    """The closing table on the terminal: per task, each method's steps to target and success (means
    over the seeds' runs), and where the curves plot and the full summary are."""
    import statistics

    from botgrpo_bench.aggregate import run_step_time

    def mean(values: list[Any], digits: int = 3) -> str:
        vals = [float(v) for v in values if isinstance(v, (int, float))]
        return f"{statistics.fmean(vals):.{digits}f}" if vals else "-"

    lines = []
    for name, task in bench.tasks.items():
        rows = [r for r in run_rows if r.get("task") == name and r.get("group") in (None, "grid")]
        if not rows:
            continue
        lines += [
            "",
            f"{name}: {task.metric}, target {task.target:g} (means over {len(bench.seeds)} seed(s))",
        ]
        extra = [e for e in task.extra_metrics if any(r.get(f"final_{e}") is not None for r in rows)]
        header = (
            "method",
            "steps to target",
            "initial",
            "final",
            "mean over the run",
            *(f"final {e}" for e in extra),
            "s/step (median)",
        )
        table = [header]
        for method in bench.methods:
            rs = [r for r in rows if r.get("method") == method and r.get("status") == "ok"]
            reached = [r["steps_to_target"] for r in rs if r.get("steps_to_target") is not None]
            steps = f"{mean(reached, 0)} ({len(reached)}/{len(rs)} reached)" if rs else "failed"
            table.append(
                (
                    method,
                    steps,
                    mean([r.get("initial") for r in rs]),
                    mean([r.get("final") for r in rs]),
                    mean([r.get("curve_mean") for r in rs]),
                    *(mean([r.get(f"final_{e}") for r in rs]) for e in extra),
                    mean([run_step_time(r) for r in rs], 2),
                )
            )
        widths = [max(len(row[i]) for row in table) for i in range(len(header))]
        lines += ["  " + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in table]
        plot = out_dir / f"curves_{name}.png"
        if plot.is_file():
            lines.append(f"  curves: {plot}")
    lines += ["", f"full report: {out_dir / 'summary.md'}"]
    return "\n".join(lines)


def pass_k_request(bench: BenchFile, job: Job) -> dict[str, Any]:
    """What the run process measures after training: Pass@k for grid runs of a task that asks for it."""
    task = bench.tasks[job.task]
    return {"pass_k": task.pass_k if job.group == "grid" else 0, "pass_k_prompts": task.pass_k_prompts}


def paired(bench: BenchFile, a: Job, b: Job) -> bool:
    """Whether two jobs are one seed's candidate and reference (they start side by side)."""
    return (
        a.group == b.group == "grid"
        and (a.task, a.seed) == (b.task, b.seed)
        and {a.method, b.method} == {bench.candidate, bench.reference}
    )


def invocation_history(
    out_dir: Path, *, command: str, runs_s: float, runs_started: int
) -> list[dict[str, Any]]:
    """The invocations recorded in ``out_dir/meta.json``, plus this one."""
    previous = out_dir / "meta.json"
    old_meta = json.loads(previous.read_text(encoding="utf-8")) if previous.is_file() else {}
    history = old_meta.get("history") or (
        # a report written before invocations were recorded: keep what it knew
        [{k: old_meta.get(k) for k in ("date", "command", "runs_s", "load_average")} | {"runs_started": None}]
        if "runs_s" in old_meta
        else []
    )
    history.append(
        {
            "date": time.strftime("%Y-%m-%d %H:%M %Z"),
            "command": command,
            "runs_s": runs_s,
            "runs_started": runs_started,
            "load_average": _load_average(),
        }
    )
    return history


def signal_quality_all(
    bench: BenchFile, warm: dict[str, Path | None], log: Callable[[str], None]
) -> dict[str, Any]:
    """:func:`~botgrpo_bench.evals.signal_quality` of every task's local signals on its warm policy."""
    from botgrpo_bench.evals import signal_quality

    out: dict[str, Any] = {}
    for name, task in bench.tasks.items():
        path = warm.get(name)
        if path is None:
            continue
        data = task.run.get("data", {})
        try:
            out[name] = signal_quality(
                data.get("task", "arithmetic"),
                data.get("task_params", {}) or {},
                task.run["rewards"]["signals"],
                path,
                n=bench.signal_quality_samples,
            )
        except Exception as exc:  # a diagnostic: report it, never lose the bench over it
            out[name] = {"error": f"{type(exc).__name__}: {exc}"}
        log(f"signal quality [{name}]: {out[name]}")
    return out


def run_bench_command(args: argparse.Namespace) -> int:
    """``botgrpo bench BENCH.yaml [--quick] [--output DIR] [--set k=v ...]``: 0 when every run succeeded,
    1 when some failed, 2 for a bench-file problem."""
    try:
        bench = load_bench(args.bench_file, quick=bool(args.quick), overrides=args.set or [])
    except BenchError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    out_dir = Path(args.output) if args.output else bench.output_dir
    if args.quick and not args.output:
        out_dir = out_dir.with_name(out_dir.name + "-quick")
    command = "botgrpo bench " + " ".join(
        [str(args.bench_file)]
        + (["--quick"] if args.quick else [])
        + ([f"--output {args.output}"] if args.output else [])
        + [f"--set {s}" for s in args.set or []]
    )
    try:
        run_bench(bench, out_dir, command=command, quick=bool(args.quick))
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    results = [json.loads(line) for line in (out_dir / "runs.jsonl").read_text().splitlines() if line.strip()]
    print(side_by_side(bench, results, out_dir))
    return 0 if all(r.get("status") == "ok" for r in results) else 1


def _what_ran() -> dict[str, Any]:
    from botgrpo_core.engine.provenance import what_ran

    return what_ran()
