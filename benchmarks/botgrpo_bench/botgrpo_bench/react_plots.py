"""The share of empty or trivial React pages over training, per method: the bench's guard against a reward
that is gamed (the source paper's compile + lint reward taught its policy to emit empty pages).

Each training step logs ``signals/bench.react_trivial/mean`` (the share of that step's rollouts that are
empty or trivial, :func:`botgrpo_bench.react_verdict.is_trivial`) when the task's mixture lists the signal
(weight 0: logged, never rewarded). :func:`trivial_curves` reads them back from the runs' ``metrics.jsonl``,
:func:`plot_trivial_share` draws one line per method (mean over seeds) per task as ``trivial_<task>.png``.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from botgrpo_bench.runs import run_curves

#: the training-log key of the per-step share of trivial pages
TRIVIAL_KEY = "signals/bench.react_trivial/mean"


def trivial_curves(run_rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, list[tuple[int, float]]]]:
    """``task -> method -> [(step, share)]``: the per-step share of trivial pages, averaged over the seeds
    whose logs have it (grid runs that finished); tasks without the signal are left out."""
    by: dict[tuple[str, str], dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for row in run_rows:
        if row.get("group", "grid") != "grid" or row.get("status") != "ok" or not row.get("run_dir"):
            continue
        for train in run_curves(Path(row["run_dir"]))[1]:
            value = train.get(TRIVIAL_KEY)
            step = train.get("step", train.get("global_step"))
            if isinstance(value, (int, float)) and isinstance(step, (int, float)):
                by[row["task"], row["method"]][int(step)].append(float(value))
    out: dict[str, dict[str, list[tuple[int, float]]]] = defaultdict(dict)
    for (task, method), steps in by.items():
        out[task][method] = [(s, statistics.fmean(v)) for s, v in sorted(steps.items())]
    return dict(out)


def plot_trivial_share(run_rows: Sequence[dict[str, Any]], out_dir: Path) -> dict[str, str]:
    """``trivial_<task>.png`` for every task whose runs log the share of trivial pages; returns
    ``plot name -> file name`` (empty when none does). matplotlib, Agg backend."""
    curves = trivial_curves(run_rows)
    if not curves:
        return {}
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plots = {}
    for task, methods in curves.items():
        fig, ax = plt.subplots(figsize=(6.5, 3.6))
        for method, points in methods.items():
            ax.plot([s for s, _ in points], [v for _, v in points], label=method, linewidth=1.2)
        ax.set_xlabel("training step")
        ax.set_ylabel("share of rollouts")
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(f"{task}: empty or trivial pages per step (mean over seeds)", fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        name = f"trivial_{task}.png"
        fig.savefig(out_dir / name, dpi=110)
        plt.close(fig)
        plots[f"trivial_{task}"] = name
    return plots
