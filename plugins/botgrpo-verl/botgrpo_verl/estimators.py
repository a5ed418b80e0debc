"""botgrpo's advantage estimators as verl advantage estimators (``algorithm.adv_estimator=botgrpo_<name>``).

verl's trainer calls a registered estimator as ``fn(token_level_rewards=(bs, L), response_mask=(bs, L),
config=<algorithm config>, index=<uid per sample>, ...)`` and stores the returned ``(advantages, returns)``.
The adapter turns verl's ``index`` (one prompt uid per rollout, any hashable values) into botgrpo's group
labels and calls botgrpo's own :func:`~botgrpo_core.compute_advantages`: the math has one home, the core.

Options: ``algorithm.botgrpo_options`` (a mapping, e.g. ``+algorithm.botgrpo_options.std=population``) are the
estimator's keyword options, checked by botgrpo as a run file's ``algorithm.estimator_options`` are.
Rollouts whose token rewards are NaN (a signal with ``on_error: nan``) are handed over as botgrpo's trainer
does (:func:`~botgrpo_core.estimators.compute.without_dropped_rollouts`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import torch

from botgrpo_core.estimators.compute import compute_advantages, without_dropped_rollouts
from botgrpo_verl.record import record

#: verl's names for botgrpo's estimators: ``botgrpo_bot``, ``botgrpo_grpo``, ... (never one of verl's own).
PREFIX = "botgrpo_"
#: The key of verl's ``algorithm`` config whose mapping holds the estimator's options.
OPTIONS_KEY = "botgrpo_options"


def verl_name(estimator: str) -> str:
    """verl's name for the botgrpo estimator ``estimator``."""
    return PREFIX + estimator


def group_labels(index: Any) -> torch.Tensor:
    """``(bs,)`` long group labels from verl's ``index`` (a uid per rollout: strings, ints, any hashables).

    Rollouts with equal uids share a label; the labels' values carry no meaning beyond equality.
    """
    values = np.asarray(index)
    if values.ndim != 1:
        raise ValueError(f"verl's index (uid per rollout) must be one-dimensional, got shape {values.shape}")
    try:
        _, inverse = np.unique(values, return_inverse=True)
    except TypeError:  # mixed types np.unique cannot sort: label by first occurrence
        seen: dict[Any, int] = {}
        inverse = np.array([seen.setdefault(v, len(seen)) for v in values.tolist()], dtype=np.int64)
    return torch.from_numpy(np.asarray(inverse, dtype=np.int64).reshape(-1))


def options_from(config: Any) -> dict[str, Any]:
    """The estimator options in verl's algorithm ``config`` (``botgrpo_options``), as a plain dict."""
    if config is None:
        return {}
    getter = getattr(config, "get", None)
    raw = getter(OPTIONS_KEY, None) if callable(getter) else getattr(config, OPTIONS_KEY, None)
    if raw is None:
        return {}
    try:  # an omegaconf DictConfig: resolve it into plain containers
        from omegaconf import DictConfig, OmegaConf

        if isinstance(raw, DictConfig):
            raw = OmegaConf.to_container(raw, resolve=True)
    except ImportError:  # pragma: no cover - verl always brings omegaconf
        pass
    if not isinstance(raw, Mapping):
        raise ValueError(f"algorithm.{OPTIONS_KEY} must be a mapping of estimator options, got {raw!r}")
    return dict(raw)


def verl_advantages(
    estimator: str,
    token_level_rewards: torch.Tensor,
    response_mask: torch.Tensor,
    index: Any,
    options: Mapping[str, Any],
) -> torch.Tensor:
    """``(bs, L)`` float32 advantages of botgrpo's ``estimator`` on a verl batch (0 on padding)."""
    if index is None:
        raise ValueError(
            f"advantage estimator {verl_name(estimator)!r} needs verl's group ids (non_tensor_batch['uid']); "
            "the PPO trainer sets them for every batch"
        )
    groups = group_labels(index).to(token_level_rewards.device)
    mask = response_mask != 0
    rewards, mask, opts = without_dropped_rollouts(estimator, token_level_rewards, mask, dict(options))
    return compute_advantages(estimator, rewards, mask, group_ids=groups, **opts)


def make_verl_estimator(estimator: str) -> Callable[..., tuple[torch.Tensor, torch.Tensor]]:
    """verl's estimator function for botgrpo's ``estimator``: ``(advantages, returns)``, both the advantages
    (critic-free, as verl's own GRPO returns them)."""

    def botgrpo_estimator(
        token_level_rewards: torch.Tensor,
        response_mask: torch.Tensor,
        index: Any = None,
        config: Any = None,
        **_: Any,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        advantages = verl_advantages(
            estimator, token_level_rewards, response_mask, index, options_from(config)
        )
        record(
            "advantages",
            {
                "estimator": estimator,
                "token_level_rewards": token_level_rewards.detach().cpu(),
                "response_mask": response_mask.detach().cpu(),
                "index": [str(x) for x in np.asarray(index).tolist()] if index is not None else None,
                "advantages": advantages.detach().cpu(),
            },
        )
        return advantages, advantages

    botgrpo_estimator.__name__ = botgrpo_estimator.__qualname__ = verl_name(estimator)
    botgrpo_estimator.__doc__ = f"botgrpo's {estimator!r} advantage estimator (botgrpo_verl.estimators)."
    return botgrpo_estimator
