"""Issue 39 findings 1-5: a signal from a Python file (``rewards.signals[i].path: file.py:function``) is the
user's code, but its side effects are bounded: ``sys.exit`` at import is an error naming the key (was: exit 0,
nothing said), its prints never reach ``score --json``'s output (in-process and in the pool), processes it
starts end with the sample, ``--resume`` refuses a file that changed, and its own folder is importable."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import yaml
from train_fixtures import arith_plugin, parse, run_dict  # noqa: F401  (fixture)

from botgrpo_core.cli.main import main
from botgrpo_core.engine.run import run_training
from botgrpo_core.engine.setup import TrainingSetupError

BOTGRPO = str(Path(sys.executable).with_name("botgrpo"))
ROWS = [{"prompt": "Q", "completion": "a b"}, {"prompt": "Q", "completion": "c"}]


def _run_file(tmp_path: Path, code: str, *, workers: int = 0, name: str = "sig.py") -> Path:
    (tmp_path / name).write_text(textwrap.dedent(code), encoding="utf-8")
    run = {
        "rewards": {
            "beta": 0.0,
            "signals": [
                {
                    "name": "mine.file",
                    "path": f"{tmp_path / name}:score",
                    "kind": "global",
                    "bounds": [0, 1],
                    "workers": workers,
                    "cache": False,
                }
            ],
        }
    }
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(run), encoding="utf-8")
    (tmp_path / "in.jsonl").write_text("\n".join(json.dumps(r) for r in ROWS) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("call", ["sys.exit(0)", "sys.exit('bye')", "raise SystemExit(3)"])
def test_sys_exit_at_import_is_an_error_naming_the_key(tmp_path, capsys, call) -> None:
    """Was: validate and train exited 0 (sys.exit(0)) or 1 with nothing naming the key."""
    run = _run_file(tmp_path, f"import sys\n{call}\ndef score(samples):\n    return [1.0] * len(samples)\n")
    assert main(["validate", str(run)]) == 2
    err = capsys.readouterr().err
    assert "rewards.signals[0].path" in err and "sys.exit(" in err and "Traceback" not in err


def test_a_print_in_the_function_stays_out_of_json_in_process(tmp_path, capsys) -> None:
    run = _run_file(
        tmp_path,
        "print('at import')\ndef score(samples):\n    print('noise')\n    return [1.0] * len(samples)\n",
    )
    assert (
        main(["score", str(run), "--input", str(tmp_path / "in.jsonl"), "--tokenizer", "tiny", "--json"]) == 0
    )
    out, err = capsys.readouterr()
    assert json.loads(out)["summary"]["rows"] == 2  # was: "at import\nnoise\n{..." (not JSON)
    assert "noise" in err and "at import" in err  # said, on stderr


def test_a_print_in_a_pool_worker_stays_out_of_json(tmp_path) -> None:
    code = "import os\ndef score(samples):\n    print('noise'); os.system('echo shell-noise')\n    return [1.0] * len(samples)\n"
    run = _run_file(tmp_path, code, workers=1)
    done = subprocess.run(
        [BOTGRPO, "score", str(run), "--input", str(tmp_path / "in.jsonl"), "--tokenizer", "tiny", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["summary"]["rows"] == 2
    assert "noise" in done.stderr and "shell-noise" in done.stderr


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="Linux /proc")
def test_processes_a_pooled_signal_starts_end_with_the_sample(tmp_path) -> None:
    """Was: a child forked by the function (detached into its own session) outlived `botgrpo score`."""
    pids = tmp_path / "pids"
    code = f"""
    import subprocess
    def score(samples):
        for _ in samples:
            p = subprocess.Popen(["sleep", "120"], start_new_session=True)
            with open({str(pids)!r}, "a") as f:
                f.write(f"{{p.pid}}\\n")
        return [1.0] * len(samples)
    """
    run = _run_file(tmp_path, code, workers=1)
    try:
        done = subprocess.run(
            [
                BOTGRPO,
                "score",
                str(run),
                "--input",
                str(tmp_path / "in.jsonl"),
                "--tokenizer",
                "tiny",
                "--json",
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        started = [int(p) for p in pids.read_text().split()]
        assert started
        time.sleep(0.5)
        assert [p for p in started if _alive(p)] == []
    finally:
        for pid in [int(p) for p in pids.read_text().split()] if pids.exists() else []:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_the_files_folder_is_importable_and_a_folder_is_named_as_one(tmp_path, capsys) -> None:
    (tmp_path / "helper_for_sig.py").write_text("VALUE = 1.0\n", encoding="utf-8")
    run = _run_file(
        tmp_path,
        "import helper_for_sig\ndef score(samples):\n    return [helper_for_sig.VALUE] * len(samples)\n",
    )
    assert main(["validate", str(run)]) == 0, capsys.readouterr().err  # was: ModuleNotFoundError
    (tmp_path / "dir.py").mkdir()
    run.write_text(run.read_text().replace(str(tmp_path / "sig.py"), str(tmp_path / "dir.py")))
    assert main(["validate", str(run)]) == 2
    err = capsys.readouterr().err
    assert "is a folder, not a Python file" in err and "does not exist" not in err


@pytest.mark.timeout(300)
def test_resume_refuses_a_signal_file_that_changed(tmp_path, arith_plugin) -> None:  # noqa: F811
    """Was: --resume trained on silently with the new code; now signal_files.json holds each file's digest."""
    file = tmp_path / "sig.py"
    file.write_text("def score(samples):\n    return [1.0] * len(samples)\n", encoding="utf-8")
    signals = [
        {"name": "test_arith.digits"},
        {"name": "mine.file", "path": f"{file}:score", "kind": "global", "bounds": [0, 1]},
    ]
    config = parse(run_dict(tmp_path / "run", rewards={"signals": signals}, training={"steps": 1}))
    run_training(config, progress=False, log=lambda m: None)
    recorded = json.loads((tmp_path / "run" / "signal_files.json").read_text())
    assert (
        list(recorded) == ["rewards.signals[1].path"]
        and len(recorded["rewards.signals[1].path"]["sha256"]) == 64
    )
    run_training(config, resume=True, progress=False, log=lambda m: None)  # unchanged: resumes (complete run)
    file.write_text("def score(samples):\n    return [0.0] * len(samples)\n", encoding="utf-8")
    with pytest.raises(
        TrainingSetupError, match=r"rewards.signals\[1\].path: .*sig.py changed since the run started"
    ):
        run_training(config, resume=True, progress=False, log=lambda m: None)


def _start_helper(pids: str) -> None:
    """Pool initializer: a helper process meant to live as long as the worker."""
    p = subprocess.Popen(["sleep", "120"], start_new_session=True)
    with open(pids, "a") as f:
        f.write(f"helper {p.pid}\n")


def _task_that_forks(pids: str) -> int:
    p = subprocess.Popen(["sleep", "120"], start_new_session=True)
    with open(pids, "a") as f:
        f.write(f"task {p.pid}\n")
    return p.pid


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="Linux /proc")
def test_the_pool_ends_what_a_task_started_and_keeps_what_its_initializer_started(tmp_path) -> None:
    from botgrpo_core.rewards.pool import WorkerPool

    pids = tmp_path / "pids"
    try:
        with WorkerPool(
            _task_that_forks, workers=1, timeout_s=30, initializer=_start_helper, initargs=(str(pids),)
        ) as pool:
            pool.map([str(pids), str(pids)])
            time.sleep(0.3)
            started = dict(line.split()[::-1] for line in pids.read_text().splitlines())
            alive = {kind for pid, kind in started.items() if _alive(int(pid))}
            assert alive == {"helper"}  # both tasks' children ended with their task
        time.sleep(0.3)
    finally:
        for line in pids.read_text().splitlines() if pids.exists() else []:
            if _alive(pid := int(line.split()[1])):
                os.kill(pid, signal.SIGKILL)
