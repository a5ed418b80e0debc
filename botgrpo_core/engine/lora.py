"""``model.peft`` as the ``peft.LoraConfig`` that TRL's trainer takes (``peft_config=``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from botgrpo_core.engine.setup import TrainingSetupError

if TYPE_CHECKING:
    from botgrpo_core.config.models import RunConfig
    from botgrpo_core.config.sections import LoraSpec

#: what installs peft, as the error says it
PEFT_INSTALL = 'pip install "botgrpo-core[peft]"'


def lora_config(spec: LoraSpec | None) -> Any:
    """``peft.LoraConfig`` for a causal LM from the run file's ``model.peft`` (None: full fine-tuning)."""
    if spec is None:
        return None
    try:
        from peft import LoraConfig
    except ModuleNotFoundError:
        raise TrainingSetupError(f"model.peft needs the peft package: {PEFT_INSTALL}") from None
    targets = spec.target_modules if isinstance(spec.target_modules, str) else list(spec.target_modules)
    return LoraConfig(
        r=spec.r,
        lora_alpha=spec.alpha,
        lora_dropout=spec.dropout,
        target_modules=targets,
        task_type="CAUSAL_LM",
    )


#: the linear layers inside a Llama block, the tiny model's architecture (``tiny.build_tiny_model``): what
#: ``model.peft.target_modules`` can name for ``name_or_path: tiny`` (checked by ``validate``, torch-free)
TINY_LINEAR = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


def targets_problem(spec: LoraSpec | None, linear: set[str], model: str) -> str | None:
    """Why ``model.peft.target_modules`` would fail on a model whose linear layers (outside the output head)
    have the dotted names ``linear`` (None when every target names one); a target matches a whole name or
    its last parts, as peft matches it."""
    if spec is None or isinstance(spec.target_modules, str):
        return None
    short = sorted({name.rsplit(".", 1)[-1] for name in linear})
    missing = [t for t in spec.target_modules if not any(n == t or n.endswith("." + t) for n in linear)]
    if not missing:
        return None
    return (
        f"model.peft.target_modules: {', '.join(repr(t) for t in missing)} names no linear layer of {model} "
        f"(its layers: {', '.join(short) or 'none'}); list some of those, or use 'all-linear'"
    )


def linear_module_names(model: Any) -> set[str]:
    """The dotted names of ``model``'s linear layers (``torch.nn.Linear``, transformers' ``Conv1D``) outside
    its output head: what LoRA can adapt."""
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    return {
        name
        for name, module in model.named_modules()
        if type(module).__name__ in ("Linear", "Conv1D") and module is not head
    }


def check_lora_targets(config: RunConfig, model: Any) -> None:
    """``model.peft.target_modules`` against the built model's linear layers, before the run writes anything
    (peft would fail later with a traceback, config.yaml and metrics.jsonl written); the tiny model's
    ``initial_model`` folder, built for this run, is removed.

    :raises TrainingSetupError: a target that names no linear layer, with the model's layer names.
    """
    import shutil
    from pathlib import Path

    from botgrpo_core.engine.outputs import INITIAL_MODEL_DIR

    problem = targets_problem(config.model.peft, linear_module_names(model), repr(config.model.name_or_path))
    if problem is None:
        return
    if config.model.name_or_path == "tiny" and not config.training.warm_start.enabled:
        shutil.rmtree(Path(config.training.output_dir) / INITIAL_MODEL_DIR, ignore_errors=True)
    raise TrainingSetupError(problem)
