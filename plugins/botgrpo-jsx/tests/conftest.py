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


@pytest.fixture(scope="module")
def sandbox_ready() -> None:
    """Skip unless jsx.renders can run: Node, react-dom, and the sandbox's isolation on this machine."""
    from botgrpo_jsx import nodeenv

    reason = nodeenv.unavailable_reason()
    if reason is not None:
        pytest.skip(reason)
    modules = nodeenv.node_modules()
    assert modules is not None
    if not (modules / "react-dom" / "package.json").is_file():
        pytest.skip("react-dom not installed: run `python -m botgrpo_jsx.setup`")
    from botgrpo_jsx.sandbox import SandboxUnavailable, check_boundary

    node = nodeenv.find_node()
    assert node is not None
    try:
        check_boundary(node.node)
    except SandboxUnavailable as exc:
        pytest.skip(str(exc))
