"""Every ``trl.GRPOConfig`` field under ``BoTGRPOTrainer``: passed through, honoured, or refused (one home).

botgrpo replaces TRL's ``(B,)`` advantages by its own ``(B, T)`` ones and keeps the rest of TRL. So a field
is either

- **passed through**: TRL (or transformers' ``Trainer``) uses it as it would under ``GRPOTrainer``, and
  nothing of botgrpo changes what it does;
- **honoured**: botgrpo reads it and does what it asks in its own terms (the loss settings become the
  trainer's preset, ``reward_weights`` weigh the TRL rewards inside ``R[i]``, ...);
- **refused** for some values: they shape the advantages botgrpo replaces in a way its estimator cannot
  reproduce, so the trainer stops before training with the reason and the fix instead of ignoring them.

:data:`GRPO_FIELDS` covers every field ``GRPOConfig`` adds to ``TrainingArguments`` (a test fails when a TRL
release adds one that is not listed); ``TrainingArguments``' own fields are passed through unless
listed. :func:`check_grpo_config` (the trainer's check) and :func:`field_table` (the table in
docs/python-api.md, checked by a test) both read it. ``python -m botgrpo_core.engine.trl_fields FILE``
rewrites the table in ``FILE``.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

PASSED = "passed through"
HONOURED = "honoured"
REFUSED = "refused"


@dataclass(frozen=True)
class FieldRule:
    """How ``BoTGRPOTrainer`` treats one ``GRPOConfig`` field.

    :ivar status: :data:`PASSED` or :data:`HONOURED` (values not in ``refused``).
    :ivar note: what happens to it, in a few words.
    :ivar refused: values the trainer refuses, each with the reason and the fix.
    """

    status: str
    note: str = ""
    refused: Mapping[Any, str] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """The table's status column: ``honoured``, ``passed through``, or ``honoured; refused: ...``."""
        if not self.refused:
            return self.status
        return f"{self.status}; {REFUSED}: {', '.join(f'`{v!r}`' for v in self.refused)}"


_P, _H = FieldRule(PASSED), FieldRule(HONOURED)

_SCALE_WHY = (
    "botgrpo's estimators compute the advantages from token rewards (the preset's estimator and its std "
    "option), so TRL's reward scaling would not be applied; keep the default 'group' (bot divides by the "
    "group's pooled std), or pass preset=get_preset('dr-grpo') for unscaled outcome-only advantages"
)

#: Every field ``GRPOConfig`` adds to ``TrainingArguments`` (TRL 1.16), in its order.
GRPO_FIELDS: dict[str, FieldRule] = {
    "model_init_kwargs": _P,
    "trust_remote_code": _P,
    "router_aux_loss_coef": _P,
    "disable_dropout": _P,
    "cast_lm_head_to_fp32": _P,
    "num_generations": FieldRule(HONOURED, "the group size G of botgrpo's group statistics"),
    "num_generations_eval": FieldRule(HONOURED, "G for evaluation batches"),
    "max_completion_length": _P,
    "ds3_gather_for_generation": _P,
    "shuffle_dataset": _P,
    "pad_to_multiple_of": _P,
    "generation_batch_size": _P,
    "steps_per_generation": FieldRule(HONOURED, "also sizes dynamic sampling's per-process batch"),
    "temperature": _P,
    "top_p": _P,
    "top_k": _P,
    "min_p": _P,
    "generation_kwargs": _P,
    "chat_template_kwargs": _P,
    "repetition_penalty": _P,
    "cache_implementation": _P,
    "use_vllm": _P,
    "vllm_mode": _P,
    "vllm_model_impl": _P,
    "vllm_enable_sleep_mode": _P,
    "vllm_structured_outputs_regex": _P,
    "vllm_server_base_url": _P,
    "vllm_server_host": _P,
    "vllm_server_port": _P,
    "vllm_server_timeout": _P,
    "vllm_group_port": _P,
    "vllm_gpu_memory_utilization": _P,
    "vllm_max_model_length": _P,
    "vllm_tensor_parallel_size": _P,
    "beta": FieldRule(HONOURED, "the preset's kl_coef; TRL computes the KL term"),
    "num_iterations": _P,
    "epsilon": FieldRule(HONOURED, "the preset's eps_low"),
    "delta": FieldRule(PASSED, "TRL's two-sided clip acts per token"),
    "epsilon_high": FieldRule(HONOURED, "the preset's eps_high"),
    "sapo_temperature_neg": FieldRule(PASSED, "chosen per token by the sign of A[i, t]"),
    "sapo_temperature_pos": FieldRule(PASSED, "chosen per token by the sign of A[i, t]"),
    "vespo_k_pos": FieldRule(PASSED, "chosen per token by the sign of A[i, t]"),
    "vespo_lambda_pos": FieldRule(PASSED, "chosen per token by the sign of A[i, t]"),
    "vespo_k_neg": FieldRule(PASSED, "chosen per token by the sign of A[i, t]"),
    "vespo_lambda_neg": FieldRule(PASSED, "chosen per token by the sign of A[i, t]"),
    "importance_sampling_level": FieldRule(
        HONOURED,
        "the preset's ratio_level; 'sequence' is refused with a token-level estimator (bot): one ratio "
        "per rollout averages the per-token credit away (docs/algorithms.md)",
    ),
    "reward_weights": FieldRule(HONOURED, "weigh the reward_funcs inside the outcome R[i]"),
    "multi_objective_aggregation": FieldRule(
        HONOURED,
        "'sum_then_normalize': the weighted reward_funcs are summed into R[i], then the estimator normalises",
        refused={
            "normalize_then_sum": "GDPO normalises each reward function in its group before summing; "
            "botgrpo sums the reward functions into one outcome R[i] and mixes it with the local signals "
            "into token rewards before its estimator normalises, so per-function normalisation has no place "
            "to act; use 'sum_then_normalize' (the default)",
        },
    ),
    "scale_rewards": FieldRule(
        HONOURED,
        "'group': the bot estimator divides by each group's (length-weighted, pooled) std",
        refused={"batch": _SCALE_WHY, "none": _SCALE_WHY},
    ),
    "loss_type": FieldRule(
        HONOURED, "every TRL 1.16 loss runs with (B, T) advantages (trl_algorithm.TRL_LOSSES)"
    ),
    "mask_truncated_completions": FieldRule(
        PASSED, "TRL drops truncated rollouts from the loss; group statistics keep them, as TRL's do"
    ),
    "sync_ref_model": _P,
    "ref_model_mixup_alpha": _P,
    "ref_model_sync_steps": _P,
    "top_entropy_quantile": _P,
    "entropy_coef": _P,
    "use_adaptive_entropy": _P,
    "entropy_coef_min": _P,
    "entropy_coef_max": _P,
    "entropy_coef_delta": _P,
    "entropy_target": _P,
    "max_tool_calling_iterations": _P,
    "vllm_importance_sampling_correction": _P,
    "vllm_importance_sampling_mode": _P,
    "vllm_importance_sampling_clip_max": _P,
    "vllm_importance_sampling_clip_min": _P,
    "off_policy_mask_threshold": FieldRule(
        PASSED, "keeps a token when A[i, t] >= 0 or its rollout's KL is low"
    ),
    "use_bias_correction_kl": _P,
    "log_completions": FieldRule(
        PASSED,
        "its table's advantage column is botgrpo's (each rollout's mean token advantage), and a "
        "token_advantages column holds every completion token's",
    ),
    "log_multimodal": _P,
    "num_completions_to_print": _P,
    "log_unique_prompts": _P,
    "log_completions_hub_repo": _P,
    "use_transformers_continuous_batching": _P,
    "transformers_continuous_batching_config": _P,
    "use_transformers_paged": _P,
    "vllm_importance_sampling_cap": _P,
}

#: ``TrainingArguments`` fields botgrpo itself reads (the others are passed through).
TRAINING_FIELDS: dict[str, FieldRule] = {
    "output_dir": FieldRule(HONOURED, "botgrpo's model card README.md is written there"),
    "seed": FieldRule(HONOURED, "also seeds dynamic sampling's extra prompts"),
    "report_to": FieldRule(HONOURED, "botgrpo's metrics go through TRL's logging to every integration"),
}


def grpo_config_fields() -> list[tuple[str, bool]]:
    """``(name, defined by GRPOConfig itself)`` for every field of the installed ``trl.GRPOConfig``."""
    import dataclasses

    from transformers import TrainingArguments
    from trl import GRPOConfig

    base = {f.name for f in dataclasses.fields(TrainingArguments)}
    return [(f.name, f.name not in base) for f in dataclasses.fields(GRPOConfig)]


def field_rule(name: str, own: bool = True) -> FieldRule:
    """The rule of one field; a ``TrainingArguments`` field not listed is passed through.

    :raises KeyError: a field ``GRPOConfig`` defines that :data:`GRPO_FIELDS` does not list.
    """
    if own:
        if name not in GRPO_FIELDS:
            raise KeyError(
                f"GRPOConfig.{name} is not classified in botgrpo_core.engine.trl_fields.GRPO_FIELDS "
                "(a TRL release newer than 1.16?)"
            )
        return GRPO_FIELDS[name]
    return TRAINING_FIELDS.get(name, _P)


def check_grpo_config(args: Any) -> None:
    """Refuse the ``GRPOConfig`` values botgrpo cannot honour (the message names the field, why and the fix).

    :raises ValueError: on the first refused value.
    """
    for name, rule in {**GRPO_FIELDS, **TRAINING_FIELDS}.items():
        value = getattr(args, name, None)
        for refused, why in rule.refused.items():
            if value == refused:
                raise ValueError(f"GRPOConfig.{name}={value!r} is not supported by BoTGRPOTrainer: {why}")


TABLE_START = (
    "<!-- grpo-config-fields:start (python -m botgrpo_core.engine.trl_fields docs/python-api.md) -->"
)
TABLE_END = "<!-- grpo-config-fields:end -->"


def field_table() -> str:
    """The markdown table of every ``GRPOConfig`` field, its status and note, between the markers."""
    rows = [TABLE_START, "", "| field | defined by | status | note |", "|---|---|---|---|"]
    for name, own in grpo_config_fields():
        rule = field_rule(name, own)
        where = "GRPOConfig" if own else "TrainingArguments"
        rows.append(f"| `{name}` | {where} | {rule.label} | {rule.note} |")
    return "\n".join([*rows, "", TABLE_END])


def replace_table(text: str) -> str:
    """``text`` with the part between the markers replaced by :func:`field_table`."""
    start, end = text.index(TABLE_START), text.index(TABLE_END) + len(TABLE_END)
    return text[:start] + field_table() + text[end:]


if __name__ == "__main__":  # pragma: no cover - the docs' regeneration command
    from pathlib import Path

    for path in sys.argv[1:]:
        page = Path(path)
        page.write_text(replace_table(page.read_text(encoding="utf-8")), encoding="utf-8")
