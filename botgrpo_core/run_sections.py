"""Run-file sections read by the trainer: model, data, training, engine.

Pydantic models with ``extra="forbid"`` (unknown keys are errors). ``botgrpo_core.config.RunConfig``
composes them with the reward and algorithm sections. Importing this module must not import torch.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class TinyModelSpec(_Section):
    """A tiny causal LM built in code (offline demos and tests)."""

    hidden_size: int = Field(64, gt=0, description="width of the tiny model")
    num_layers: int = Field(3, gt=0, description="number of decoder layers")
    num_heads: int = Field(4, gt=0, description="attention heads; must divide hidden_size")
    intermediate_size: int | None = Field(None, gt=0, description="MLP width; 3 x hidden_size when unset")
    max_positions: int = Field(128, gt=0, description="longest prompt + completion, in tokens")


class ModelConfig(_Section):
    """The policy model."""

    name_or_path: str = Field(
        "tiny", description="hub id, local path, or 'tiny' for a model built in code (offline)"
    )
    tiny: TinyModelSpec = Field(default_factory=TinyModelSpec, description="used when name_or_path is 'tiny'")
    dtype: Literal["float32", "bfloat16", "float16", "auto"] = Field("float32", description="weights dtype")


class DataConfig(_Section):
    """Where prompts come from."""

    source: Literal["jsonl", "disk", "task"] = Field(
        "task",
        description="'jsonl' file, 'disk' (datasets.save_to_disk folder), or a built-in 'task' generator",
    )
    path: Path | None = Field(None, description="file or folder for source jsonl/disk")
    task: str | None = Field("arithmetic", description="built-in task name when source is 'task'")
    prompt_field: str = Field("prompt", description="row field holding the prompt text")
    eval_size: int = Field(400, ge=0, description="held-out prompts used for evaluation")


class TrainingConfig(_Section):
    """Optimisation and bookkeeping."""

    steps: int = Field(200, gt=0, description="optimizer steps")
    learning_rate: float = Field(1e-4, gt=0, description="AdamW learning rate")
    prompts_per_step: int = Field(8, gt=0, description="prompts per step")
    group_size: int = Field(8, ge=2, description="rollouts per prompt (G)")
    max_new_tokens: int = Field(40, gt=0, description="completion length cap")
    temperature: float = Field(1.0, gt=0, description="sampling temperature for rollouts")
    seed: int = Field(0, description="random seed")
    output_dir: Path = Field(Path("runs/default"), description="metrics, plots, checkpoints go here")
    num_threads: int = Field(1, ge=1, description="torch CPU threads (1 on a 2-core machine)")
    eval_every: int = Field(20, ge=0, description="evaluate every N steps (0 = only at start and end)")
    save_every: int = Field(0, ge=0, description="checkpoint every N steps (0 = only at the end)")


class EngineConfig(_Section):
    """TRL / accelerate / vLLM settings."""

    use_vllm: bool = Field(False, description="generate rollouts with vLLM (GPU)")
    vllm_mode: Literal["colocate", "server"] = Field("colocate", description="vLLM mode when use_vllm")
    bf16: bool = Field(False, description="bfloat16 mixed precision (GPU)")
    gradient_checkpointing: bool = Field(False, description="trade compute for memory")
