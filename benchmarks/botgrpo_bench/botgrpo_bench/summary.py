"""``summary.md``: the markdown summary of a bench (header, one section per task, signal quality, the
alpha/beta sweep, the plots)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from botgrpo_bench.aggregate import fmt, group_by, run_step_time, stat

if TYPE_CHECKING:
    from botgrpo_bench.config import BenchFile


def render_summary(
    bench: BenchFile,
    runs: Sequence[dict[str, Any]],
    ratios: dict[str, dict[str, Any] | None],
    warm: dict[str, dict[str, Any]],
    plots: dict[str, str],
    meta: dict[str, Any],
    regimes: str = "",
) -> str:
    """The markdown summary of a bench; ``regimes`` (a regime bench's section, see
    :func:`botgrpo_bench.regimes_page.render_regime_section`) comes first, right after the header."""
    lines = _header(bench, runs, meta)
    if regimes:
        lines += [regimes.rstrip(), ""]
    for task_name in bench.tasks:
        lines += _task_section(bench, task_name, runs, ratios.get(task_name), warm, plots)
    lines += _quality_section(meta.get("signal_quality") or {})
    lines += _sweep_section(bench, runs, plots)
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
        "`runs/<task>/<method>/seed<k>/` (each run's metrics.jsonl, bench.log, config)"
        + ("; `regimes.jsonl` (one record per run of a level, with its curve)." if regimes else "."),
        "",
    ]
    return "\n".join(lines)


def _header(bench: BenchFile, runs: Sequence[dict[str, Any]], meta: dict[str, Any]) -> list[str]:
    """Title, command, machine, wall time, the invocations that ran something, seeds and failed runs."""
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
        # runs made before invocations were logged (the history then holds report-only ones)
        ran = "; ".join(parts) or ("not logged: the runs predate this history" if runs else "none")
        lines.append(
            f"- Invocations that ran something: {ran}"
            + (f"; {report_only} more only rewrote this report from the finished runs" if report_only else "")
        )
    lines += [f"- Seeds: {', '.join(map(str, bench.seeds))}; methods: {', '.join(bench.methods)}"]
    if meta.get("runs_left_out"):  # a report of a folder's finished runs (scripts/bench_report_finished.py)
        lines += [f"- Not run (left out of every table): {', '.join(meta['runs_left_out'])}"]
    lines += [""]
    failed = [r for r in runs if r["status"] != "ok"]
    if failed:
        lines += [
            "**Failed runs:** "
            + "; ".join(f"{r['task']}/{r['method']}/seed{r['seed']}: {r['error']}" for r in failed),
            "",
        ]
    return lines


def _task_section(
    bench: BenchFile,
    task_name: str,
    runs: Sequence[dict[str, Any]],
    ratio: dict[str, Any] | None,
    warm: dict[str, dict[str, Any]],
    plots: dict[str, str],
) -> list[str]:
    """A task's settings, warm start, per-method table, paired comparison and curve plot."""
    task = bench.tasks[task_name]
    grid = [r for r in runs if r["group"] == "grid" and r["task"] == task_name]
    lines = [f"## Task `{task_name}`", ""]
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
    lines += _method_table(bench, task_name, grid)
    lines.append("")
    lines.append(
        "Mean over the run: the metric averaged over every evaluation after step 0 (the area under the "
        "curve divided by its length), a summary that does not depend on the target. "
        "Steps to target: first evaluation step at or above the target, mean (min-max) over the seeds "
        "that reached it; evaluations are "
        f"{task.run.get('training', {}).get('eval_every', '?')} steps apart, so that is the resolution."
    )
    lines.append("")
    lines += _comparison_lines(
        ratio, bench.reference, bench.candidate, task.metric, side_by_side=bench.parallel > 1
    )
    if f"curves_{task_name}" in plots:
        lines += ["", f"![{task_name}: {task.metric} vs step]({plots[f'curves_{task_name}']})"]
    lines.append("")
    return lines


def _method_table(bench: BenchFile, task_name: str, grid: Sequence[dict[str, Any]]) -> list[str]:
    """One row per method: steps to target, reached, initial/final/mean metric, s/step, Pass@k."""
    task = bench.tasks[task_name]
    extra, pass_k = task.extra_metrics, task.pass_k
    header = ["method", "steps to target", "reached", f"initial {task.metric}", f"final {task.metric}"]
    header += ["mean over the run"]
    header += [f"final {e}" for e in extra]
    header += ["s/step (median)", "no-spread groups (outcome, last 10 steps)"]
    if pass_k:
        header += ["Pass@1", f"Pass@{pass_k}"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    by_method = group_by(grid, "method")
    for method in bench.methods:
        rs = by_method.get((method,), [])
        ok = [r for r in rs if r["status"] == "ok"]
        reached = [r for r in ok if r["steps_to_target"] is not None]
        cells = [
            f"`{method}`",
            fmt(stat(r["steps_to_target"] for r in reached), integer=True),
            f"{len(reached)}/{len(rs)}",
            fmt(stat(r["initial"] for r in ok)),
            fmt(stat(r["final"] for r in ok)),
            fmt(stat(r["curve_mean"] for r in ok)),
        ]
        cells += [fmt(stat(r.get(f"final_{e}") for r in ok)) for e in extra]
        cells += [
            fmt(stat(run_step_time(r) for r in ok), 2),
            fmt(stat(r["outcome_zero_spread_frac_last"] for r in ok), 2),
        ]
        if pass_k:
            cells += [
                fmt(stat(r.get("pass_k", {}).get("pass@1") for r in ok)),
                fmt(stat(r.get("pass_k", {}).get(f"pass@{pass_k}") for r in ok)),
            ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _quality_section(quality: dict[str, Any]) -> list[str]:
    """What the local signals flag on the warm policy, per task (see :func:`botgrpo_bench.evals.signal_quality`)."""
    if not quality:
        return []
    lines = ["## Signal quality (warm policy)", ""]
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
    return lines


def _sweep_section(bench: BenchFile, runs: Sequence[dict[str, Any]], plots: dict[str, str]) -> list[str]:
    """The alpha/beta sweep's table, each setting marked for outcome dominance."""
    sweep = [r for r in runs if r["group"] == "sweep"]
    if not sweep or bench.sweep is None:
        return []
    sw = bench.sweep
    task = bench.tasks[sw.task]
    lines = [f"## Alpha/beta sweep: `{sw.method}` on `{sw.task}`", ""]
    lines.append(
        "Outcome dominance (design.md): `alpha * d > 2 * beta * sum_k |w_k| b_k` keeps every token of a better "
        "rollout above every token of a worse one; `holds` is computed from the signals' declared bounds."
    )
    lines += [
        "",
        "| alpha | beta | dominance holds | alpha*d | 2*beta*sum b | steps to target | reached | final | mean over the run |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for (alpha, beta), rs in sorted(group_by(sweep, "alpha", "beta").items()):
        ok = [r for r in rs if r["status"] == "ok"]
        reached = [r for r in ok if r["steps_to_target"] is not None]
        dom = rs[0]["dominance"] or {}
        lines.append(
            f"| {alpha:g} | {beta:g} | {'yes' if dom.get('holds') else '**no**'} | {dom.get('alpha_gap', float('nan')):.3g} | "
            f"{dom.get('two_beta_local', float('nan')):.3g} | {fmt(stat(r['steps_to_target'] for r in reached), integer=True)} | "
            f"{len(reached)}/{len(rs)} | {fmt(stat(r['final'] for r in ok))} | "
            f"{fmt(stat(r['curve_mean'] for r in ok))} |"
        )
    lines.append("")
    lines.append(
        f"Target: `{task.metric}` >= {task.target:g}; seeds {', '.join(map(str, sorted({r['seed'] for r in sweep})))}."
    )
    if "sweep" in plots:
        lines += ["", f"![sweep]({plots['sweep']})"]
    lines.append("")
    return lines


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


def _comparison_lines(
    ratio: dict[str, Any] | None, reference: str, candidate: str, metric: str, *, side_by_side: bool = True
) -> list[str]:
    """The paired candidate-vs-reference sentences of a task."""
    if ratio is None:
        return [f"No paired {reference} / {candidate} comparison (a method is missing or its runs failed)."]
    out = []
    if ratio["ratio"] is not None:
        r_mean, r_lo, r_hi, n = ratio["ratio"]
        sign, bound = {
            None: ("", ""),
            ">=": (">= ", f" (censored: {reference} missed the target in some seeds, its run length stands in: a "
                   "lower bound)"),
            "<=": ("<= ", f" (censored: {candidate} missed the target in some seeds, its run length stands in: an "
                   "upper bound)"),
            "mixed": ("", " (censored both ways: each method missed the target in some seed, its run length "
                      "standing in; the mean is no bound, read the seeds)"),
        }[ratio["bound"]]  # fmt: skip
        out.append(
            f"- **Steps to target, {reference} / {candidate}: {sign}{r_mean:.2f}** (the mean of the per-seed ratios, "
            f"{r_lo:.2f}-{r_hi:.2f} over {n} paired seeds; the regime table's ratio is of the seed-mean steps)"
            f"{bound}; {candidate} reached the target first in {ratio['wins']} of {n}."
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
            f"- Step time {candidate} / {reference}: **{ratio['step_time_ratio']:.2f}** (median over seeds of the "
            "per-seed ratio of median step times, as in every table here; the candidate adds local signal "
            "scoring, span alignment and the token-level estimator; "
            + (
                "the two runs of a seed start side by side)."
                if side_by_side
                else "the runs ran one at a time (parallel 1), each beside whatever else the machine ran then: "
                "not a like-for-like time comparison unless the load lines above match)."
            )
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
