"""Turn a bench's runs into ``results.jsonl``, ``runs.jsonl``, ``summary.md`` and PNG plots.

Reads each run's ``metrics.jsonl`` (written by ``botgrpo train``): its evaluation rows give the
success curve, its training rows the step times and the share of groups without spread. The
numbers reported per task and method, as mean and min-max over seeds:

- steps to target: the first evaluation step at which the success metric reaches the target (a run
  that never does is counted as *not reached*, and ratios that involve it are lower bounds);
- final success: the metric at the last evaluation;
- wall seconds per training step (evaluation excluded where the log separates it);
- Pass@1 and Pass@k on held-out prompts after training (when the bench asks for them).

``python -m botgrpo_core.bench_report --doc DOC.md [--preface P.md] RESULTS_DIR...`` writes a docs page
from results folders (their summaries, with the plots copied next to the page).
"""

from __future__ import annotations

import json
import math
import shutil
import statistics
import sys
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from botgrpo_core.bench import BenchFile, Job
    from botgrpo_core.config.models import RunConfig

STEP_KEYS = ("step", "global_step")
#: keys of a training row that hold the wall time of that step
STEP_TIME_KEYS = ("step_time",)  # TRL: generation + scoring + loss/backward of one optimizer step


# --- reading one run ---------------------------------------------------------------------------------------------
def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Rows of a JSON-lines file (a torn last line, from a killed run, is skipped)."""
    rows = []
    if not path.is_file():
        return rows
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return rows


def _step(row: dict[str, Any]) -> int | None:
    for key in STEP_KEYS:
        if isinstance(row.get(key), (int, float)):
            return int(row[key])
    return None


def _eval_values(row: dict[str, Any]) -> dict[str, float] | None:
    """The evaluation metrics of a ``metrics.jsonl`` row (``kind: eval``), ``eval/`` prefix removed.

    ``botgrpo train`` writes ``eval/sampled/<metric>`` and ``eval/greedy/<metric>`` keys, so a bench
    metric reads ``sampled/compile_rate``. Training and summary rows give None.
    """
    if row.get("kind") != "eval":
        return None
    return {
        k[len("eval/") :]: float(v)
        for k, v in row.items()
        if k.startswith("eval/") and isinstance(v, (int, float))
    }


def run_curves(run_dir: Path) -> tuple[list[tuple[int, dict[str, float]]], list[dict[str, Any]]]:
    """``(eval points [(step, metrics)], training rows)`` of one run, eval points sorted by step."""
    evals: dict[int, dict[str, float]] = {}
    train = []
    for row in read_jsonl(Path(run_dir) / "metrics.jsonl"):
        step = _step(row)
        if step is None:
            continue
        values = _eval_values(row)
        if values is not None:
            evals.setdefault(step, {}).update(values)
        elif row.get("kind") == "train":
            train.append(row)
    return sorted(evals.items()), train


def steps_to_target(
    points: Sequence[tuple[int, dict[str, float]]], metric: str, target: float, higher: bool = True
) -> int | None:
    """First evaluation step whose ``metric`` reaches ``target`` (None when it never does)."""
    for step, values in points:
        v = values.get(metric)
        if v is not None and (v >= target if higher else v <= target):
            return step
    return None


def step_seconds(train_rows: Sequence[dict[str, Any]], result: dict[str, Any], steps: int) -> float | None:
    """Mean wall seconds per training step: from the log's step times, else the run's training time."""
    times = [float(r[k]) for r in train_rows for k in STEP_TIME_KEYS if isinstance(r.get(k), (int, float))]
    if times:
        return statistics.fmean(times)
    summary = result.get("summary") or {}
    for key in ("train_time_s", "train_s", "training_s"):
        if isinstance(summary.get(key), (int, float)) and steps:
            return float(summary[key]) / steps
    train_s = result.get("train_s")
    return float(train_s) / steps if isinstance(train_s, (int, float)) and steps else None


def mean_of(rows: Sequence[dict[str, Any]], key: str, last: int | None = None) -> float | None:
    values = [float(r[key]) for r in rows if isinstance(r.get(key), (int, float)) and not math.isnan(r[key])]
    if last:
        values = values[-last:]
    return statistics.fmean(values) if values else None


# --- Pass@k ------------------------------------------------------------------------------------------------------
def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased Pass@k from ``n`` samples with ``c`` successes (Chen et al. 2021)."""
    if n - c < k:
        return 1.0
    return 1.0 - math.prod((n - c - i) / (n - i) for i in range(k))


def final_model_dir(run_dir: Path) -> Path:
    """The folder of a run's final policy: ``final_model/`` (``botgrpo train``), else its last checkpoint."""
    for candidate in (run_dir / "final_model", run_dir):
        if (candidate / "config.json").is_file():
            return candidate
    checkpoints = sorted(run_dir.glob("checkpoint-*"), key=lambda p: int(p.name.split("-")[-1]))
    if checkpoints and (checkpoints[-1] / "config.json").is_file():
        return checkpoints[-1]
    raise FileNotFoundError(f"{run_dir}: no saved model (final_model/ or checkpoint-*) to evaluate")


def pass_at_k_eval(config: RunConfig, run_dir: Path, *, k: int, prompts: int) -> dict[str, Any]:
    """Pass@1 and Pass@k of a run's final policy on ``prompts`` held-out prompts (``k`` samples each)."""
    from botgrpo_core.engine.model import load_model
    from botgrpo_core.engine.warm_start import sample_completions
    from botgrpo_core.tasks import get_task

    data = config.data
    task = get_task(data.task or "arithmetic", getattr(data, "task_params", None) or {})
    rows = task.eval_rows(prompts, seed=0)
    path = final_model_dir(Path(run_dir))
    model, tokenizer = load_model(config, str(path))  # loaded exactly as the run loaded its policy
    completions = sample_completions(
        model,
        tokenizer,
        [r["prompt"] for r in rows],
        max_new_tokens=config.training.max_new_tokens,
        seed=4321,
        num_samples=k,
        temperature=config.training.temperature,
    )
    if hasattr(task, "check"):  # batched checks (one compile request for all samples)
        expanded = [r for r in rows for _ in range(k)]
        ok = [c for c, _ in task.check(expanded, completions)]
    else:
        ok = [task.success(rows[i // k], c) for i, c in enumerate(completions)]
    correct = [sum(ok[i * k : (i + 1) * k]) for i in range(len(rows))]
    return {
        "k": k,
        "prompts": len(rows),
        "pass@1": statistics.fmean(pass_at_k(k, c, 1) for c in correct),
        f"pass@{k}": statistics.fmean(pass_at_k(k, c, k) for c in correct),
        "model": str(path),
    }


# --- signal quality ----------------------------------------------------------------------------------------------
def signal_quality(
    task_name: str,
    task_params: dict[str, Any],
    signals: Sequence[dict[str, Any]],
    model_dir: Path,
    *,
    n: int = 100,
) -> dict[str, Any]:
    """How well the local signals point at what is wrong, on ``n`` samples of the warm policy.

    The reference is the task's own checker, independent of the signals: for arithmetic, each step
    line graded by the task (a refuted step should carry a negative span, a correct one should not);
    for React, compilation (a component that fails to compile should carry a negative span somewhere,
    one that compiles cleanly should carry none).
    """
    from transformers import AutoModelForCausalLM

    from botgrpo_core.engine.tiny import load_tokenizer
    from botgrpo_core.engine.warm_start import sample_completions
    from botgrpo_core.signals import Sample, SampleError
    from botgrpo_core.signals.manager import get_plugin_manager
    from botgrpo_core.tasks import get_task

    task = get_task(task_name, task_params)
    rows = task.eval_rows(n, seed=0)
    model = AutoModelForCausalLM.from_pretrained(model_dir)
    tokenizer = load_tokenizer(model_dir)  # warm starts are tiny models: their tokenizer exactly as built
    tokenizer.padding_side = "left"
    max_new = task.max_completion_chars + 5 if hasattr(task, "max_completion_chars") else 40
    completions = sample_completions(
        model, tokenizer, [r["prompt"] for r in rows], max_new_tokens=max_new, seed=99
    )
    samples = [
        Sample(prompt=r["prompt"], completion=c, row=r) for r, c in zip(rows, completions, strict=True)
    ]
    manager = get_plugin_manager()
    negatives: list[list[tuple[int, int]]] = [[] for _ in samples]  # spans with a negative value
    for sig in signals:
        registered = manager.get_signal(sig["name"])
        if registered.spec.kind != "local":
            continue
        scorer = registered.spec.make_scorer(
            registered.spec.params_model.model_validate(sig.get("params", {}))
        )
        for i, result in enumerate(scorer.score(samples)):
            if isinstance(result, SampleError) or not isinstance(result, list):
                continue
            negatives[i] += [(span.start, span.end) for span in result if span.value < 0]
        if hasattr(scorer, "close"):
            scorer.close()

    def overlaps(spans: list[tuple[int, int]], a: int, b: int) -> bool:
        return any(s < b and e > a for s, e in spans)

    if task_name == "arithmetic":
        tp = fp = fn = tn = 0
        for i, (row, completion) in enumerate(zip(rows, completions, strict=True)):
            for a, b, wrong in task.step_lines(row, completion):
                flagged = overlaps(negatives[i], a, b)
                tp += wrong and flagged
                fn += wrong and not flagged
                fp += flagged and not wrong
                tn += not wrong and not flagged
        return {
            "unit": "step line",
            "lines": tp + fp + fn + tn,
            "wrong_lines": tp + fn,
            "recall": tp / max(tp + fn, 1),
            "precision": tp / max(tp + fp, 1),
            "false_alarm_rate": fp / max(fp + tn, 1),
        }
    ok = (
        [c for c, _ in task.check(rows, completions)]
        if hasattr(task, "check")
        else [task.success(r, c) for r, c in zip(rows, completions, strict=True)]
    )
    failed = [i for i, good in enumerate(ok) if not good]
    passed = [i for i, good in enumerate(ok) if good]
    return {
        "unit": "completion",
        "samples": len(samples),
        "failed": len(failed),
        "failed_with_negative_span": sum(bool(negatives[i]) for i in failed) / max(len(failed), 1),
        "compiling_with_negative_span": sum(bool(negatives[i]) for i in passed) / max(len(passed), 1),
    }


# --- aggregation --------------------------------------------------------------------------------------------------
def _stat(values: Iterable[float | None]) -> tuple[float, float, float, int] | None:
    vals = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    if not vals:
        return None
    return statistics.fmean(vals), min(vals), max(vals), len(vals)


def _fmt(stat: tuple[float, float, float, int] | None, digits: int = 3, *, integer: bool = False) -> str:
    if stat is None:
        return "n/a"
    mean, lo, hi, n = stat
    f = (lambda x: f"{x:.0f}") if integer else (lambda x: f"{x:.{digits}f}")
    return f"{f(mean)} ({f(lo)}-{f(hi)})" if n > 1 and lo != hi else f(mean)


def collect(
    bench: BenchFile, jobs: Sequence[Job], results: Sequence[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``(results rows: one per run and eval point, run rows: one per run)``."""
    eval_rows: list[dict[str, Any]] = []
    run_rows: list[dict[str, Any]] = []
    for job, result in zip(jobs, results, strict=True):
        task = bench.tasks[job.task]
        points, train = run_curves(job.run_dir)
        steps = int(job.run.get("training", {}).get("steps", 0))
        base = {
            "group": job.group,
            "task": job.task,
            "method": job.method,
            "seed": job.seed,
            "alpha": job.run["rewards"].get("alpha"),
            "beta": job.run["rewards"].get("beta"),
        }
        for step, values in points:
            eval_rows.append({**base, "step": step, **values})
        final = points[-1][1] if points else {}
        row = {
            **base,
            "status": result.get("status"),
            "error": (result.get("error") or "").splitlines()[0] if result.get("error") else None,
            "steps": steps,
            "eval_every": job.run.get("training", {}).get("eval_every"),
            "metric": task.metric,
            "target": task.target,
            "initial": points[0][1].get(task.metric) if points else None,
            "final": final.get(task.metric),
            # mean over the evaluations after the start: the area under the curve, free of any target choice
            "curve_mean": _curve_mean(points, task.metric),
            "steps_to_target": steps_to_target(points, task.metric, task.target, task.higher_is_better),
            "s_per_step": step_seconds(train, result, steps),
            "wall_s": result.get("wall_s"),
            "zero_spread_frac": mean_of(train, "groups/zero_spread_frac"),
            "outcome_zero_spread_frac": mean_of(train, "groups/outcome_zero_spread_frac"),
            "outcome_zero_spread_frac_last": mean_of(train, "groups/outcome_zero_spread_frac", last=10),
            "train_success_last": mean_of(train, "success_rate", last=10),
            "dominance": job.dominance,
            "run_dir": str(job.run_dir),
        }
        for extra in task.extra_metrics:
            row[f"final_{extra}"] = final.get(extra)
            row[f"initial_{extra}"] = points[0][1].get(extra) if points else None
        if isinstance(result.get("pass_k"), dict):
            row["pass_k"] = result["pass_k"]
        run_rows.append(row)
    return eval_rows, run_rows


def _curve_mean(points: Sequence[tuple[int, dict[str, float]]], metric: str) -> float | None:
    values = [v[metric] for step, v in points if step > 0 and metric in v]
    return statistics.fmean(values) if values else None


def _by(rows: Iterable[dict[str, Any]], *keys: str) -> dict[tuple[Any, ...], list[dict[str, Any]]]:
    out: dict[tuple[Any, ...], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        out[tuple(r[k] for k in keys)].append(r)
    return out


def _censored(row: dict[str, Any]) -> tuple[float | None, bool]:
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
    when no seed has a run reaching the target), the step-time ratio, and the difference of curve means."""
    grid = [r for r in runs if r["group"] == "grid" and r["task"] == task]
    ref = {r["seed"]: r for r in grid if r["method"] == reference}
    cand = {r["seed"]: r for r in grid if r["method"] == candidate}
    ratios, censored, wins = [], False, 0
    for seed in sorted(set(ref) & set(cand)):
        a, a_ok = _censored(ref[seed])
        b, b_ok = _censored(cand[seed])
        if a is None or b is None or b == 0 or not (a_ok or b_ok):
            continue  # a failed run, or neither reached the target: no information on the ratio
        ratios.append(a / b)
        censored |= not (a_ok and b_ok)
        wins += b < a or (b_ok and not a_ok)
    seeds = sorted(s for s in set(ref) & set(cand) if ref[s]["status"] == cand[s]["status"] == "ok")
    if not seeds:
        return None
    ref_t = [ref[s]["s_per_step"] for s in seeds if ref[s]["s_per_step"]]
    cand_t = [cand[s]["s_per_step"] for s in seeds if cand[s]["s_per_step"]]
    overhead = statistics.fmean(cand_t) / statistics.fmean(ref_t) if ref_t and cand_t else None
    diffs = [
        cand[s]["curve_mean"] - ref[s]["curve_mean"]
        for s in seeds
        if cand[s].get("curve_mean") is not None and ref[s].get("curve_mean") is not None
    ]
    return {
        "ratio": _stat(ratios),
        "censored": censored,
        "wins": wins,
        "pairs": len(ratios),
        "seeds": len(seeds),
        "step_time_ratio": overhead,
        "curve_mean_diff": _stat(diffs),
        "curve_mean_better": sum(d > 0 for d in diffs),
    }


# --- writing -------------------------------------------------------------------------------------------------------
def write_report(
    bench: BenchFile,
    jobs: Sequence[Job],
    results: Sequence[dict[str, Any]],
    out_dir: Path,
    meta: dict[str, Any],
) -> dict[str, Any]:
    """Write results.jsonl, runs.jsonl, summary.md and the plots; returns the summary numbers."""
    eval_rows, run_rows = collect(bench, jobs, results)
    with open(out_dir / "results.jsonl", "w", encoding="utf-8") as f:
        for r in eval_rows:
            f.write(json.dumps(r, default=str) + "\n")
    with open(out_dir / "runs.jsonl", "w", encoding="utf-8") as f:
        for r in run_rows:
            f.write(json.dumps(r, default=str) + "\n")
    warm = {}
    for name, path in (meta.get("warm_starts") or {}).items():
        if path and (Path(path) / "warm_start.json").is_file():
            warm[name] = json.loads((Path(path) / "warm_start.json").read_text())
    plots = make_plots(bench, eval_rows, run_rows, out_dir)
    numbers = {task: ratio_summary(run_rows, task, bench.reference, bench.candidate) for task in bench.tasks}
    text = render_summary(bench, run_rows, numbers, warm, plots, meta)
    (out_dir / "summary.md").write_text(text, encoding="utf-8")
    (out_dir / "meta.json").write_text(json.dumps(meta, indent=2, default=str) + "\n", encoding="utf-8")
    return {"ratios": numbers, "plots": plots}


def _run_settings(bench: BenchFile, task: str) -> str:
    t = bench.tasks[task].run.get("training", {})
    r = bench.tasks[task].run["rewards"]
    signals = ", ".join(f"{s['name']} x{s.get('weight', 1.0):g}" for s in r["signals"])
    return (
        f"{t.get('steps', '?')} steps, {t.get('prompts_per_step', '?')} prompts x G={t.get('group_size', '?')}, "
        f"lr {t.get('learning_rate', '?')}, temperature {t.get('temperature', 1.0)}, <= {t.get('max_new_tokens', '?')} "
        f"new tokens, eval every {t.get('eval_every', '?')} steps on {bench.tasks[task].run.get('data', {}).get('eval_size', '?')} "
        f"held-out prompts; signals: {signals}; alpha {r.get('alpha', 1.0)}, beta {r.get('beta', 0.5)} "
        "(outcome-only methods: global signals only, beta 0)"
    )


def render_summary(
    bench: BenchFile,
    runs: Sequence[dict[str, Any]],
    ratios: dict[str, dict[str, Any] | None],
    warm: dict[str, dict[str, Any]],
    plots: dict[str, str],
    meta: dict[str, Any],
) -> str:
    """The markdown summary of a bench."""
    lines = [f"# Bench `{bench.name}`{' (--quick)' if meta.get('quick') else ''}", ""]
    lines += [
        f"- Command: `{meta.get('command')}`",
        f"- Machine: {meta.get('machine')}; {meta.get('parallel')} runs side by side, "
        f"{meta.get('threads_per_run')} torch thread each; load average (1, 5, 15 min) at the end "
        f"{_load(meta, all_three=True)}",
        _time_line(runs, meta),
    ]
    history = meta.get("history") or []
    working = [h for h in history if h.get("runs_started") != 0]
    if len(history) > 1:
        parts = [
            f"{h['date']}: {h['runs_started'] if h.get('runs_started') is not None else '?'} runs started, "
            f"{h['runs_s'] / 60:.1f} min (load at the end {_load(h)})"
            for h in working
        ]
        report_only = len(history) - len(working)
        lines.append(
            f"- Invocations that ran something: {'; '.join(parts) or 'none'}"
            + (f"; {report_only} more only rewrote this report from the finished runs" if report_only else "")
        )
    lines += [f"- Seeds: {', '.join(map(str, bench.seeds))}; methods: {', '.join(bench.methods)}", ""]
    failed = [r for r in runs if r["status"] != "ok"]
    if failed:
        lines += [
            "**Failed runs:** "
            + "; ".join(f"{r['task']}/{r['method']}/seed{r['seed']}: {r['error']}" for r in failed),
            "",
        ]
    for task_name, task in bench.tasks.items():
        grid = [r for r in runs if r["group"] == "grid" and r["task"] == task_name]
        lines += [f"## Task `{task_name}`", ""]
        lines.append(
            f"Success metric `{task.metric}`; target **{task.target:g}** (fixed in the bench file before the runs). "
            + _run_settings(bench, task_name)
            + "."
        )
        if task_name in warm:
            w = warm[task_name]
            lines.append(
                f"Warm start: {w['warm_start']['steps']} supervised steps on {w['warm_start']['demonstrations']} "
                f"demonstrations with injected errors (teacher: {_pretty(w.get('demonstration_success', {}))}); "
                f"warm policy on {w['warm_start']['eval_size']} held-out prompts: {_pretty(w.get('eval', {}))} "
                f"({w['parameters']:,} parameters, {w['wall_s']:.0f} s)."
            )
        lines.append("")
        extra = task.extra_metrics
        pass_k = task.pass_k
        header = ["method", "steps to target", "reached", f"initial {task.metric}", f"final {task.metric}"]
        header += ["mean over the run"]
        header += [f"final {e}" for e in extra]
        header += ["s/step", "no-spread groups (outcome, last 10 steps)"]
        if pass_k:
            header += ["Pass@1", f"Pass@{pass_k}"]
        lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        by_method = _by(grid, "method")
        for method in bench.methods:
            rs = by_method.get((method,), [])
            ok = [r for r in rs if r["status"] == "ok"]
            reached = [r for r in ok if r["steps_to_target"] is not None]
            cells = [
                f"`{method}`",
                _fmt(_stat(r["steps_to_target"] for r in reached), integer=True),
                f"{len(reached)}/{len(rs)}",
                _fmt(_stat(r["initial"] for r in ok)),
                _fmt(_stat(r["final"] for r in ok)),
                _fmt(_stat(r["curve_mean"] for r in ok)),
            ]
            cells += [_fmt(_stat(r.get(f"final_{e}") for r in ok)) for e in extra]
            cells += [
                _fmt(_stat(r["s_per_step"] for r in ok), 2),
                _fmt(_stat(r["outcome_zero_spread_frac_last"] for r in ok), 2),
            ]
            if pass_k:
                cells += [
                    _fmt(_stat(r.get("pass_k", {}).get("pass@1") for r in ok)),
                    _fmt(_stat(r.get("pass_k", {}).get(f"pass@{pass_k}") for r in ok)),
                ]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
        lines.append(
            "Mean over the run: the metric averaged over every evaluation after step 0 (the area under the "
            "curve divided by its length), a summary that does not depend on the target. "
            "Steps to target: first evaluation step at or above the target, mean (min-max) over the seeds "
            "that reached it; evaluations are "
            f"{bench.tasks[task_name].run.get('training', {}).get('eval_every', '?')} steps apart, so that is the resolution."
        )
        ratio = ratios.get(task_name)
        lines.append("")
        lines += _comparison_lines(ratio, bench.reference, bench.candidate, task.metric)
        if f"curves_{task_name}" in plots:
            lines += ["", f"![{task_name}: {task.metric} vs step]({plots[f'curves_{task_name}']})"]
        lines.append("")
    quality = meta.get("signal_quality") or {}
    if quality:
        lines += ["## Signal quality (warm policy)", ""]
        lines.append(
            "Do the local signals point at what is wrong? Checked on samples of the warm policy against the "
            "task's own checker, which is independent of the signals."
        )
        lines.append("")
        for name, q in quality.items():
            if "error" in q:
                lines.append(f"- `{name}`: not measured ({q['error']})")
            elif q.get("unit") == "step line":
                lines.append(
                    f"- `{name}`: {q['lines']} step lines, {q['wrong_lines']} wrong by the task's grading; a negative "
                    f"local span covers {q['recall']:.0%} of the wrong lines (recall), {q['precision']:.0%} of flagged "
                    f"lines are wrong (precision), {q['false_alarm_rate']:.0%} of correct lines are flagged."
                )
            else:
                lines.append(
                    f"- `{name}`: {q['samples']} completions, {q['failed']} fail to compile; "
                    f"{q['failed_with_negative_span']:.0%} of those carry a negative local span; "
                    f"{q['compiling_with_negative_span']:.0%} of the compiling ones do too (React rule violations "
                    "such as a missing key compile but are flagged by jsx.rules, by design)."
                )
        lines.append("")
    sweep = [r for r in runs if r["group"] == "sweep"]
    if sweep and bench.sweep is not None:
        sw = bench.sweep
        task = bench.tasks[sw.task]
        lines += [f"## Alpha/beta sweep: `{sw.method}` on `{sw.task}`", ""]
        lines.append(
            "Outcome dominance (design.md): `alpha * d > 2 * beta * sum_k |w_k| b_k` keeps every token of a better "
            "rollout above every token of a worse one; `holds` is computed from the signals' declared bounds."
        )
        lines += [
            "",
            "| alpha | beta | dominance holds | alpha*d | 2*beta*sum b | steps to target | reached | final | mean over the run |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for (alpha, beta), rs in sorted(_by(sweep, "alpha", "beta").items()):
            ok = [r for r in rs if r["status"] == "ok"]
            reached = [r for r in ok if r["steps_to_target"] is not None]
            dom = rs[0]["dominance"] or {}
            lines.append(
                f"| {alpha:g} | {beta:g} | {'yes' if dom.get('holds') else '**no**'} | {dom.get('alpha_gap', float('nan')):.3g} | "
                f"{dom.get('two_beta_local', float('nan')):.3g} | {_fmt(_stat(r['steps_to_target'] for r in reached), integer=True)} | "
                f"{len(reached)}/{len(rs)} | {_fmt(_stat(r['final'] for r in ok))} | "
                f"{_fmt(_stat(r['curve_mean'] for r in ok))} |"
            )
        lines.append("")
        lines.append(
            f"Target: `{task.metric}` >= {task.target:g}; seeds {', '.join(map(str, sorted({r['seed'] for r in sweep})))}."
        )
        if "sweep" in plots:
            lines += ["", f"![sweep]({plots['sweep']})"]
        lines.append("")
    if "step_time" in plots:
        lines += ["## Wall time per step", "", f"![wall seconds per step]({plots['step_time']})", ""]
    if "zero_spread" in plots:
        lines += [
            "## Groups without an outcome spread",
            "",
            "Share of groups whose rollouts all have the same outcome (no gradient for outcome-only methods).",
            "",
            f"![no-spread groups]({plots['zero_spread']})",
            "",
        ]
    lines += [
        "Files: `results.jsonl` (one row per run and evaluation point), `runs.jsonl` (one row per run), "
        "`runs/<task>/<method>/seed<k>/` (each run's metrics.jsonl, bench.log, config).",
        "",
    ]
    return "\n".join(lines)


def _comparison_lines(ratio: dict[str, Any] | None, reference: str, candidate: str, metric: str) -> list[str]:
    """The paired candidate-vs-reference sentences of a task."""
    if ratio is None:
        return [f"No paired {reference} / {candidate} comparison (a method is missing or its runs failed)."]
    out = []
    if ratio["ratio"] is not None:
        r_mean, r_lo, r_hi, n = ratio["ratio"]
        bound = (
            " (censored: in some seeds a method missed the target; its run length stands in for its steps)"
            if ratio["censored"]
            else ""
        )
        out.append(
            f"- **Steps to target, {reference} / {candidate}: {r_mean:.2f}** (per seed {r_lo:.2f}-{r_hi:.2f}, "
            f"{n} paired seeds){bound}; {candidate} reached the target first in {ratio['wins']} of {n}."
        )
    else:
        out.append(
            f"- Steps to target: no ratio, neither {reference} nor {candidate} reached the target in any seed."
        )
    if ratio["curve_mean_diff"] is not None:
        d_mean, d_lo, d_hi, n = ratio["curve_mean_diff"]
        out.append(
            f"- Mean {metric} over the run, {candidate} minus {reference}: {d_mean:+.3f} (per seed {d_lo:+.3f} to "
            f"{d_hi:+.3f}); {candidate} higher in {ratio['curve_mean_better']} of {n} seeds."
        )
    if ratio["step_time_ratio"]:
        out.append(
            f"- Step time {candidate} / {reference}: **{ratio['step_time_ratio']:.2f}** (local signal scoring, span "
            "alignment and the token-level estimator; the two runs of a seed start side by side)."
        )
    return out


def _time_line(runs: Sequence[dict[str, Any]], meta: dict[str, Any]) -> str:
    """Wall time from the runs' own clocks (so a report re-written from reused runs still tells it)."""
    walls = {r["run_dir"]: r["wall_s"] for r in runs if isinstance(r.get("wall_s"), (int, float))}
    total = sum(walls.values()) / 60
    parallel = meta.get("parallel") or 1
    return (
        f"- Report of {meta.get('date')}. {len(walls)} runs; their wall times add up to {total:.1f} min, "
        f"about {total / parallel:.1f} min with {parallel} side by side; warm starts "
        f"{meta.get('warm_start_s', 0) / 60:.1f} min in this invocation (0 when cached)."
    )


def _load(entry: dict[str, Any], *, all_three: bool = False) -> str:
    """An entry's load average: the 1-minute figure, or all three as ``a / b / c``; ``?`` when unknown."""
    load = entry.get("load_average")
    if not isinstance(load, (list, tuple)) or not load:
        return "?"
    return " / ".join(f"{x:.1f}" for x in load) if all_three else f"{load[0]:.1f}"


def _pretty(values: dict[str, Any]) -> str:
    return (
        ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in values.items()) or "n/a"
    )


# --- plots ----------------------------------------------------------------------------------------------------------
def make_plots(
    bench: BenchFile, eval_rows: Sequence[dict[str, Any]], run_rows: Sequence[dict[str, Any]], out_dir: Path
) -> dict[str, str]:
    """PNG plots in ``out_dir``; returns ``name -> file name``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plots: dict[str, str] = {}
    colors = dict(zip(bench.methods, plt.get_cmap("tab10").colors, strict=False))
    for task_name, task in bench.tasks.items():
        rows = [r for r in eval_rows if r["group"] == "grid" and r["task"] == task_name and task.metric in r]
        if not rows:
            continue
        fig, ax = plt.subplots(figsize=(7, 4.2))
        for method in bench.methods:
            per_step: dict[int, list[float]] = defaultdict(list)
            for r in rows:
                if r["method"] == method:
                    per_step[r["step"]].append(float(r[task.metric]))
            if not per_step:
                continue
            steps = sorted(per_step)
            mean = [statistics.fmean(per_step[s]) for s in steps]
            lo = [min(per_step[s]) for s in steps]
            hi = [max(per_step[s]) for s in steps]
            width = 2.2 if method in (bench.candidate, bench.reference) else 1.2
            ax.plot(steps, mean, label=method, color=colors.get(method), linewidth=width)
            ax.fill_between(steps, lo, hi, color=colors.get(method), alpha=0.15, linewidth=0)
        ax.axhline(task.target, color="black", linestyle="--", linewidth=0.8, label=f"target {task.target:g}")
        ax.set_xlabel("training step")
        ax.set_ylabel(task.metric)
        ax.set_title(f"{task_name}: held-out {task.metric} (mean, min-max band over seeds)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, ncol=2)
        fig.tight_layout()
        name = f"curves_{task_name}.png"
        fig.savefig(out_dir / name, dpi=110)
        plt.close(fig)
        plots[f"curves_{task_name}"] = name
    grid = [r for r in run_rows if r["group"] == "grid" and r["status"] == "ok"]
    if any(r["s_per_step"] for r in grid):
        tasks = list(bench.tasks)
        fig, axes = plt.subplots(1, len(tasks), figsize=(4.5 * len(tasks), 3.8), squeeze=False)
        for ax, task_name in zip(axes[0], tasks, strict=True):
            methods = [
                m
                for m in bench.methods
                if any(r["method"] == m and r["task"] == task_name and r["s_per_step"] for r in grid)
            ]
            stats = [
                _stat(r["s_per_step"] for r in grid if r["method"] == m and r["task"] == task_name)
                for m in methods
            ]
            means = [s[0] if s else 0.0 for s in stats]
            err = [[s[0] - s[1] if s else 0 for s in stats], [s[2] - s[0] if s else 0 for s in stats]]
            ax.bar(methods, means, yerr=err, color=[colors.get(m) for m in methods], capsize=3)
            ax.set_title(f"{task_name}: wall s / training step")
            ax.tick_params(axis="x", rotation=45)
            ax.grid(axis="y", alpha=0.3)
        fig.tight_layout()
        fig.savefig(out_dir / "step_time.png", dpi=110)
        plt.close(fig)
        plots["step_time"] = "step_time.png"
    if any(r["outcome_zero_spread_frac"] is not None for r in grid):
        tasks = list(bench.tasks)
        fig, axes = plt.subplots(1, len(tasks), figsize=(4.5 * len(tasks), 3.8), squeeze=False)
        for ax, task_name in zip(axes[0], tasks, strict=True):
            methods = [
                m for m in bench.methods if any(r["method"] == m and r["task"] == task_name for r in grid)
            ]
            vals = [
                _stat(
                    r["outcome_zero_spread_frac"] for r in grid if r["method"] == m and r["task"] == task_name
                )
                for m in methods
            ]
            ax.bar(methods, [v[0] if v else 0 for v in vals], color=[colors.get(m) for m in methods])
            ax.set_title(f"{task_name}: groups without outcome spread")
            ax.set_ylim(0, 1)
            ax.tick_params(axis="x", rotation=45)
        fig.tight_layout()
        fig.savefig(out_dir / "zero_spread.png", dpi=110)
        plt.close(fig)
        plots["zero_spread"] = "zero_spread.png"
    sweep = [r for r in eval_rows if r["group"] == "sweep"]
    if sweep and bench.sweep is not None:
        metric = bench.tasks[bench.sweep.task].metric
        fig, ax = plt.subplots(figsize=(7, 4.2))
        settings = sorted({(r["alpha"], r["beta"]) for r in sweep})
        cmap = plt.get_cmap("viridis")
        for i, (alpha, beta) in enumerate(settings):
            per_step: dict[int, list[float]] = defaultdict(list)
            for r in sweep:
                if (r["alpha"], r["beta"]) == (alpha, beta) and metric in r:
                    per_step[r["step"]].append(float(r[metric]))
            steps = sorted(per_step)
            dom = next(
                (
                    r["dominance"]
                    for r in run_rows
                    if r["group"] == "sweep" and (r["alpha"], r["beta"]) == (alpha, beta)
                ),
                None,
            )
            style = "-" if dom and dom.get("holds") else ":"
            ax.plot(
                steps,
                [statistics.fmean(per_step[s]) for s in steps],
                style,
                color=cmap(i / max(1, len(settings) - 1)),
                label=f"alpha {alpha:g} beta {beta:g}{'' if style == '-' else ' (no dominance)'}",
            )
        ax.axhline(bench.tasks[bench.sweep.task].target, color="black", linestyle="--", linewidth=0.8)
        ax.set_xlabel("training step")
        ax.set_ylabel(metric)
        ax.set_title(f"{bench.sweep.method} on {bench.sweep.task}: alpha/beta sweep (mean over seeds)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(out_dir / "sweep.png", dpi=110)
        plt.close(fig)
        plots["sweep"] = "sweep.png"
    return plots


# --- docs page -------------------------------------------------------------------------------------------------------
def write_doc(results_dirs: Sequence[Path], doc: Path, *, preface: str = "") -> Path:
    """Write ``doc``: ``preface``, then each results folder's summary (headings one level down) with its
    plots copied to ``<doc folder>/<doc stem>/<results folder name>/``."""
    doc = Path(doc)
    parts = [preface.rstrip() + "\n"] if preface else []
    for results_dir in map(Path, results_dirs):
        text = (results_dir / "summary.md").read_text(encoding="utf-8")
        assets = doc.parent / doc.stem / results_dir.name
        assets.mkdir(parents=True, exist_ok=True)
        for png in results_dir.glob("*.png"):
            shutil.copy2(png, assets / png.name)
            text = text.replace(f"]({png.name})", f"]({doc.stem}/{results_dir.name}/{png.name})")
        text = "\n".join("#" + line if line.startswith("#") else line for line in text.splitlines())
        parts.append(text.rstrip() + "\n")
    doc.write_text("\n".join(parts), encoding="utf-8")
    return doc


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m botgrpo_core.bench_report --doc docs/results.md [--preface P.md] RESULTS_DIR...``."""
    import argparse

    parser = argparse.ArgumentParser(description="write a docs page from bench results folders")
    parser.add_argument("results_dirs", nargs="+", type=Path, help="folders written by `botgrpo bench`")
    parser.add_argument("--doc", required=True, type=Path, help="the markdown page to write")
    parser.add_argument("--preface", type=Path, help="markdown put before the generated sections")
    args = parser.parse_args(argv)
    preface = args.preface.read_text(encoding="utf-8") if args.preface else ""
    print(write_doc(args.results_dirs, args.doc, preface=preface))
    return 0


if __name__ == "__main__":
    sys.exit(main())
