"""What a user sees from a real ``botgrpo train`` (issue 15's output glitches): the warm-start line says what
it measured, log lines land above the progress bar, no library FutureWarnings, and the model card names
botgrpo's algorithm and its starting model."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_a_real_run_prints_clean_lines_and_writes_botgrpos_model_card(tmp_path: Path) -> None:
    run = {
        "model": {"name_or_path": "tiny", "tiny": {"hidden_size": 32, "num_layers": 1, "num_heads": 2}},
        "data": {"source": "task", "task": "arithmetic", "train_size": 32, "eval_size": 4},
        "algorithm": {"preset": "bot-grpo"},
        "rewards": {
            "beta": 0.25,
            "signals": [{"name": "core.exact_answer"}, {"name": "core.regex", "params": {"pattern": r"\d+"}}],
        },
        "training": {
            "steps": 2,
            "prompts_per_step": 2,
            "group_size": 4,
            "max_new_tokens": 12,
            "output_dir": str(tmp_path / "run"),
            "eval_every": 0,
            "eval_greedy": False,
            "save_every": 1,
            "plots": False,
            "warm_start": {"enabled": True, "steps": 4, "batch_size": 8, "demonstrations": 64},
        },
        "engine": {"device": "cpu"},
    }
    run_file = tmp_path / "run.yaml"
    run_file.write_text(json.dumps(run), encoding="utf-8")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "OMP_NUM_THREADS": "1"}
    env.pop("PYTHONWARNINGS", None)
    done = subprocess.run(
        [sys.executable, "-m", "botgrpo_core.cli.main", "train", str(run_file)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    err = done.stderr
    assert "FutureWarning" not in err, err[-3000:]
    warm = [line for line in err.splitlines() if line.startswith("warm start [arithmetic]: trained in")]
    assert warm and "{}" not in warm[0] and "no held-out check (eval_size 0)" in warm[0], err[-3000:]
    # every log line is a line of its own: the one printed after the bar appeared is not glued onto it
    segments = re.split(r"[\r\n]", err)
    assert any(s.startswith("training 2 steps: preset bot-grpo") for s in segments), err[-3000:]
    assert "[transformers]" not in err, err[-3000:]  # the library's logger notes, glued onto the bar before
    card = (tmp_path / "run" / "README.md").read_text(encoding="utf-8")
    assert "botgrpo" in card and "`bot-grpo`" in card and "core.regex" in card
    assert "[None]" not in card and "trained with GRPO" not in card


@pytest.mark.slow
def test_no_held_out_set_prints_no_table_and_steps_split_their_time(tmp_path: Path) -> None:
    """``data.eval_size: 0`` says nothing about held-out prompts (it printed an empty table); each step's
    metrics split its time into generation, scoring and the rest of the batch (issue 36, finding 6)."""
    run = {
        "model": {"name_or_path": "tiny", "tiny": {"hidden_size": 32, "num_layers": 1, "num_heads": 2}},
        "data": {"source": "task", "task": "arithmetic", "train_size": 32, "eval_size": 0},
        "rewards": {
            "beta": 0.25,
            "signals": [{"name": "core.exact_answer"}, {"name": "core.regex", "params": {"pattern": r"\d+"}}],
        },
        "training": {
            "steps": 2,
            "prompts_per_step": 2,
            "group_size": 4,
            "max_new_tokens": 12,
            "output_dir": str(tmp_path / "run"),
            "eval_every": 0,
            "logging_steps": 1,
            "plots": False,
        },
        "engine": {"device": "cpu"},
    }
    run_file = tmp_path / "run.yaml"
    run_file.write_text(json.dumps(run), encoding="utf-8")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "botgrpo_core.cli.main", "train", str(run_file)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "held-out" not in done.stdout + done.stderr, (done.stdout + done.stderr)[-3000:]
    steps = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    train = [r for r in steps if r.get("kind") == "train"]
    assert len(train) == 2, steps
    for record in train:
        generate, score, batch = (record[f"time/{k}_s"] for k in ("generate", "score", "batch"))
        assert 0 < generate < batch and 0 < score < batch and generate + score <= batch, record
        assert batch <= record["step_time"], record  # TRL's whole step holds the batch's preparation
