"""Issue 60's battery on ``botgrpo sample`` (items 1, 2, 4, 5, 12-15, 22, 23) and issue 59 item 3 (a LoRA run's
``final_model``): every bad request ends in one line naming the fix, before anything is generated, and nothing
the command reads or wrote before is destroyed. A tiny model built here; greedy rows are checked against an
argmax decoding written in the test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from botgrpo_core.cli.main import main
from botgrpo_core.engine.tiny import build_tiny_model, byte_level_bpe_tokenizer, save_pretrained

TEMPLATE = (
    "{% for m in messages %}{{ m['role'][0] }}:{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}a:{% endif %}"
)
MAX_NEW = 6
RUN = """
data: {{source: jsonl, path: {data}, eval_size: {eval_size}{extra}}}
rewards:
  beta: 0
  signals:
    - name: core.exact_answer
      params: {{pattern: '(\\d+)'}}
training: {{max_new_tokens: {max_new}, temperature: 1.0, seed: 3, num_threads: 1}}
"""


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tokenizer = byte_level_bpe_tokenizer(["What is 2 + 3? a: 5", "u: 7 - 4 = 3"] * 20, vocab_size=300)
    tokenizer.chat_template = TEMPLATE
    return save_pretrained(build_tiny_model(tokenizer, seed=1), tokenizer, tmp_path_factory.mktemp("model"))


def _run(tmp_path: Path, rows: list, *, eval_size: int = 0, extra: str = "") -> tuple[Path, Path]:
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    run = tmp_path / "run.yaml"
    run.write_text(RUN.format(data=data, eval_size=eval_size, extra=extra, max_new=MAX_NEW), encoding="utf-8")
    return run, data


def _sample(run: Path, model: Path, out: Path | str, *extra: str) -> int:
    return main(["sample", str(run), "--output", str(out), "--set", f"model.name_or_path={model}", *extra])


ROWS = [{"prompt": f"What is {a} + 3?", "answer": str(a + 3)} for a in range(10)]


def test_output_naming_an_input_is_refused_and_the_input_kept(tmp_path, model_dir, capsys) -> None:
    """Item 1: --output naming data.path (here with --split eval, as reported) or the run file."""
    run, data = _run(tmp_path, ROWS, eval_size=2)
    before = data.read_bytes()
    assert _sample(run, model_dir, data, "--split", "eval") == 2
    assert "is data.path" in capsys.readouterr().err and data.read_bytes() == before
    link = tmp_path / "link.jsonl"
    link.symlink_to(data)
    assert _sample(run, model_dir, link) == 2 and data.read_bytes() == before
    assert _sample(run, model_dir, run) == 2
    assert "the run file" in capsys.readouterr().err
    config = (model_dir / "config.json").read_bytes()
    assert _sample(run, model_dir, model_dir / "config.json") == 2  # the model's own files, too
    assert (
        "model.name_or_path" in capsys.readouterr().err and (model_dir / "config.json").read_bytes() == config
    )
    assert _sample(run, model_dir, model_dir / "new.jsonl") == 2
    assert "is inside model.name_or_path" in capsys.readouterr().err


def test_outputs_that_cannot_be_written_are_refused_before_generating(tmp_path, model_dir, capsys) -> None:
    """Item 12: a folder, a path under a file, /dev/full: one line, exit 2, before the model loads."""
    run, _ = _run(tmp_path, ROWS)
    (tmp_path / "afile").write_text("x", encoding="utf-8")
    for out, words in (
        (tmp_path, "is a folder"),
        (tmp_path / "afile" / "out.jsonl", "is a file, not a folder"),
        ("/dev/full", "not a regular file"),
    ):
        assert _sample(run, model_dir, out) == 2
        err = capsys.readouterr().err
        assert words in err and "Traceback" not in err and "sampling" not in err, err


def test_a_read_only_folder_is_refused_before_generating(tmp_path, model_dir, capsys, monkeypatch) -> None:
    """Item 12, a read-only mount: the probe file beside the output cannot be created (EROFS, as the kernel
    answers on such a mount; the tests run as root, whom permissions do not stop, so the errno is injected at
    os.open for that folder only)."""
    import errno
    import os

    run, _ = _run(tmp_path, ROWS)
    mount = tmp_path / "ro"
    mount.mkdir()
    real_open = os.open

    def read_only(path, flags, *args, **kwargs):
        if Path(path).parent == mount and flags & os.O_CREAT:
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", read_only)
    assert _sample(run, model_dir, mount / "out.jsonl") == 2
    err = capsys.readouterr().err
    assert "cannot write in" in err and "Read-only file system" in err and "sampling" not in err, err


def test_a_failed_write_keeps_the_earlier_output_whole(tmp_path, model_dir, capsys, monkeypatch) -> None:
    """Item 2: the output is written to a temporary file and renamed: a full disk midway keeps the old rows."""
    run, _ = _run(tmp_path, ROWS)
    out = tmp_path / "out.jsonl"
    assert _sample(run, model_dir, out, "--limit", "2") == 0
    good = out.read_text(encoding="utf-8")
    import botgrpo_core.cli.sample_output as sample_output

    class Full:
        def __init__(self, real):
            self.real, self.closed = real, False

        def write(self, text: str) -> int:
            raise OSError(28, "No space left on device")

        def __getattr__(self, name):
            return getattr(self.real, name)

        def close(self) -> None:
            self.closed = True
            self.real.close()

    real_enter = sample_output.AtomicOutput.__enter__

    def full_enter(self):
        self.file = Full(real_enter(self))
        return self.file

    monkeypatch.setattr(sample_output.AtomicOutput, "__enter__", full_enter)
    assert _sample(run, model_dir, out, "--limit", "3") == 1
    err = capsys.readouterr().err
    assert "No space left on device" in err and "unchanged" in err and "Traceback" not in err
    assert out.read_text(encoding="utf-8") == good
    assert [p.name for p in tmp_path.iterdir() if ".tmp" in p.name] == []


@pytest.mark.parametrize(
    "row, words",
    [
        ({"question": "no prompt"}, "has no field 'prompt'"),
        ({"prompt": None}, "is null"),
        ({"prompt": 7}, "is 7 (int)"),
        ({"prompt": []}, "empty list of chat messages"),
        ({"prompt": ""}, "is empty"),
        ({"prompt": "ab\ud800"}, "lone surrogate"),
        ({"prompt": [{"role": "user"}]}, "message 0 is not"),
    ],
)
def test_bad_rows_are_named(tmp_path, model_dir, capsys, row, words) -> None:
    """Item 13: the row and what is wrong with it, not a KeyError or a reshape error."""
    run, _ = _run(tmp_path, [ROWS[0], {**row, "answer": "1"}])
    assert _sample(run, model_dir, tmp_path / "out.jsonl") == 2
    err = capsys.readouterr().err
    assert "row 1" in err and words in err and "Traceback" not in err, err
    assert not (tmp_path / "out.jsonl").exists()


def test_a_seed_out_of_range_is_one_line(tmp_path, model_dir, capsys) -> None:
    """Item 14: --seed 10**23 overflowed torch's seed."""
    run, _ = _run(tmp_path, ROWS)
    assert _sample(run, model_dir, tmp_path / "out.jsonl", "--seed", str(10**23)) == 2
    assert "--seed must be in [0, 4294967295]" in capsys.readouterr().err


def test_ctrl_c_writes_nothing_and_says_so(tmp_path, model_dir, capsys, monkeypatch) -> None:
    """Item 15: a KeyboardInterrupt during generation: one line, exit 130, no partial file."""
    run, _ = _run(tmp_path, ROWS)
    import botgrpo_core.engine.evaluation as evaluation

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt  # what Ctrl-C raises in the main thread

    monkeypatch.setattr(evaluation, "generate", interrupted)
    assert _sample(run, model_dir, tmp_path / "out.jsonl") == 130
    err = capsys.readouterr().err
    assert "interrupted: nothing written" in err and "Traceback" not in err
    assert list(tmp_path.glob("*out.jsonl*")) == []


def _argmax(model_dir: Path, text: str) -> str:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir).eval()
    ids, out = tokenizer(text, add_special_tokens=False)["input_ids"], []
    with torch.no_grad():
        for _ in range(MAX_NEW):
            out.append(int(model(torch.tensor([ids + out])).logits[0, -1].argmax()))
            if out[-1] == tokenizer.eos_token_id:
                break
    return tokenizer.decode(out, skip_special_tokens=True)


def test_chat_and_system_prompt_apply_as_in_training(tmp_path, model_dir) -> None:
    """Item 4: data.chat and data.system_prompt: a string prompt goes through the chat template, as in training."""
    run, _ = _run(tmp_path, ROWS, extra=", chat: true, system_prompt: Be brief.")
    out = tmp_path / "out.jsonl"
    assert _sample(run, model_dir, out, "--limit", "2", "--greedy") == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    for row, source in zip(rows, ROWS, strict=False):
        messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": source["prompt"]}]
        assert row["prompt"] == messages
        assert row["completion"] == _argmax(model_dir, f"s:Be brief.\nu:{source['prompt']}\na:")


def test_engine_device_is_read(tmp_path, model_dir, capsys) -> None:
    """Item 5: engine.device: cuda on a machine without CUDA is refused (it was ignored: always CPU)."""
    run, _ = _run(tmp_path, ROWS)
    out = tmp_path / "out.jsonl"
    if torch.cuda.is_available():
        assert _sample(run, model_dir, out, "--limit", "1", "--set", "engine.device=cuda") == 0
        assert "on cuda" in capsys.readouterr().err
    else:
        assert _sample(run, model_dir, out, "--set", "engine.device=cuda") == 2
        assert "engine.device is 'cuda'" in capsys.readouterr().err
        assert _sample(run, model_dir, out, "--limit", "1", "--set", "engine.device=cpu") == 0
        assert "on cpu" in capsys.readouterr().err


def test_prompts_past_the_context_and_max_prompt_tokens_are_refused(tmp_path, model_dir, capsys) -> None:
    """Item 22 and item 6 in sample: a 1 MB prompt on a 128-position model is refused at once, naming the row."""
    import time

    run, _ = _run(tmp_path, [ROWS[0], {"prompt": "What is 2 + 3? " * 70_000, "answer": "5"}])
    began = time.perf_counter()
    assert _sample(run, model_dir, tmp_path / "out.jsonl") == 2
    err = capsys.readouterr().err
    assert "row 1" in err and "context of 128 positions" in err and time.perf_counter() - began < 60, err
    run, _ = _run(tmp_path, ROWS)
    assert _sample(run, model_dir, tmp_path / "out.jsonl", "--set", "training.max_prompt_tokens=2") == 2
    assert "training.max_prompt_tokens is 2" in capsys.readouterr().err


def test_many_samples_stream_in_chunks_with_progress(tmp_path, model_dir, capsys, monkeypatch) -> None:
    """Item 22: rows are generated and written a chunk at a time, with a progress line each."""
    import botgrpo_core.cli.sample as sample

    monkeypatch.setattr(sample, "CHUNK", 4)
    run, _ = _run(tmp_path, ROWS)
    out = tmp_path / "out.jsonl"
    assert _sample(run, model_dir, out, "--limit", "3", "--samples", "3") == 0
    err = capsys.readouterr().err
    assert "sampled 4/9" in err and "sampled 9/9" in err
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["sample"] for r in rows] == [0, 1, 2] * 3 and [r["answer"] for r in rows] == ["3"] * 3 + [
        "4"
    ] * 3 + ["5"] * 3


def test_the_eval_cap_is_named(tmp_path, model_dir, capsys) -> None:
    """Item 23: eval_size 2 on 3 rows holds out none (a fifth at most): the message says so, not 'eval_size is 0'."""
    run, _ = _run(tmp_path, ROWS[:3], eval_size=2)
    assert _sample(run, model_dir, tmp_path / "out.jsonl", "--split", "eval") == 2
    err = capsys.readouterr().err
    assert "capped at a fifth of the 3 rows" in err and "eval_size is 0" not in err, err


def test_a_lora_final_model_is_sampled_as_base_plus_adapter(tmp_path, model_dir, capsys) -> None:
    """Issue 59 item 3: a LoRA adapter folder (what a LoRA run's final_model is) is sampled as the base with the
    adapter merged in: greedy rows equal an argmax decoding of the merged model; a missing base is named."""
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    base = AutoModelForCausalLM.from_pretrained(model_dir)
    peft_model = get_peft_model(base, LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"]))
    with torch.no_grad():  # a non-zero update, so the adapter changes the model
        for name, p in peft_model.named_parameters():
            if "lora_B" in name:
                p.copy_(torch.randn_like(p, generator=torch.Generator().manual_seed(0)))
    adapter = tmp_path / "run" / "final_model"
    peft_model.save_pretrained(adapter)
    AutoTokenizer.from_pretrained(model_dir).save_pretrained(adapter)
    merged = tmp_path / "merged"
    peft_model.merge_and_unload().save_pretrained(merged)
    AutoTokenizer.from_pretrained(model_dir).save_pretrained(merged)

    run, _ = _run(tmp_path, ROWS)
    out = tmp_path / "out.jsonl"
    assert _sample(run, adapter, out, "--limit", "2", "--greedy") == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["completion"] for r in rows] == [_argmax(merged, r["prompt"]) for r in ROWS[:2]]
    assert [r["completion"] for r in rows] != [_argmax(model_dir, r["prompt"]) for r in ROWS[:2]]

    config = json.loads((adapter / "adapter_config.json").read_text(encoding="utf-8"))
    config["base_model_name_or_path"] = str(tmp_path / "gone")
    (adapter / "adapter_config.json").write_text(json.dumps(config), encoding="utf-8")
    capsys.readouterr()
    assert _sample(run, adapter, out) == 2
    err = capsys.readouterr().err
    assert "is a LoRA adapter" in err and "gone" in err and "merge_and_unload" in err, err
    config["base_model_name_or_path"] = "nobody/no-such-model-xyz"  # a hub id the cache does not hold
    (adapter / "adapter_config.json").write_text(json.dumps(config), encoding="utf-8")
    assert _sample(run, adapter, out) == 2
    err = capsys.readouterr().err
    assert "'nobody/no-such-model-xyz', which is not here" in err and "Traceback" not in err, err


def test_score_reads_a_lora_final_models_tokenizer(tmp_path, model_dir) -> None:
    """Issue 59 item 3, score: an adapter folder's own tokenizer where it has one, else its base's."""
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from botgrpo_core.cli.score import load_tokenizer

    peft_model = get_peft_model(
        AutoModelForCausalLM.from_pretrained(model_dir), LoraConfig(r=2, target_modules=["q_proj"])
    )
    bare = tmp_path / "run" / "final_model"
    peft_model.save_pretrained(bare)  # no tokenizer files: the base's (the recorded base_model_name_or_path)
    assert not (bare / "tokenizer_config.json").exists()
    config = json.loads((bare / "adapter_config.json").read_text(encoding="utf-8"))
    config["base_model_name_or_path"] = str(model_dir)
    (bare / "adapter_config.json").write_text(json.dumps(config), encoding="utf-8")
    text = "What is 2 + 3? a: 5"
    reference = AutoTokenizer.from_pretrained(model_dir)(text)["input_ids"]
    assert load_tokenizer(str(bare))(text)["input_ids"] == reference
    AutoTokenizer.from_pretrained(model_dir).save_pretrained(bare)
    assert load_tokenizer(str(bare))(text)["input_ids"] == reference
