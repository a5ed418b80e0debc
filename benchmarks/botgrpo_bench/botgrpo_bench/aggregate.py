"""From runs to numbers: one row per run and evaluation point, one per run, and the paired
candidate-vs-reference comparison per task, as mean and min-max over seeds:

- steps to target: the first evaluation step at which the success metric reaches the target (a run
  that never does is counted as *not reached*, at its run's length: a ratio it enters is a lower bound when the
  reference missed, an upper bound when the candidate did);
- final success: the metric at the last evaluation; the mean over the run (area under the curve);
- wall seconds per training step (evaluation excluded where the log separates it), mean and median;
- Pass@1 and Pass@k on held-out prompts after training (when the bench asks for them).
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from botgrpo_bench.runs import (
    curve_mean,
    logged_step_seconds,
    mean_of,
    run_curves,
    step_seconds,
    steps_to_target,
)

if TYPE_CHECKING:
    from botgrpo_bench.config import BenchFile, TaskBench
    from botgrpo_bench.plan import Job


Stat = tuple[float, float, float, int]  # (mean, min, max, count)


def stat(values: Iterable[float | None]) -> Stat | None:
    """``(mean, min, max, count)`` of the values that are not None or NaN; None when there are none."""
    vals = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    if not vals:
        return None
    return statistics.fmean(vals), min(vals), max(vals), len(vals)


def fmt(summary: Stat | None, digits: int = 3, *, integer: bool = False) -> str:
    """``mean (min-max)`` over seeds, or the mean alone when the seeds agree or there is one."""
    if summary is None:
        return "n/a"
    mean, lo, hi, n = summary
    f = (lambda x: f"{x:.0f}") if integer else (lambda x: f"{x:.{digits}f}")
    return f"{f(mean)} ({f(lo)}-{f(hi)})" if n > 1 and lo != hi else f(mean)


def collect(
    bench: BenchFile, jobs: Sequence[Job], results: Sequence[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``(results rows: one per run and eval point, run rows: one per run)``."""
    eval_rows: list[dict[str, Any]] = []
    run_rows: list[dict[str, Any]] = []
    for job, result in zip(jobs, results, strict=True):
        points, train = run_curves(job.run_dir)
        base = {
            "group": job.group,
            "task": job.task,
            "method": job.method,
            "seed": job.seed,
            "alpha": job.run["rewards"].get("alpha"),
            "beta": job.run["rewards"].get("beta"),
        }
        eval_rows += [{**base, "step": step, **values} for step, values in points]
        run_rows.append({**base, **run_row(bench.tasks[job.task], job, result, points, train)})
    return eval_rows, run_rows


def run_row(
    task: TaskBench,
    job: Job,
    result: dict[str, Any],
    points: Sequence[tuple[int, dict[str, float]]],
    train: Sequence[dict[str, Any]],
) -> dict[str, Any]:
    """The numbers of one run: its curve against the task's target, step time, no-spread groups, Pass@k."""
    steps = int(job.run.get("training", {}).get("steps", 0))
    first = points[0][1] if points else {}
    final = points[-1][1] if points else {}
    row = {
        "status": result.get("status"),
        "error": (result.get("error") or "").splitlines()[0] if result.get("error") else None,
        "steps": steps,
        "eval_every": job.run.get("training", {}).get("eval_every"),
        "metric": task.metric,
        "target": task.target,
        "initial": first.get(task.metric),
        "final": final.get(task.metric),
        # mean over the evaluations after the start: the area under the curve, free of any target choice
        "curve_mean": curve_mean(points, task.metric),
        "steps_to_target": steps_to_target(points, task.metric, task.target, task.higher_is_better),
        "s_per_step": step_seconds(train, result, steps),
        "s_per_step_median": median_step_seconds(train),
        "wall_s": result.get("wall_s"),
        # the host of the run's last (or only) stretch, :func:`botgrpo_bench.machine.machine_facts`
        "machine": result.get("machine"),
        "ran": result.get("ran"),  # commit, versions, host: botgrpo_core.engine.provenance.what_ran
        "resumed": result.get("resumed"),
        "zero_spread_frac": mean_of(train, "groups/zero_spread_frac"),
        "outcome_zero_spread_frac": mean_of(train, "groups/outcome_zero_spread_frac"),
        "outcome_zero_spread_frac_last": mean_of(train, "groups/outcome_zero_spread_frac", last=10),
        "train_success_last": mean_of(train, "success_rate", last=10),
        "dominance": job.dominance,
        "run_dir": str(job.run_dir),
        # the success curve itself, [[step, value], ...], so a run's numbers can be recomputed from this row
        "curve": metric_curve(points, task.metric),
    }
    for extra in task.extra_metrics:
        row[f"final_{extra}"] = final.get(extra)
        row[f"initial_{extra}"] = first.get(extra)
    if isinstance(result.get("pass_k"), dict):
        row["pass_k"] = result["pass_k"]
    return row


def metric_curve(points: Sequence[tuple[int, dict[str, float]]], metric: str) -> list[list[float]]:
    """``[[step, value], ...]`` of ``metric`` over a run's evaluation points (points without it skipped)."""
    return [[step, values[metric]] for step, values in points if metric in values]


def curve_points(curve: Sequence[Sequence[float]], metric: str) -> list[tuple[int, dict[str, float]]]:
    """The inverse of :func:`metric_curve`: evaluation points that :func:`steps_to_target` and
    :func:`curve_mean` read."""
    return [(int(step), {metric: float(value)}) for step, value in curve]


def median_step_seconds(train_rows: Sequence[dict[str, Any]]) -> float | None:
    """Median wall seconds per training step from the log's step times (None when it has none): robust
    to the odd slow step (a checkpoint, the machine's other load)."""
    times = logged_step_seconds(train_rows)
    return statistics.median(times) if times else None


def run_step_time(row: dict[str, Any]) -> float | None:
    """A run's wall seconds per step as every comparison reads it: the median over its logged steps (robust
    to a checkpoint or the machine's other load), else its mean (a run that logged no step times)."""
    median = row.get("s_per_step_median")
    return median if median is not None else row.get("s_per_step")


def step_time_ratio(
    pairs: dict[Any, tuple[float | None, float | None]],
) -> tuple[float | None, dict[Any, float]]:
    """The step-time ratio candidate / reference: ``(median over seeds, {seed: ratio})`` from
    ``{seed: (candidate step time, reference step time)}`` (:func:`run_step_time`); the one definition the
    summary's comparison lines, the regime table and ``regimes.jsonl`` share."""
    per_seed = {seed: cand / ref for seed, (cand, ref) in pairs.items() if cand and ref}
    return (statistics.median(per_seed.values()) if per_seed else None), per_seed


def group_by(rows: Iterable[dict[str, Any]], *keys: str) -> dict[tuple[Any, ...], list[dict[str, Any]]]:
    """Rows grouped by their values of ``keys``."""
    out: dict[tuple[Any, ...], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        out[tuple(r[k] for k in keys)].append(r)
    return out


def censored_steps(row: dict[str, Any]) -> tuple[float | None, bool]:
    """Steps to target, or the run's length (a lower bound) when never reached; flag = reached."""
    if row["steps_to_target"] is not None:
        return float(row["steps_to_target"]), True
    if row["status"] != "ok":
        return None, False
    return float(row["steps"]), False


def ratio_summary(
    runs: Sequence[dict[str, Any]], task: str, reference: str, candidate: str
) -> dict[str, Any] | None:
    """Paired comparison per seed: ``steps_ref / steps_candidate`` (censored runs count their length; None
    when no seed has a run reaching the target), the step-time ratio, and the difference of curve means.

    ``bound`` says what a censored ratio is: ``">="`` when only the reference missed (its true steps are at least
    its length, so the true ratio is at least the one given), ``"<="`` when only the candidate missed, ``"mixed"``
    when each missed in some seed (the mean is then no bound), None when every paired run reached."""
    grid = [r for r in runs if r["group"] == "grid" and r["task"] == task]
    ref = {r["seed"]: r for r in grid if r["method"] == reference}
    cand = {r["seed"]: r for r in grid if r["method"] == candidate}
    ratios, wins = [], 0
    missed = {"ref": 0, "cand": 0}  # seeds in the ratio where that method is censored
    for seed in sorted(set(ref) & set(cand)):
        a, a_ok = censored_steps(ref[seed])
        b, b_ok = censored_steps(cand[seed])
        if a is None or b is None or b == 0 or not (a_ok or b_ok):
            continue  # a failed run, or neither reached the target: no information on the ratio
        ratios.append(a / b)
        missed["ref"] += not a_ok
        missed["cand"] += not b_ok
        wins += b < a or (b_ok and not a_ok)
    seeds = sorted(s for s in set(ref) & set(cand) if ref[s]["status"] == cand[s]["status"] == "ok")
    if not seeds:
        return None
    overhead, _ = step_time_ratio({s: (run_step_time(cand[s]), run_step_time(ref[s])) for s in seeds})
    diffs = [
        cand[s]["curve_mean"] - ref[s]["curve_mean"]
        for s in seeds
        if cand[s].get("curve_mean") is not None and ref[s].get("curve_mean") is not None
    ]
    bound = None
    if missed["ref"] and missed["cand"]:
        bound = "mixed"
    elif missed["ref"] or missed["cand"]:
        bound = ">=" if missed["ref"] else "<="
    return {
        "ratio": stat(ratios),
        "censored": bound is not None,
        "bound": bound,
        "wins": wins,
        "pairs": len(ratios),
        "seeds": len(seeds),
        "step_time_ratio": overhead,
        "curve_mean_diff": stat(diffs),
        "curve_mean_better": sum(d > 0 for d in diffs),
    }
