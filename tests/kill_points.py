"""Kill a real ``botgrpo train`` process at a chosen point of its file writes, then compare resumed runs.

:class:`TrainServer` starts one helper process (``python tests/kill_points.py serve``) that imports torch,
transformers, TRL, matplotlib and botgrpo once and then forks one child per request; the child runs the
CLI's ``main(["train", ...])`` exactly as ``botgrpo train`` does (real files, real checkpoints), so a
run costs its training, not its imports (about 8 s of CPU each on this machine).

In the child every file-system operation a run's outputs go through is counted (``ops``): renames
(``os.replace``/``os.rename``), folder removals (``shutil.rmtree``: checkpoint rotation), and the writes of
model weights (safetensors), torch files (optimizer, scheduler, RNG state), ``trainer_state.json``, a
metrics line and every ``Path.write_bytes`` (the temporary files of atomic rewrites). ``kill`` names one:
its index, or its label (first occurrence). The child then sends itself SIGKILL: before a rename or
removal; after writing half of the file for a write (a torn file, as a kill mid-write leaves it).

Used by tests/test_kill_resume.py (a fixed, seeded handful of kill points) and by
scripts/kill_resume_sweep.py (many).
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
#: values of a metrics record that differ between identical runs (wall-clock times)
VOLATILE = ("time", "step_time")
#: files of a checkpoint whose bytes must equal the uninterrupted run's (training_args.bin pickles the
#: output folder's path; trainer_state.json holds step times)
CHECKPOINT_FILES = ("model.safetensors", "optimizer.pt", "scheduler.pt", "rng_state.pth")


def run_file(folder: Path, steps: int = 3, plots: bool = True) -> Path:
    """A small run file with the core's built-in signals: evaluation at 0 and at the end, a checkpoint
    every step (two kept), plots."""
    run = {
        "model": {"name_or_path": "tiny", "tiny": {"hidden_size": 32, "num_layers": 1, "num_heads": 2}},
        "data": {"source": "task", "task": "arithmetic", "train_size": 64, "eval_size": 2},
        "algorithm": {"preset": "bot-grpo"},
        "rewards": {
            "alpha": 1.0,
            "beta": 0.25,
            "signals": [
                {"name": "core.exact_answer"},
                {"name": "core.regex", "params": {"pattern": r"\d+", "value": 1.0}},
            ],
        },
        "training": {
            "steps": steps,
            "prompts_per_step": 2,
            "group_size": 4,
            "max_new_tokens": 12,
            "learning_rate": 1e-3,
            "output_dir": str(folder / "run"),
            "eval_every": 0,
            "eval_greedy": False,
            "save_every": 1,
            "save_total_limit": 2,
            "plots": plots,
            "seed": 5,
        },
        "engine": {"device": "cpu"},
    }
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "run.yaml"
    path.write_text(json.dumps(run), encoding="utf-8")  # JSON is YAML
    return path


# ------------------------------------------------------------------------------------------------
# The parent's side
# ------------------------------------------------------------------------------------------------
class TrainServer:
    """Context manager: the fork server; :meth:`train` runs one ``botgrpo train`` in a fresh child."""

    def __enter__(self) -> TrainServer:
        env = {
            **os.environ,
            "HF_HUB_OFFLINE": "1",
            "TOKENIZERS_PARALLELISM": "false",
            "OMP_NUM_THREADS": "1",
        }
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=ROOT,
        )
        ready = self.proc.stdout.readline()  # type: ignore[union-attr]
        if ready.strip() != "ready":
            raise RuntimeError(f"the train server did not start: {ready!r}")
        return self

    def __exit__(self, *exc: object) -> None:
        self.proc.stdin.close()  # type: ignore[union-attr]
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def train(
        self, run: Path, *flags: str, kill: int | str | None = None, stop: str | None = None, tag: str = ""
    ) -> Result:
        """Run ``botgrpo train RUN FLAGS`` in a child killed at ``kill``; the child's exit and ops.

        ``stop``: the child stops itself (SIGSTOP) at that op label instead, and this returns at once with
        ``code`` None and ``pid`` set; :meth:`wait` collects it once it has been killed.
        """
        base = run.parent / f"train{tag}-{len(list(run.parent.glob('train*.log')))}"
        request = {
            "argv": ["train", str(run), *flags],
            "kill": kill,
            "stop": stop,
            "ops": str(base.with_suffix(".ops")),
            "log": str(base.with_suffix(".log")),
        }
        reply = self._ask(request)
        if "pid" in reply:
            return Result(None, [], "", 0.0, pid=reply["pid"], files=request)
        return self._result(reply, request)

    def wait(self, started: Result) -> Result:
        """The exit of a child started with ``stop``."""
        return self._result(self._ask({"wait": started.pid}), started.files)

    def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        self.proc.stdin.write(json.dumps(request) + "\n")  # type: ignore[union-attr]
        self.proc.stdin.flush()  # type: ignore[union-attr]
        return json.loads(self.proc.stdout.readline())  # type: ignore[union-attr]

    @staticmethod
    def _result(reply: dict[str, Any], files: dict[str, Any]) -> Result:
        ops = Path(files["ops"]).read_text().splitlines() if Path(files["ops"]).is_file() else []
        return Result(reply["code"], ops, Path(files["log"]).read_text(errors="replace"), reply["cpu_s"])


class Result:
    """A child's exit code (``-9``: killed), the ops it performed, its output and its CPU seconds."""

    def __init__(
        self,
        code: int | None,
        ops: list[str],
        log: str,
        cpu_s: float,
        pid: int | None = None,
        files: dict[str, Any] | None = None,
    ) -> None:
        self.code, self.ops, self.log, self.cpu_s = code, ops, log, cpu_s
        self.pid, self.files = pid, files or {}

    def __repr__(self) -> str:
        return f"Result(code={self.code}, ops={len(self.ops)}, log={self.log[-1500:]!r})"


def finish(server: TrainServer, run: Path, kill_resume: int | str | None = None) -> list[Result]:
    """After a kill: ``--resume`` (killed at ``kill_resume`` the first time) until the run completes; a
    run killed before its first checkpoint starts again with ``--overwrite``, as the message says."""
    results = []
    kill = kill_resume
    for _ in range(4):
        result = server.train(run, "--resume", kill=kill, tag="-resume")
        results.append(result)
        kill = None
        if result.code == 0:
            return results
        if "no checkpoint-N folder to resume from" in result.log or "no complete checkpoint-N" in result.log:
            result = server.train(run, "--overwrite", tag="-overwrite")
            results.append(result)
            if result.code == 0:
                return results
        elif result.code != -signal.SIGKILL:
            raise AssertionError(f"resume failed: {result}")
    raise AssertionError(f"no complete run after four resumes: {results}")


# ------------------------------------------------------------------------------------------------
# Comparing a finished run with the uninterrupted one
# ------------------------------------------------------------------------------------------------
def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def records(out: Path) -> list[dict[str, Any]]:
    """The train and eval records of metrics.jsonl without wall-clock values, in file order."""
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    return [
        {
            k: v for k, v in r.items() if k not in VOLATILE and not k.startswith("time/")
        }  # time/*: phase seconds
        for r in rows
        if r["kind"] in ("train", "eval")
    ]


def differences(out: Path, ref: Path) -> list[str]:
    """Where the finished run in ``out`` differs from the uninterrupted one in ``ref`` (empty: none)."""
    problems = []
    for name in ("final_model/model.safetensors", "final_model/config.json", "training_curves.png"):
        if not (out / name).is_file() or digest(out / name) != digest(ref / name):
            problems.append(f"{name} differs")
    ours = sorted(p.name for p in out.glob("checkpoint-*"))
    theirs = sorted(p.name for p in ref.glob("checkpoint-*"))
    if ours != theirs:
        problems.append(f"checkpoints {ours} != {theirs}")
    for name in theirs:
        for file in CHECKPOINT_FILES:
            a, b = out / name / file, ref / name / file
            if not a.is_file() or digest(a) != digest(b):
                problems.append(f"{name}/{file} differs")
    if records(out) != records(ref):
        got, want = records(out), records(ref)
        problems.append(f"metrics differ: {len(got)} vs {len(want)} records")
    summary, expected = (json.loads((p / "summary.json").read_text()) for p in (out, ref))
    for key in ("steps", "before", "after"):
        if summary.get(key) != expected.get(key):
            problems.append(f"summary.json {key}: {summary.get(key)} != {expected.get(key)}")
    left = [
        p.name
        for p in out.iterdir()
        if p.name.endswith((".tmp", ".old")) or p.name == "train.lock" or p.name.startswith(".")
    ]
    if left:
        problems.append(f"left behind: {left}")
    return problems


# ------------------------------------------------------------------------------------------------
# The server's and the child's side
# ------------------------------------------------------------------------------------------------
def _serve() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot
    import safetensors.torch  # noqa: F401
    import torch  # noqa: F401
    import transformers  # noqa: F401
    import trl  # noqa: F401

    import botgrpo_core.cli.main
    import botgrpo_core.engine.run
    import botgrpo_core.engine.trainer  # noqa: F401

    print("ready", flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        if "wait" in request:
            pid = request["wait"]
        else:
            pid = os.fork()
            if pid == 0:
                _child(request)  # never returns
            if request["stop"]:
                _, status = os.waitpid(pid, os.WUNTRACED)  # until it stops itself (or ends)
                if os.WIFSTOPPED(status):
                    print(json.dumps({"pid": pid}), flush=True)
                    continue
                raise SystemExit(f"the child ended before reaching {request['stop']!r}")
        _, status, usage = os.wait4(pid, 0)
        code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        print(json.dumps({"code": code, "cpu_s": usage.ru_utime + usage.ru_stime}), flush=True)


def _child(request: dict[str, Any]) -> None:
    code = 1
    try:
        log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(log, 1)
        os.dup2(log, 2)
        _install(request["kill"], request["stop"], request["ops"])
        from botgrpo_core.cli.main import main

        code = main(request["argv"])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _install(kill: int | str | None, stop: str | None, ops_path: str) -> None:
    """Count (and at ``kill``, die at; at ``stop``, stop at) the child's output operations."""
    import shutil

    import safetensors.torch
    import torch
    import transformers.modeling_utils
    from transformers import TrainerState

    from botgrpo_core.engine import run

    ops = open(ops_path, "w", buffering=1)  # noqa: SIM115  (open for the child's life)
    count = [0]

    def reached(label: str) -> bool:
        ops.write(label + "\n")
        count[0] += 1
        if label == stop:
            os.kill(os.getpid(), signal.SIGSTOP)
        return kill == count[0] - 1 or kill == label

    def die() -> None:
        os.kill(os.getpid(), signal.SIGKILL)

    def tear(path: str | os.PathLike[str]) -> None:
        """Cut the file just written to half its length, as a kill in the middle of writing it leaves it."""
        size = os.path.getsize(path)
        os.truncate(path, size // 2)

    def before(fn: Any, kind: str) -> Any:
        def wrapped(src: Any, *args: Any, **kwargs: Any) -> Any:
            if reached(f"{kind}:{_name(args[0] if args else src)}"):
                die()
            return fn(src, *args, **kwargs)

        return wrapped

    def torn(fn: Any, kind: str, where: Any) -> Any:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            path = where(args, kwargs)
            hit = reached(f"{kind}:{_name(path)}")
            result = fn(*args, **kwargs)
            if hit:
                tear(path)
                die()
            return result

        return wrapped

    os.replace = before(os.replace, "replace")
    os.rename = before(os.rename, "rename")
    shutil.rmtree = before(shutil.rmtree, "rmtree")
    save = torn(
        safetensors.torch.save_file, "safetensors", lambda a, k: a[1] if len(a) > 1 else k["filename"]
    )
    safetensors.torch.save_file = save
    transformers.modeling_utils.safe_save_file = save
    torch.save = torn(torch.save, "torch.save", lambda a, k: a[1])
    TrainerState.save_to_json = torn(TrainerState.save_to_json, "state", lambda a, k: a[1])
    Path.write_bytes = torn(Path.write_bytes, "write", lambda a, k: a[0])

    write = run.MetricsLog.write

    def metrics_write(self: Any, kind: str, step: int, values: Any) -> None:
        if reached(f"metrics:{kind}-{step}"):
            with self.path.open("a", encoding="utf-8") as f:
                f.write(json.dumps({"kind": kind, "step": int(step), "values": "cut"})[:30])
            die()
        write(self, kind, step, values)

    run.MetricsLog.write = metrics_write


def _name(path: Any) -> str:
    """The last two parts of a path (``checkpoint-2/optimizer.pt``), for op labels."""
    parts = Path(os.fspath(path)).parts if isinstance(path, (str, os.PathLike)) else ("?",)
    return "/".join(parts[-2:])


if __name__ == "__main__" and sys.argv[1:] == ["serve"]:
    _serve()
