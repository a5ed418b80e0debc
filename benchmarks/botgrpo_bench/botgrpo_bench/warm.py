"""The warm start of every bench task: trained once (in parallel processes) and cached.

Every run of a task starts from its warm-start checkpoint through ``model.name_or_path``
(:mod:`botgrpo_core.engine.warm_start` trains and caches it). A process of its own per task:
``python -m botgrpo_bench.warm SPEC_JSON``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from botgrpo_bench.config import BenchError, BenchFile, TaskBench
from botgrpo_bench.execute import runner_env


def warm_start_path(name: str, task: TaskBench, cache_dir: Path) -> Path | None:
    """The cache folder of a task's warm start; None for a real model (the runs load it as given)."""
    from botgrpo_core.config.sections import TinyModelSpec
    from botgrpo_core.engine.warm_start import warm_start_dir

    model = task.run.get("model", {})
    if model.get("name_or_path", "tiny") != "tiny":
        return None
    data = task.run.get("data", {})
    tiny = TinyModelSpec.model_validate(model.get("tiny", {}))
    try:
        path = warm_start_dir(
            data.get("task", "arithmetic"),
            data.get("task_params", {}) or {},
            tiny,
            task.warm_start,
            cache_dir,
        )
    except ValueError as exc:  # an unknown task or invalid task params
        raise BenchError(f"tasks.{name}.run: {exc}") from None
    return path.resolve()


def warm_starts(bench: BenchFile, log: Callable[[str], None]) -> dict[str, Path | None]:
    """The warm-start checkpoint of every task (trained in parallel processes when missing or stale)."""
    from botgrpo_core.engine.warm_start import cached_warm_start

    out: dict[str, Path | None] = {}
    todo: list[str] = []
    for name, task in bench.tasks.items():
        out[name] = path = warm_start_path(name, task, bench.cache_dir)
        if path is None:
            continue
        if cached_warm_start(path, task.run.get("data", {}).get("task", "arithmetic")):
            log(f"warm start [{name}]: cached at {path}")
        else:
            todo.append(name)
    if todo:
        bench.cache_dir.mkdir(parents=True, exist_ok=True)
        with ThreadPoolExecutor(max_workers=max(1, min(bench.parallel, len(todo)))) as pool:
            list(pool.map(lambda name: _train(name, bench, out[name], log), todo))
    return out


def _train(name: str, bench: BenchFile, path: Path | None, log: Callable[[str], None]) -> None:
    """Train one task's warm start in a child process; its progress lines (stdout) pass through."""
    task = bench.tasks[name]
    spec = {
        "task": task.run.get("data", {}).get("task", "arithmetic"),
        "task_params": task.run.get("data", {}).get("task_params", {}) or {},
        "tiny": task.run.get("model", {}).get("tiny", {}),
        "warm_start": task.warm_start.model_dump(),
        "cache_dir": str(bench.cache_dir),
        "max_new_tokens": task.run.get("training", {}).get("max_new_tokens", 40),
        "threads": bench.threads_per_run,
    }
    log(f"warm start [{name}]: training ({task.warm_start.steps} supervised steps)")
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "botgrpo_bench.warm", json.dumps(spec)],
        env=runner_env(bench.threads_per_run),
        stderr=subprocess.PIPE,  # kept for the error message
        text=True,
        check=False,
    )
    assert path is not None  # only tiny-model tasks have a warm start to train
    if proc.returncode != 0 or not (path / "warm_start.json").is_file():
        raise BenchError(
            f"tasks.{name}.warm_start: the supervised warm start failed (exit {proc.returncode}):\n"
            f"{proc.stderr[-3000:]}"
        )
    meta = json.loads((path / "warm_start.json").read_text())
    log(f"warm start [{name}]: done in {time.perf_counter() - t0:.0f} s; held-out {meta['eval']}")


def main(raw: str) -> int:
    """The child process: ``raw`` is the JSON spec :func:`_train` writes."""
    import torch

    from botgrpo_core.config.sections import TinyModelSpec
    from botgrpo_core.engine.warm_start import WarmStartSpec, ensure_warm_start

    spec: dict[str, Any] = json.loads(raw)
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


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
