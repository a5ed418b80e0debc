"""botgrpo: critic-free RL for reasoning LLMs with token-level rewards.

The public API. Importing ``botgrpo_core`` is cheap (no torch): the torch-backed functions are
loaded on first use, so plugin entry points and ``botgrpo --help`` stay instant.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from botgrpo_core.signals import NoParams, Sample, SampleError, SignalSpec, Span, TokenValues
from botgrpo_core.signals.hookspecs import hookimpl

__version__ = "0.1.0"

# name -> module that defines it; resolved lazily by __getattr__ below.
_LAZY = {
    "compute_advantages": "botgrpo_core.estimators.compute",
    "register_estimator": "botgrpo_core.estimators.compute",
    "available_estimators": "botgrpo_core.estimators.compute",
    "policy_loss": "botgrpo_core.loss",
    "PRESETS": "botgrpo_core.config.presets",
    "get_preset": "botgrpo_core.config.presets",
}

__all__ = [
    # lazy (torch-backed), see _LAZY
    "PRESETS",
    "NoParams",
    "Sample",
    "SampleError",
    "SignalSpec",
    "Span",
    "TokenValues",
    "__version__",
    "available_estimators",
    "compute_advantages",
    "get_preset",
    "hookimpl",
    "policy_loss",
    "register_estimator",
]

if TYPE_CHECKING:
    from botgrpo_core.config.presets import PRESETS, get_preset
    from botgrpo_core.estimators.compute import compute_advantages
    from botgrpo_core.estimators.registry import available_estimators, register_estimator
    from botgrpo_core.loss import policy_loss


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'botgrpo_core' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
