"""``botgrpo bench BENCH.yaml``: a grid of presets x seeds x tasks from one cached warm start.

A bench file names the tasks (each a run-file section plus the success metric, its target and the
warm start), the methods (algorithm presets), the seeds, an optional alpha/beta sweep of BoT-GRPO,
and the overrides ``--quick`` applies. For every task the warm start is trained once and cached
(:mod:`botgrpo_core.engine.warm_start`); every run starts from it through ``model.name_or_path``.

Fairness rules applied when a run file is derived from a task:

- outcome-only presets (``grpo``, ``dapo``, ``gspo``, ``dr-grpo``) see only the task's global signals
  (``beta = 0``, local signals removed): that is all those methods can use;
- process presets (``bot-grpo``, ``process``, ``pure``, ``token-pool``) see the same mixture, local
  signals included;
- everything else (model, data, steps, batch, learning rate, seed, evaluation) is identical.

Runs execute as separate processes (``python -m botgrpo_core.bench JOB.json``), ``parallel`` at a
time, each with ``torch.set_num_threads(threads_per_run)``: on a 2-core machine two single-threaded
runs side by side beat one two-threaded run by far. A finished run leaves ``bench_result.json`` in
its folder, so an interrupted bench resumes where it stopped. The results folder gets
``results.jsonl``, ``summary.md`` and PNG plots (:mod:`botgrpo_core.bench_report`).
"""

from __future__ import annotations

import argparse
import copy
import difflib
import hashlib
import json
import os
import platform
import subprocess
import sys
import threading
import time
import traceback
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from botgrpo_core.engine.warm_start import WarmStartSpec

RESULT_FILE = "bench_result.json"
JOB_FILE = "bench_job.json"
LOG_FILE = "bench.log"


class BenchError(ValueError):
    """A bench file problem; the message names the key path and the fix."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TaskBench(_Strict):
    """One benchmark task: a run-file section, its success metric and target, and its warm start."""

    run: dict[str, Any] = Field(
        ...,
        description="a run file (model, data, rewards, training...) without algorithm; the bench sets "
        "model.name_or_path, algorithm.preset, training.seed and training.output_dir per run",
    )
    metric: str = Field(..., description="the evaluation key that measures success (e.g. compile_rate)")
    target: float = Field(..., description="success level whose first crossing counts as 'steps to target'")
    higher_is_better: bool = Field(True, description="whether a larger metric is better")
    extra_metrics: list[str] = Field(default_factory=list, description="other evaluation keys to report")
    warm_start: WarmStartSpec = Field(default_factory=WarmStartSpec, description="the supervised warm start")
    pass_k: int = Field(
        0, ge=0, description="after training, sample k completions per prompt for Pass@k (0 = off)"
    )
    pass_k_prompts: int = Field(100, ge=1, description="held-out prompts for Pass@1/Pass@k")

    @field_validator("run")
    @classmethod
    def _no_algorithm(cls, run: dict[str, Any]) -> dict[str, Any]:
        if "algorithm" in run:
            raise ValueError("remove run.algorithm: the bench sets algorithm.preset from `methods`")
        if "rewards" not in run:
            raise ValueError("run.rewards is required (the task's signals)")
        return run


class SweepBench(_Strict):
    """An alpha/beta sweep of one preset on one task; each setting is marked for outcome dominance."""

    task: str = Field(..., description="a key of `tasks`")
    method: str = Field("bot-grpo", description="the preset swept")
    alpha: list[float] = Field([1.0], min_length=1, description="alpha values (grid with beta)")
    beta: list[float] = Field(..., min_length=1, description="beta values (grid with alpha)")
    seeds: list[int] | None = Field(None, description="seeds (default: the bench's seeds)")


class BenchFile(_Strict):
    """A whole bench file (see benchmarks/bench_full.yaml)."""

    name: str = Field("bench", description="shown in the summary")
    output_dir: Path = Field(Path("runs/bench"), description="results folder (overridden by --output)")
    cache_dir: Path = Field(Path("runs/bench-cache"), description="cached warm-start checkpoints")
    parallel: int = Field(2, ge=1, description="runs side by side (one per core)")
    threads_per_run: int = Field(1, ge=1, description="torch threads of each run")
    seeds: list[int] = Field([0, 1, 2], min_length=1, description="training seeds of every method")
    methods: list[str] = Field(
        ...,
        min_length=1,
        description="algorithm presets compared; 'preset:key=value,...' is a variant with algorithm overrides",
    )
    reference: str = Field("grpo", description="the baseline in ratios (steps_ref / steps_candidate)")
    candidate: str = Field("bot-grpo", description="the method the ratios are about")
    tasks: dict[str, TaskBench] = Field(..., min_length=1, description="task name -> task section")
    include: list[str] | None = Field(
        None, description="run only these tasks (default: all); e.g. --set include=[react]"
    )
    sweep: SweepBench | None = Field(None, description="alpha/beta sweep (null = none)")
    quick: dict[str, Any] = Field(
        default_factory=dict, description="dotted-key overrides applied by --quick (e.g. seeds: [0])"
    )
    run_timeout_s: float = Field(3600.0, gt=0, description="a run over this wall time is killed and reported")
    signal_quality_samples: int = Field(
        100,
        ge=0,
        description="warm-policy samples on which the local signals are checked against the task (0 = off)",
    )

    @field_validator("methods")
    @classmethod
    def _known_methods(cls, methods: list[str]) -> list[str]:
        for m in methods:
            _check_preset(m, "methods")
        if len(set(methods)) != len(methods):
            raise ValueError("a method is listed twice; list each preset once")
        return methods

    @model_validator(mode="after")
    def _references(self) -> BenchFile:
        if self.include is not None:
            unknown = [t for t in self.include if t not in self.tasks]
            if unknown:
                raise ValueError(
                    f"include: unknown task(s) {', '.join(unknown)}; tasks are {', '.join(self.tasks)}"
                )
            self.tasks = {k: v for k, v in self.tasks.items() if k in self.include}
            if self.sweep is not None and self.sweep.task not in self.tasks:
                self.sweep = None
        for key in ("reference", "candidate"):
            _check_preset(getattr(self, key), key)
        if self.sweep is not None:
            if self.sweep.task not in self.tasks:
                raise ValueError(
                    f"sweep.task {self.sweep.task!r} is not one of tasks: {', '.join(self.tasks)}"
                )
            _check_preset(self.sweep.method, "sweep.method")
        return self


def parse_method(method: str) -> tuple[str, dict[str, Any]]:
    """``"bot-grpo:aggregation=token,eps_high=0.28"`` -> ``("bot-grpo", {"aggregation": "token", ...})``.

    A method is a preset name, optionally with ``algorithm`` overrides (a variant, e.g. to check the
    loss aggregation); values are read as YAML scalars.
    """
    name, _, rest = method.partition(":")
    overrides: dict[str, Any] = {}
    for item in filter(None, (p.strip() for p in rest.split(","))):
        key, sep, raw = item.partition("=")
        if not sep:
            raise ValueError(f"method {method!r}: expected preset:key=value[,key=value], got {item!r}")
        overrides[key.strip()] = yaml.safe_load(raw)
    return name.strip(), overrides


def _folder(method: str) -> str:
    """A folder name for a method (variants' ``:`` and ``,`` become ``+``)."""
    return method.replace(":", "+").replace(",", "+")


def _check_preset(method: str, where: str) -> None:
    from botgrpo_core.config.models import AlgorithmConfig
    from botgrpo_core.config.presets import PRESETS

    name, overrides = parse_method(method)
    if name not in PRESETS:
        close = difflib.get_close_matches(name, list(PRESETS), n=1)
        hint = f" did you mean {close[0]!r}?" if close else ""
        raise ValueError(f"{where}: unknown preset {name!r};{hint} choose from {', '.join(PRESETS)}")
    try:
        AlgorithmConfig.model_validate({"preset": name, **overrides})
    except ValidationError as exc:
        raise ValueError(f"{where}: method {method!r} has invalid algorithm overrides: {exc}") from None


# --- loading ------------------------------------------------------------------------------------------------------
def set_dotted(data: dict[str, Any], key: str, value: Any, *, where: str) -> None:
    """Set ``a.b.c`` (list items by index) in a nested mapping, creating mappings on the way."""
    parts = key.strip().split(".")
    node: Any = data
    for part in parts[:-1]:
        if isinstance(node, list):
            node = node[int(part)]
            continue
        if not isinstance(node, dict):
            raise BenchError(f"{where}: {key!r}: {part!r} is not a section")
        node = node.setdefault(part, {})
    if isinstance(node, list):
        node[int(parts[-1])] = value
    elif isinstance(node, dict):
        node[parts[-1]] = value
    else:
        raise BenchError(f"{where}: {key!r}: the parent of {parts[-1]!r} is not a section")


def _model_at(loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The bench-file model that holds the keys under ``loc`` (for 'did you mean' hints)."""
    model: type[BaseModel] | None = BenchFile
    rest = list(loc)
    while rest and model is not None:
        part = rest.pop(0)
        if model is BenchFile and part == "tasks":
            model = TaskBench
            if rest:
                rest.pop(0)  # the task's name
            continue
        info = model.model_fields.get(str(part))
        ann = info.annotation if info else None
        model = next(
            (
                a
                for a in (ann, *getattr(ann, "__args__", ()))
                if isinstance(a, type) and issubclass(a, BaseModel)
            ),
            None,
        )
    return model


def _format_errors(exc: ValidationError, source: str) -> str:
    lines = [f"{source}: invalid bench file"]
    for err in exc.errors():
        path = ".".join(str(p) for p in err["loc"]) or "(top level)"
        if err["type"] == "extra_forbidden":
            parent = _model_at(tuple(err["loc"][:-1]))
            valid = sorted(getattr(parent, "model_fields", {})) if parent is not None else []
            close = difflib.get_close_matches(str(err["loc"][-1]), valid, n=1)
            fix = f"did you mean {close[0]!r}?" if close else "remove it"
            lines.append(
                f"  - {path}: unknown key; {fix}" + (f" Valid keys: {', '.join(valid)}." if valid else "")
            )
        elif err["type"] == "missing":
            lines.append(f"  - {path}: required key is missing; add it (see benchmarks/bench_full.yaml)")
        else:
            lines.append(f"  - {path}: {err['msg']}")
    return "\n".join(lines)


def load_bench(
    path: str | os.PathLike[str], *, quick: bool = False, overrides: Sequence[str] = ()
) -> BenchFile:
    """Read a bench file, apply its ``quick`` overrides (with ``quick``) then ``--set`` ones, validate."""
    source = str(path)
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise BenchError(f"{source}: cannot read the bench file ({exc.strerror}); check the path") from exc
    except yaml.YAMLError as exc:
        raise BenchError(f"{source}: YAML syntax error: {exc}") from exc
    if not isinstance(data, dict):
        raise BenchError(f"{source}: a bench file is a mapping (name, methods, seeds, tasks, ...)")
    if quick:
        q = data.get("quick") or {}
        if not isinstance(q, dict):
            raise BenchError(f"{source}: quick must be a mapping of dotted keys to values")
        for key, value in q.items():
            set_dotted(data, key, copy.deepcopy(value), where=f"{source}: quick")
    for assignment in overrides:
        key, sep, raw = assignment.partition("=")
        if not sep or not key.strip():
            raise BenchError(f"--set {assignment!r}: expected key.path=value, e.g. seeds=[0]")
        set_dotted(data, key, yaml.safe_load(raw), where=f"--set {assignment!r}")
    try:
        return BenchFile.model_validate(data)
    except ValidationError as exc:
        raise BenchError(_format_errors(exc, source)) from None


# --- planning -----------------------------------------------------------------------------------------------------
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
        ab = f" a={self.alpha:g} b={self.beta:g}" if self.group == "sweep" else ""
        return f"{self.task}/{self.method}/seed{self.seed}{ab}"

    @property
    def fingerprint(self) -> str:
        return hashlib.sha256(json.dumps(self.run, sort_keys=True, default=str).encode()).hexdigest()[:16]


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
    """The run file of one (task, method, seed): the task's section with the fairness rules applied."""
    from botgrpo_core.config.presets import PRESETS

    run = copy.deepcopy(task.run)
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
    """Every run of the grid and the sweep, ordered so each seed's candidate and reference run side by side."""
    from botgrpo_core.config.checks import check_rewards, outcome_dominance, signal_bounds
    from botgrpo_core.config.loading import parse_config

    names = sorted({s["name"] for t in bench.tasks.values() for s in t.run["rewards"]["signals"]})
    kinds = signal_kinds(names)
    head = [m for m in (bench.candidate, bench.reference) if m in bench.methods]
    order = head + [m for m in bench.methods if m not in head]
    jobs: list[Job] = []
    for task_name, task in bench.tasks.items():
        for seed in bench.seeds:
            for method in order:
                run_dir = out_dir / "runs" / task_name / _folder(method) / f"seed{seed}"
                run = derive_run(
                    task,
                    method=method,
                    seed=seed,
                    warm_path=warm.get(task_name),
                    run_dir=run_dir,
                    threads=bench.threads_per_run,
                    kinds=kinds,
                )
                jobs.append(Job(task_name, method, seed, "grid", run, run_dir))
    if bench.sweep is not None:
        sw = bench.sweep
        task = bench.tasks[sw.task]
        for alpha in sw.alpha:
            for beta in sw.beta:
                for seed in sw.seeds or bench.seeds:
                    rewards = task.run["rewards"]
                    same_as_grid = (
                        sw.method in bench.methods
                        and seed in bench.seeds
                        and alpha == rewards.get("alpha", 1.0)
                        and beta == rewards.get("beta", 0.5)
                    )
                    # a sweep point equal to a grid run shares its folder (run once, reported in both)
                    run_dir = (
                        out_dir / "runs" / sw.task / _folder(sw.method) / f"seed{seed}"
                        if same_as_grid
                        else out_dir
                        / "runs"
                        / sw.task
                        / f"sweep-{_folder(sw.method)}-a{alpha:g}-b{beta:g}"
                        / f"seed{seed}"
                    )
                    run = derive_run(
                        task,
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
    # Validate every run file before anything trains; compute the sweep's outcome-dominance marks.
    for job in jobs:
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
    return jobs


# --- execution --------------------------------------------------------------------------------------------------
def _runner_env(threads: int) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "HF_HUB_OFFLINE": "1",
            "HF_HUB_DISABLE_TELEMETRY": "1",
            "TOKENIZERS_PARALLELISM": "false",
            "OMP_NUM_THREADS": str(threads),
            "MKL_NUM_THREADS": str(threads),
            "PYTHONUNBUFFERED": "1",
        }
    )
    return env


def _done(job: Job) -> dict[str, Any] | None:
    """The saved result of a finished run with the same run file, else None."""
    path = job.run_dir / RESULT_FILE
    if not path.is_file():
        return None
    try:
        result = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    return result if result.get("status") == "ok" and result.get("fingerprint") == job.fingerprint else None


def execute(
    jobs: Sequence[Job],
    *,
    parallel: int,
    threads: int,
    timeout_s: float,
    job_extra: Callable[[Job], dict[str, Any]],
    log: Callable[[str], None] = print,
    together: Callable[[Job, Job], bool] | None = None,
) -> list[dict[str, Any]]:
    """Run the jobs ``parallel`` at a time, each in its own process; returns their results in order.

    :param together: ``together(a, b)`` for consecutive jobs that must start at the same moment (the
        candidate and the reference of one seed: their step times are compared, so they share the
        machine with each other rather than with whatever else happens to run).
    """
    results: list[dict[str, Any] | None] = [None] * len(jobs)
    todo = []
    first: dict[Path, int] = {}  # run folder -> the job that runs it (sweep points can share grid runs)
    for i, job in enumerate(jobs):
        if job.run_dir in first:
            continue
        first[job.run_dir] = i
        saved = _done(job)
        if saved is not None:
            results[i] = {**saved, "reused": True}
        else:
            todo.append(i)
    if len(todo) < len(first):
        log(f"bench: {len(first) - len(todo)} of {len(first)} runs already finished (reused)")
    lock = threading.Lock()
    started = time.perf_counter()
    finished = [0]

    def one(i: int) -> None:
        job = jobs[i]
        job.run_dir.mkdir(parents=True, exist_ok=True)
        spec = {
            "label": job.label,
            "run": job.run,
            "fingerprint": job.fingerprint,
            "threads": threads,
            **job_extra(job),
        }
        (job.run_dir / JOB_FILE).write_text(json.dumps(spec, indent=2, default=str) + "\n", encoding="utf-8")
        (job.run_dir / RESULT_FILE).unlink(missing_ok=True)
        t0 = time.perf_counter()
        with open(job.run_dir / LOG_FILE, "w", encoding="utf-8") as logf:
            try:
                proc = subprocess.run(
                    [sys.executable, "-m", "botgrpo_core.bench", str(job.run_dir / JOB_FILE)],
                    stdout=logf,
                    stderr=subprocess.STDOUT,
                    env=_runner_env(threads),
                    timeout=timeout_s,
                    check=False,
                )
                code = proc.returncode
            except subprocess.TimeoutExpired:
                code = -9
        result: dict[str, Any]
        try:
            result = json.loads((job.run_dir / RESULT_FILE).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            tail = (job.run_dir / LOG_FILE).read_text(encoding="utf-8", errors="replace")[-2000:]
            why = f"timed out after {timeout_s:.0f} s" if code == -9 else f"exit code {code}"
            result = {"status": "failed", "error": f"run process {why}; log tail:\n{tail}"}
        result.setdefault("wall_s", time.perf_counter() - t0)
        results[i] = result
        with lock:
            finished[0] += 1
            elapsed = time.perf_counter() - started
            eta = elapsed / finished[0] * (len(todo) - finished[0])
            status = (
                "ok"
                if result.get("status") == "ok"
                else f"FAILED ({result.get('error', '?').splitlines()[0]})"
            )
            log(
                f"[{finished[0]}/{len(todo)}] {job.label}: {status} in {result['wall_s']:.0f} s "
                f"(elapsed {elapsed / 60:.1f} min, ~{eta / 60:.1f} min left)"
            )

    # Units of jobs that start together; the dispatcher takes one slot per job before starting a unit.
    units: list[list[int]] = []
    for i in todo:
        if (
            units
            and together is not None
            and len(units[-1]) < parallel
            and together(jobs[units[-1][-1]], jobs[i])
        ):
            units[-1].append(i)
        else:
            units.append([i])
    slots = threading.Semaphore(max(1, parallel))
    workers: list[threading.Thread] = []

    errors: list[BaseException] = []

    def run_then_release(i: int) -> None:
        try:
            one(i)
        except BaseException as exc:  # re-raised below: a bug must not pass as a run that did not run
            errors.append(exc)
        finally:
            slots.release()

    for unit in units:
        for _ in unit:
            slots.acquire()
        for i in unit:
            worker = threading.Thread(target=run_then_release, args=(i,), daemon=True)
            worker.start()
            workers.append(worker)
    for worker in workers:
        worker.join()
    if errors:
        raise errors[0]
    for i, job in enumerate(jobs):
        if results[i] is None:
            results[i] = results[first[job.run_dir]]
    return [r if r is not None else {"status": "failed", "error": "not run"} for r in results]


# --- the run process ---------------------------------------------------------------------------------------------
def _job_main(job_file: str) -> int:
    """Entry point of one run process: train, then optionally Pass@k; writes ``bench_result.json``."""
    spec = json.loads(Path(job_file).read_text(encoding="utf-8"))
    run_dir = Path(job_file).parent
    t0 = time.perf_counter()
    result: dict[str, Any] = {"label": spec["label"], "fingerprint": spec["fingerprint"]}
    try:
        import torch

        torch.set_num_threads(int(spec.get("threads", 1)))
        from botgrpo_core.config.loading import parse_config
        from botgrpo_core.engine.run import run_training

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            config = parse_config(spec["run"], source=spec["label"])
        summary = run_training(config)
        result["train_s"] = time.perf_counter() - t0
        result["summary"] = _jsonable(summary)
        if spec.get("pass_k"):
            from botgrpo_core.bench_report import pass_at_k_eval

            result["pass_k"] = pass_at_k_eval(
                config, run_dir, k=int(spec["pass_k"]), prompts=int(spec.get("pass_k_prompts", 100))
            )
        result["status"] = "ok"
    except Exception as exc:  # the bench reports a failed run and goes on with the others
        result["status"] = "failed"
        result["error"] = f"{type(exc).__name__}: {exc}"
        result["traceback"] = traceback.format_exc()
        print(result["traceback"], file=sys.stderr)
    result["wall_s"] = time.perf_counter() - t0
    (run_dir / RESULT_FILE).write_text(json.dumps(result, indent=2, default=str) + "\n", encoding="utf-8")
    return 0 if result["status"] == "ok" else 1


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


# --- the command -----------------------------------------------------------------------------------------------------
def machine_note() -> str:
    """One line describing this machine (for the results' provenance)."""
    import torch

    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{os.cpu_count()} CPU cores ({cpu}), Python {platform.python_version()}, torch {torch.__version__}, "
        f"{platform.system()} {platform.release()}"
    )


def warm_starts(bench: BenchFile, log: Callable[[str], None]) -> dict[str, Path | None]:
    """The warm-start checkpoint of every task (trained in parallel processes when missing)."""
    from botgrpo_core.config.sections import TinyModelSpec
    from botgrpo_core.engine.warm_start import cached_warm_start, warm_start_dir

    out: dict[str, Path | None] = {}
    todo: list[str] = []
    for name, task in bench.tasks.items():
        model = task.run.get("model", {})
        if model.get("name_or_path", "tiny") != "tiny":
            out[name] = None  # a real model: no supervised warm start, the runs load it as given
            continue
        data = task.run.get("data", {})
        tiny = TinyModelSpec.model_validate(model.get("tiny", {}))
        task_name = data.get("task", "arithmetic")
        path = warm_start_dir(
            task_name, data.get("task_params", {}) or {}, tiny, task.warm_start, bench.cache_dir
        )
        out[name] = path.resolve()
        if not cached_warm_start(path, task_name):  # missing or stale: the child (re)trains it
            todo.append(name)
        else:
            log(f"warm start [{name}]: cached at {out[name]}")
    if todo:
        bench.cache_dir.mkdir(parents=True, exist_ok=True)
        threads = bench.threads_per_run

        def one(name: str) -> None:
            task = bench.tasks[name]
            cmd = [
                sys.executable,
                "-c",
                "import sys, json; from botgrpo_core.bench import _warm_main; sys.exit(_warm_main(sys.argv[1]))",
                json.dumps(
                    {
                        "task": task.run.get("data", {}).get("task", "arithmetic"),
                        "task_params": task.run.get("data", {}).get("task_params", {}) or {},
                        "tiny": task.run.get("model", {}).get("tiny", {}),
                        "warm_start": task.warm_start.model_dump(),
                        "cache_dir": str(bench.cache_dir),
                        "max_new_tokens": task.run.get("training", {}).get("max_new_tokens", 40),
                        "threads": threads,
                    }
                ),
            ]
            log(f"warm start [{name}]: training ({task.warm_start.steps} supervised steps)")
            t0 = time.perf_counter()
            # progress lines (stdout) pass through; stderr is kept for the error message
            proc = subprocess.run(
                cmd, env=_runner_env(threads), stderr=subprocess.PIPE, text=True, check=False
            )
            if proc.returncode != 0 or not (out[name] / "warm_start.json").is_file():  # type: ignore[operator]
                raise BenchError(
                    f"tasks.{name}.warm_start: the supervised warm start failed (exit {proc.returncode}):\n"
                    f"{proc.stderr[-3000:]}"
                )
            meta = json.loads((out[name] / "warm_start.json").read_text())  # type: ignore[operator]
            log(f"warm start [{name}]: done in {time.perf_counter() - t0:.0f} s; held-out {meta['eval']}")

        with ThreadPoolExecutor(max_workers=max(1, min(bench.parallel, len(todo)))) as pool:
            list(pool.map(one, todo))
    return out


def _warm_main(raw: str) -> int:
    import torch

    from botgrpo_core.config.sections import TinyModelSpec
    from botgrpo_core.engine.warm_start import ensure_warm_start

    spec = json.loads(raw)
    torch.set_num_threads(int(spec["threads"]))
    ensure_warm_start(
        spec["task"],
        spec["task_params"],
        TinyModelSpec.model_validate(spec["tiny"]),
        WarmStartSpec.model_validate(spec["warm_start"]),
        Path(spec["cache_dir"]),
        max_new_tokens=int(spec["max_new_tokens"]),
    )
    return 0


def run_bench(
    bench: BenchFile, out_dir: Path, *, command: str, quick: bool, log: Callable[[str], None] = print
) -> Path:
    """Warm starts, the grid, the sweep, then the report; returns the results folder."""
    from botgrpo_core import bench_report

    out_dir.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    warm = warm_starts(bench, log)
    warm_s = time.perf_counter() - t0
    jobs = plan(bench, out_dir, warm)
    n_grid = sum(j.group == "grid" for j in jobs)
    log(
        f"bench {bench.name}: {n_grid} grid runs ({len(bench.tasks)} tasks x {len(bench.methods)} methods x "
        f"{len(bench.seeds)} seeds) + {len(jobs) - n_grid} sweep runs, {bench.parallel} at a time -> {out_dir}"
    )

    def extra(job: Job) -> dict[str, Any]:
        task = bench.tasks[job.task]
        return {"pass_k": task.pass_k if job.group == "grid" else 0, "pass_k_prompts": task.pass_k_prompts}

    t1 = time.perf_counter()
    results = execute(
        jobs,
        parallel=bench.parallel,
        threads=bench.threads_per_run,
        timeout_s=bench.run_timeout_s,
        job_extra=extra,
        log=log,
        together=lambda a, b: (
            a.group == b.group == "grid"
            and (a.task, a.seed) == (b.task, b.seed)
            and {a.method, b.method} == {bench.candidate, bench.reference}
        ),
    )
    runs_s = time.perf_counter() - t1
    quality = signal_quality_all(bench, warm, log) if bench.signal_quality_samples else {}
    previous = out_dir / "meta.json"
    old_meta = json.loads(previous.read_text(encoding="utf-8")) if previous.is_file() else {}
    history = old_meta.get("history") or (
        # a report written before invocations were recorded: keep what it knew
        [{k: old_meta.get(k) for k in ("date", "command", "runs_s", "load_average")} | {"runs_started": None}]
        if "runs_s" in old_meta
        else []
    )
    # one run per folder (a sweep point equal to a grid run shares its folder), failed ones included
    ran = len({j.run_dir for j, r in zip(jobs, results, strict=True) if not r.get("reused")})
    history.append(
        {
            "date": time.strftime("%Y-%m-%d %H:%M %Z"),
            "command": command,
            "runs_s": runs_s,
            "runs_started": ran,
            "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None,
        }
    )
    meta = {
        "history": history,
        "signal_quality": quality,
        "bench": bench.name,
        "command": command,
        "quick": quick,
        "machine": machine_note(),
        "date": time.strftime("%Y-%m-%d %H:%M %Z"),
        "warm_start_s": warm_s,
        "runs_s": runs_s,
        "total_s": time.perf_counter() - t0,
        "parallel": bench.parallel,
        "threads_per_run": bench.threads_per_run,
        "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None,
        "warm_starts": {k: str(v) if v else None for k, v in warm.items()},
    }
    bench_report.write_report(bench, jobs, results, out_dir, meta)
    failed = [j.label for j, r in zip(jobs, results, strict=True) if r.get("status") != "ok"]
    log(f"bench {bench.name}: done in {meta['total_s'] / 60:.1f} min -> {out_dir / 'summary.md'}")
    if failed:
        log(f"bench {bench.name}: {len(failed)} run(s) failed: {', '.join(failed)} (see their bench.log)")
    return out_dir


def signal_quality_all(
    bench: BenchFile, warm: dict[str, Path | None], log: Callable[[str], None]
) -> dict[str, Any]:
    """:func:`~botgrpo_core.bench_report.signal_quality` of every task's local signals on its warm policy."""
    from botgrpo_core.bench_report import signal_quality

    out: dict[str, Any] = {}
    for name, task in bench.tasks.items():
        path = warm.get(name)
        if path is None:
            continue
        data = task.run.get("data", {})
        try:
            out[name] = signal_quality(
                data.get("task", "arithmetic"),
                data.get("task_params", {}) or {},
                task.run["rewards"]["signals"],
                path,
                n=bench.signal_quality_samples,
            )
        except Exception as exc:  # a diagnostic: report it, never lose the bench over it
            out[name] = {"error": f"{type(exc).__name__}: {exc}"}
        log(f"signal quality [{name}]: {out[name]}")
    return out


def run_bench_command(args: argparse.Namespace) -> int:
    """``botgrpo bench BENCH.yaml [--quick] [--output DIR] [--set k=v ...]``."""
    try:
        bench = load_bench(args.bench_file, quick=bool(args.quick), overrides=args.set or [])
    except BenchError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    out_dir = Path(args.output) if args.output else bench.output_dir
    if args.quick and not args.output:
        out_dir = out_dir.with_name(out_dir.name + "-quick")
    command = "botgrpo bench " + " ".join(
        [str(args.bench_file)]
        + (["--quick"] if args.quick else [])
        + ([f"--output {args.output}"] if args.output else [])
        + [f"--set {s}" for s in args.set or []]
    )
    try:
        run_bench(bench, out_dir, command=command, quick=bool(args.quick))
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    results = [json.loads(line) for line in (out_dir / "runs.jsonl").read_text().splitlines() if line.strip()]
    return 0 if all(r.get("status") == "ok" for r in results) else 1


if __name__ == "__main__":
    sys.exit(_job_main(sys.argv[1]))
