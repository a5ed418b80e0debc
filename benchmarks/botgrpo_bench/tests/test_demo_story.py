"""What ``make demo`` (the regime bench's ``--quick``: one level, BoT-GRPO against GRPO, one seed) shows:
a report written by the real ``write_report`` from runs' ``metrics.jsonl`` files of that shape.

- the curves plot draws the step error rate (the local signal's target) in a panel beside success, and its
  title says "one seed" (no min-max band is drawn for one seed; with several, the band and the title say so);
- no empty slot: no speed-up plot for one level, and the speed-up plot of two levels has two slots;
- one step-time ratio: every table of summary.md gives the same figure (the median over seeds of the
  per-seed ratio of median step times), here where a run's mean and median step times differ;
- the closing terminal table gives the final step error rate.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from botgrpo_bench import plots
from botgrpo_bench.config import BenchFile

ACC, ERR = "sampled/answer_accuracy", "sampled/step_error_rate"


def _bench(seeds: list[int], levels: tuple[str, ...] = ("medium",)) -> BenchFile:
    tasks = {
        f"math-{level}": {
            "domain": "math",
            "level": level,
            "metric": ACC,
            "extra_metrics": [ERR],
            "target": 0.5,
            "run": {"rewards": {"signals": [{"name": "sympy.answer"}]}, "data": {"task_params": {}}},
        }
        for level in levels
    }
    return BenchFile.model_validate(
        {
            "name": "regimes",
            "methods": ["bot-grpo", "grpo"],
            "seeds": seeds,
            "profile_fractions": [0.3],
            "tasks": tasks,
        }
    )


#: per method: (accuracy curve, step error curve, step times); grpo's mean step time (2.0) is twice its median
RUNS = {
    "grpo": ([0.33, 0.45, 0.56], [0.30, 0.15, 0.10], [1.0, 1.0, 4.0]),
    "bot-grpo": ([0.33, 0.56, 0.60], [0.30, 0.09, 0.077], [1.1, 1.1, 1.1]),
}


def _write_runs(out: Path, bench: BenchFile) -> list[Any]:
    from botgrpo_bench.plan import Job

    jobs = []
    for task in bench.tasks:
        for seed in bench.seeds:
            for method, (acc, err, times) in RUNS.items():
                run_dir = out / "runs" / task / method / f"seed{seed}"
                run_dir.mkdir(parents=True)
                rows = [
                    {"kind": "eval", "step": 10 * i, f"eval/{ACC}": a + 0.01 * seed, f"eval/{ERR}": e}
                    for i, (a, e) in enumerate(zip(acc, err, strict=True))
                ]
                rows += [{"kind": "train", "step": i + 1, "step_time": t} for i, t in enumerate(times)]
                (run_dir / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
                jobs.append(
                    Job(task, method, seed, "grid", {"rewards": {}, "training": {"steps": 20}}, run_dir)
                )
    return jobs


@pytest.fixture
def figures(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Every figure the report saves, by file name, inspected before it is closed."""
    seen: dict[str, Any] = {}
    save = plots._save

    def record(plt: Any, fig: Any, path: Path) -> None:
        seen[Path(path).name] = {
            "suptitle": fig._suptitle.get_text() if fig._suptitle else "",
            "titles": [ax.get_title() for ax in fig.axes],
            "ylabels": [ax.get_ylabel() for ax in fig.axes],
            "bands": sum(
                type(c).__name__ in ("PolyCollection", "FillBetweenPolyCollection")
                for ax in fig.axes
                for c in ax.collections
            ),
        }
        save(plt, fig, path)

    monkeypatch.setattr(plots, "_save", record)
    return seen


def test_the_demo_report_tells_its_story(tmp_path: Path, figures: dict[str, Any]) -> None:
    from botgrpo_bench.bench import side_by_side
    from botgrpo_bench.report import write_report

    bench = _bench([0])
    out = tmp_path / "demo"
    jobs = _write_runs(out, bench)
    write_report(bench, jobs, [{"status": "ok"}] * len(jobs), out, {"warm_starts": {}, "quick": True})

    curves = figures["curves_math-medium.png"]
    assert curves["ylabels"] == [ACC, ERR]  # the step error rate beside success
    assert "one seed" in curves["suptitle"] and "band" not in curves["suptitle"]
    assert curves["bands"] == 0
    assert not (out / "regimes_speedup.png").exists()  # one level: no plot of one dot beside empty slots

    summary = (out / "summary.md").read_text()
    assert "regimes_speedup.png" not in summary
    # one step-time ratio: median 1.1 / median 1.0 in the regime table and in the comparison line (the
    # ratio of means, 1.1 / 2.0 = 0.55, appears nowhere)
    assert "| 1.10 |" in summary and "Step time bot-grpo / grpo: **1.10**" in summary
    assert "0.55" not in summary
    assert f"final {ERR}" in summary and "0.077" in summary
    runs = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
    table = side_by_side(bench, runs, out)
    assert f"final {ERR}" in table and "0.077" in table and "s/step (median)" in table


def test_several_seeds_draw_the_band_and_say_so(tmp_path: Path, figures: dict[str, Any]) -> None:
    from botgrpo_bench.report import write_report

    bench = _bench([0, 1, 2], levels=("short", "long"))
    out = tmp_path / "two-levels"
    jobs = _write_runs(out, bench)
    write_report(bench, jobs, [{"status": "ok"}] * len(jobs), out, {"warm_starts": {}})
    curves = figures["curves_math-short.png"]
    assert "mean over 3 seeds, min-max band" in curves["suptitle"]
    assert curves["bands"] == 4  # two methods x two panels
    speedup = figures.get("regimes_speedup.png")
    assert speedup is None  # drawn by regimes_page.plot_speedup, which saves itself: read its file instead
    assert (out / "regimes_speedup.png").is_file()


def test_the_speedup_plot_has_one_slot_per_level_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import matplotlib.pyplot as plt

    from botgrpo_bench.regimes_page import plot_speedup

    ticks: list[list[str]] = []
    savefig = plt.Figure.savefig

    def record(fig: Any, *args: Any, **kwargs: Any) -> None:
        ticks.append([t.get_text() for t in fig.axes[0].get_xticklabels()])
        savefig(fig, *args, **kwargs)

    monkeypatch.setattr(plt.Figure, "savefig", record)
    cmp = {"per_seed": {0: 2.0}, "ratio": 2.0, "ratio_per_seed": (2.0, 2.0, 2.0, 1)}
    level = {"domain": "math", "seeds": [0], "at_target": cmp, "profile": []}
    plot_speedup(
        {
            "reference": "grpo",
            "candidate": "bot-grpo",
            "levels": [{**level, "level": "short"}, {**level, "level": "long"}],
        },
        tmp_path / "a.png",
    )
    plot_speedup(
        {"reference": "grpo", "candidate": "bot-grpo", "levels": [{**level, "level": "medium"}]},
        tmp_path / "b.png",
    )
    assert ticks == [["short", "long"], ["medium"]]
