"""The ``README.md`` a trainer writes beside its checkpoints (a pure function of what it is given)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any


def model_card(
    model_name: str,
    base_model: str | None,
    preset: Any,
    mixture: Any,
    trl_reward_funcs: Sequence[str] = (),
    loss_type: str | None = None,
) -> str:
    """The ``README.md`` a run writes beside its checkpoints: what was trained from what, and how.

    :param base_model: the starting model's hub id or local path (``None``: built in code).
    :param preset: the run's :class:`~botgrpo_core.config.presets.Preset`.
    :param mixture: its :class:`~botgrpo_core.rewards.mixture.RewardMixture`.
    :param trl_reward_funcs: names of the TRL reward functions the trainer was given.
    :param loss_type: TRL's ``loss_type`` the update ran with (default: the preset's aggregation only).
    """
    import trl

    from botgrpo_core import __version__

    front = ["library_name: transformers", "tags: [botgrpo, bot-grpo, trl, grpo]"]
    if base_model and not Path(base_model).is_dir():
        front.append(f"base_model: {base_model}")
    source = f"`{base_model}`" if base_model else "a model built in code"
    config = mixture.config
    signals = [f"- `{r.spec.name}` ({r.spec.kind}, weight {r.config.weight:g})" for r in mixture.runners]
    signals += [f"- TRL reward function `{name}` (global)" for name in trl_reward_funcs]
    loss = f"TRL loss_type `{loss_type}`, " if loss_type else ""
    return "\n".join(
        [
            "---",
            *front,
            "---",
            "",
            f"# {model_name}",
            "",
            f"Trained from {source} with [botgrpo](https://github.com/botgrpo/botgrpo) {__version__} on TRL "
            f"{trl.__version__}: algorithm `{preset.name}` (advantage estimator `{preset.estimator}`, {loss}"
            f"{preset.ratio_level}-level importance ratio, {preset.aggregation} loss aggregation, clip "
            f"{preset.eps_low:g}/{preset.eps_high:g}, KL {preset.kl_coef:g}).",
            "",
            f"Token rewards `r[i,t] = alpha * R[i] + beta * S[i,t]` with alpha {config.alpha:g}, beta {config.beta:g}:",
            "",
            *(signals or ["- (no signals)"]),
            "",
        ]
    )
