"""``model.peft`` as the ``peft.LoraConfig`` that TRL's trainer takes (``peft_config=``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from botgrpo_core.engine.setup import TrainingSetupError

if TYPE_CHECKING:
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
