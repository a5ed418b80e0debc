"""botgrpo: critic-free RL for reasoning LLMs with token-level rewards.

The public API. Importing ``botgrpo_core`` is cheap (no torch): the torch-backed functions are
loaded on first use, so plugin entry points and ``botgrpo --help`` stay instant.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from botgrpo_core.hookspecs import hookimpl
from botgrpo_core.signals import NoParams, Sample, SampleError, SignalSpec, Span, TokenValues

__version__ = "0.1.0"

# name -> module that defines it; resolved lazily by __getattr__ below.
_LAZY = {
    "compute_advantages": "botgrpo_core.advantages",
    "register_estimator": "botgrpo_core.advantages",
    "available_estimators": "botgrpo_core.advantages",
    "policy_loss": "botgrpo_core.loss",
    "PRESETS": "botgrpo_core.presets",
    "get_preset": "botgrpo_core.presets",
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
    from botgrpo_core.advantages import available_estimators, compute_advantages, register_estimator
    from botgrpo_core.loss import policy_loss
    from botgrpo_core.presets import PRESETS, get_preset


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'botgrpo_core' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
