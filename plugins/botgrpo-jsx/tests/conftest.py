"""Shared fixtures of the botgrpo-jsx tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

CORPUS = Path(__file__).parent / "data" / "components"


@pytest.fixture(scope="session")
def corpus() -> list[Path]:
    return sorted(CORPUS.iterdir())


@pytest.fixture(scope="session")
def node_ready() -> bool:
    from botgrpo_jsx import nodeenv

    return nodeenv.unavailable_reason() is None


@pytest.fixture
def need_node(node_ready: bool) -> None:
    if not node_ready:
        pytest.skip("Node/esbuild not installed: run `python -m botgrpo_jsx.setup`")
