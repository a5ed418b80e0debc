"""Checks made before training starts: the reward mixture and the algorithm, with errors naming the key."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from botgrpo_core.config.models import RunConfig
    from botgrpo_core.config.presets import Preset
    from botgrpo_core.rewards.mixture import RewardMixture


class TrainingSetupError(RuntimeError):
    """A problem found before training starts; the message names the config key and the fix."""


# ------------------------------------------------------------------------------------------------
# Setup checks and TRL arguments
# ------------------------------------------------------------------------------------------------
def build_mixture(config: RunConfig) -> RewardMixture:
    """The reward mixture; an unknown or broken signal is a setup error naming its config key."""
    from botgrpo_core.config.errors import ConfigError
    from botgrpo_core.rewards.mixture import RewardMixture
    from botgrpo_core.signals.manager import PluginError

    try:
        return RewardMixture(config.rewards)
    except PluginError as exc:
        index = next((i for i, s in enumerate(config.rewards.signals) if repr(s.name) in str(exc)), None)
        where = f"rewards.signals[{index}].name" if index is not None else "rewards.signals"
        raise TrainingSetupError(f"{where}: {exc}") from None
    except ConfigError as exc:
        raise TrainingSetupError(str(exc)) from None


def resolve_preset(config: RunConfig) -> Preset:
    """The algorithm preset with overrides, its estimator options tried on a toy batch."""
    import torch

    from botgrpo_core.config.presets import PresetError
    from botgrpo_core.engine.trl_algorithm import resolve_algorithm
    from botgrpo_core.estimators.compute import compute_advantages
    from botgrpo_core.estimators.registry import available_estimators

    wanted = config.algorithm.estimator
    if wanted is not None and wanted not in available_estimators():
        from botgrpo_core.signals.manager import get_plugin_manager

        get_plugin_manager().register_estimators()  # estimators from plugins (botgrpo_register_estimators)
    try:
        preset = resolve_algorithm(config.algorithm)
    except (PresetError, KeyError) as exc:
        raise TrainingSetupError(str(exc).strip('"')) from None
    try:
        compute_advantages(
            preset.estimator,
            torch.tensor([[0.0, 1.0], [1.0, 0.0]]),
            torch.ones(2, 2, dtype=torch.bool),
            group_size=2,
            **dict(preset.estimator_options),
        )
    except (KeyError, ValueError, TypeError) as exc:
        raise TrainingSetupError(
            f"algorithm.estimator_options: {str(exc).strip(chr(34))} (estimator {preset.estimator!r})"
        ) from None
    return preset
