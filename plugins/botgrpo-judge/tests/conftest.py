"""Shared fixtures: a tiny judge built in code and saved to a folder, loaded like any local model."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

from pathlib import Path
from typing import Any

import pytest
import torch

torch.set_num_threads(1)

from judge_data import TAUGHT_ANSWER  # noqa: E402


@pytest.fixture(scope="session")
def judge_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny judge, briefly taught to answer yes/no about sums (so P(yes), P(no) are large and vary)."""
    from judge_testing.tiny_judge import arithmetic_examples, build_tiny_judge, teach

    path = build_tiny_judge(tmp_path_factory.mktemp("judge"))
    teach(path, arithmetic_examples(32), steps=30)
    return path


@pytest.fixture(scope="session")
def judge(judge_dir: Path) -> tuple[Any, Any]:
    """``(model, tokenizer)`` of the tiny judge, loaded from its folder (an independent copy)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(judge_dir, dtype=torch.float32).eval()
    return model, AutoTokenizer.from_pretrained(judge_dir)


@pytest.fixture(scope="session")
def taught_judge_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny judge fine-tuned to answer every prompt with :data:`TAUGHT_ANSWER`."""
    from judge_testing.tiny_judge import build_tiny_judge, teach_answer

    from botgrpo_judge import templates

    path = build_tiny_judge(tmp_path_factory.mktemp("taught"), seed=1)
    prompts = [
        templates.render(
            source,
            question=q,
            reference=None,
            row={},
            completion="17+5=22\n22-8=14",
            steps=["17+5=22", "22-8=14"],
            step="22-8=14",
            step_index=2,
            num_steps=2,
        )
        for source in (templates.GENERATE_STEPS_ALL, templates.GENERATE_STEP_ONE, templates.GENERATE_OUTCOME)
        for q in ("what is 17+5-8?", "what is 2+2?")
    ]
    answer = teach_answer(path, prompts, TAUGHT_ANSWER)
    assert answer == TAUGHT_ANSWER, f"the tiny judge did not learn its answer: {answer!r}"
    return path
