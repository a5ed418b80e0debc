"""No run is ever lost (issues 15 and 17): a finished run's folder is never deleted implicitly, and SIGINT /
SIGTERM stop a real ``botgrpo train`` process cleanly after saving a checkpoint, with one line saying how to
continue."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from train_fixtures import arith_plugin, core_run_file, parse, run_dict  # noqa: F401  (fixture)

from botgrpo_core.cli.main import main
from botgrpo_core.engine.interrupt import RunInterrupted
from botgrpo_core.engine.outputs import check_output_dir, checkpoint_problem, checkpoints, earlier_run
from botgrpo_core.engine.run import run_training
from botgrpo_core.engine.setup import TrainingSetupError

ROOT = Path(__file__).resolve().parents[1]


def _hashes(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _train_steps(out: Path) -> list[int]:
    lines = (out / "metrics.jsonl").read_text().splitlines()
    return [r["step"] for r in map(json.loads, lines) if r["kind"] == "train"]


def test_a_second_train_leaves_a_finished_run_intact_and_overwrite_replaces_it(tmp_path, capsys):
    run_file, out = core_run_file(tmp_path, plots=True), tmp_path / "run"
    assert main(["train", str(run_file)]) == 0
    before = _hashes(out)
    assert {"metrics.jsonl", "summary.json", "final_model/model.safetensors"} <= set(before)
    assert "checkpoint-2/trainer_state.json" in before and "training_curves.png" in before
    capsys.readouterr()

    # `make demo`, then `botgrpo train ... --set training.steps=3`: refused, every file as it was.
    assert main(["train", str(run_file), "--set", "training.steps=3"]) == 2
    err = capsys.readouterr().err
    assert "holds an earlier run" in err and "--resume" in err and "--overwrite" in err, err
    assert "checkpoint-2" in err and "nothing was changed" in err
    assert _hashes(out) == before

    # --resume and --overwrite together: refused too, nothing touched.
    assert main(["train", str(run_file), "--resume", "--overwrite"]) == 2
    assert "give one" in capsys.readouterr().err and _hashes(out) == before

    # --overwrite replaces the run: new metrics, new checkpoint, the old one gone.
    assert main(["train", str(run_file), "--set", "training.steps=3", "--overwrite"]) == 0
    after = _hashes(out)
    assert _train_steps(out) == [1, 2, 3]
    assert "checkpoint-3/trainer_state.json" in after and "checkpoint-2/trainer_state.json" not in after
    assert after["final_model/model.safetensors"] != before["final_model/model.safetensors"]


def test_what_counts_as_an_earlier_run(tmp_path):
    out = tmp_path / "run"
    assert earlier_run(out) == []  # no folder yet
    (out / "warm_start").mkdir(parents=True)  # caches and the resolved config are not a run's results
    (out / "initial_model").mkdir()
    (out / "config.yaml").write_text("{}")
    assert earlier_run(out) == []
    check_output_dir(out, resume=False, overwrite=False)
    (out / "checkpoint-7").mkdir()  # even a partial run (killed before its metrics) is kept
    assert earlier_run(out) == ["checkpoint-7"]
    with pytest.raises(TrainingSetupError, match="holds an earlier run"):
        check_output_dir(out, resume=False, overwrite=False)
    with pytest.raises(TrainingSetupError, match="give one"):
        check_output_dir(out, resume=True, overwrite=True)


def _start(run_file: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "OMP_NUM_THREADS": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "botgrpo_core.cli.main", "train", str(run_file)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as a terminal's foreground job has
    )


@pytest.mark.parametrize(
    ("signum", "group"),
    [(signal.SIGINT, True), (signal.SIGTERM, False)],
    ids=["Ctrl-C to the process group, signal workers running", "SIGTERM to the trainer"],
)
def test_a_signal_stops_a_real_run_after_saving_a_checkpoint(tmp_path, signum, group):
    """Ctrl-C in a terminal reaches every process of the job (the trainer and its signal workers); a
    scheduler's SIGTERM reaches the trainer. Either way: one line, no traceback, a complete checkpoint."""
    run_file = core_run_file(
        tmp_path, workers=1 if group else 0, eval_size=0, steps=1000, save_every=1, plots=False
    )
    out = tmp_path / "run"
    proc = _start(run_file)
    try:
        deadline = time.monotonic() + 90
        # any complete checkpoint: at several steps a second the first one is rotated away within moments
        while not any((path / "trainer_state.json").is_file() for _, path in checkpoints(out)):
            assert proc.poll() is None, proc.communicate()[1][-3000:]
            assert time.monotonic() < deadline, "no first checkpoint within 90 s"
            time.sleep(0.2)
        if group:
            os.killpg(proc.pid, signum)
        else:
            proc.send_signal(signum)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + signum, err[-3000:]
    assert "Traceback" not in err, err[-3000:]
    hint = [line for line in err.splitlines() if line.startswith("botgrpo: stopped by")]
    assert len(hint) == 1, err[-3000:]
    # The step the signal landed in was finished and saved; the line names it and the command that continues.
    step, last = checkpoints(out)[-1]
    assert checkpoint_problem(last, step) is None
    name = signal.Signals(signum).name
    assert hint[0].startswith(f"botgrpo: stopped by {name} at step {step}; {last.name} is complete"), hint
    assert hint[0].endswith(f"botgrpo train {run_file} --resume"), hint
    assert not (out / "final_model").exists() and not (out / "summary.json").exists()
    assert max(_train_steps(out)) == step


# In-process: the two other ways a signal lands (real signals, sent by the run to itself).
def test_a_signal_before_the_training_loop_stops_at_once(tmp_path, arith_plugin):  # noqa: F811
    """During set-up (here: as the initial evaluation starts) there is no step to finish: the run stops
    now, nothing is saved, and the message says to start again with --overwrite."""

    def log(message: str) -> None:
        if message.startswith("evaluating the initial policy"):
            os.kill(os.getpid(), signal.SIGTERM)

    config = parse(run_dict(tmp_path / "run"))
    with pytest.raises(RunInterrupted) as caught:
        run_training(config, progress=False, log=log)
    assert caught.value.checkpoint is None and caught.value.exit_code == 128 + signal.SIGTERM
    assert str(caught.value) == "stopped by SIGTERM; no checkpoint was saved, start again with --overwrite"
    assert checkpoints(tmp_path / "run") == [] and not (tmp_path / "run" / "final_model").exists()
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # the run's handlers are gone


def test_a_second_signal_stops_without_saving(tmp_path, arith_plugin):  # noqa: F811
    """The first signal asks for save-and-stop at the step's end; a second one before that stops at once,
    and the last complete checkpoint (the step before) is the one to resume from."""
    from transformers import TrainerCallback

    class TwoSignals(TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):
            if state.global_step == 2:
                os.kill(os.getpid(), signal.SIGINT)  # save after this step ...
                os.kill(os.getpid(), signal.SIGINT)  # ... no: now

    config = parse(run_dict(tmp_path / "run", training={"steps": 4, "save_every": 1}))
    messages: list[str] = []
    before = signal.getsignal(signal.SIGINT)  # SIG_IGN when the suite was started in the background
    with pytest.raises(RunInterrupted) as caught:
        run_training(config, callbacks=[TwoSignals()], progress=False, log=messages.append)
    assert (caught.value.signum, caught.value.step, caught.value.checkpoint) == (
        signal.SIGINT,
        1,
        "checkpoint-1",
    )
    assert [s for s, _ in checkpoints(tmp_path / "run")] == [1]
    assert any(m.startswith("SIGINT: stopping after this step") for m in messages), messages
    assert signal.getsignal(signal.SIGINT) is before  # the run's handler is gone
