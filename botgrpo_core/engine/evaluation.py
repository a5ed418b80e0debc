"""Held-out evaluation: greedy and sampled generation on the eval rows, task success and signal means."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from botgrpo_core.rewards.mixture import RewardMixture


# ------------------------------------------------------------------------------------------------
# Evaluation
# ------------------------------------------------------------------------------------------------
def render_prompts(tokenizer: Any, prompts: Sequence[Any]) -> list[str]:
    """Prompt texts: a string as it is, a chat prompt through the tokenizer's chat template (generation prompt on)."""
    return [
        tokenizer.apply_chat_template(p, tokenize=False, add_generation_prompt=True)
        if not isinstance(p, str)
        else p
        for p in prompts
    ]


def colocated_engine(trainer: Any) -> Any:
    """The colocated vLLM engine holding the policy's current weights when ``trainer``'s rollouts come from one,
    else None (evaluation then uses ``model.generate``). Syncs the weights the way TRL does before a generation
    and marks them synced, so the next rollout does not push them again; call it on every rank (a sync may be
    collective)."""
    generation = getattr(trainer, "vllm_generation", None)
    if generation is None or getattr(generation, "mode", None) != "colocate":
        return None
    if trainer._last_loaded_step != trainer.state.global_step:
        generation.sync_weights()
        trainer._last_loaded_step = trainer.state.global_step
    return generation.llm


def generate(
    model: Any,
    tokenizer: Any,
    prompts: Sequence[Any],
    *,
    max_new_tokens: int,
    greedy: bool,
    seed: int = 1234,
    temperature: float = 1.0,
    batch_size: int = 200,
) -> tuple[list[list[int]], list[str]]:
    """Completions (token ids up to and including EOS, and text) for ``prompts``; RNG state untouched."""
    import torch

    texts = render_prompts(tokenizer, prompts)
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    ids_out: list[list[int]] = []
    side = tokenizer.padding_side
    tokenizer.padding_side = "left"
    try:
        with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []), torch.no_grad():
            torch.manual_seed(seed)
            for start in range(0, len(texts), batch_size):
                enc = tokenizer(
                    texts[start : start + batch_size],
                    return_tensors="pt",
                    padding=True,
                    add_special_tokens=False,
                ).to(device)
                sampling = (
                    {"do_sample": False}
                    if greedy
                    else {"do_sample": True, "temperature": temperature, "top_k": 0, "top_p": 1.0}
                )
                gen = model.generate(
                    **enc,
                    max_new_tokens=max_new_tokens,
                    pad_token_id=tokenizer.pad_token_id,
                    eos_token_id=tokenizer.eos_token_id,
                    **sampling,
                )
                for row in gen[:, enc["input_ids"].shape[1] :].tolist():
                    if tokenizer.eos_token_id in row:
                        row = row[: row.index(tokenizer.eos_token_id) + 1]
                    ids_out.append(row)
    finally:
        tokenizer.padding_side = side
        model.train(was_training)
    return ids_out, tokenizer.batch_decode(ids_out, skip_special_tokens=True)


def generate_vllm(
    llm: Any,
    tokenizer: Any,
    prompts: Sequence[Any],
    *,
    max_new_tokens: int,
    greedy: bool,
    seed: int = 1234,
    temperature: float = 1.0,
) -> tuple[list[list[int]], list[str]]:
    """:func:`generate` on a colocated vLLM engine (``llm``, a ``vllm.LLM`` holding the policy's weights).

    Prompts are rendered and tokenized as :func:`generate` does; sampling is unrestricted (no top-k/top-p,
    as there). vLLM's CPU backend fails on per-request seeds once it schedules in steps ("CPU Generator does
    not use offset"), and a colocated engine samples from this process's torch generator: so, as
    :func:`generate` does, the draw runs under ``torch.random.fork_rng`` seeded with ``seed``: the same
    weights give the same samples, and the rollouts' random stream is left where it was. A prompt listed
    twice gets two different samples.
    """
    import torch
    from vllm import SamplingParams

    texts = render_prompts(tokenizer, prompts)
    inputs = [{"prompt_token_ids": tokenizer(t, add_special_tokens=False)["input_ids"]} for t in texts]
    params = SamplingParams(max_tokens=max_new_tokens, temperature=0.0 if greedy else temperature)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        outputs = llm.generate(inputs, params, use_tqdm=False)
    ids_out = [list(out.outputs[0].token_ids) for out in outputs]  # EOS included when it stopped there
    return ids_out, tokenizer.batch_decode(ids_out, skip_special_tokens=True)


def evaluate(
    model: Any,
    tokenizer: Any,
    rows: Sequence[Mapping[str, Any]],
    *,
    mixture: RewardMixture,
    task: Any,
    max_new_tokens: int,
    greedy: bool,
    batch_size: int = 200,
    seed: int = 1234,
    temperature: float = 1.0,
    engine: Any = None,
) -> dict[str, float]:
    """Held-out metrics: the task's (answer accuracy, step error rate), the mixture's (reward, signal
    means) and ``length``, the mean completion length in tokens (EOS included).

    ``temperature`` applies to sampled (not greedy) evaluation; the run passes its rollout temperature, so
    the held-out figures describe the policy as training samples it. ``engine``: a colocated ``vllm.LLM``
    holding the policy's current weights generates instead of ``model.generate`` (:func:`generate_vllm`)."""
    from botgrpo_core.rewards.samples import decode_samples, prompt_text

    if not rows:
        return {}
    prompts = [r["prompt"] for r in rows]
    if engine is not None:
        ids, texts = generate_vllm(
            engine,
            tokenizer,
            prompts,
            max_new_tokens=max_new_tokens,
            greedy=greedy,
            seed=seed,
            temperature=temperature,
        )
    else:
        ids, texts = generate(
            model,
            tokenizer,
            prompts,
            max_new_tokens=max_new_tokens,
            greedy=greedy,
            seed=seed,
            temperature=temperature,
            batch_size=batch_size,
        )
    plain = [{k: v for k, v in r.items() if k != "prompt"} for r in rows]
    out: dict[str, float] = {}
    if task is not None:
        out.update(task.evaluate(plain, texts))
    samples = decode_samples(tokenizer, [prompt_text(r["prompt"]) for r in rows], ids, plain)
    mix = mixture.score_batch(samples)
    lengths = mix.mask.sum(1).clamp(min=1)
    per_rollout = (mix.token_rewards.nan_to_num(0.0).sum(1) / lengths)[mix.valid]
    out["reward"] = float(per_rollout.mean()) if per_rollout.numel() else math.nan
    out["length"] = sum(len(i) for i in ids) / len(ids)
    out.update({k: v for k, v in mix.metrics.items() if k.startswith("signals/") and k.endswith("/mean")})
    return out
