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
from types import SimpleNamespace

import numpy as np
import ray
import torch
import yaml
from omegaconf import OmegaConf
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
from botgrpo_core.rewards.samples import decode_samples

RESPONSE_LENGTH = 96


class ScriptedRollout:
    """Stands in for verl's rollout server client: a request gets the token ids and eos of a completion of
    ``rows`` for its prompt, the one numbered by its ``priority`` (verl's legacy agent-loop manager numbers a
    batch's samples so) or, with ``by_priority=False``, the next one not yet served for its prompt text."""

    def __init__(self, tokenizer: Any, rows: list[tuple[str, str, str]], by_priority: bool = True) -> None:
        self.tokenizer, self.rows, self.by_priority = tokenizer, rows, by_priority
        self.queues: dict[str, list[str]] = {}
        for prompt, completion, _ in rows:
            self.queues.setdefault(prompt, []).append(completion)

    async def generate(
        self, request_id: str, *, prompt_ids: list[int], priority: int = 0, **_: Any
    ) -> TokenOutput:
        if self.by_priority:
            completion = self.rows[priority][1]
        else:
            completion = self.queues[self.tokenizer.decode(prompt_ids).strip()].pop(0)
        ids = self.tokenizer.encode(completion, add_special_tokens=False)
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
    # logical CPUs: TransferQueue's controller and storage unit actors hold one each
    ray.init(num_cpus=3, include_dashboard=False, log_to_driver=False)
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
    worker = AgentLoopWorker(config, ScriptedRollout(tokenizer, ROWS), None, handles)
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


def reference_token_rewards(tokenizer, prompts: list[list[int]], responses: list[list[int]], answers) -> Any:
    """botgrpo's trainer path (``decode_samples`` + ``score_batch``) on the given prompt and response ids."""
    texts = [tokenizer.decode(p, skip_special_tokens=True) for p in prompts]
    rows = [{"ground_truth": a} for a in answers]
    samples = decode_samples(tokenizer, texts, responses, rows)
    return RewardMixture.from_dict(REWARDS).score_batch(samples).token_rewards


@pytest.mark.slow
def test_verls_default_trainer_path_through_transfer_queue(reward_setup) -> None:
    """``trainer.use_v1=true`` (verl 0.9.1's default): ``AgentLoopWorkerTQ`` runs each prompt's ``n`` rollouts,
    scores them through the Ray reward worker and stores each output's ``as_dict()`` in TransferQueue; verl's
    own ``PPOTrainer._compute_advantage`` then reads ``rm_scores`` from there as ``token_level_scores`` and
    writes the ``botgrpo_bot`` advantages back."""
    tq = pytest.importorskip("transfer_queue", reason="verl's default trainer needs TransferQueue")
    from transfer_queue import KVBatchMeta
    from verl.trainer.ppo.v1.agent_loop_tq import AgentLoopWorkerTQ
    from verl.trainer.ppo.v1.trainer_base import PPOTrainer
    from verl.utils import tensordict_utils as tu

    tokenizer, config, manager = reward_setup
    config = config.copy()
    OmegaConf.update(config, "actor_rollout_ref.rollout.n", 2)
    OmegaConf.update(config, "algorithm.adv_estimator", "botgrpo_bot")
    prompts = list(dict.fromkeys(p for p, _, _ in ROWS))  # three prompts, two completions each
    answers = {p: a for p, _, a in ROWS}
    tq.init(OmegaConf.create({"backend": {"SimpleStorage": {"num_data_storage_units": 1}}}))
    try:
        rollout = ScriptedRollout(tokenizer, ROWS, by_priority=False)
        worker = AgentLoopWorkerTQ.__ray_actor_class__(
            config, rollout, None, manager.reward_loop_worker_handles
        )
        batch = tu.get_tensordict(  # as the trainer's _fetch_one_gen_batch makes it from verl's dataset
            {
                "raw_prompt": np.array([[{"role": "user", "content": p}] for p in prompts], dtype=object),
                "data_source": np.array(["math"] * len(prompts), dtype=object),
                "reward_model": np.array([{"ground_truth": answers[p]} for p in prompts], dtype=object),
                "extra_info": np.array([{"index": i} for i in range(len(prompts))], dtype=object),
                "index": np.arange(len(prompts)),
                "uid": np.array([f"prompt{i}" for i in range(len(prompts))], dtype=object),
            }
        )
        tu.assign_non_tensor_data(batch, "global_steps", 1)
        tags = [{"is_prompt": True, "status": "pending", "global_steps": 1}] * len(prompts)
        tq.kv_batch_put(keys=list(batch["uid"]), partition_id="train", tags=tags)

        async def rollouts() -> None:
            await worker.generate_sequences(batch)
            await asyncio.gather(*list(worker.background_tasks))

        asyncio.run(rollouts())
        stored = tq.kv_list(partition_id="train")["train"]
        keys = sorted(k for k, tag in stored.items() if tag.get("status") == "success")
        assert len(keys) == len(ROWS)
        meta = KVBatchMeta(keys=keys, tags=[stored[k] for k in keys], partition_id="train")
        PPOTrainer._compute_advantage(SimpleNamespace(config=config), meta, {})  # verl's own step
        fields = ["uid", "prompts", "responses", "response_mask", "rm_scores", "advantages", "reward_model"]
        data = tq.kv_batch_get(keys=keys, partition_id="train", select_fields=fields)
    finally:
        tq.close()

    responses = [r.tolist() for r in data["responses"].unbind()]
    assert sorted(map(len, responses)) == sorted(len(tokenizer.encode(c)) + 1 for _, c, _ in ROWS)
    want = reference_token_rewards(
        tokenizer,
        [p.tolist() for p in data["prompts"].unbind()],
        responses,
        [m["ground_truth"] for m in list(data["reward_model"])],
    )
    rm_scores = data["rm_scores"].to_padded_tensor(0.0)
    mask = data["response_mask"].to_padded_tensor(0).bool()
    assert rm_scores.shape == want.shape == mask.shape
    assert float((rm_scores - want).abs().max()) <= 1e-6
    assert int((rm_scores[mask] != 0).sum()) > len(ROWS), "dense rows, not one reward per response"
    uids = list(data["uid"])
    groups = torch.tensor([list(dict.fromkeys(uids)).index(u) for u in uids])
    expected = compute_advantages("bot", want, mask, group_ids=groups)
    advantages = data["advantages"].to_padded_tensor(0.0)
    assert float((advantages - expected).abs().max()) <= 1e-6
