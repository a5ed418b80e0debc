"""The top-level API: every public name resolves, lazily, and importing the package pulls in no torch."""

from __future__ import annotations

import subprocess
import sys

import botgrpo_core


def test_every_public_name_resolves_to_its_home() -> None:
    for name in botgrpo_core.__all__:
        value = getattr(botgrpo_core, name)
        module = botgrpo_core._LAZY.get(name)
        if module is not None:
            assert getattr(value, "__module__", module) == module, name  # defined there, not re-exported


def test_importing_the_package_and_the_trainer_name_is_lazy() -> None:
    probe = (
        "import sys, botgrpo_core\n"
        "from botgrpo_core import RewardMixture, load_config, hookimpl, Span\n"
        "assert 'torch' not in sys.modules, 'importing botgrpo_core or the config API pulled in torch'\n"
        "from botgrpo_core import BoTGRPOTrainer\n"
        "assert 'trl' in sys.modules and BoTGRPOTrainer.__name__ == 'BoTGRPOTrainer'\n"
    )
    subprocess.run([sys.executable, "-c", probe], check=True)


def test_unknown_names_raise_attribute_error() -> None:
    try:
        botgrpo_core.NoSuchThing  # noqa: B018
    except AttributeError as exc:
        assert "NoSuchThing" in str(exc)
    else:
        raise AssertionError("expected AttributeError")
