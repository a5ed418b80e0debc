"""The run's summary: ``summary.json``, the before/after table and the plots."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from botgrpo_core.config.models import RunConfig
    from botgrpo_core.config.presets import Preset
from botgrpo_core.engine.outputs import FINAL_MODEL_DIR, METRICS_FILE, atomic_path
from botgrpo_core.engine.provenance import describe, what_ran


def _summary(
    config: RunConfig,
    preset: Preset,
    evals: Mapping[int, Mapping[str, Any]],
    steps_done: int,
    start: float,
    overrides: Sequence[str],
) -> dict[str, Any]:
    """``summary.json``'s content.

    :param evals: the held-out evaluations by step (step 0: the initial policy).
    :param steps_done: the optimizer steps the run completed.
    :param start: the run's start (``time.time()``), for its wall time.
    """
    steps = sorted(evals)
    return {
        "output_dir": str(config.training.output_dir),
        "preset": preset.name,
        "estimator": preset.estimator,
        "steps": int(steps_done),
        "before": {k: v for k, v in evals.get(0, {}).items() if k.startswith("eval/")},
        "after": {k: v for k, v in evals.get(steps[-1], {}).items() if k.startswith("eval/")}
        if steps
        else {},
        "metrics": str(Path(config.training.output_dir) / METRICS_FILE),
        "final_model": str(Path(config.training.output_dir) / FINAL_MODEL_DIR),
        "overrides": list(overrides),
        "wall_s": round(time.time() - start, 1),
        "ran": what_ran(),  # commit, versions, host (engine/provenance.py)
    }


_TABLE_ROWS = (
    ("answer accuracy, greedy", "eval/greedy/answer_accuracy"),
    ("answer accuracy, sampled", "eval/sampled/answer_accuracy"),
    ("step error rate, greedy", "eval/greedy/step_error_rate"),
    ("step error rate, sampled", "eval/sampled/step_error_rate"),
    ("mean token reward, sampled", "eval/sampled/reward"),
)


def table_rows(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(label, key)`` of the before/after table: the task's metrics (:data:`_TABLE_ROWS`), then each signal's
    mean (an outcome signal scoring 1/0, such as ``sympy.answer``, is the answer accuracy of a JSONL run, which
    has no task), the completion length and the mean token reward; only keys the evaluations hold."""
    keys = {**before, **after}
    rows = [(label, key) for label, key in _TABLE_ROWS[:-1] if key in keys]
    for mode in ("greedy", "sampled"):
        prefix = f"eval/{mode}/signals/"
        for key in sorted(k for k in keys if k.startswith(prefix) and k.endswith("/mean")):
            rows.append((f"{key[len(prefix) : -len('/mean')]} mean, {mode}", key))
    rows += [(label, key) for label, key in _TABLE_ROWS[-1:] if key in keys]
    if "eval/sampled/length" in keys:
        rows.append(("length (tokens), sampled", "eval/sampled/length"))
    return rows


def format_report(summary: Mapping[str, Any]) -> str:
    """The before/after table (:func:`table_rows`), where the outputs are and what ran."""
    before, after = summary.get("before", {}), summary.get("after", {})
    rows = []
    width = max([28, *(len(label) + 2 for label, _ in table_rows(before, after))])
    for label, key in table_rows(before, after):
        b, a = before.get(key), after.get(key)
        fmt = lambda v: f"{v:>9.3f}" if isinstance(v, (int, float)) else f"{'-':>9}"  # noqa: E731
        rows.append(f"{label:<{width}}{fmt(b)}{fmt(a)}")
    # no held-out evaluation (data.eval_size: 0): no empty table
    lines = ["", f"{'held-out prompts':<{width}}{'before':>9}{'after':>9}", *rows] if rows else [""]
    lines.append(
        f"\n{summary.get('steps')} steps of {summary.get('preset')}; the run took {summary.get('wall_s')} s "
        f"({summary.get('model_prep_s', 0)} s of it building/warm-starting the model)"
    )
    lines.append(f"metrics: {summary.get('metrics')}")
    for plot in summary.get("plots", []):
        lines.append(f"plot:    {plot}")
    if summary.get("ran"):
        lines.append(f"ran:     {describe(summary['ran'])}")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------
# Plots
# ------------------------------------------------------------------------------------------------
def write_plots(output_dir: Path, records: Sequence[Mapping[str, Any]]) -> list[str]:
    """``training_curves.png`` (reward, success, per-signal, zero-spread groups, held-out accuracy) and
    ``advantages.png`` (advantage statistics over steps and histograms at the evaluation steps)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    train = [r for r in records if r.get("kind") == "train"]
    evals = [r for r in records if r.get("kind") == "eval"]
    paths = []
    for name, draw in (("training_curves.png", _draw_curves), ("advantages.png", _draw_advantages)):
        fig = draw(plt, train, evals)
        fig.tight_layout()
        with atomic_path(output_dir / name) as tmp:  # a kill mid-write leaves the old plot, not a cut one
            fig.savefig(tmp, dpi=110, format="png")
        plt.close(fig)
        paths.append(str(output_dir / name))
    return paths


def _series(rows: Sequence[Mapping[str, Any]], key: str, smooth: int = 1) -> tuple[list[int], list[float]]:
    """``(steps, values)`` of ``key``; ``smooth > 1``: trailing moving average (per-step values are noisy)."""
    pts = [(r["step"], r[key]) for r in rows if isinstance(r.get(key), (int, float))]
    values = [p[1] for p in pts]
    if smooth > 1:
        values = [
            sum(values[max(0, i - smooth + 1) : i + 1]) / (i - max(0, i - smooth + 1) + 1)
            for i in range(len(values))
        ]
    return [p[0] for p in pts], values


def _draw_curves(plt: Any, train: Sequence[Mapping[str, Any]], evals: Sequence[Mapping[str, Any]]) -> Any:
    window = max(1, len(train) // 20)
    fig, axes = plt.subplots(2, 2, figsize=(11, 7.5))
    ax = axes[0, 0]
    for key, label in (("reward/token_mean", "mean token reward"), ("success_rate", "success rate")):
        ax.plot(*_series(train, key, window), label=label)
    ax.set_title(f"rollouts (moving average of {window} steps)")
    ax = axes[0, 1]
    signal_keys = sorted({k for r in train for k in r if k.startswith("signals/") and k.endswith("/mean")})
    for key in signal_keys:
        ax.plot(*_series(train, key, window), label=key.split("/")[1])
    ax.set_title("signals (mean per rollout, moving average)")
    ax = axes[1, 0]
    for key, label in (
        ("groups/outcome_zero_spread_frac", "outcomes all equal (no GRPO signal)"),
        ("groups/zero_spread_frac", "token rewards all equal (no BoT signal)"),
        ("groups/no_signal_frac", "all advantages 0 (no gradient under this run's estimator)"),
    ):
        ax.plot(*_series(train, key, window), label=label)
    ax.set_ylim(-0.02, 1.02)
    ax.set_title("groups without spread")
    ax = axes[1, 1]
    eval_keys = sorted(
        {
            k
            for r in evals
            for k in r
            if k.startswith("eval/") and k.endswith(("answer_accuracy", "step_error_rate"))
        }
    ) or sorted({k for r in evals for k in r if k.startswith("eval/") and k.endswith("/reward")})
    for key in eval_keys:
        ax.plot(*_series(evals, key), marker="o", label=key[len("eval/") :])
    ax.set_title("held-out evaluation")
    for ax in axes.flat:
        ax.set_xlabel("step")
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
    return fig


def _draw_advantages(plt: Any, train: Sequence[Mapping[str, Any]], evals: Sequence[Mapping[str, Any]]) -> Any:
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for key in ("mean", "std", "abs_mean", "min", "max"):
        left.plot(*_series(train, f"advantages/{key}"), label=key)
    left.set_title("token advantages per batch")
    left.set_xlabel("step")
    left.legend(fontsize=8)
    hists = [r for r in evals if isinstance(r.get("advantages/histogram"), list)]
    edges = [-4 + 0.2 * i for i in range(41)]
    shown = hists[:: max(1, len(hists) // 5)]
    if hists and shown[-1] is not hists[-1]:
        shown.append(hists[-1])
    for r in shown:
        counts = r["advantages/histogram"]
        total = sum(counts) or 1
        right.stairs([c / total for c in counts], edges, label=f"step {r['step']}")
    right.set_title("distribution of token advantages (clipped to [-4, 4])")
    right.set_xlabel("advantage")
    if hists:
        right.legend(fontsize=8)
    return fig
