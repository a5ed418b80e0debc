"""Multi-turn rollouts with a tool under BoTGRPOTrainer: the tool's output tokens (TRL's ``tool_mask`` /
``env_mask`` 0) get no reward and advantage 0; token signals count only on the model's own tokens.

Two of TRL 1.16's multi-turn paths, played for real: ``rollout_func`` (the policy writes a first turn with HF
``generate``, a calculator tool defined here answers, the policy writes a second turn; the function returns
``env_mask``), and ``tools=[add]`` (TRL parses the tiny model's tool call from Qwen2.5's chat template, runs the
tool and appends its answer). ``environment_factory`` reaches the same ``tool_mask`` through the same loop."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import torch
from train_fixtures import digit_runs_mixture, tiny_grpo_args

pytest.importorskip("trl")


def calculator(expression: str) -> str:
    """The tool: the value of ``a+b`` or ``a-b`` (no eval)."""
    m = re.fullmatch(r"(\d+)([+-])(\d+)", expression)
    if m is None:
        return "0"
    a, op, b = int(m[1]), m[2], int(m[3])
    return str(a + b if op == "+" else a - b)


def _rollout(tokenizer: Any, turn_tokens: int) -> Any:
    def rollout_func(prompts: list[str], trainer: Any) -> dict[str, Any]:
        model = trainer.accelerator.unwrap_model(trainer.model)
        out: dict[str, list[Any]] = {"prompt_ids": [], "completion_ids": [], "logprobs": [], "env_mask": []}

        def turn(ids: list[int]) -> list[int]:
            with torch.no_grad():
                new = model.generate(
                    torch.tensor([ids]),
                    attention_mask=torch.ones(1, len(ids), dtype=torch.long),
                    max_new_tokens=turn_tokens,
                    min_new_tokens=turn_tokens,
                    do_sample=True,
                    pad_token_id=tokenizer.pad_token_id,
                )
            return new[0, len(ids) :].tolist()

        for prompt in prompts:
            prompt_ids = tokenizer(prompt)["input_ids"]
            first = turn(prompt_ids)
            tool = tokenizer(f"={calculator(prompt[3:-1])}\n")["input_ids"]  # "Q: 3+4=" -> "=7\n"
            second = turn(prompt_ids + first + tool)
            out["prompt_ids"].append(prompt_ids)
            out["completion_ids"].append(first + tool + second)
            out["env_mask"].append([1] * len(first) + [0] * len(tool) + [1] * len(second))
            out["logprobs"].append([0.0] * (len(first) + len(tool) + len(second)))
        return out

    return rollout_func


def test_tool_tokens_get_no_reward_and_zero_advantage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from datasets import Dataset

    from botgrpo_core import BoTGRPOTrainer
    from botgrpo_core.engine.tiny import build_tiny_model, char_tokenizer

    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    torch.set_num_threads(1)

    mixture = digit_runs_mixture(beta=1.0)  # +1 on every run of digits, the tool's answer's too

    def has_answer(completions: list[str], **kwargs: Any) -> list[float]:
        return [float("\n" in c) for c in completions]

    tokenizer = char_tokenizer()
    trainer = BoTGRPOTrainer(
        build_tiny_model(tokenizer, seed=0),
        [has_answer],
        tiny_grpo_args(tmp_path, max_completion_length=16),
        Dataset.from_list([{"prompt": f"Q: {a}+{a + 1}="} for a in range(1, 9)]),
        processing_class=tokenizer,
        rollout_func=_rollout(tokenizer, turn_tokens=4),
        mixture=mixture,
    )
    batches: list[dict[str, torch.Tensor]] = []
    original = trainer._generate_and_score_completions

    def capture(inputs: Any) -> Any:
        out = original(inputs)
        batches.append({k: v.clone() for k, v in out.items() if isinstance(v, torch.Tensor)})
        return out

    trainer._generate_and_score_completions = capture  # type: ignore[method-assign]
    trainer.train()
    assert trainer.state.global_step == 2 and batches
    for batch in batches:
        adv, tool = batch["advantages"], batch["tool_mask"].bool()
        model_tokens = batch["completion_mask"].bool() & tool
        assert adv.shape == tool.shape
        assert (~tool).any(), "the tool answered nothing"
        assert torch.all(adv[~tool] == 0), "tool output tokens must get advantage 0"
        assert adv[model_tokens].abs().sum() > 0  # the model's own tokens still learn
    # Every rollout's statistics are over its model tokens only: the advantages of one rollout's model tokens
    # average (1/L weights) to the rollout's token-mean advantage, which over a group sums to ~0 (bot).
    adv, tool = batches[-1]["advantages"], batches[-1]["tool_mask"].bool()
    mask = batches[-1]["completion_mask"].bool() & tool
    per_rollout = (adv * mask).sum(1) / mask.sum(1).clamp(min=1)
    assert torch.allclose(per_rollout.view(-1, 4).sum(1), torch.zeros(2, dtype=per_rollout.dtype), atol=1e-4)


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first integer.
        b: The second integer.
    """
    return a + b


@pytest.mark.slow
def test_tools_tool_output_tokens_get_zero_advantage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``tools=[add]`` as TRL runs them: a tiny model taught here to call ``add`` (Qwen2.5's chat template, which
    TRL ships and parses) calls it, TRL appends the tool's answer (tool_mask 0) and the model writes on; the
    answer's tokens (digits the local signal would reward) get advantage 0."""
    import trl
    from datasets import Dataset

    from botgrpo_core import BoTGRPOTrainer
    from botgrpo_core.config.sections import TinyModelSpec
    from botgrpo_core.engine.tiny import build_tiny_model, byte_level_bpe_tokenizer

    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    torch.set_num_threads(1)
    template = (Path(trl.__file__).parent / "chat_templates" / "qwen2_5.jinja").read_text(encoding="utf-8")
    call = '<tool_call>\n{"name": "add", "arguments": {"a": 3, "b": 4}}\n</tool_call><|im_end|>'
    prompt = [{"role": "user", "content": "What is 3+4?"}]

    def tokenizer_for(corpus: list[str]) -> Any:
        tok = byte_level_bpe_tokenizer(corpus, vocab_size=1200)
        tok.add_special_tokens({"additional_special_tokens": ["<|im_start|>", "<|im_end|>"]})
        tok.eos_token = "<|im_end|>"
        tok.chat_template = template
        return tok

    text = tokenizer_for(["x"]).apply_chat_template(
        prompt, tools=[add], add_generation_prompt=True, tokenize=False
    )
    tokenizer = tokenizer_for([text + call, "<tool_response>\n7\n</tool_response>"] * 50)
    model = build_tiny_model(tokenizer, TinyModelSpec(max_positions=512), seed=0)
    ids = tokenizer(text + call)["input_ids"]
    start = len(tokenizer(text)["input_ids"])
    x = torch.tensor([ids])
    labels = x.clone()
    labels[:, :start] = -100
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    for _ in range(400):  # teach the call (supervised, the prompt's tokens masked)
        loss = model(input_ids=x, labels=labels).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if loss.item() < 0.01:
            break

    mixture = digit_runs_mixture(beta=1.0)  # +1 on every run of digits, the tool's answer's too

    def answered(completions: list[Any], **kwargs: Any) -> list[float]:
        return [float("7" in str(c)) for c in completions]

    def run(**trainer_kwargs: Any) -> tuple[Any, dict[str, torch.Tensor]]:
        trainer = BoTGRPOTrainer(
            model,
            args=tiny_grpo_args(
                tmp_path,
                per_device_train_batch_size=4,
                max_completion_length=96,
                max_tool_calling_iterations=1,
                temperature=0.3,
                max_steps=1,
            ),
            train_dataset=Dataset.from_list([{"prompt": prompt}] * 4),
            processing_class=tokenizer,
            mixture=mixture,
            **trainer_kwargs,
        )
        batches: list[dict[str, torch.Tensor]] = []
        original = trainer._generate_and_score_completions

        def capture(inputs: Any) -> Any:
            out = original(inputs)
            batches.append({k: v.clone() for k, v in out.items() if isinstance(v, torch.Tensor)})
            return out

        trainer._generate_and_score_completions = capture  # type: ignore[method-assign]
        trainer.train()
        return trainer, batches[-1]

    class Calculator:
        """An ``environment_factory`` environment: its ``add`` is the tool, its ``get_reward`` a reward."""

        def reset(self, **kwargs: Any) -> None:
            self.calls = 0

        def add(self, a: int, b: int) -> int:
            """Add two integers.

            Args:
                a: The first integer.
                b: The second integer.
            """
            self.calls += 1
            return a + b

        def get_reward(self) -> float:
            return float(self.calls)

    runs = [run(reward_funcs=[answered], tools=[add]), run(environment_factory=Calculator)]
    for _, batch in runs:
        tool = batch["tool_mask"].bool()
        assert (~tool).any(dim=1).sum() >= 2, "the model should have called the tool in most rollouts"
        answer = [tokenizer.decode(row[~m]) for row, m in zip(batch["completion_ids"], tool, strict=True)]
        assert any("7" in a for a in answer)  # the tool's answer: digits the local signal scores
        assert torch.all(batch["advantages"][~tool] == 0)
        assert batch["advantages"][batch["completion_mask"].bool() & tool].abs().sum() > 0
    env_trainer = runs[1][0]
    assert env_trainer.reward_func_names == [
        "botgrpo_mixture",
        "Calculator",
    ]  # the environment's reward, TRL's
    assert env_trainer._trl_columns == [1]
