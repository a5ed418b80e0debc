"""The adversarial set (issue 17): malformed run files, untrusted text and misbehaving plugins, each on the
real code path. Every test here is marked ``adversarial`` (``pytest -m adversarial`` runs the set alone);
the whole set stays well under a minute."""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).parent


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "adversarial: the adversarial battery's regression set (issue 17)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(item.fspath).parents:
            item.add_marker(pytest.mark.adversarial)
