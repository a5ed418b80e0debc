"""Shared fixtures: the plugin's own parameter models and data files; no network, no hub."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

DATA = Path(__file__).resolve().parent.parent / "data"


@pytest.fixture(scope="session")
def labelled_steps() -> list[dict]:
    return [json.loads(line) for line in (DATA / "steps_labelled.jsonl").read_text().splitlines()]


@pytest.fixture(scope="session")
def answer_pairs() -> list[dict]:
    return [json.loads(line) for line in (DATA / "answer_pairs.jsonl").read_text().splitlines()]
