"""The table of runs of the real-model bench (issue 37), one row per run, from the records scripts/real_bench.py commits.

    python scripts/real_run_table.py docs/results/real-react-lr5e-5 docs/results/real-react-lr2e-4

Each folder is a committed bench folder (``runs.jsonl``, and ``metrics/<method>_seed<k>.metrics.jsonl.gz``). Columns:
the level's learning rate; steps to the target (``> N``: not reached in the run's N steps, a censored count); the
level metric at step 0, its best evaluation (with the step) and its final one; the run mean (every evaluation after
step 0); the final value of each extra metric the level reports (``-`` where a run has none: substantive_rate was
added after the react-lr5e-5 runs); the training rollouts' success (React: compiles and not trivial; math: the right
answer) over the first and last 10 steps; the share of rollouts cut at the length cap over the last 10 steps; the
rollouts drawn a step, on average (prompts x group size, once more for each extra round DAPO's dynamic sampling drew:
its steps see more rollouts than the others'); the median seconds per step, and the minutes of training steps summed
(evaluations left out; a run resumed after a stop counts each step once); the host its last stretch ran on (CPU and
torch's kernel level, from the ``machine`` the bench records since ee4fe7e; ``-`` for earlier runs; "resumed" when it
continued a checkpoint). Unfinished runs are listed with their status.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

import yaml

CLIPPED = "completions/clipped_ratio"
ROUNDS = "dynamic_sampling/rounds"  # extra generation rounds of a step (DAPO), each a whole batch


def _mean(values: list[float]) -> str:
    return f"{statistics.fmean(values):.3f}" if values else "-"


def _metrics(folder: Path, method: str, seed: int) -> list[dict[str, Any]]:
    """A run's committed metrics records ([] when the run has none yet)."""
    from botgrpo_bench.runs import read_jsonl

    return read_jsonl(folder / "metrics" / f"{method}_seed{seed}.metrics.jsonl.gz")


def rows(folder: Path) -> list[dict[str, Any]]:
    """One dict per grid run of a committed bench folder: its ``runs.jsonl`` row, its run file (``config``) and its
    metrics records."""
    out = []
    for line in (folder / "runs.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            run = json.loads(line)
            if run.get("group", "grid") == "grid":
                name = f"{run['method']}_seed{run['seed']}"
                config = folder / "metrics" / f"{name}.config.yaml"
                run["config"] = yaml.safe_load(config.read_text(encoding="utf-8")) if config.is_file() else {}
                out.append({**run, "metrics": _metrics(folder, run["method"], run["seed"])})
    return out


def table(folders: list[Path]) -> str:
    """The markdown table over every run of ``folders``, in order (folder, then method, then seed)."""
    runs = [r for folder in folders for r in rows(folder)]
    if not runs:
        return "(no runs)"
    extras = list(dict.fromkeys(k.removeprefix("final_") for r in runs for k in r if k.startswith("final_")))
    extras = [k for k in extras if k != "sampled/length"] + [k for k in extras if k == "sampled/length"]
    metric = runs[0]["metric"]
    head = (
        [
            "level",
            "lr",
            "method",
            "seed",
            "status",
            "steps to target",
            f"{metric}: start",
            "best (step)",
            "final",
        ]
        + ["run mean"]
        + [f"final {k.removeprefix('sampled/')}" for k in extras]
        + [
            "train success, steps 1-10 -> last 10",
            "clipped, last 10",
            "rollouts a step (mean)",
            "s/step (median)",
            "training min",
            "host",
        ]
    )
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in runs:
        train = [m for m in r["metrics"] if m.get("kind") == "train"]
        curve = r.get("curve") or []
        best = max(curve[1:], key=lambda p: p[1], default=None)
        lr = r["config"].get("training", {}).get("learning_rate")
        reached = r.get("steps_to_target")
        cells = [
            r["task"],
            "-" if lr is None else f"{lr:g}",
            r["method"],
            str(r["seed"]),
            r.get("status", "-"),
            str(reached) if reached is not None else (f"> {r['steps']}" if r.get("status") == "ok" else "-"),
            _num(r.get("initial")),
            f"{best[1]:.3f} ({best[0]})" if best else "-",
            _num(r.get("final")),
            _num(r.get("curve_mean")),
            *[_num(r.get(f"final_{k}"), 1 if k == "sampled/length" else 3) for k in extras],
            f"{_mean([m['success_rate'] for m in train[:10] if 'success_rate' in m])} -> "
            f"{_mean([m['success_rate'] for m in train[-10:] if 'success_rate' in m])}",
            _mean([m[CLIPPED] for m in train[-10:] if CLIPPED in m]),
            _drawn(r["config"].get("training", {}), train),
            _num(r.get("s_per_step_median"), 0),
            f"{sum(m.get('step_time', 0.0) for m in train) / 60:.0f}" if train else "-",
            _host(r.get("machine"), r.get("resumed")),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _drawn(training: dict[str, Any], train: list[dict[str, Any]]) -> str:
    """Mean rollouts drawn a step: prompts_per_step x group_size x (1 + the step's extra rounds); ``-`` without a
    run file."""
    prompts, group = training.get("prompts_per_step"), training.get("group_size")
    if not (isinstance(prompts, int) and isinstance(group, int)):
        return "-"
    extra = statistics.fmean([m.get(ROUNDS, 0.0) for m in train]) if train else 0.0
    return f"{prompts * group * (1 + extra):.0f}"


def _host(machine: Any, resumed: Any) -> str:
    """``AMD EPYC, AVX512`` (``; resumed`` when the run continued a checkpoint); ``-`` when not recorded."""
    if not isinstance(machine, dict):
        return "-"
    cpu = str(machine.get("cpu", "?")).replace("(R)", "").replace(" Processor", "").strip()
    return f"{cpu}, {machine.get('cpu_capability', '?')}" + ("; resumed" if resumed else "")


def _num(value: Any, digits: int = 3) -> str:
    return f"{value:.{digits}f}" if isinstance(value, (int, float)) else "-"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "folders", nargs="+", type=Path, help="docs/results/real-<folder> (committed records)"
    )
    args = parser.parse_args(argv)
    print(table(args.folders))
    return 0


if __name__ == "__main__":
    sys.exit(main())
