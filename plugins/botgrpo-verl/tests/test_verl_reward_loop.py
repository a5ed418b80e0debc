"""The dense path through verl's own reward loop: ``RewardLoopManager.compute_rm_score`` on a local Ray
instance (one CPU), with a ``RewardLoopWorker`` actor that loads the tokenizer and the ``botgrpo`` manager from
verl's config, scores, and sends each ``TokenRewards`` back through Ray; ``assemble_rm_scores`` writes them."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip(
    "verl", reason="botgrpo-verl's tests run in the verl venv (.venv-verl, made by `make test`)"
)

import ray
import torch
import yaml
from omegaconf import OmegaConf
from test_verl_reward_manager import REWARDS, trainer_token_rewards, verl_batch
from verl.experimental.reward_loop.reward_loop import RewardLoopManager

from botgrpo_core import RewardMixture
from botgrpo_core.engine.tiny import byte_level_bpe_tokenizer


@pytest.mark.slow
def test_compute_rm_score_writes_the_trainers_token_rewards(tmp_path: Path) -> None:
    tokenizer = byte_level_bpe_tokenizer()
    tokenizer.save_pretrained(tmp_path / "tokenizer")  # verl's worker loads it from the model path
    run_file = tmp_path / "run.yaml"
    run_file.write_text(yaml.safe_dump({"rewards": REWARDS}))
    config = OmegaConf.create(
        {
            "actor_rollout_ref": {"model": {"path": str(tmp_path / "tokenizer"), "tokenizer_path": None}},
            "reward": {
                "num_workers": 1,
                "reward_model": {"enable": False, "enable_resource_pool": False},
                "custom_reward_function": {"path": None},
                "reward_manager": {"source": "register", "name": "botgrpo"},
                "reward_kwargs": {"botgrpo_rewards": str(run_file)},
            },
        }
    )
    data = verl_batch(tokenizer)
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    try:
        out = RewardLoopManager(config).compute_rm_score(data)
    finally:
        ray.shutdown()
    want = trainer_token_rewards(tokenizer, data, RewardMixture.from_dict(REWARDS))
    assert torch.equal(out.batch["rm_scores"], want)
    assert bool((want != 0).any(dim=1).sum() >= 4), "most responses get nonzero token rewards"
    keys = out.meta_info["reward_extra_keys"]
    assert "botgrpo/core.regex/spans" in keys and "botgrpo/core.exact_answer/value" in keys
    assert out.non_tensor_batch["botgrpo/core.exact_answer/value"].tolist() == [1.0, 0.0, 1.0, 0.0, 0.0, 1.0]
