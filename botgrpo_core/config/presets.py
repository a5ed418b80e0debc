"""Named algorithm presets: an advantage estimator bundled with its loss settings.

A run file picks one by name (``algorithm.preset: dapo``) and may override single fields. Importing
this module does not import torch (``botgrpo validate`` runs without it). The table with formulas and
sources is docs/algorithms.md.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from botgrpo_core.estimators.registry import available_estimators, estimator_is_outcome_level
from botgrpo_core.loss import Aggregation, RatioLevel, loss_settings_problem

__all__ = [
    "PRESETS",
    "Preset",
    "PresetError",
    "check_estimator_ratio",
    "check_preset_compat",
    "get_preset",
]


class PresetError(ValueError):
    """An algorithm preset (or its overrides) that cannot work; the message says how to fix it."""


@dataclass(frozen=True)
class Preset:
    """An algorithm: estimator + options + loss settings.

    :ivar name: the preset's name (``bot-grpo``, ``dapo``...).
    :ivar estimator: a registered advantage estimator name (``botgrpo_core.estimators.compute``).
    :ivar estimator_options: keyword options for the estimator (read-only mapping).
    :ivar ratio_level: ``"token"`` or ``"sequence"`` (GSPO) importance ratio.
    :ivar aggregation: ``"sequence"`` (GRPO), ``"token"`` (DAPO) or ``"constant"`` (Dr. GRPO).
    :ivar eps_low: lower clip range, ratio floor ``1 - eps_low``.
    :ivar eps_high: upper clip range, ratio ceiling ``1 + eps_high``.
    :ivar kl_coef: weight of the k3 KL penalty to the reference policy (0 = no reference model).
    :ivar dynamic_sampling: drop groups without reward spread and resample (DAPO).
    :ivar uses_local_signals: the estimator is designed to use local (span / token) signals.
    :ivar description: one line on when to use it.
    :ivar paper: the source.
    """

    name: str
    estimator: str
    estimator_options: Mapping[str, Any] = field(default_factory=dict, hash=False)
    ratio_level: RatioLevel = "token"
    aggregation: Aggregation = "sequence"
    eps_low: float = 0.2
    eps_high: float = 0.2
    kl_coef: float = 0.0
    dynamic_sampling: bool = False
    uses_local_signals: bool = False
    description: str = ""
    paper: str = ""

    def __post_init__(self) -> None:
        # read-only view so a shared preset cannot be mutated through its options
        object.__setattr__(self, "estimator_options", MappingProxyType(dict(self.estimator_options)))

    def replace(self, **changes: Any) -> Preset:
        """A copy with some fields changed, checked with :func:`check_preset_compat`."""
        unknown = sorted(set(changes) - {f.name for f in dataclasses.fields(self)})
        if unknown:
            raise PresetError(
                f"preset {self.name!r}: unknown field(s) {', '.join(unknown)}; "
                f"known: {', '.join(f.name for f in dataclasses.fields(self))}"
            )
        new = dataclasses.replace(self, **changes)
        check_preset_compat(new)
        return new


def _estimator_is_token_level(name: str) -> bool | None:
    """True / False for registered estimators, None when only a not-yet-loaded plugin could tell."""
    if name not in available_estimators():
        return None
    return not estimator_is_outcome_level(name)


def check_estimator_ratio(estimator: str, ratio_level: str, *, where: str = "algorithm") -> None:
    """Reject a token-level estimator paired with a sequence-level (GSPO) ratio.

    :param where: the config path or preset name to put in the message.
    :raises PresetError: the pairing would silently discard the token-level credit.
    """
    if ratio_level == "sequence" and _estimator_is_token_level(estimator):
        raise PresetError(
            f"{where}: estimator {estimator!r} gives every token its own advantage, but "
            "ratio_level='sequence' (GSPO) uses one importance ratio per rollout, so the clip acts on the "
            "rollout as a whole and the per-token credit is averaged away. Set ratio_level: token, or use "
            "an outcome-level estimator (grpo, dr_grpo) with the sequence ratio."
        )


def check_preset_compat(preset: Preset) -> None:
    """Check a preset's fields and their combination.

    :raises PresetError: naming the preset and the field, with the fix.
    """
    where = f"preset {preset.name!r}"
    problem = loss_settings_problem(
        ratio_level=preset.ratio_level,
        aggregation=preset.aggregation,
        eps_low=preset.eps_low,
        eps_high=preset.eps_high,
        kl_coef=preset.kl_coef,
    )
    if problem:
        raise PresetError(f"{where}: {problem}")
    if not isinstance(preset.estimator, str) or not preset.estimator:
        raise PresetError(f"{where}: estimator must be a registered estimator name, got {preset.estimator!r}")
    check_estimator_ratio(preset.estimator, preset.ratio_level, where=where)


_BOT_NOTE = "BoT-GRPO (this project): length-weighted bag-of-tokens group statistics, see docs/algorithms.md"
_GRPO = 'Shao et al. 2024, "DeepSeekMath", arXiv:2402.03300'
_DAPO = 'Yu et al. 2025, "DAPO: An Open-Source LLM Reinforcement Learning System at Scale", arXiv:2503.14476'
_GSPO = 'Zheng et al. 2025, "Group Sequence Policy Optimization", arXiv:2507.18071'
_DR = 'Liu et al. 2025, "Understanding R1-Zero-Like Training: A Critical Perspective", arXiv:2503.20783'
_PURE = (
    'Cheng et al. 2025, "Stop Summation: Min-Form Credit Assignment Is All Process Reward Model Needs '
    'for Reasoning", arXiv:2504.15275'
)

PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset(
            name="bot-grpo",
            estimator="bot",
            estimator_options={"std": "bessel", "scope": "group"},
            uses_local_signals=True,
            description="token-level rewards (outcome + local signals) with length-weighted group statistics",
            paper=_BOT_NOTE,
        ),
        Preset(
            name="grpo",
            estimator="grpo",
            description="outcome-only baseline; the reference every other preset is compared with",
            paper=_GRPO,
        ),
        Preset(
            name="dapo",
            estimator="grpo",
            aggregation="token",
            eps_low=0.2,
            eps_high=0.28,
            dynamic_sampling=True,
            description="long generations: clip-higher keeps exploration, token mean weighs long rollouts fully",
            paper=_DAPO,
        ),
        Preset(
            name="gspo",
            estimator="grpo",
            ratio_level="sequence",
            eps_low=3e-4,
            eps_high=4e-4,
            description="sequence-level ratio for stability (MoE, long outputs); outcome rewards only",
            paper=_GSPO,
        ),
        Preset(
            name="dr-grpo",
            estimator="dr_grpo",
            aggregation="constant",
            description="unbiased outcome baseline: no std division, no per-length normalisation",
            paper=_DR,
        ),
        Preset(
            name="process",
            estimator="process",
            uses_local_signals=True,
            description="step rewards as in DeepSeekMath process supervision (sum-form returns-to-go)",
            paper=_GRPO + ", sec. 4.1.3",
        ),
        Preset(
            name="pure",
            estimator="pure",
            estimator_options={"temperature": 0.1, "baseline": "rloo"},
            aggregation="token",
            uses_local_signals=True,
            description="step rewards from a noisy PRM: min-form credit resists reward hacking",
            paper=_PURE,
        ),
        Preset(
            name="token-pool",
            estimator="token_pool",
            uses_local_signals=True,
            description="ablation: BoT without the 1/L weights (shows why they matter); not for real runs",
            paper=_BOT_NOTE,
        ),
    )
}


def get_preset(name: str) -> Preset:
    """The preset called ``name``.

    :raises KeyError: unknown name; the message lists the presets and the nearest match.
    """
    try:
        return PRESETS[name]
    except KeyError:
        close = difflib.get_close_matches(str(name), PRESETS, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise KeyError(
            f"unknown algorithm preset {name!r}.{hint} Available: {', '.join(sorted(PRESETS))}. "
            "Set algorithm.preset to one of these (docs/algorithms.md describes each)."
        ) from None
