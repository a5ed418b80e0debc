"""Planning a bench: every run of the grid and the sweep, each a run file derived from its task.

Fairness rules applied when a run file is derived from a task (:func:`derive_run`):

- outcome-only presets (``grpo``, ``dapo``, ``gspo``, ``dr-grpo``) see only the task's global signals
  (``beta = 0``, local signals removed): that is all those methods can use;
- process presets (``bot-grpo``, ``process``, ``pure``, ``token-pool``) see the same mixture, local
  signals included;
- everything else (model, data, steps, batch, learning rate, seed, evaluation) is identical, except the
  keys a task's ``method_overrides`` gives one method (a level whose methods run at their own tuned
  settings, e.g. each method's learning rate from a sweep; the report's records carry them).
"""

from __future__ import annotations

import copy
import hashlib
import json
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from botgrpo_bench.config import BenchError, BenchFile, TaskBench, method_folder, parse_method
from botgrpo_core.config.loading import set_key


@dataclass
class Job:
    """One training run of the grid or the sweep."""

    task: str
    method: str
    seed: int
    group: str  # "grid" or "sweep"
    run: dict[str, Any]  # the run file mapping
    run_dir: Path
    alpha: float | None = None
    beta: float | None = None
    dominance: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return run_label(self.task, self.method, self.seed, self.group, self.alpha, self.beta)

    @property
    def fingerprint(self) -> str:
        return hashlib.sha256(json.dumps(self.run, sort_keys=True, default=str).encode()).hexdigest()[:16]


def run_label(
    task: str,
    method: str,
    seed: int,
    group: str = "grid",
    alpha: float | None = None,
    beta: float | None = None,
) -> str:
    """A run's name in the logs and its key in a report: ``task/method/seedN``, a sweep point's with
    `` a=ALPHA b=BETA`` (the row of ``runs.jsonl`` holds all of them)."""
    ab = f" a={alpha:g} b={beta:g}" if group == "sweep" else ""
    return f"{task}/{method}/seed{seed}{ab}"


def signal_kinds(names: Sequence[str]) -> dict[str, str]:
    """``name -> "global" | "local"`` from the installed plugins (imports only their entry points)."""
    from botgrpo_core.signals.manager import get_plugin_manager

    manager = get_plugin_manager()
    return {n: manager.get_signal(n).spec.kind for n in names}


def derive_run(
    task: TaskBench,
    *,
    method: str,
    seed: int,
    warm_path: Path | None,
    run_dir: Path,
    threads: int,
    kinds: dict[str, str],
    alpha: float | None = None,
    beta: float | None = None,
) -> dict[str, Any]:
    """The run file of one (task, method, seed): the task's section with its ``method_overrides`` for this
    method, then the fairness rules applied."""
    from botgrpo_core.config.presets import PRESETS

    run = copy.deepcopy(task.run)
    for key, value in task.method_overrides.get(method, {}).items():
        set_key(run, key, copy.deepcopy(value), where=f"method_overrides.{method}: {key!r}")
    run.setdefault("model", {})
    if warm_path is not None:
        run["model"]["name_or_path"] = str(warm_path)
    preset, overrides = parse_method(method)
    run["algorithm"] = {"preset": preset, **overrides}
    rewards = run["rewards"]
    if not PRESETS[preset].uses_local_signals:
        rewards["signals"] = [s for s in rewards["signals"] if kinds[s["name"]] == "global"]
        rewards["beta"] = 0.0
    if alpha is not None:
        rewards["alpha"] = alpha
    if beta is not None:
        rewards["beta"] = beta
    training = run.setdefault("training", {})
    training["seed"] = seed
    training["output_dir"] = str(run_dir)
    training["num_threads"] = threads
    return run


def plan(bench: BenchFile, out_dir: Path, warm: dict[str, Path | None]) -> list[Job]:
    """Every run of the grid and the sweep, ordered so each seed's candidate and reference run side by side;
    each run file validated before anything trains, sweep points marked for outcome dominance."""
    names = sorted({s["name"] for t in bench.tasks.values() for s in t.run["rewards"]["signals"]})
    kinds = signal_kinds(names)
    jobs = grid_jobs(bench, out_dir, warm, kinds) + sweep_jobs(bench, out_dir, warm, kinds)
    for job in jobs:
        validate_job(bench, job)
    return jobs


def grid_runs(bench: BenchFile, out_dir: Path) -> list[tuple[str, str, int, Path]]:
    """``(task, method, seed, run folder)`` of every grid run, the candidate and the reference first within
    each seed (the folders alone: no warm start or run file needed)."""
    head = [m for m in (bench.candidate, bench.reference) if m in bench.methods]
    order = head + [m for m in bench.methods if m not in head]
    return [
        (task_name, method, seed, out_dir / "runs" / task_name / method_folder(method) / f"seed{seed}")
        for task_name in bench.tasks
        for seed in bench.seeds
        for method in order
    ]


def sweep_runs(bench: BenchFile, out_dir: Path) -> list[tuple[float, float, int, Path]]:
    """``(alpha, beta, seed, run folder)`` of every sweep point; a point equal to a grid run shares its
    folder (run once)."""
    if bench.sweep is None:
        return []
    sw = bench.sweep
    rewards = bench.tasks[sw.task].run["rewards"]
    points = []
    for alpha in sw.alpha:
        for beta in sw.beta:
            for seed in sw.seeds or bench.seeds:
                same_as_grid = (
                    sw.method in bench.methods
                    and seed in bench.seeds
                    and alpha == rewards.get("alpha", 1.0)
                    and beta == rewards.get("beta", 0.5)
                )
                folder = (
                    method_folder(sw.method)
                    if same_as_grid
                    else f"sweep-{method_folder(sw.method)}-a{alpha:g}-b{beta:g}"
                )
                points.append((alpha, beta, seed, out_dir / "runs" / sw.task / folder / f"seed{seed}"))
    return points


def planned_labels(bench: BenchFile, out_dir: Path) -> list[str]:
    """The :func:`run_label` of every grid run and sweep point (before any warm start: the runs the report
    will have)."""
    labels = [run_label(task, method, seed) for task, method, seed, _ in grid_runs(bench, out_dir)]
    sw = bench.sweep
    if sw is not None:
        labels += [
            run_label(sw.task, sw.method, seed, "sweep", alpha, beta)
            for alpha, beta, seed, _ in sweep_runs(bench, out_dir)
        ]
    return labels


def grid_jobs(
    bench: BenchFile, out_dir: Path, warm: dict[str, Path | None], kinds: dict[str, str]
) -> list[Job]:
    """Tasks x seeds x methods (:func:`grid_runs`), the candidate and the reference first within each seed."""
    return [
        Job(
            task_name,
            method,
            seed,
            "grid",
            derive_run(
                bench.tasks[task_name],
                method=method,
                seed=seed,
                warm_path=warm.get(task_name),
                run_dir=run_dir,
                threads=bench.threads_per_run,
                kinds=kinds,
            ),
            run_dir,
        )
        for task_name, method, seed, run_dir in grid_runs(bench, out_dir)
    ]


def sweep_jobs(
    bench: BenchFile, out_dir: Path, warm: dict[str, Path | None], kinds: dict[str, str]
) -> list[Job]:
    """The sweep's alpha x beta x seeds (:func:`sweep_runs`)."""
    if bench.sweep is None:
        return []
    sw = bench.sweep
    jobs = []
    for alpha, beta, seed, run_dir in sweep_runs(bench, out_dir):
        run = derive_run(
            bench.tasks[sw.task],
            method=sw.method,
            seed=seed,
            warm_path=warm.get(sw.task),
            run_dir=run_dir,
            threads=bench.threads_per_run,
            kinds=kinds,
            alpha=alpha,
            beta=beta,
        )
        jobs.append(Job(sw.task, sw.method, seed, "sweep", run, run_dir, alpha, beta))
    return jobs


def validate_job(bench: BenchFile, job: Job) -> None:
    """Parse the job's run file as ``botgrpo train`` would; a sweep job gets its outcome-dominance marks."""
    from botgrpo_core.config.checks import check_rewards, outcome_dominance, signal_bounds
    from botgrpo_core.config.loading import parse_config

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the sweep crosses outcome dominance on purpose
        try:
            config = parse_config(job.run, source=f"bench {bench.name}: {job.label}", check_signals=True)
        except ValueError as exc:
            raise BenchError(
                f"tasks.{job.task}.run gives an invalid run file for {job.label}:\n{exc}"
            ) from None
        check_rewards(config.rewards)
    if job.group == "sweep":
        job.dominance = outcome_dominance(config.rewards, signal_bounds(config.rewards))
