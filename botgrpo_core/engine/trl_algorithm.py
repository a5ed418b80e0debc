"""A preset realised in TRL: the resolved algorithm, its ``GRPOConfig`` loss arguments, and their check."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from botgrpo_core.config.presets import Preset, PresetError, check_estimator_ratio

if TYPE_CHECKING:
    from trl import GRPOConfig

    from botgrpo_core.config.models import AlgorithmConfig

#: Preset aggregation -> TRL loss_type.
LOSS_TYPES = {"sequence": "grpo", "token": "dapo", "constant": "dr_grpo"}


@dataclass(frozen=True)
class TrlLoss:
    """What one TRL 1.16 ``loss_type`` does with botgrpo's ``(B, T)`` advantages ``A[i, t]``.

    :ivar aggregation: the botgrpo aggregation with the same normaliser (``loss.aggregate``), recorded
        in the trainer's preset; the loss itself is always TRL's.
    :ivar with_token_advantages: how TRL's per-token loss reads ``A[i, t]`` (docs/algorithms.md).
    """

    aggregation: str
    with_token_advantages: str


#: Every ``loss_type`` TRL 1.16's ``GRPOTrainer._compute_loss`` implements. Each multiplies the advantage
#: into a per-token loss, so all take ``(B, T)`` advantages as they are; none is refused.
TRL_LOSSES: dict[str, TrlLoss] = {
    "grpo": TrlLoss(
        "sequence", "clipped surrogate per token; mean over each rollout's tokens, then rollouts"
    ),
    "dapo": TrlLoss(
        "token", "clipped surrogate per token; sum over the generation batch's tokens / their count"
    ),
    "dr_grpo": TrlLoss("constant", "clipped surrogate per token; sum / (rollouts x max_completion_length)"),
    "bnpo": TrlLoss(
        "token",
        "clipped surrogate per token; token mean over the micro-batch (dapo: over the generation batch)",
    ),
    "luspo": TrlLoss(
        "constant",
        "clipped surrogate per token; sum over each rollout's tokens, mean over rollouts (dr_grpo times "
        "max_completion_length)",
    ),
    "cispo": TrlLoss(
        "token", "-min(ratio, epsilon_high) (detached) x A[i, t] x log p per token; normalised as dapo"
    ),
    "sapo": TrlLoss(
        "sequence",
        "soft gate sigmoid(tau (ratio - 1)) x A[i, t] per token, tau chosen by the sign of A[i, t] "
        "(sapo_temperature_pos / _neg); normalised as grpo",
    ),
    "vespo": TrlLoss(
        "token",
        "gamma weight phi(w) of the sequence ratio w x A[i, t] x log p per token, (k, lambda) chosen by the "
        "sign of A[i, t] (vespo_k_pos / _neg ...); normalised as dapo",
    ),
}


def resolve_algorithm(algorithm: AlgorithmConfig) -> Preset:
    """The run's preset with the run file's overrides applied (checked; errors name the key)."""
    from botgrpo_core.config.presets import get_preset

    preset = get_preset(algorithm.preset)
    changes = {
        key: getattr(algorithm, key)
        for key in (
            "estimator",
            "ratio_level",
            "aggregation",
            "eps_low",
            "eps_high",
            "kl_coef",
            "dynamic_sampling",
        )
        if getattr(algorithm, key) is not None
    }
    if algorithm.estimator is not None and algorithm.estimator != preset.estimator:
        changes["estimator_options"] = dict(algorithm.estimator_options)
    elif algorithm.estimator_options:
        changes["estimator_options"] = {**preset.estimator_options, **algorithm.estimator_options}
    try:
        return preset.replace(**changes) if changes else preset
    except PresetError as exc:
        raise PresetError(f"algorithm: {exc}") from None


def trl_algorithm_args(preset: Preset) -> dict[str, Any]:
    """``GRPOConfig`` keyword arguments that realise a preset's loss settings in TRL."""
    return {
        "loss_type": LOSS_TYPES[preset.aggregation],
        "importance_sampling_level": preset.ratio_level,
        "epsilon": preset.eps_low,
        "epsilon_high": preset.eps_high,
        "beta": preset.kl_coef,
        # TRL's own (B,) advantages are replaced; "group" keeps its zero-std logging meaningful.
        "scale_rewards": "group",
    }


def check_trl_args(args: GRPOConfig, preset: Preset) -> None:
    """Fail before training when TRL's settings contradict the preset (the message says how to fix it)."""
    try:
        check_estimator_ratio(
            preset.estimator, args.importance_sampling_level, where="importance_sampling_level"
        )
    except PresetError as exc:
        raise ValueError(f"{exc} (algorithm.ratio_level / GRPOConfig.importance_sampling_level)") from None
    expected = trl_algorithm_args(preset)
    for key in ("loss_type", "importance_sampling_level", "epsilon", "beta"):
        if getattr(args, key) != expected[key]:
            raise ValueError(
                f"GRPOConfig.{key}={getattr(args, key)!r} contradicts preset {preset.name!r} ({expected[key]!r}); "
                "build the config with botgrpo_core.engine.trl_algorithm.trl_algorithm_args(preset)"
            )


def trl_preset_note(preset: Preset) -> str:
    """The line a trainer built without ``preset=`` says once: what its ``trl-<loss_type>+<estimator>`` preset
    is, and how to pick a named algorithm instead."""
    return (
        f"BoTGRPOTrainer: no preset= given, so the algorithm is the GRPOConfig's: {preset.name} = "
        f"{preset.description}. For a named algorithm (bot-grpo, grpo, dapo, ...: docs/algorithms.md) pass "
        "preset=get_preset(name) with a GRPOConfig matching it (trl_algorithm_args, docs/python-api.md)"
    )


def preset_from_trl_args(
    args: GRPOConfig, estimator: str = "bot", estimator_options: dict[str, Any] | None = None
) -> Preset:
    """The algorithm a plain ``GRPOConfig`` describes, with ``estimator`` for its advantages.

    This is what lets a TRL script switch to :class:`~botgrpo_core.engine.trainer.BoTGRPOTrainer` by its
    class name alone: the loss settings stay TRL's (``loss_type``, ``epsilon``, ``epsilon_high``,
    ``beta``, ``importance_sampling_level``), only the advantages change.

    Every TRL 1.16 ``loss_type`` is kept (:data:`TRL_LOSSES`); the preset records the aggregation with
    the same normaliser, and TRL computes the loss it names with botgrpo's ``(B, T)`` advantages.

    :raises ValueError: settings botgrpo cannot realise (a sequence-level ratio under a token-level
        estimator), naming the field and the fix.
    """
    loss = TRL_LOSSES.get(args.loss_type)
    if loss is None:
        raise ValueError(
            f"GRPOConfig.loss_type={args.loss_type!r} is not a TRL 1.16 loss; use one of "
            f"{', '.join(sorted(TRL_LOSSES))}"
        )
    aggregation = loss.aggregation
    eps_high = args.epsilon if args.epsilon_high is None else args.epsilon_high
    base = Preset(name=f"trl-{args.loss_type}+{estimator}", estimator=estimator)
    try:
        return base.replace(
            estimator_options=dict(estimator_options or {}),
            ratio_level=args.importance_sampling_level,
            aggregation=aggregation,
            eps_low=args.epsilon,
            eps_high=eps_high,
            kl_coef=args.beta,
            uses_local_signals=True,
            description=(
                f"TRL's loss_type {args.loss_type!r} ({loss.with_token_advantages}; clip {args.epsilon:g}/"
                f"{eps_high:g}, KL beta {args.beta:g}, {args.importance_sampling_level}-level ratio) with "
                f"botgrpo's {estimator!r} advantages"
            ),
        )
    except PresetError as exc:
        raise ValueError(f"{exc} (from the GRPOConfig; pass preset= to choose the algorithm)") from None
