"""Running a bench's jobs: each in its own process (:mod:`botgrpo_bench.job`), ``parallel`` at a time.

Each process runs with ``torch.set_num_threads(threads_per_run)``: on a 2-core machine two
single-threaded runs side by side beat one two-threaded run by far. A finished run leaves
``bench_result.json`` in its folder, so an interrupted bench resumes where it stopped; a run stopped
midway resumes from its last complete ``checkpoint-N`` (``training.save_every``) when its run file is
unchanged (same fingerprint), else it starts again.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from botgrpo_bench.plan import Job

RESULT_FILE = "bench_result.json"
JOB_FILE = "bench_job.json"
LOG_FILE = "bench.log"


def runner_env(threads: int) -> dict[str, str]:
    """The environment of a run process: offline hub, ``threads`` BLAS threads, unbuffered output."""
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


def saved_result(job: Job) -> dict[str, Any] | None:
    """The saved result of a finished run with the same run file, else None."""
    path = job.run_dir / RESULT_FILE
    if not path.is_file():
        return None
    try:
        result = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    return result if result.get("status") == "ok" and result.get("fingerprint") == job.fingerprint else None


def resumable(job: Job) -> bool:
    """Whether ``job``'s folder holds a run of the same run file stopped midway, with a complete
    ``checkpoint-N`` to continue from (the trainer checks the signal files when it resumes)."""
    try:
        before = json.loads((job.run_dir / JOB_FILE).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return False
    if before.get("fingerprint") != job.fingerprint:
        return False
    from botgrpo_core.engine.outputs import last_checkpoint
    from botgrpo_core.engine.setup import TrainingSetupError

    try:
        last_checkpoint(job.run_dir, lambda _: None)  # a complete one (torn ones are skipped)
    except TrainingSetupError:
        return False
    return True


def run_job(job: Job, *, threads: int, timeout_s: float, extra: dict[str, Any]) -> dict[str, Any]:
    """Run one job in a fresh process (its output in ``bench.log``, appended to when it resumes); returns
    its result."""
    job.run_dir.mkdir(parents=True, exist_ok=True)
    resume = resumable(job)
    spec = {"label": job.label, "run": job.run, "fingerprint": job.fingerprint, "threads": threads, **extra}
    spec["resume"] = resume
    (job.run_dir / JOB_FILE).write_text(json.dumps(spec, indent=2, default=str) + "\n", encoding="utf-8")
    (job.run_dir / RESULT_FILE).unlink(missing_ok=True)
    t0 = time.perf_counter()
    with open(job.run_dir / LOG_FILE, "a" if resume else "w", encoding="utf-8") as logf:
        try:
            proc = subprocess.run(
                [sys.executable, "-m", "botgrpo_bench.job", str(job.run_dir / JOB_FILE)],
                stdout=logf,
                stderr=subprocess.STDOUT,
                env=runner_env(threads),
                timeout=timeout_s,
                check=False,
            )
            code: int | None = proc.returncode
        except subprocess.TimeoutExpired:
            code = None
    result: dict[str, Any]
    try:
        result = json.loads((job.run_dir / RESULT_FILE).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        tail = (job.run_dir / LOG_FILE).read_text(encoding="utf-8", errors="replace")[-2000:]
        if code is None:
            why = f"timed out after {timeout_s:.0f} s (run_timeout_s)"
        elif code < 0:
            name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else str(-code)
            hint = (
                ": out of memory? (the kernel's OOM killer sends it; see dmesg)"
                if -code == signal.SIGKILL
                else ""
            )
            why = f"killed by {name}{hint}"
        else:
            why = f"exit code {code}"
        result = {"status": "failed", "error": f"run process {why}; log tail:\n{tail}"}
    result.setdefault("wall_s", time.perf_counter() - t0)
    return result


class _Progress:
    """One log line per finished run, with the elapsed time and an estimate of what is left."""

    def __init__(self, total: int, log: Callable[[str], None]) -> None:
        self.total, self.log, self.finished = total, log, 0
        self.started = time.perf_counter()
        self.lock = threading.Lock()

    def done(self, job: Job, result: dict[str, Any]) -> None:
        with self.lock:
            self.finished += 1
            elapsed = time.perf_counter() - self.started
            eta = elapsed / self.finished * (self.total - self.finished)
            ok = result.get("status") == "ok"
            status = "ok" if ok else f"FAILED ({result.get('error', '?').splitlines()[0]})"
            self.log(
                f"[{self.finished}/{self.total}] {job.label}: {status} in {result['wall_s']:.0f} s "
                f"(elapsed {elapsed / 60:.1f} min, ~{eta / 60:.1f} min left)"
            )


def start_units(
    jobs: Sequence[Job], todo: Sequence[int], parallel: int, together: Callable[[Job, Job], bool] | None
) -> list[list[int]]:
    """Group consecutive jobs that must start at the same moment (at most ``parallel`` per unit)."""
    units: list[list[int]] = []
    for i in todo:
        last = units[-1] if units else None
        if last and together is not None and len(last) < parallel and together(jobs[last[-1]], jobs[i]):
            last.append(i)
        else:
            units.append([i])
    return units


def dispatch(units: Sequence[Sequence[int]], parallel: int, fn: Callable[[int], None]) -> None:
    """Call ``fn(i)`` on threads, at most ``parallel`` at once; a unit takes its slots before it starts."""
    slots = threading.Semaphore(max(1, parallel))
    workers: list[threading.Thread] = []
    errors: list[BaseException] = []

    def run_then_release(i: int) -> None:
        try:
            fn(i)
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


class _Heartbeat:
    """Every ``every_s`` seconds, one line per running job (``describe(job)``: its step and metric)."""

    def __init__(
        self, every_s: float, describe: Callable[[Job], str | None], log: Callable[[str], None]
    ) -> None:
        self.every_s, self.describe, self.log = every_s, describe, log
        self.running: dict[int, Job] = {}
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._beat, daemon=True)

    def __enter__(self) -> _Heartbeat:
        if self.every_s > 0:
            self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()

    def started(self, i: int, job: Job) -> None:
        with self.lock:
            self.running[i] = job

    def finished(self, i: int) -> None:
        with self.lock:
            self.running.pop(i, None)

    def _beat(self) -> None:
        while not self.stop.wait(self.every_s):
            with self.lock:
                jobs = list(self.running.values())
            for job in jobs:
                try:
                    line = self.describe(job)
                except Exception:  # a progress line must never stop the bench
                    line = None
                if line:
                    self.log(f"  {job.label}: {line}")


def execute(
    jobs: Sequence[Job],
    *,
    parallel: int,
    threads: int,
    timeout_s: float,
    job_extra: Callable[[Job], dict[str, Any]],
    log: Callable[[str], None] = print,
    together: Callable[[Job, Job], bool] | None = None,
    progress_every_s: float = 0.0,
    describe: Callable[[Job], str | None] | None = None,
) -> list[dict[str, Any]]:
    """Run the jobs ``parallel`` at a time, each in its own process; returns their results in order.

    A finished run with the same run file is reused (``"reused": True``); jobs sharing a folder (a
    sweep point equal to a grid run) run once and share the result.

    :param together: ``together(a, b)`` for consecutive jobs that must start at the same moment (the
        candidate and the reference of one seed: their step times are compared, so they share the
        machine with each other rather than with whatever else happens to run).
    :param progress_every_s: with ``describe``, every so many seconds one line per running job
        (``describe(job)``, e.g. its step and latest evaluation); 0 = only a line per finished run.
    """
    results: list[dict[str, Any] | None] = [None] * len(jobs)
    todo = []
    first: dict[Path, int] = {}  # run folder -> the job that runs it
    for i, job in enumerate(jobs):
        if job.run_dir in first:
            continue
        first[job.run_dir] = i
        saved = saved_result(job)
        if saved is not None:
            results[i] = {**saved, "reused": True}
        else:
            todo.append(i)
    if len(todo) < len(first):
        log(f"bench: {len(first) - len(todo)} of {len(first)} runs already finished (reused)")
    progress = _Progress(len(todo), log)

    with _Heartbeat(progress_every_s if describe else 0.0, describe or (lambda job: None), log) as beat:

        def one(i: int) -> None:
            beat.started(i, jobs[i])
            try:
                results[i] = run_job(jobs[i], threads=threads, timeout_s=timeout_s, extra=job_extra(jobs[i]))
            finally:
                beat.finished(i)
            progress.done(jobs[i], results[i])

        dispatch(start_units(jobs, todo, parallel, together), parallel, one)
    for i, job in enumerate(jobs):
        if results[i] is None:
            results[i] = results[first[job.run_dir]]
    return [r if r is not None else {"status": "failed", "error": "not run"} for r in results]
