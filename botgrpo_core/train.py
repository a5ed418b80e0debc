"""``botgrpo train``: one run from one config, end to end.

:func:`run_training` checks everything that can be checked before any training (model path, data
fields the signals read, signals installed, algorithm vs ratio level, batch arithmetic), builds or
loads the model (a tiny model built in code, optionally warm-started on task demonstrations, cached
in the output dir), runs :class:`~botgrpo_core.trainer.BoTGRPOTrainer`, evaluates on held-out prompts
before, during and after, and writes into ``training.output_dir``:

- ``config.yaml``: the resolved run file;
- ``metrics.jsonl``: one JSON object per line, ``{"kind": "train" | "eval", "step": n, ...}``;
- ``checkpoint-N/``: TRL/HF checkpoints (``--resume`` continues from the last one), ``final_model/``;
- ``training_curves.png`` and ``advantages.png``; ``summary.json``.

The benchmarks call :func:`run_training` once per (method, seed) with a ready model folder.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from botgrpo_core.config import RunConfig
    from botgrpo_core.mixture import RewardMixture
    from botgrpo_core.presets import Preset

METRICS_FILE = "metrics.jsonl"
SUMMARY_FILE = "summary.json"
WARM_START_DIR = "warm_start"
INITIAL_MODEL_DIR = "initial_model"
FINAL_MODEL_DIR = "final_model"


class TrainingSetupError(RuntimeError):
    """A problem found before training starts; the message names the config key and the fix."""


# ------------------------------------------------------------------------------------------------
# Data
# ------------------------------------------------------------------------------------------------
@dataclass
class RunData:
    """Training and held-out rows, each ``{"prompt": ..., <fields the signals read>}``."""

    train: list[dict[str, Any]]
    eval: list[dict[str, Any]]
    task: Any = None  # a botgrpo_core.tasks task when data.source is 'task'
    source: str = ""


def _read_jsonl(path: Path, key: str) -> list[dict[str, Any]]:
    if not path.is_file():
        raise TrainingSetupError(
            f"{key}: no such file {str(path)!r}; fix the path (relative to the working dir)"
        )
    rows = []
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise TrainingSetupError(
                    f"{key}: {path}:{n} is not valid JSON ({exc.msg}); fix that line"
                ) from None
            if not isinstance(row, dict):
                raise TrainingSetupError(f"{key}: {path}:{n} is not a JSON object; each line must be one row")
            rows.append(row)
    if not rows:
        raise TrainingSetupError(f"{key}: {path} has no rows")
    return rows


def _read_disk(path: Path, key: str) -> list[dict[str, Any]]:
    if not path.is_dir():
        raise TrainingSetupError(
            f"{key}: no such folder {str(path)!r}; point it at a datasets.save_to_disk folder"
        )
    import datasets

    try:
        ds = datasets.load_from_disk(str(path))
    except (FileNotFoundError, ValueError) as exc:
        raise TrainingSetupError(
            f"{key}: {path} is not a saved dataset ({exc}); use Dataset.save_to_disk"
        ) from None
    if isinstance(ds, datasets.DatasetDict):
        if "train" not in ds:
            raise TrainingSetupError(f"{key}: {path} holds splits {list(ds)} but no 'train' split")
        ds = ds["train"]
    return ds.to_list()


def load_data(config: RunConfig) -> RunData:
    """Rows for training and evaluation, per ``data``."""
    data = config.data
    if data.source == "task":
        from botgrpo_core.tasks import get_task

        try:
            task = get_task(data.task or "", data.task_params)
        except ValueError as exc:
            raise TrainingSetupError(str(exc)) from None
        eval_rows = task.eval_rows(data.eval_size, seed=0) if data.eval_size else []
        train_rows = task.train_rows(data.train_size, seed=config.training.seed, exclude=eval_rows)
        return RunData(train_rows, eval_rows, task, f"task {data.task}")
    assert data.path is not None  # checked by DataConfig
    reader = _read_jsonl if data.source == "jsonl" else _read_disk
    rows = reader(Path(data.path), "data.path")
    if data.eval_path is not None:
        eval_reader = _read_disk if Path(data.eval_path).is_dir() else _read_jsonl
        eval_rows = eval_reader(Path(data.eval_path), "data.eval_path")[: data.eval_size]
    else:
        cut = min(data.eval_size, len(rows) // 5)  # never more than a fifth of the data
        eval_rows, rows = rows[len(rows) - cut :], rows[: len(rows) - cut]
    return RunData(rows, eval_rows, None, str(data.path))


def check_rows(rows: Sequence[Mapping[str, Any]], needed: Mapping[str, Sequence[str]], where: str) -> None:
    """Every row has every field a consumer reads: ``needed`` maps a consumer (signal) to its fields."""
    for field_owner, fields in needed.items():
        for name in fields:
            for i, row in enumerate(rows):
                if name not in row or row[name] is None:
                    raise TrainingSetupError(
                        f"{where}: row {i} has no field {name!r}, which {field_owner} reads "
                        f"(row fields: {sorted(row)}). Add the field to every row, or point the signal at an "
                        "existing column in its params (e.g. reference_field)."
                    )


def to_trainer_rows(rows: Sequence[Mapping[str, Any]], config: RunConfig) -> list[dict[str, Any]]:
    """Rename the prompt field to ``prompt`` and wrap it as chat messages when ``data.chat``."""
    data = config.data
    out = []
    for row in rows:
        new = {k: v for k, v in row.items() if k != data.prompt_field}
        prompt = row[data.prompt_field]
        if data.chat and isinstance(prompt, str):
            messages = [{"role": "system", "content": data.system_prompt}] if data.system_prompt else []
            prompt = [*messages, {"role": "user", "content": prompt}]
        new["prompt"] = prompt
        out.append(new)
    return out


# ------------------------------------------------------------------------------------------------
# Model
# ------------------------------------------------------------------------------------------------
def _tiny_tokenizer(run_data: RunData, prompt_field: str) -> Any:
    from botgrpo_core.tiny import ARITHMETIC_CHARS, byte_level_bpe_tokenizer, char_tokenizer

    if run_data.task is not None:
        return char_tokenizer(str(getattr(run_data.task, "chars", ARITHMETIC_CHARS)))
    texts = [str(r[prompt_field]) for r in run_data.train[:2000]]
    return byte_level_bpe_tokenizer(texts, vocab_size=512)


def prepare_model_dir(config: RunConfig, run_data: RunData, log: Callable[[str], None]) -> str:
    """A folder or hub id ``from_pretrained`` can load: the tiny model (warm-started or fresh), or the user's."""
    model = config.model
    out = Path(config.training.output_dir)
    if model.name_or_path != "tiny":
        return _check_model_source(model.name_or_path)
    warm = config.training.warm_start
    if warm.enabled:
        if run_data.task is None:
            raise TrainingSetupError(
                "training.warm_start.enabled needs demonstrations, which only a built-in task provides; "
                "set data.source: task or turn the warm start off"
            )
        from botgrpo_core.bench_warmstart import WarmStartSpec, ensure_warm_start

        spec = WarmStartSpec(
            steps=warm.steps,
            batch_size=warm.batch_size,
            learning_rate=warm.learning_rate,
            demonstrations=warm.demonstrations,
            seed=warm.seed,
            eval_size=0,
        )
        path = ensure_warm_start(
            run_data.task.name,
            dict(config.data.task_params),
            model.tiny,
            spec,
            out / WARM_START_DIR,
            max_new_tokens=config.training.max_new_tokens,
            log=log,
        )
        return str(path)
    path = out / INITIAL_MODEL_DIR
    if not (path / "config.json").is_file():
        from botgrpo_core.tiny import build_tiny_model, save_pretrained

        tokenizer = _tiny_tokenizer(run_data, config.data.prompt_field)
        tiny = build_tiny_model(tokenizer, model.tiny, seed=config.training.seed)
        tmp = path.with_name(path.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        save_pretrained(tiny, tokenizer, tmp)
        tmp.rename(path)
    return str(path)


def _check_model_source(name: str) -> str:
    path = Path(name).expanduser()
    looks_local = name.startswith((".", "/", "~")) or path.exists()
    if looks_local:
        if not (path / "config.json").is_file():
            raise TrainingSetupError(
                f"model.name_or_path: {name!r} is not a model folder (no config.json there); fix the path, "
                "or save a model there with model.save_pretrained(...)"
            )
        return str(path)
    from transformers import AutoConfig

    try:
        AutoConfig.from_pretrained(name)
    except (OSError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise TrainingSetupError(
            f"model.name_or_path: {name!r} is neither a local model folder nor loadable from the hub ({first}). "
            f"Fix the name or path; offline, download it first (huggingface-cli download {name}) and point "
            "name_or_path at the folder."
        ) from None
    return name


def load_model(config: RunConfig, source: str) -> tuple[Any, Any]:
    """``(model, tokenizer)`` from a folder or hub id."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model_cfg = config.model
    dtype = "auto" if model_cfg.dtype == "auto" else getattr(torch, model_cfg.dtype)
    kwargs: dict[str, Any] = {"dtype": dtype, "trust_remote_code": model_cfg.trust_remote_code}
    if model_cfg.attn_implementation:
        kwargs["attn_implementation"] = model_cfg.attn_implementation
    if model_cfg.name_or_path == "tiny":
        from botgrpo_core.tiny import load_tokenizer

        tokenizer = load_tokenizer(source)  # exactly the tokenizer built in code (see tiny.load_tokenizer)
    else:
        tokenizer = AutoTokenizer.from_pretrained(
            model_cfg.tokenizer or source, trust_remote_code=model_cfg.trust_remote_code
        )
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "left"
    model = AutoModelForCausalLM.from_pretrained(source, **kwargs)
    return model, tokenizer


# ------------------------------------------------------------------------------------------------
# Setup checks and TRL arguments
# ------------------------------------------------------------------------------------------------
def build_mixture(config: RunConfig) -> RewardMixture:
    """The reward mixture; an unknown or broken signal is a setup error naming its config key."""
    from botgrpo_core.config import ConfigError
    from botgrpo_core.mixture import RewardMixture
    from botgrpo_core.plugins import PluginError

    try:
        return RewardMixture(config.rewards)
    except PluginError as exc:
        index = next((i for i, s in enumerate(config.rewards.signals) if repr(s.name) in str(exc)), None)
        where = f"rewards.signals[{index}].name" if index is not None else "rewards.signals"
        raise TrainingSetupError(f"{where}: {exc}") from None
    except ConfigError as exc:
        raise TrainingSetupError(str(exc)) from None


def resolve_preset(config: RunConfig) -> Preset:
    """The algorithm preset with overrides, its estimator options tried on a toy batch."""
    import torch

    from botgrpo_core.advantages import available_estimators, compute_advantages
    from botgrpo_core.presets import PresetError
    from botgrpo_core.trainer import resolve_algorithm

    wanted = config.algorithm.estimator
    if wanted is not None and wanted not in available_estimators():
        from botgrpo_core.plugins import get_plugin_manager

        get_plugin_manager().register_estimators()  # estimators from plugins (botgrpo_register_estimators)
    try:
        preset = resolve_algorithm(config.algorithm)
    except (PresetError, KeyError) as exc:
        raise TrainingSetupError(str(exc).strip('"')) from None
    try:
        compute_advantages(
            preset.estimator,
            torch.tensor([[0.0, 1.0], [1.0, 0.0]]),
            torch.ones(2, 2, dtype=torch.bool),
            group_size=2,
            **dict(preset.estimator_options),
        )
    except (KeyError, ValueError, TypeError) as exc:
        raise TrainingSetupError(
            f"algorithm.estimator_options: {str(exc).strip(chr(34))} (estimator {preset.estimator!r})"
        ) from None
    return preset


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

    import torch
    from trl import GRPOConfig

    from botgrpo_core.trainer import trl_algorithm_args

    t, e = config.training, config.engine
    rollouts = t.prompts_per_step * t.group_size
    per_device, rest = divmod(rollouts, world_size() * t.gradient_accumulation_steps)
    if rest or per_device == 0:
        raise TrainingSetupError(
            f"training.prompts_per_step x group_size = {rollouts} rollouts per step cannot be split evenly over "
            f"{world_size()} process(es) x gradient_accumulation_steps {t.gradient_accumulation_steps}; "
            "change prompts_per_step so that it divides"
        )
    use_cpu = e.device == "cpu" or (e.device == "auto" and not torch.cuda.is_available())
    if e.device == "cuda" and not torch.cuda.is_available():
        raise TrainingSetupError("engine.device is 'cuda' but no CUDA device is visible; use 'auto' or 'cpu'")
    if e.use_vllm and use_cpu:
        raise TrainingSetupError("engine.use_vllm needs a CUDA GPU; set engine.use_vllm: false on CPU")
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
    known = {f.name for f in dataclasses.fields(GRPOConfig)}
    # transformers >= 5 renamed gradient_checkpointing (TRL defaults the old name to True)
    checkpointing = (
        "activation_checkpointing" if "activation_checkpointing" in known else "gradient_checkpointing"
    )
    kwargs[checkpointing] = e.gradient_checkpointing
    unknown = sorted(set(e.trl_args) - known)
    if unknown:
        raise TrainingSetupError(
            f"engine.trl_args: {', '.join(unknown)} is not a trl.GRPOConfig argument (TRL 1.16); remove it or "
            "check the spelling in TRL's GRPOConfig docs"
        )
    managed = sorted(set(e.trl_args) & set(trl_algorithm_args(preset)))
    if managed:
        raise TrainingSetupError(
            f"engine.trl_args: {', '.join(managed)} is set by the algorithm preset; use the algorithm section "
            "(eps_low, eps_high, kl_coef, ratio_level, aggregation) instead"
        )
    kwargs.update(e.trl_args)
    try:
        return GRPOConfig(**kwargs)
    except ValueError as exc:
        raise TrainingSetupError(f"engine/training settings rejected by TRL: {exc}") from None


# ------------------------------------------------------------------------------------------------
# Evaluation
# ------------------------------------------------------------------------------------------------
def generate(
    model: Any,
    tokenizer: Any,
    prompts: Sequence[Any],
    *,
    max_new_tokens: int,
    greedy: bool,
    seed: int = 1234,
    temperature: float = 1.0,
    batch_size: int = 200,
) -> tuple[list[list[int]], list[str]]:
    """Completions (token ids up to and including EOS, and text) for ``prompts``; RNG state untouched."""
    import torch

    texts = [
        tokenizer.apply_chat_template(p, tokenize=False, add_generation_prompt=True)
        if not isinstance(p, str)
        else p
        for p in prompts
    ]
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    ids_out: list[list[int]] = []
    side = tokenizer.padding_side
    tokenizer.padding_side = "left"
    try:
        with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []), torch.no_grad():
            torch.manual_seed(seed)
            for start in range(0, len(texts), batch_size):
                enc = tokenizer(
                    texts[start : start + batch_size],
                    return_tensors="pt",
                    padding=True,
                    add_special_tokens=False,
                ).to(device)
                sampling = (
                    {"do_sample": False}
                    if greedy
                    else {"do_sample": True, "temperature": temperature, "top_k": 0, "top_p": 1.0}
                )
                gen = model.generate(
                    **enc,
                    max_new_tokens=max_new_tokens,
                    pad_token_id=tokenizer.pad_token_id,
                    eos_token_id=tokenizer.eos_token_id,
                    **sampling,
                )
                for row in gen[:, enc["input_ids"].shape[1] :].tolist():
                    if tokenizer.eos_token_id in row:
                        row = row[: row.index(tokenizer.eos_token_id) + 1]
                    ids_out.append(row)
    finally:
        tokenizer.padding_side = side
        model.train(was_training)
    return ids_out, tokenizer.batch_decode(ids_out, skip_special_tokens=True)


def evaluate(
    model: Any,
    tokenizer: Any,
    rows: Sequence[Mapping[str, Any]],
    *,
    mixture: RewardMixture,
    task: Any,
    max_new_tokens: int,
    greedy: bool,
    batch_size: int = 200,
    seed: int = 1234,
) -> dict[str, float]:
    """Held-out metrics: the task's (answer accuracy, step error rate) and the mixture's (reward, success)."""
    from botgrpo_core.mixture import make_samples
    from botgrpo_core.trainer import _prompt_text

    if not rows:
        return {}
    ids, texts = generate(
        model,
        tokenizer,
        [r["prompt"] for r in rows],
        max_new_tokens=max_new_tokens,
        greedy=greedy,
        seed=seed,
        batch_size=batch_size,
    )
    plain = [{k: v for k, v in r.items() if k != "prompt"} for r in rows]
    out: dict[str, float] = {}
    if task is not None:
        out.update(task.evaluate(plain, texts))
    samples = make_samples(tokenizer, [_prompt_text(r["prompt"]) for r in rows], ids, plain)
    mix = mixture.score_batch(samples)
    lengths = mix.mask.sum(1).clamp(min=1)
    per_rollout = (mix.token_rewards.nan_to_num(0.0).sum(1) / lengths)[mix.valid]
    out["reward"] = float(per_rollout.mean()) if per_rollout.numel() else math.nan
    for name, outcome in mix.signals.items():
        values = outcome.values if outcome.values.dim() == 1 else outcome.values.sum(1) / lengths
        out[f"signals/{name}"] = float(values.mean())
    return out


# ------------------------------------------------------------------------------------------------
# Metrics file, callbacks
# ------------------------------------------------------------------------------------------------
class MetricsLog:
    """Append-only ``metrics.jsonl``; on resume, lines after the checkpoint's step are dropped first."""

    def __init__(self, path: Path, enabled: bool = True) -> None:
        self.path = path
        self.enabled = enabled

    def truncate_after(self, step: int) -> None:
        if not self.enabled or not self.path.is_file():
            return
        keep = [
            line
            for line in self.path.read_text(encoding="utf-8").splitlines()
            if line.strip() and json.loads(line).get("kind") != "summary" and json.loads(line)["step"] <= step
        ]
        self.path.write_text("".join(line + "\n" for line in keep), encoding="utf-8")

    def write(self, kind: str, step: int, values: Mapping[str, Any]) -> None:
        if not self.enabled:
            return
        record = {"kind": kind, "step": int(step), "time": round(time.time(), 3)}
        record.update({k: _jsonable(v) for k, v in values.items()})
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")

    def read(self) -> list[dict[str, Any]]:
        if not self.path.is_file():
            return []
        return [
            json.loads(line) for line in self.path.read_text(encoding="utf-8").splitlines() if line.strip()
        ]


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if hasattr(value, "item"):
        return _jsonable(value.item())
    return value


def _callbacks(
    ctx: _RunContext,
) -> list[Any]:
    from transformers import TrainerCallback

    class MetricsCallback(TrainerCallback):
        """Writes TRL's log dicts (with botgrpo's metrics) to metrics.jsonl."""

        def on_log(
            self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kw: Any
        ) -> None:
            if not state.is_world_process_zero or not logs:
                return
            kind = "summary" if "train_runtime" in logs else "train"
            ctx.metrics.write(kind, state.global_step, logs)
            if kind == "train":
                ctx.progress_update(state.global_step, logs)

    class EvalCallback(TrainerCallback):
        """Held-out evaluation every ``training.eval_every`` steps and at the last step."""

        def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            every = ctx.config.training.eval_every
            step = state.global_step
            if step == state.max_steps or (every and step % every == 0):
                ctx.run_eval(step)

    return [MetricsCallback(), EvalCallback()]


@dataclass
class _RunContext:
    """What the callbacks share with :func:`run_training`."""

    config: RunConfig
    metrics: MetricsLog
    run_data: RunData
    mixture: RewardMixture
    tokenizer: Any
    model: Any = None
    trainer: Any = None
    log: Callable[[str], None] = print
    evals: dict[int, dict[str, float]] = field(default_factory=dict)
    bar: Any = None
    is_main: bool = True

    def run_eval(self, step: int) -> dict[str, float]:
        import torch

        model = self.trainer.accelerator.unwrap_model(self.trainer.model) if self.trainer else self.model
        result: dict[str, float] = {}
        if self.is_main and self.run_data.eval:
            t = self.config.training
            modes = ["sampled", "greedy"] if t.eval_greedy else ["sampled"]
            for mode in modes:
                values = evaluate(
                    model,
                    self.tokenizer,
                    self.run_data.eval,
                    mixture=self.mixture,
                    task=self.run_data.task,
                    max_new_tokens=t.max_new_tokens,
                    greedy=mode == "greedy",
                    batch_size=t.eval_batch_size,
                )
                result.update({f"eval/{mode}/{k}": v for k, v in values.items()})
            if self.trainer is not None and self.trainer.last_advantages is not None:
                hist = torch.histc(self.trainer.last_advantages.clamp(-4, 4), bins=40, min=-4, max=4)
                result["advantages/histogram"] = hist.tolist()
            self.metrics.write("eval", step, result)
            self.evals[step] = result
        if self.trainer is not None:
            self.trainer.accelerator.wait_for_everyone()
        return result

    def progress_update(self, step: int, logs: Mapping[str, Any]) -> None:
        if self.bar is None:
            return
        self.bar.n = step
        post = {
            "reward": logs.get("reward/token_mean"),
            "success": logs.get("success_rate"),
            "zero-spread": logs.get("groups/outcome_zero_spread_frac"),
        }
        self.bar.set_postfix(
            {k: f"{v:.2f}" for k, v in post.items() if isinstance(v, (int, float))}, refresh=False
        )
        self.bar.refresh()


# ------------------------------------------------------------------------------------------------
# The run
# ------------------------------------------------------------------------------------------------
def _last_checkpoint(output_dir: Path) -> str:
    """The ``checkpoint-N`` folder ``--resume`` continues from."""
    from transformers.trainer_utils import get_last_checkpoint

    last = get_last_checkpoint(str(output_dir)) if output_dir.is_dir() else None
    if last is None:
        raise TrainingSetupError(
            f"--resume: training.output_dir {str(output_dir)!r} has no checkpoint-N folder to resume from; "
            "run without --resume to start, or point output_dir at an earlier run"
        )
    return last


def _prepare_output_dir(output_dir: Path, resume: bool) -> None:
    """Create the output dir; for a fresh run remove an earlier run's outputs (the warm-start cache stays)."""
    output_dir.mkdir(parents=True, exist_ok=True)
    if resume:
        return
    for old in output_dir.glob("checkpoint-*"):
        shutil.rmtree(old, ignore_errors=True)
    for name in (METRICS_FILE, SUMMARY_FILE, "training_curves.png", "advantages.png"):
        (output_dir / name).unlink(missing_ok=True)
    # initial_model is rebuilt from the current model.tiny spec; warm_start/ is keyed by its settings and kept
    for name in (FINAL_MODEL_DIR, INITIAL_MODEL_DIR):
        shutil.rmtree(output_dir / name, ignore_errors=True)


def _set_threads(config: RunConfig) -> None:
    import torch

    if config.engine.device != "cuda":
        torch.set_num_threads(config.training.num_threads)
        os.environ.setdefault("OMP_NUM_THREADS", str(config.training.num_threads))


def run_training(
    config: RunConfig,
    *,
    overrides: Sequence[str] = (),
    resume: bool = False,
    callbacks: Sequence[Any] = (),
    log: Callable[[str], None] | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Train one run; returns a summary (before/after evaluation, paths, wall time).

    :param config: the validated run file.
    :param overrides: the ``--set`` assignments already applied to ``config`` (recorded in the summary).
    :param resume: continue from the last ``checkpoint-N`` in ``training.output_dir``.
    :param callbacks: extra ``transformers.TrainerCallback`` objects (benchmarks, tests).
    :param log: where progress lines go (default: stderr).
    :param progress: show a progress bar.
    :raises TrainingSetupError: any problem found before training; nothing has been trained then.
    """
    import yaml

    start = time.time()
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # "Writing model shards" bars at every checkpoint
    log = log or (lambda message: print(message, file=sys.stderr, flush=True))
    _set_threads(config)
    output_dir = Path(config.training.output_dir)
    is_main = int(os.environ.get("RANK", "0")) == 0

    # -- everything that can fail is checked before the first training step --
    preset = resolve_preset(config)
    mixture = build_mixture(config)
    run_data = load_data(config)
    needed = {"data.prompt_field": (config.data.prompt_field,)}
    for signal, fields in mixture.required_fields().items():
        needed[f"signal {signal!r}"] = fields
    check_rows(run_data.train, needed, f"data ({run_data.source})")
    check_rows(run_data.eval, needed, f"held-out data ({run_data.source})")
    if run_data.eval and sharded_parameters():
        raise TrainingSetupError(
            "data.eval_size: held-out evaluation generates on the main process, which cannot work when "
            "DeepSpeed ZeRO-3 or FSDP shards the parameters; set data.eval_size: 0 and evaluate "
            "final_model/ after training (docs/scaling.md)"
        )
    args = grpo_args(config, preset, output_dir)
    last_checkpoint = _last_checkpoint(output_dir) if resume else None  # every rank raises alike
    # The main process cleans the output dir and builds (or warm-starts) the model; the others then load it.
    with args.main_process_first(local=False, desc="preparing the output dir and the model"):
        if is_main:
            _prepare_output_dir(output_dir, resume)
        model_start = time.time()
        source = prepare_model_dir(config, run_data, log)
        model_s = time.time() - model_start  # the warm start, when it is not cached
    model, tokenizer = load_model(config, source)
    train_rows = to_trainer_rows(run_data.train, config)
    run_data.eval = to_trainer_rows(run_data.eval, config)

    if is_main:
        resolved = config.model_dump(mode="json")
        (output_dir / "config.yaml").write_text(yaml.safe_dump(resolved, sort_keys=False), encoding="utf-8")
    metrics = MetricsLog(output_dir / METRICS_FILE, enabled=is_main)
    ctx = _RunContext(config, metrics, run_data, mixture, tokenizer, model=model, log=log, is_main=is_main)
    if last_checkpoint is not None:
        step = int(Path(last_checkpoint).name.split("-")[-1])
        metrics.truncate_after(step)
        ctx.evals = {r["step"]: r for r in metrics.read() if r["kind"] == "eval"}
        log(f"resuming from {last_checkpoint} (step {step})")
    else:
        log(f"evaluating the initial policy on {len(run_data.eval)} held-out prompts")
        ctx.run_eval(0)

    import datasets

    from botgrpo_core.trainer import BoTGRPOTrainer

    success_fn = run_data.task.success if run_data.task is not None else None
    trainer = BoTGRPOTrainer(
        model,
        args,
        mixture=mixture,
        preset=preset,
        success_fn=success_fn,
        dynamic_sampling_rounds=config.training.dynamic_sampling_rounds,
        log_fn=log,
        train_dataset=datasets.Dataset.from_list(train_rows),
        processing_class=tokenizer,
        callbacks=[*_callbacks(ctx), *callbacks],
    )
    ctx.trainer = trainer
    from transformers import PrinterCallback, ProgressCallback

    trainer.remove_callback(PrinterCallback)  # metrics go to metrics.jsonl and the compact bar below
    trainer.remove_callback(ProgressCallback)
    if progress and is_main:
        from tqdm.auto import tqdm

        ctx.bar = tqdm(
            total=config.training.steps, desc=f"{preset.name} training", unit="step", file=sys.stderr
        )
    log(
        f"training {config.training.steps} steps: preset {preset.name} (estimator {preset.estimator}), "
        f"{config.training.prompts_per_step} prompts x {config.training.group_size} rollouts per step"
    )
    try:
        trainer.train(resume_from_checkpoint=last_checkpoint)
    finally:
        if ctx.bar is not None:
            ctx.bar.close()
        mixture.close()
    if is_main:
        trainer.save_model(str(output_dir / FINAL_MODEL_DIR))
    summary = _summary(config, ctx, preset, start, overrides)
    summary["model_prep_s"] = round(model_s, 1)
    if is_main:
        if config.training.plots:
            summary["plots"] = write_plots(output_dir, metrics.read())
        (output_dir / SUMMARY_FILE).write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
        log(format_report(summary))
    return summary


def _summary(
    config: RunConfig, ctx: _RunContext, preset: Preset, start: float, overrides: Sequence[str]
) -> dict[str, Any]:
    steps = sorted(ctx.evals)
    return {
        "output_dir": str(config.training.output_dir),
        "preset": preset.name,
        "estimator": preset.estimator,
        "steps": int(ctx.trainer.state.global_step) if ctx.trainer else 0,
        "before": {k: v for k, v in ctx.evals.get(0, {}).items() if k.startswith("eval/")},
        "after": {k: v for k, v in ctx.evals.get(steps[-1], {}).items() if k.startswith("eval/")}
        if steps
        else {},
        "metrics": str(Path(config.training.output_dir) / METRICS_FILE),
        "final_model": str(Path(config.training.output_dir) / FINAL_MODEL_DIR),
        "overrides": list(overrides),
        "wall_s": round(time.time() - start, 1),
    }


_TABLE_ROWS = (
    ("answer accuracy, greedy", "eval/greedy/answer_accuracy"),
    ("answer accuracy, sampled", "eval/sampled/answer_accuracy"),
    ("step error rate, greedy", "eval/greedy/step_error_rate"),
    ("step error rate, sampled", "eval/sampled/step_error_rate"),
    ("mean token reward, sampled", "eval/sampled/reward"),
)


def format_report(summary: Mapping[str, Any]) -> str:
    """The before/after table and where the outputs are."""
    before, after = summary.get("before", {}), summary.get("after", {})
    lines = ["", f"{'held-out prompts':<28}{'before':>9}{'after':>9}"]
    for label, key in _TABLE_ROWS:
        if key in before or key in after:
            b, a = before.get(key), after.get(key)
            fmt = lambda v: f"{v:>9.3f}" if isinstance(v, (int, float)) else f"{'-':>9}"  # noqa: E731
            lines.append(f"{label:<28}{fmt(b)}{fmt(a)}")
    lines.append(
        f"\n{summary.get('steps')} steps of {summary.get('preset')}; the run took {summary.get('wall_s')} s "
        f"({summary.get('model_prep_s', 0)} s of it building/warm-starting the model)"
    )
    lines.append(f"metrics: {summary.get('metrics')}")
    for plot in summary.get("plots", []):
        lines.append(f"plot:    {plot}")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------
# Plots
# ------------------------------------------------------------------------------------------------
def write_plots(output_dir: Path, records: Sequence[Mapping[str, Any]]) -> list[str]:
    """``training_curves.png`` (reward, success, per-signal, zero-spread groups, held-out accuracy) and
    ``advantages.png`` (advantage statistics over steps and histograms at the evaluation steps)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    train = [r for r in records if r.get("kind") == "train"]
    evals = [r for r in records if r.get("kind") == "eval"]

    def series(rows: Sequence[Mapping[str, Any]], key: str, smooth: int = 1) -> tuple[list[int], list[float]]:
        pts = [(r["step"], r[key]) for r in rows if isinstance(r.get(key), (int, float))]
        values = [p[1] for p in pts]
        if smooth > 1:  # trailing moving average: per-step values of 8 prompts are noisy
            values = [
                sum(values[max(0, i - smooth + 1) : i + 1]) / (i - max(0, i - smooth + 1) + 1)
                for i in range(len(values))
            ]
        return [p[0] for p in pts], values

    window = max(1, len(train) // 20)

    fig, axes = plt.subplots(2, 2, figsize=(11, 7.5))
    ax = axes[0, 0]
    for key, label in (("reward/token_mean", "mean token reward"), ("success_rate", "success rate")):
        ax.plot(*series(train, key, window), label=label)
    ax.set_title(f"rollouts (moving average of {window} steps)")
    ax = axes[0, 1]
    signal_keys = sorted({k for r in train for k in r if k.startswith("signals/") and k.endswith("/mean")})
    for key in signal_keys:
        ax.plot(*series(train, key, window), label=key.split("/")[1])
    ax.set_title("signals (mean per rollout, moving average)")
    ax = axes[1, 0]
    ax.plot(
        *series(train, "groups/outcome_zero_spread_frac", window), label="outcomes all equal (no GRPO signal)"
    )
    ax.plot(
        *series(train, "groups/zero_spread_frac", window), label="token rewards all equal (no BoT signal)"
    )
    ax.set_ylim(-0.02, 1.02)
    ax.set_title("groups without spread")
    ax = axes[1, 1]
    eval_keys = sorted(
        {
            k
            for r in evals
            for k in r
            if k.startswith("eval/") and k.endswith(("answer_accuracy", "step_error_rate"))
        }
    ) or sorted({k for r in evals for k in r if k.startswith("eval/") and k.endswith("/reward")})
    for key in eval_keys:
        ax.plot(*series(evals, key), marker="o", label=key[len("eval/") :])
    ax.set_title("held-out evaluation")
    for ax in axes.flat:
        ax.set_xlabel("step")
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
    fig.tight_layout()
    curves = output_dir / "training_curves.png"
    fig.savefig(curves, dpi=110)
    plt.close(fig)

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for key in (
        "advantages/mean",
        "advantages/std",
        "advantages/abs_mean",
        "advantages/min",
        "advantages/max",
    ):
        left.plot(*series(train, key), label=key.split("/")[1])
    left.set_title("token advantages per batch")
    left.set_xlabel("step")
    left.legend(fontsize=8)
    hists = [r for r in evals if isinstance(r.get("advantages/histogram"), list)]
    edges = [-4 + 0.2 * i for i in range(41)]
    shown = hists[:: max(1, len(hists) // 5)]
    if hists and shown[-1] is not hists[-1]:
        shown.append(hists[-1])
    for r in shown:
        counts = r["advantages/histogram"]
        total = sum(counts) or 1
        right.stairs([c / total for c in counts], edges, label=f"step {r['step']}")
    right.set_title("distribution of token advantages (clipped to [-4, 4])")
    right.set_xlabel("advantage")
    if hists:
        right.legend(fontsize=8)
    fig.tight_layout()
    adv = output_dir / "advantages.png"
    fig.savefig(adv, dpi=110)
    plt.close(fig)
    return [str(curves), str(adv)]
