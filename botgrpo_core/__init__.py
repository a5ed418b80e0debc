"""botgrpo: critic-free RL for reasoning LLMs with token-level rewards.

The public API. Importing ``botgrpo_core`` is cheap (no torch): the torch-backed functions are
loaded on first use, so plugin entry points and ``botgrpo --help`` stay instant.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from botgrpo_core.signals import NoParams, Sample, SampleError, SignalSpec, Span, TokenValues, Value
from botgrpo_core.signals.hookspecs import hookimpl

__version__ = "0.1.0"

# name -> module that defines it; resolved lazily by __getattr__ below (in pipeline order).
_LAZY = {
    # signals: the plugin manager
    "PluginManager": "botgrpo_core.signals.manager",
    "get_plugin_manager": "botgrpo_core.signals.manager",
    "register_signal": "botgrpo_core.signals.manager",
    # rewards: per-token rewards from the signals
    "RewardMixture": "botgrpo_core.rewards.mixture",
    "MixtureOutput": "botgrpo_core.rewards.mixture",
    # estimators and loss
    "compute_advantages": "botgrpo_core.estimators.compute",
    "register_estimator": "botgrpo_core.estimators.registry",
    "available_estimators": "botgrpo_core.estimators.registry",
    "policy_loss": "botgrpo_core.loss",
    # config
    "RunConfig": "botgrpo_core.config.models",
    "RewardsConfig": "botgrpo_core.config.models",
    "SignalConfig": "botgrpo_core.config.models",
    "ConfigError": "botgrpo_core.config.errors",
    "load_config": "botgrpo_core.config.loading",
    "parse_config": "botgrpo_core.config.loading",
    "PRESETS": "botgrpo_core.config.presets",
    "get_preset": "botgrpo_core.config.presets",
    # engine
    "BoTGRPOTrainer": "botgrpo_core.engine.trainer",
    "run_training": "botgrpo_core.engine.run",
    # named models (the bundled SmolLM2-135M-Instruct), offline
    "NAMED_MODELS": "botgrpo_core.engine.named_models",
    "materialize": "botgrpo_core.engine.named_models",
    "load_named_model": "botgrpo_core.engine.named_models",
}

__all__ = [
    "NAMED_MODELS",
    "PRESETS",
    "BoTGRPOTrainer",
    "ConfigError",
    "MixtureOutput",
    "NoParams",
    "PluginManager",
    "RewardMixture",
    "RewardsConfig",
    "RunConfig",
    "Sample",
    "SampleError",
    "SignalConfig",
    "SignalSpec",
    "Span",
    "TokenValues",
    "Value",
    "__version__",
    "available_estimators",
    "compute_advantages",
    "get_plugin_manager",
    "get_preset",
    "hookimpl",
    "load_config",
    "load_named_model",
    "materialize",
    "parse_config",
    "policy_loss",
    "register_estimator",
    "register_signal",
    "run_training",
]

if TYPE_CHECKING:
    from botgrpo_core.config.errors import ConfigError
    from botgrpo_core.config.loading import load_config, parse_config
    from botgrpo_core.config.models import RewardsConfig, RunConfig, SignalConfig
    from botgrpo_core.config.presets import PRESETS, get_preset
    from botgrpo_core.engine.named_models import NAMED_MODELS, load_named_model, materialize
    from botgrpo_core.engine.run import run_training
    from botgrpo_core.engine.trainer import BoTGRPOTrainer
    from botgrpo_core.estimators.compute import compute_advantages
    from botgrpo_core.estimators.registry import available_estimators, register_estimator
    from botgrpo_core.loss import policy_loss
    from botgrpo_core.rewards.mixture import MixtureOutput, RewardMixture
    from botgrpo_core.signals.manager import PluginManager, get_plugin_manager, register_signal


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'botgrpo_core' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
