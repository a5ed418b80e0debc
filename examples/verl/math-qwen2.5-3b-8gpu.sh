#!/usr/bin/env bash
# BoT-GRPO in verl: AIME-style math on Qwen2.5-3B-Instruct, one node of 8 GPUs (80 GB each), vLLM rollouts.
#
#   pip install torch   # the build for your GPUs; then, from this repository:
#   pip install -e . -e plugins/botgrpo-verl -e "plugins/botgrpo-judge[openai]"
#   data/aime_{train,2024}.parquet: verl's dataset layout (a chat `prompt`, `reward_model.ground_truth`), as
#   verl's examples/data_preprocess scripts write it (e.g. from scripts/make_aime_data.py's jsonl rows)
#   CUDA_VISIBLE_DEVICES=... vllm serve Qwen/Qwen2.5-7B-Instruct --port 8001 &   # the judge (math-rewards.yaml)
#   bash examples/verl/math-qwen2.5-3b-8gpu.sh [more Hydra overrides]
#
# GRPO_ARGS is a plain verl GRPO run; BOTGRPO_ARGS is everything botgrpo changes (docs/verl.md): the advantage
# estimator and the reward manager, with the botgrpo run file the manager reads its `rewards:` section from.
# plugins/botgrpo-verl/tests/test_verl_recipe.py composes both with verl's own config and checks exactly that.
set -euo pipefail

GRPO_ARGS=(
  algorithm.adv_estimator=grpo
  algorithm.use_kl_in_reward=False
  data.train_files=data/aime_train.parquet
  data.val_files=data/aime_2024.parquet
  data.train_batch_size=64
  data.max_prompt_length=1024
  data.max_response_length=2048
  data.filter_overlong_prompts=True
  actor_rollout_ref.model.path=Qwen/Qwen2.5-3B-Instruct
  actor_rollout_ref.model.enable_gradient_checkpointing=True
  actor_rollout_ref.model.use_remove_padding=True
  actor_rollout_ref.actor.optim.lr=1e-6
  actor_rollout_ref.actor.ppo_mini_batch_size=32
  actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=8
  actor_rollout_ref.actor.use_kl_loss=False
  actor_rollout_ref.actor.entropy_coeff=0
  actor_rollout_ref.actor.fsdp_config.param_offload=False
  actor_rollout_ref.actor.fsdp_config.optimizer_offload=False
  actor_rollout_ref.rollout.name=vllm
  actor_rollout_ref.rollout.n=8
  actor_rollout_ref.rollout.tensor_model_parallel_size=1
  actor_rollout_ref.rollout.gpu_memory_utilization=0.5
  actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=16
  actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=16
  trainer.critic_warmup=0
  trainer.logger='["console"]'
  trainer.project_name=botgrpo
  trainer.experiment_name=math-qwen2.5-3b-8gpu
  trainer.n_gpus_per_node=8
  trainer.nnodes=1
  trainer.save_freq=50
  trainer.test_freq=50
  trainer.total_epochs=15
)

BOTGRPO_ARGS=(
  algorithm.adv_estimator=botgrpo_bot
  reward.reward_manager.name=botgrpo
  +reward.reward_kwargs.botgrpo_rewards=examples/verl/math-rewards.yaml
)

exec python3 -m verl.trainer.main_ppo "${GRPO_ARGS[@]}" "${BOTGRPO_ARGS[@]}" "$@"
