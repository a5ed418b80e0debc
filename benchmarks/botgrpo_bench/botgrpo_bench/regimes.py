"""Regime benches: each task is one level (short, medium, long) of a domain (math, react). The report here
is a speed-up *profile* rather than one threshold:

- one record per run (:func:`regime_records`), written to ``regimes.jsonl`` (:func:`write_regimes_jsonl`):
  domain, level, method, seed, target, the run's length, steps to target, the run mean, the curve, ...,
  enough to recompute every number below;
- per level (:func:`speedup_profile`): the initial success (step-0 evaluation), thresholds
  ``initial + f * (1 - initial)`` for the bench's ``profile_fractions`` ``f``, the steps each method needs
  to first reach each threshold per seed and the ratio reference / candidate; the run mean (target-free)
  and its paired per-seed difference; the ratio at the file's target; step time and no-spread groups;
- the markdown section and the speed-up plot are :mod:`botgrpo_bench.regimes_page`'s;
- the target-rule check (:func:`target_rule_check`): the target each level should have under
  ``target_rule`` given its warm start's measured success; whether each target was committed before its
  level's runs started (:mod:`botgrpo_bench.target_provenance`).

The per-run numbers (steps to target, run mean, step times) are :mod:`botgrpo_bench.aggregate`'s and
:mod:`botgrpo_bench.runs`'; this module only groups and compares them.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from botgrpo_bench.aggregate import curve_points, metric_curve, run_step_time, stat, step_time_ratio
from botgrpo_bench.runs import run_curves, steps_to_target
from botgrpo_bench.target_provenance import level_check, run_started_at, target_provenance

if TYPE_CHECKING:
    from botgrpo_bench.config import BenchFile

#: the levels of a domain, in plot and table order (``TaskBench.level``'s values)
LEVELS = ("short", "medium", "long")
#: the keys every line of ``regimes.jsonl`` has
REQUIRED_KEYS = (
    "task",
    "level",
    "method",
    "seed",
    "target",
    "steps",
    "steps_to_target",
    "run_mean",
    "curve",
)
#: the published claim the speed-up plot marks
CLAIM = 1.9
#: thresholds are rounded to this many decimals, so that a success rate exactly at a threshold reaches it
#: (0.4 + 0.5 * 0.6 is 0.7000000000000001 in floating point)
_DIGITS = 9

Record = dict[str, Any]


# --- records ---------------------------------------------------------------------------------------------------
def metric_key(metric: str) -> str:
    """The warm start's ``eval`` key of a task metric: ``sampled/answer_accuracy`` -> ``answer_accuracy``."""
    for prefix in ("sampled/", "greedy/"):
        if metric.startswith(prefix):
            return metric[len(prefix) :]
    return metric


def target_rule_check(bench: BenchFile, warm: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per levelled task: its warm start's measured success (``warm[task]["eval"]``, the task metric without
    its ``sampled/`` / ``greedy/`` prefix), the target ``bench.target_rule`` gives it, the file's target and
    whether they agree (None when the rule or the measurement is missing)."""
    out: dict[str, dict[str, Any]] = {}
    for name, task in bench.tasks.items():
        if task.level is None:
            continue
        measured = (warm.get(name) or {}).get("eval", {}).get(metric_key(task.metric))
        rule = None
        if bench.target_rule is not None and isinstance(measured, (int, float)):
            rule = bench.target_rule.target(float(measured))
        out[name] = {
            "warm_success": measured,
            "rule_target": rule,
            "target": task.target,
            "matches": None if rule is None else abs(rule - task.target) < 1e-9,
        }
    return out


def regime_records(
    bench: BenchFile,
    run_rows: Sequence[dict[str, Any]],
    warm: dict[str, dict[str, Any]] | None = None,
    bench_file: str | Path | None = None,
) -> list[Record]:
    """One record per ok grid run of a levelled task (the ``regimes.jsonl`` lines).

    Keys: ``task`` (the domain), ``bench_task``, ``level``, ``method``, ``seed``, ``metric``, ``target``,
    ``steps`` (the run's length), ``eval_every``, ``steps_to_target`` (None when not reached), ``run_mean``,
    ``initial`` (the step-0 evaluation, None without one), ``final``, ``curve`` ([[step, success], ...]),
    ``step_time_s`` (median over the run's steps, else its mean), ``no_spread_frac`` (groups whose
    rollouts share one outcome), ``task_params``, ``overrides`` (the task's ``method_overrides`` of this
    method, only when it has any), and with ``warm`` (task -> ``warm_start.json``)
    ``warm_success`` and ``rule_target`` (:func:`target_rule_check`); ``started_at`` (the run's start,
    None when unknown) and, with ``bench_file`` (the file ``bench`` was loaded from), the target's commit
    (:func:`botgrpo_bench.target_provenance.target_provenance`).
    A row without ``curve`` (a ``runs.jsonl`` of an older report) has it read from its run folder.
    """
    rule = target_rule_check(bench, warm) if warm is not None else {}
    provenance = target_provenance(bench, bench_file) if bench_file is not None else {}
    records: list[Record] = []
    for row in run_rows:
        task = bench.tasks.get(row["task"])
        if task is None or task.level is None or row.get("group", "grid") != "grid" or row["status"] != "ok":
            continue
        curve = row.get("curve")
        if curve is None:
            curve = (
                metric_curve(run_curves(Path(row["run_dir"]))[0], task.metric) if row.get("run_dir") else []
            )
        step0 = [value for step, value in curve if step == 0]
        record: Record = {
            "task": task.domain,
            "bench_task": row["task"],
            "level": task.level,
            "method": row["method"],
            "seed": row["seed"],
            "metric": task.metric,
            "target": task.target,
            "steps": row["steps"],
            "eval_every": row.get("eval_every"),
            "steps_to_target": row["steps_to_target"],
            "run_mean": row.get("curve_mean"),
            "initial": step0[0] if step0 else None,
            "final": row.get("final"),
            "curve": [[int(s), float(v)] for s, v in curve],
            "step_time_s": run_step_time(row),
            "no_spread_frac": row.get("outcome_zero_spread_frac"),
            "task_params": task.run.get("data", {}).get("task_params") or {},
        }
        if task.method_overrides.get(row["method"]):  # this method's own settings at this level
            record["overrides"] = dict(task.method_overrides[row["method"]])
        if row["task"] in rule:
            record["warm_success"] = rule[row["task"]]["warm_success"]
            record["rule_target"] = rule[row["task"]]["rule_target"]
        record["started_at"] = run_started_at(row.get("run_dir"))
        record.update(provenance.get(row["task"], {}))
        records.append(record)
    return records


def write_regimes_jsonl(records: Iterable[Record], path: str | Path) -> Path:
    """``records`` as JSON lines (one run per line); returns ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, default=str) + "\n")
    return path


def read_regimes_jsonl(path: str | Path) -> list[Record]:
    """The records of a ``regimes.jsonl``; ``ValueError`` naming the line when one lacks a required key."""
    records = []
    for i, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        record = json.loads(line)
        missing = [k for k in REQUIRED_KEYS if k not in record]
        if missing:
            raise ValueError(f"{path}:{i}: missing {', '.join(missing)}")
        records.append(record)
    return records


# --- the profile -----------------------------------------------------------------------------------------------
def speedup_profile(
    records: Sequence[Record],
    fractions: Sequence[float],
    reference: str = "grpo",
    candidate: str = "bot-grpo",
) -> dict[str, Any]:
    """The speed-up profile of every (domain, level) in ``records``.

    Returns ``{"reference", "candidate", "fractions", "levels": [level, ...]}``, the levels ordered by
    domain (first seen) then short, medium, long. Each level holds ``domain``, ``level``, ``bench_task``,
    ``metric``, ``target``, ``steps``, ``eval_every``, ``task_params``, ``methods``, ``seeds``;
    ``initial`` (the step-0 evaluation: one value when the runs agree, as they do from a shared warm start
    and evaluation seed, else their mean; ``initial_range`` its min and max); ``profile``, one entry per
    fraction ``f``: ``fraction``, ``threshold`` (``initial + f * (1 - initial)``) and the
    :func:`compare_steps` of the steps to first reach it; ``at_target`` (the same at the file's target);
    ``run_mean`` (method -> Stat over seeds), ``run_mean_diff`` (candidate - reference per seed: ``stat``,
    ``positive``, ``per_seed``), ``step_time_ratio`` (candidate / reference: ``median`` of the per-seed
    ratios, ``per_seed``), ``no_spread`` (method -> Stat), ``rule`` (the target-rule check, or None) and
    ``provenance`` (the target's commit vs the runs' start,
    :func:`~botgrpo_bench.target_provenance.level_check`).
    """
    groups: dict[tuple[str, str], list[Record]] = {}
    for r in records:
        groups.setdefault((r["task"], r["level"]), []).append(r)
    domains = list(dict.fromkeys(d for d, _ in groups))
    order = sorted(groups, key=lambda k: (domains.index(k[0]), level_index(k[1])))
    return {
        "reference": reference,
        "candidate": candidate,
        "fractions": list(fractions),
        "levels": [_level(groups[k], fractions, reference, candidate) for k in order],
    }


def level_index(level: str) -> int:
    """A level's place in :data:`LEVELS` (plot and table order); an unknown level sorts last."""
    return LEVELS.index(level) if level in LEVELS else len(LEVELS)


def _level(
    recs: Sequence[Record], fractions: Sequence[float], reference: str, candidate: str
) -> dict[str, Any]:
    """The profile of one level (see :func:`speedup_profile`)."""
    seen = list(dict.fromkeys(r["method"] for r in recs))
    methods = [m for m in (reference, candidate) if m in seen] + [
        m for m in seen if m not in (reference, candidate)
    ]
    seeds = sorted({r["seed"] for r in recs})
    runs = {(r["method"], r["seed"]): r for r in recs}
    initials = [float(r["initial"]) for r in recs if r.get("initial") is not None]
    initial = initials[0] if initials and len(set(initials)) == 1 else stat(initials)
    if isinstance(initial, tuple):
        initial = initial[0]
    first = recs[0]
    lengths = {s: runs[reference, s]["steps"] for s in seeds if (reference, s) in runs}  # censoring point
    profile = []
    if initial is not None:
        for f in fractions:
            threshold = round(initial + f * (1.0 - initial), _DIGITS)
            steps = {
                m: {
                    s: steps_to_target(curve_points(runs[m, s]["curve"], "v"), "v", threshold)
                    for s in seeds
                    if (m, s) in runs
                }
                for m in methods
            }
            profile.append(
                {"fraction": f, "threshold": threshold, **compare_steps(steps, reference, candidate, lengths)}
            )
    at_target = {m: {s: runs[m, s]["steps_to_target"] for s in seeds if (m, s) in runs} for m in methods}
    paired = [s for s in seeds if (reference, s) in runs and (candidate, s) in runs]
    diffs = {
        s: runs[candidate, s]["run_mean"] - runs[reference, s]["run_mean"]
        for s in paired
        if runs[candidate, s].get("run_mean") is not None and runs[reference, s].get("run_mean") is not None
    }
    time_median, times = step_time_ratio(
        {s: (runs[candidate, s].get("step_time_s"), runs[reference, s].get("step_time_s")) for s in paired}
    )
    warm = [r for r in recs if r.get("warm_success") is not None]
    rule = None
    if warm:
        w = warm[0]
        rule = {
            "warm_success": w["warm_success"],
            "rule_target": w.get("rule_target"),
            "target": w["target"],
            "matches": None if w.get("rule_target") is None else abs(w["rule_target"] - w["target"]) < 1e-9,
        }
    return {
        "domain": first["task"],
        "level": first["level"],
        "bench_task": first.get("bench_task", f"{first['task']}-{first['level']}"),
        "metric": first.get("metric"),
        "target": first["target"],
        "steps": max(r["steps"] for r in recs),
        "eval_every": first.get("eval_every"),
        "task_params": first.get("task_params") or {},
        "methods": methods,
        "seeds": seeds,
        "initial": initial,
        "initial_range": (min(initials), max(initials)) if initials else None,
        "profile": profile,
        "at_target": compare_steps(at_target, reference, candidate, lengths),
        "run_mean": {m: stat(runs[m, s].get("run_mean") for s in seeds if (m, s) in runs) for m in methods},
        "run_mean_diff": {
            "stat": stat(diffs.values()),
            "positive": sum(d > 0 for d in diffs.values()),
            "per_seed": diffs,
        },
        "step_time_ratio": {"median": time_median, "per_seed": times},
        "no_spread": {
            m: stat(runs[m, s].get("no_spread_frac") for s in seeds if (m, s) in runs) for m in methods
        },
        "rule": rule,
        "provenance": level_check(recs),
    }


def compare_steps(
    steps: dict[str, dict[int, int | None]],
    reference: str,
    candidate: str,
    run_steps: dict[int, int] | None = None,
) -> dict[str, Any]:
    """Steps to a threshold, ``method -> seed -> steps`` (None: never reached), compared.

    Returns ``steps`` itself; ``mean_steps`` (method -> Stat over the seeds that reached it) and
    ``reached`` (method -> count) and ``runs`` (method -> runs); over the seeds where both the reference
    and the candidate ran (``paired``): ``per_seed`` (seed -> reference / candidate, only seeds where both
    reach), ``ratio_per_seed`` (their Stat), ``ratio`` (mean reference steps / mean candidate steps, only
    when both reach in every paired seed, else None), ``candidate_only`` / ``reference_only`` (seeds where
    just one reached: censored, no ratio) and ``ratio_at_least``: when the candidate reached in every paired
    seed and the reference did not, a lower bound on that ratio, each reference miss counted at its run's
    length (``run_steps``: seed -> the reference run's steps; it would have needed more), else None.
    """
    ref, cand = steps.get(reference, {}), steps.get(candidate, {})
    paired = sorted(set(ref) & set(cand))
    per_seed = {
        s: ref[s] / cand[s]  # type: ignore[operator]
        for s in paired
        if ref[s] is not None and cand[s] is not None and cand[s] != 0
    }
    # one formula for both: the ratio of seed-mean steps, a reference miss at its run's length (a bound)
    ratio = at_least = None
    if paired and all(cand[s] is not None for s in paired):
        mean_cand = statistics.fmean(cand[s] for s in paired)  # type: ignore[misc]
        missed = [s for s in paired if ref[s] is None]
        lengths = run_steps or {}
        if mean_cand and all(s in lengths for s in missed):
            mean_ref = statistics.fmean(lengths[s] if ref[s] is None else ref[s] for s in paired)  # type: ignore[misc]
            if missed:
                at_least = mean_ref / mean_cand
            else:
                ratio = mean_ref / mean_cand
    return {
        "steps": steps,
        "mean_steps": {m: stat(v for v in by_seed.values() if v is not None) for m, by_seed in steps.items()},
        "reached": {m: sum(v is not None for v in by_seed.values()) for m, by_seed in steps.items()},
        "runs": {m: len(by_seed) for m, by_seed in steps.items()},
        "paired": len(paired),
        "per_seed": per_seed,
        "ratio_per_seed": stat(per_seed.values()),
        "ratio": ratio,
        "ratio_at_least": at_least,
        "candidate_only": sum(cand[s] is not None and ref[s] is None for s in paired),
        "reference_only": sum(ref[s] is not None and cand[s] is None for s in paired),
    }
