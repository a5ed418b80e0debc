"""The bench's PNG plots: success curves per task, wall seconds per step, groups without an outcome
spread, and the alpha/beta sweep (matplotlib, Agg backend, imported when a report is written)."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from botgrpo_bench.aggregate import run_step_time, stat

if TYPE_CHECKING:
    from botgrpo_bench.config import BenchFile
    from botgrpo_bench.paired import Paired

Rows = Sequence[dict[str, Any]]


def make_plots(bench: BenchFile, eval_rows: Rows, run_rows: Rows, out_dir: Path) -> dict[str, str]:
    """PNG plots in ``out_dir``; returns ``name -> file name``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colors = dict(zip(bench.methods, plt.get_cmap("tab10").colors, strict=False))
    plots: dict[str, str] = {}
    for task_name in bench.tasks:
        if _curves(plt, bench, task_name, eval_rows, colors, out_dir / f"curves_{task_name}.png"):
            plots[f"curves_{task_name}"] = f"curves_{task_name}.png"
    grid = [r for r in run_rows if r["group"] == "grid" and r["status"] == "ok"]
    if any(r["s_per_step"] for r in grid):
        _bars(
            plt, bench, grid, "s_per_step", "median wall s / training step", colors, out_dir / "step_time.png"
        )
        plots["step_time"] = "step_time.png"
    if any(r["outcome_zero_spread_frac"] is not None for r in grid):
        _bars(
            plt,
            bench,
            grid,
            "outcome_zero_spread_frac",
            "groups without outcome spread",
            colors,
            out_dir / "zero_spread.png",
        )
        plots["zero_spread"] = "zero_spread.png"
    if bench.sweep is not None and any(r["group"] == "sweep" for r in eval_rows):
        _sweep(plt, bench, eval_rows, run_rows, out_dir / "sweep.png")
        plots["sweep"] = "sweep.png"
    from botgrpo_bench.react_plots import plot_trivial_share  # React view pages: trivial pages per step

    plots.update(plot_trivial_share(run_rows, out_dir))
    return plots


def _per_step(rows: Rows, metric: str) -> dict[int, list[float]]:
    out: dict[int, list[float]] = defaultdict(list)
    for r in rows:
        if metric in r:
            out[r["step"]].append(float(r[metric]))
    return out


def curve_metrics(task: Any, rows: Rows) -> list[str]:
    """The metrics a task's curves plot draws, one panel each: its success metric, then each of its
    ``extra_metrics`` that the evaluations recorded (the math task's ``sampled/step_error_rate``, which the
    local signal targets, beside the answer accuracy)."""
    return [task.metric] + [m for m in task.extra_metrics if any(m in r for r in rows)]


def seeds_note(seeds: int) -> str:
    """What a curve over ``seeds`` seeds is: one seed's curve, or the mean with the min-max band."""
    return "one seed" if seeds == 1 else f"mean over {seeds} seeds, min-max band"


def _curves(plt: Any, bench: BenchFile, task_name: str, eval_rows: Rows, colors: dict, path: Path) -> bool:
    """Held-out metrics vs step per method, one panel per :func:`curve_metrics` (the mean over seeds, with
    the min-max band when there are several; the title says which); False when there is no point."""
    task = bench.tasks[task_name]
    rows = [r for r in eval_rows if r["group"] == "grid" and r["task"] == task_name]
    if not any(task.metric in r for r in rows):
        return False
    metrics = curve_metrics(task, rows)
    seeds = len({r["seed"] for r in rows})
    fig, axes = plt.subplots(1, len(metrics), figsize=(6.2 * len(metrics), 4.2), squeeze=False)
    for ax, metric in zip(axes[0], metrics, strict=True):
        for method in bench.methods:
            per_step = _per_step([r for r in rows if r["method"] == method], metric)
            if not per_step:
                continue
            steps = sorted(per_step)
            width = 2.2 if method in (bench.candidate, bench.reference) else 1.2
            mean = [statistics.fmean(per_step[s]) for s in steps]
            ax.plot(steps, mean, label=method, color=colors.get(method), linewidth=width)
            if seeds > 1:
                lo, hi = [min(per_step[s]) for s in steps], [max(per_step[s]) for s in steps]
                ax.fill_between(steps, lo, hi, color=colors.get(method), alpha=0.15, linewidth=0)
        if metric == task.metric:
            ax.axhline(
                task.target, color="black", linestyle="--", linewidth=0.8, label=f"target {task.target:g}"
            )
        ax.set_xlabel("training step")
        ax.set_ylabel(metric)
        ax.set_title(f"held-out {metric}", fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, ncol=2)
    fig.suptitle(f"{task_name} ({seeds_note(seeds)})", fontsize=11)
    _save(plt, fig, path)
    return True


def _bars(plt: Any, bench: BenchFile, grid: Rows, key: str, title: str, colors: dict, path: Path) -> None:
    """One panel per task: the mean of ``key`` per method over seeds (min-max error bars for step times)."""
    tasks = [t for t in bench.tasks if any(r["task"] == t for r in grid)]  # no empty panel for a task not run
    fig, axes = plt.subplots(1, len(tasks), figsize=(4.5 * len(tasks), 3.8), squeeze=False)
    for ax, task_name in zip(axes[0], tasks, strict=True):
        rows = [r for r in grid if r["task"] == task_name]
        # step times: the methods that have one; shares: every method that ran (no value plots as 0)
        methods = [
            m
            for m in bench.methods
            if any(r["method"] == m and (key != "s_per_step" or r[key]) for r in rows)
        ]
        value = run_step_time if key == "s_per_step" else (lambda r: r[key])  # one step time for every table
        stats = [stat(value(r) for r in rows if r["method"] == m) for m in methods]
        means = [s[0] if s else 0.0 for s in stats]
        if key == "s_per_step":
            err = [[s[0] - s[1] if s else 0 for s in stats], [s[2] - s[0] if s else 0 for s in stats]]
            ax.bar(methods, means, yerr=err, color=[colors.get(m) for m in methods], capsize=3)
            ax.grid(axis="y", alpha=0.3)
        else:  # a share
            ax.bar(methods, means, color=[colors.get(m) for m in methods])
            ax.set_ylim(0, 1)
        ax.set_title(f"{task_name}: {title}")
        ax.tick_params(axis="x", rotation=45)
    _save(plt, fig, path)


def _sweep(plt: Any, bench: BenchFile, eval_rows: Rows, run_rows: Rows, path: Path) -> None:
    """The sweep's metric vs step per (alpha, beta); dotted where outcome dominance does not hold."""
    assert bench.sweep is not None
    sweep = [r for r in eval_rows if r["group"] == "sweep"]
    task = bench.tasks[bench.sweep.task]
    fig, ax = plt.subplots(figsize=(7, 4.2))
    settings = sorted({(r["alpha"], r["beta"]) for r in sweep})
    cmap = plt.get_cmap("viridis")
    for i, (alpha, beta) in enumerate(settings):
        per_step = _per_step([r for r in sweep if (r["alpha"], r["beta"]) == (alpha, beta)], task.metric)
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
    ax.axhline(task.target, color="black", linestyle="--", linewidth=0.8)
    ax.set_xlabel("training step")
    ax.set_ylabel(task.metric)
    ax.set_title(f"{bench.sweep.method} on {bench.sweep.task}: alpha/beta sweep (mean over seeds)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    _save(plt, fig, path)


def plot_paired(
    cand_curves: dict[int, Sequence[Sequence[float]]],
    ref_curves: dict[int, Sequence[Sequence[float]]],
    result: Paired,
    path: Path,
    *,
    cand: str,
    ref: str,
    metric: str,
    smallest: float,
    title: str,
) -> Path:
    """A paired level's figure: left, the held-out curve per arm (``seed -> [[step, value], ...]``, the paired
    seeds only) as the mean over seeds with the min-max band; right, each seed's paired difference of the primary
    statistic, their mean, zero and the smallest difference worth reporting (shaded)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11.5, 4.2), gridspec_kw={"width_ratios": [3, 2]})
    colors = plt.get_cmap("tab10").colors
    for (name, curves), color in zip(((cand, cand_curves), (ref, ref_curves)), colors, strict=False):
        per_step: dict[int, list[float]] = defaultdict(list)
        for curve in curves.values():
            for step, value in curve:
                per_step[int(step)].append(float(value))
        steps = sorted(per_step)
        left.plot(steps, [statistics.fmean(per_step[s]) for s in steps], "-o", color=color, label=name, ms=4)
        if len(curves) > 1:
            lo, hi = [min(per_step[s]) for s in steps], [max(per_step[s]) for s in steps]
            left.fill_between(steps, lo, hi, color=color, alpha=0.15, linewidth=0)
    left.set_xlabel("training step")
    left.set_ylabel(metric)
    left.set_title(f"held-out curve per arm ({seeds_note(len(result.seeds))})", fontsize=10)
    left.grid(alpha=0.3)
    left.legend(fontsize=8)
    diffs = result.differences
    right.axhspan(-smallest, smallest, color="grey", alpha=0.15, linewidth=0, label=f"|d| < {smallest:g}")
    right.axhline(0.0, color="black", linewidth=0.8)
    right.plot(range(len(diffs)), diffs, "o", color=colors[0], label="one seed")
    right.axhline(
        result.mean, color=colors[0], linestyle="--", linewidth=1.2, label=f"mean {result.mean:+.3f}"
    )
    right.set_xticks(range(len(diffs)), [str(s) for s in result.seeds])
    right.set_xlabel("seed")
    right.set_ylabel(f"{cand} - {ref}")
    t = "" if result.t is None else f"; t = {result.t:.2f}, p = {result.p_t:.2f}"
    right.set_title(f"paired differences of the averaged curve{t}", fontsize=10)
    right.grid(alpha=0.3)
    right.legend(fontsize=8)
    fig.suptitle(title, fontsize=11)
    _save(plt, fig, path)
    return path


def _save(plt: Any, fig: Any, path: Path) -> None:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
