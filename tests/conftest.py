"""Shared test set-up: offline Hugging Face, one torch thread (2-core machines), a fresh plugin manager."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import pytest


def pytest_configure(config: pytest.Config) -> None:
    try:
        import torch
    except ImportError:  # pragma: no cover
        return
    torch.set_num_threads(1)


@pytest.fixture
def plugin_manager():
    """A fresh process-wide plugin manager for the test, restored afterwards."""
    from botgrpo_core.signals import manager as plugins

    previous = plugins._default
    plugins.reset_plugin_manager()
    try:
        yield plugins.get_plugin_manager()
    finally:
        plugins._default = previous
