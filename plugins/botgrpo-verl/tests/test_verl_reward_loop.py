"""The ``botgrpo`` manager inside verl's own reward machinery on a local Ray instance (one CPU), with one
``RewardLoopWorker`` actor that loads the tokenizer and the manager from verl's config, scores, and sends each
``TokenRewards`` back through Ray:

- the colocated-reward-model path: ``RewardLoopManager.compute_rm_score``, where ``assemble_rm_scores``
  writes the token rewards;
- verl's default path (no reward model): a real ``AgentLoopWorker`` runs ``generate_sequences`` (its
  single-turn agent loop, ``_agent_loop_postprocess``, ``_compute_score`` calling the Ray reward worker, and
  ``_postprocess``), then verl's ``extract_reward`` and ``compute_advantage`` take the result as the trainer
  does. The one stand-in is the rollout server: verl's are vLLM/SGLang/TensorRT-LLM servers, none of which
  runs on the CPU torch build, so a scripted client returns the completions' token ids.
"""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip(
    "verl", reason="botgrpo-verl's tests run in the verl venv (.venv-verl, made by `make test`)"
)

import asyncio

import numpy as np
import ray
import torch
import yaml
from test_verl_agent_loop import chat_tokenizer, tiny_model_dir, verl_config
from test_verl_reward_manager import REWARDS, ROWS, trainer_token_rewards, verl_batch
from verl import DataProto
from verl.experimental.agent_loop.agent_loop import AgentLoopWorker
from verl.experimental.reward_loop.reward_loop import RewardLoopManager
from verl.trainer.config import AlgoConfig
from verl.trainer.ppo.ray_trainer import compute_advantage
from verl.trainer.ppo.reward import extract_reward
from verl.workers.rollout.replica import TokenOutput

from botgrpo_core import RewardMixture, compute_advantages

RESPONSE_LENGTH = 96


class ScriptedRollout:
    """Stands in for verl's rollout server client: request ``priority`` (verl numbers a batch's samples so)
    gets ``completions[priority]``'s token ids and eos."""

    def __init__(self, tokenizer: Any, completions: list[str]) -> None:
        self.tokenizer, self.completions = tokenizer, completions

    async def generate(
        self, request_id: str, *, prompt_ids: list[int], priority: int = 0, **_: Any
    ) -> TokenOutput:
        ids = self.tokenizer.encode(self.completions[priority], add_special_tokens=False)
        return TokenOutput(token_ids=[*ids, self.tokenizer.eos_token_id], stop_reason="completed")


@pytest.fixture(scope="module")
def reward_setup(tmp_path_factory) -> Any:
    """verl's config for the ``botgrpo`` manager, and a ``RewardLoopManager`` with one Ray reward worker."""
    folder = tmp_path_factory.mktemp("verl")
    tokenizer = chat_tokenizer()
    run_file = folder / "run.yaml"
    run_file.write_text(yaml.safe_dump({"rewards": REWARDS}))
    config = verl_config(
        tiny_model_dir(tokenizer, folder / "model"),
        [
            f"actor_rollout_ref.rollout.response_length={RESPONSE_LENGTH}",
            "reward.reward_manager.name=botgrpo",
            f"+reward.reward_kwargs.botgrpo_rewards={run_file}",
        ],
    )
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    try:
        yield tokenizer, config, RewardLoopManager(config)
    finally:
        ray.shutdown()


@pytest.mark.slow
def test_compute_rm_score_writes_the_trainers_token_rewards(reward_setup) -> None:
    tokenizer, _, manager = reward_setup
    data = verl_batch(tokenizer)
    out = manager.compute_rm_score(data)
    want = trainer_token_rewards(tokenizer, data, RewardMixture.from_dict(REWARDS))
    assert torch.equal(out.batch["rm_scores"], want)
    assert bool((want != 0).any(dim=1).sum() >= 4), "most responses get nonzero token rewards"
    keys = out.meta_info["reward_extra_keys"]
    assert "botgrpo/core.regex/spans" in keys and "botgrpo/core.exact_answer/value" in keys
    assert out.non_tensor_batch["botgrpo/core.exact_answer/value"].tolist() == [1.0, 0.0, 1.0, 0.0, 0.0, 1.0]


def prompt_batch(rows: list[tuple[str, str, str]]) -> DataProto:
    """Prompts as verl's dataset and trainer hand them to the agent loop."""
    return DataProto.from_dict(
        non_tensors={
            "raw_prompt": np.array([[{"role": "user", "content": p}] for p, _, _ in rows], dtype=object),
            "data_source": np.array(["math"] * len(rows), dtype=object),
            "reward_model": np.array(
                [{"ground_truth": a, "style": "rule"} for _, _, a in rows], dtype=object
            ),
            "extra_info": np.array([{"index": i} for i in range(len(rows))], dtype=object),
            "uid": np.array([p for p, _, _ in rows], dtype=object),
            "priority": np.arange(len(rows), dtype=np.int64),
        },
    )


@pytest.mark.slow
def test_the_default_agent_loop_path_carries_the_trainers_token_rewards(reward_setup) -> None:
    tokenizer, config, manager = reward_setup
    handles = manager.reward_loop_worker_handles
    assert handles, "no reward model: verl scores in the agent loop"
    worker = AgentLoopWorker(config, ScriptedRollout(tokenizer, [c for _, c, _ in ROWS]), None, handles)
    prompts = prompt_batch(ROWS)
    out = asyncio.run(worker.generate_sequences(prompts))

    rm_scores = out.batch["rm_scores"]
    assert rm_scores.shape == (len(ROWS), RESPONSE_LENGTH)
    want = trainer_token_rewards(tokenizer, out, RewardMixture.from_dict(REWARDS))
    assert float((rm_scores - want).abs().max()) <= 1e-6
    lengths = out.batch["response_mask"].sum(1)
    assert lengths.tolist() == [len(tokenizer.encode(c, add_special_tokens=False)) + 1 for _, c, _ in ROWS]
    dense = [int((rm_scores[i, : int(n)] != 0).sum()) for i, n in enumerate(lengths)]
    assert dense[0] == int(lengths[0]), "a correct answer's alpha * R is on every token, not only the last"

    # what verl's trainer does next: rm_scores become token_level_scores (and rewards), then the advantages
    reward_tensor, extra = extract_reward(out)
    assert reward_tensor is rm_scores
    assert extra["botgrpo/core.exact_answer/value"].tolist() == [1.0, 0.0, 1.0, 0.0, 0.0, 1.0]
    out.batch["token_level_rewards"] = reward_tensor
    out.non_tensor_batch["uid"] = prompts.non_tensor_batch["uid"]  # the trainer's union with its prompts
    advantages = compute_advantage(out, adv_estimator="botgrpo_bot", config=AlgoConfig()).batch["advantages"]
    mask = out.batch["response_mask"].bool()
    uids = out.non_tensor_batch["uid"]
    groups = torch.tensor([list(dict.fromkeys(uids)).index(u) for u in uids])
    expected = compute_advantages("bot", want, mask, group_ids=groups)
    assert float((advantages - expected).abs().max()) <= 1e-6
    assert bool((advantages[mask] != advantages[mask][0]).any()), (
        "token-level advantages, not one per rollout"
    )
