"""``trl.GRPOConfig`` for a run: the preset's loss settings, batch arithmetic, distributed set-up."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from botgrpo_core.config.models import RunConfig
    from botgrpo_core.config.presets import Preset
from botgrpo_core.engine.setup import TrainingSetupError


def sharded_parameters() -> bool:
    """Whether ``accelerate launch`` set up DeepSpeed ZeRO-3 or FSDP (parameters split over processes)."""
    env = os.environ
    zero3 = (
        env.get("ACCELERATE_USE_DEEPSPEED", "").lower() == "true"
        and env.get("ACCELERATE_DEEPSPEED_ZERO_STAGE") == "3"
    )
    return zero3 or env.get("ACCELERATE_USE_FSDP", "").lower() == "true"


def single_process_distributed_env() -> None:
    """Give a one-process run a one-rank torch.distributed world (vLLM colocate runs under it).

    ``accelerate launch`` / ``torchrun`` set these variables; a plain ``botgrpo train`` does not.
    """
    if "RANK" in os.environ or "WORLD_SIZE" in os.environ:
        return
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    os.environ.update(
        {
            "RANK": "0",
            "LOCAL_RANK": "0",
            "WORLD_SIZE": "1",
            "MASTER_ADDR": "127.0.0.1",
            "MASTER_PORT": str(port),
        }
    )


def world_size() -> int:
    return int(os.environ.get("WORLD_SIZE", "1"))


def grpo_args(config: RunConfig, preset: Preset, output_dir: Path) -> Any:
    """``trl.GRPOConfig`` for the run (batch arithmetic checked, ``engine.trl_args`` merged)."""
    import dataclasses

    from trl import GRPOConfig

    kwargs = _trl_kwargs(config, preset, output_dir)
    known = {f.name for f in dataclasses.fields(GRPOConfig)}
    # transformers >= 5 renamed gradient_checkpointing (TRL defaults the old name to True)
    checkpointing = (
        "activation_checkpointing" if "activation_checkpointing" in known else "gradient_checkpointing"
    )
    kwargs[checkpointing] = config.engine.gradient_checkpointing
    kwargs.update(_user_trl_args(config.engine.trl_args, known, preset))
    try:
        return GRPOConfig(**kwargs)
    except ValueError as exc:
        raise TrainingSetupError(f"engine/training settings rejected by TRL: {exc}") from None


def per_device_batch(config: RunConfig) -> int:
    """Rollouts per process and micro-batch: ``prompts_per_step x group_size`` split over processes x
    ``gradient_accumulation_steps``, which must divide evenly (the message says what to change)."""
    t = config.training
    rollouts = t.prompts_per_step * t.group_size
    per_device, rest = divmod(rollouts, world_size() * t.gradient_accumulation_steps)
    if rest or per_device == 0:
        raise TrainingSetupError(
            f"training.prompts_per_step x group_size = {rollouts} rollouts per step cannot be split evenly over "
            f"{world_size()} process(es) x gradient_accumulation_steps {t.gradient_accumulation_steps}; "
            "change prompts_per_step so that it divides"
        )
    return per_device


def _use_cpu(config: RunConfig) -> bool:
    """Whether the run trains on CPU (``engine.device``), checking that a requested GPU is there."""
    import torch

    e = config.engine
    use_cpu = e.device == "cpu" or (e.device == "auto" and not torch.cuda.is_available())
    if e.device == "cuda" and not torch.cuda.is_available():
        raise TrainingSetupError("engine.device is 'cuda' but no CUDA device is visible; use 'auto' or 'cpu'")
    if e.use_vllm and use_cpu:
        raise TrainingSetupError("engine.use_vllm needs a CUDA GPU; set engine.use_vllm: false on CPU")
    return use_cpu


def _trl_kwargs(config: RunConfig, preset: Preset, output_dir: Path) -> dict[str, Any]:
    """The run file's training and engine sections as ``GRPOConfig`` keyword arguments."""
    from botgrpo_core.engine.trl_algorithm import trl_algorithm_args

    t, e = config.training, config.engine
    per_device = per_device_batch(config)
    use_cpu = _use_cpu(config)
    if e.use_vllm and e.vllm_mode == "colocate":
        single_process_distributed_env()
    kwargs: dict[str, Any] = {
        "output_dir": str(output_dir),
        "per_device_train_batch_size": per_device,
        "gradient_accumulation_steps": t.gradient_accumulation_steps,
        "num_generations": t.group_size,
        "max_completion_length": t.max_new_tokens,
        "temperature": t.temperature,
        "top_p": t.top_p,
        "learning_rate": t.learning_rate,
        "lr_scheduler_type": t.lr_scheduler,
        "warmup_steps": t.warmup_steps,
        "weight_decay": t.weight_decay,
        "max_grad_norm": t.max_grad_norm,
        "max_steps": t.steps,
        "num_iterations": t.num_iterations,
        "mask_truncated_completions": t.mask_truncated_completions,
        "logging_steps": t.logging_steps,
        "save_strategy": "steps",
        "save_steps": t.save_every or t.steps,
        "save_total_limit": t.save_total_limit,
        "seed": t.seed,
        "use_cpu": use_cpu,
        "bf16": e.bf16,
        "report_to": "none",
        "disable_tqdm": True,
        "log_completions": False,
        "dataloader_num_workers": 0,
        "use_vllm": e.use_vllm,
        "vllm_mode": e.vllm_mode,
        "vllm_gpu_memory_utilization": e.vllm_gpu_memory_utilization,
        "vllm_tensor_parallel_size": e.vllm_tensor_parallel_size,
        **trl_algorithm_args(preset),
    }
    if e.vllm_server_base_url:
        kwargs["vllm_server_base_url"] = e.vllm_server_base_url
    return kwargs


def _user_trl_args(trl_args: dict[str, Any], known: set[str], preset: Preset) -> dict[str, Any]:
    """``engine.trl_args``, checked: real ``GRPOConfig`` fields, none that the algorithm preset sets."""
    from botgrpo_core.engine.trl_algorithm import trl_algorithm_args

    unknown = sorted(set(trl_args) - known)
    if unknown:
        raise TrainingSetupError(
            f"engine.trl_args: {', '.join(unknown)} is not a trl.GRPOConfig argument (TRL 1.16); remove it or "
            "check the spelling in TRL's GRPOConfig docs"
        )
    managed = sorted(set(trl_args) & set(trl_algorithm_args(preset)))
    if managed:
        raise TrainingSetupError(
            f"engine.trl_args: {', '.join(managed)} is set by the algorithm preset; use the algorithm section "
            "(eps_low, eps_high, kl_coef, ratio_level, aggregation) instead"
        )
    return dict(trl_args)
