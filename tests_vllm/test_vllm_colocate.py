"""TRL's ``use_vllm`` colocate mode on vLLM's CPU backend, with botgrpo's trainer and a real pretrained model.

After each weight sync the engine's log-probabilities of a rollout equal the policy's (float32 kernels: within
1e-3), so the importance-sampling terms TRL computes from them are right; and the policy really moved, so the
check is not vacuous.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("vllm")

TOLERANCE = 1e-3  # nats, max over a rollout's tokens; measured ~5e-5 (float32 oneDNN vs torch matmuls)


def policy_logprobs(model: Any, ids: list[int]) -> Any:
    import torch

    with torch.no_grad():
        logits = model(torch.tensor([ids], device=model.device)).logits[0, :-1].float()
    return torch.log_softmax(logits, -1).gather(1, torch.tensor(ids[1:])[:, None])[:, 0].cpu()


def engine_logprobs(llm: Any, ids: list[int]) -> Any:
    import torch
    from vllm import SamplingParams

    out = llm.generate(
        [{"prompt_token_ids": ids}], SamplingParams(max_tokens=1, prompt_logprobs=0), use_tqdm=False
    )
    scored = out[0].prompt_logprobs
    return torch.tensor([scored[i][ids[i]].logprob for i in range(1, len(ids))])


def test_engine_matches_the_policy_after_every_sync(smollm2: Path, tmp_path: Path) -> None:
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback
    from trl import GRPOConfig

    from botgrpo_core import BoTGRPOTrainer

    torch.set_num_threads(1)
    tokenizer = AutoTokenizer.from_pretrained(smollm2)
    rows = [
        {
            "prompt": [{"role": "user", "content": f"What is {a} + {b}? Answer with the number."}],
            "answer": str(a + b),
        }
        for a, b in [(3, 4), (12, 9), (25, 17), (8, 8)]
    ]

    def correct(completions: list[Any], answer: list[str], **_: Any) -> list[float]:
        return [float(a in c[0]["content"]) for c, a in zip(completions, answer, strict=True)]

    args = GRPOConfig(
        output_dir=str(tmp_path),
        per_device_train_batch_size=4,
        num_generations=4,
        max_completion_length=24,
        max_steps=2,
        logging_steps=1,
        learning_rate=1e-4,  # large enough that one step moves log-probabilities well past the tolerance
        use_cpu=True,
        bf16=False,
        report_to="none",
        save_strategy="no",
        gradient_checkpointing=False,
        use_vllm=True,
        vllm_mode="colocate",
        vllm_gpu_memory_utilization=0.3,
        vllm_max_model_length=256,
        temperature=1.0,
        seed=0,
    )
    checks: list[dict[str, float]] = []

    class Check(TrainerCallback):
        def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            generation = trainer.vllm_generation
            generation.sync_weights()  # what TRL calls before the next generation
            ids = trainer._last_rollout
            mine = policy_logprobs(trainer.model, ids)
            theirs = engine_logprobs(generation.llm, ids)
            checks.append(
                {
                    "engine_vs_policy": float((mine - theirs).abs().max()),
                    "policy_moved": float((mine - initial).abs().max()),
                }
            )

    model = AutoModelForCausalLM.from_pretrained(smollm2, dtype=torch.float32)
    trainer = BoTGRPOTrainer(
        model=model,
        reward_funcs=[correct],
        args=args,
        train_dataset=Dataset.from_list(rows),
        processing_class=tokenizer,
        callbacks=[Check()],
    )
    original = trainer._generate_and_score_completions

    def keep_rollout(inputs: Any) -> Any:
        out = original(inputs)
        prompt = out["prompt_ids"][0][out["prompt_mask"][0].bool()].tolist()
        completion = out["completion_ids"][0][out["completion_mask"][0].bool()].tolist()
        trainer._last_rollout = prompt + completion
        return out

    trainer._generate_and_score_completions = keep_rollout  # type: ignore[method-assign]
    prompt_ids = tokenizer.apply_chat_template(rows[0]["prompt"], add_generation_prompt=True)
    prompt_ids = prompt_ids if isinstance(prompt_ids, list) else prompt_ids["input_ids"]
    probe = list(prompt_ids) + tokenizer("7", add_special_tokens=False)["input_ids"]
    initial = policy_logprobs(model, probe)
    trainer._last_rollout = probe
    start = engine_logprobs(trainer.vllm_generation.llm, probe)
    assert float((initial - start).abs().max()) < TOLERANCE  # before any sync
    # the CPU engine runs eagerly: no Inductor compile at every start and resume (benchmarks/vllm_startup.py)
    from vllm.config import CompilationMode

    assert trainer.vllm_generation.llm.llm_engine.vllm_config.compilation_config.mode == CompilationMode.NONE
    # compare on the fixed probe too, so "moved" is measured on one sequence
    trainer._generate_and_score_completions = original  # type: ignore[method-assign]
    import time

    start_time = time.perf_counter()
    trainer.train()
    print(f"2 steps in {time.perf_counter() - start_time:.1f} s; checks {checks}")
    assert trainer.state.global_step == 2 and len(checks) == 2
    for check in checks:
        assert check["engine_vs_policy"] < TOLERANCE, checks
    assert max(c["policy_moved"] for c in checks) > 10 * TOLERANCE, checks
    losses = [log["loss"] for log in trainer.state.log_history if "loss" in log]
    assert losses and all(torch.isfinite(torch.tensor(losses))), losses

    # held-out evaluation on the engine (botgrpo's run_eval with vLLM rollouts): greedy pages equal the
    # policy's own greedy generate after the sync
    from botgrpo_core.engine.evaluation import generate, generate_vllm

    trainer.vllm_generation.sync_weights()
    prompts = [r["prompt"] for r in rows]
    engine_ids, _ = generate_vllm(
        trainer.vllm_generation.llm, tokenizer, prompts, max_new_tokens=24, greedy=True
    )
    policy = trainer.accelerator.unwrap_model(trainer.model)
    policy_ids, _ = generate(policy, tokenizer, prompts, max_new_tokens=24, greedy=True)
    assert engine_ids == policy_ids
