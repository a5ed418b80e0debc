"""``botgrpo sample``: a saved model's completions for a run's prompts, as rows ``botgrpo score`` reads.

Greedy rows are checked against an argmax decoding written here (the model's forward, one token at a time);
sampled rows are checked for their seed; failure paths name the key or option and the fix.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from botgrpo_core.cli.main import main
from botgrpo_core.engine.tiny import build_tiny_model, byte_level_bpe_tokenizer, save_pretrained

TEMPLATE = "{% for m in messages %}{{ m['role'][0] }}:{{ m['content'] }}\n{% endfor %}{% if add_generation_prompt %}a:{% endif %}"
MAX_NEW = 12
ROWS = [
    {"prompt": [{"role": "user", "content": "What is 2 + 3?"}], "answer": "5"},
    {"prompt": [{"role": "user", "content": "What is 7 - 4?"}], "answer": "3"},
    {"prompt": [{"role": "user", "content": "What is 6 * 2?"}], "answer": "12"},
]
RUN = """
data: {{source: jsonl, path: {data}, eval_size: 0}}
rewards:
  beta: 0
  signals:
    - name: core.exact_answer
      params: {{pattern: '(\\d+)'}}
training: {{max_new_tokens: {max_new}, temperature: {temperature}, seed: 3, num_threads: 1}}
"""


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tokenizer = byte_level_bpe_tokenizer(["What is 2 + 3? a: 5", "u: 7 - 4 = 3"] * 20, vocab_size=300)
    tokenizer.chat_template = TEMPLATE
    return save_pretrained(build_tiny_model(tokenizer, seed=1), tokenizer, tmp_path_factory.mktemp("model"))


def _run(tmp_path: Path, model_dir: Path, temperature: float) -> Path:
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    run = tmp_path / "run.yaml"
    run.write_text(RUN.format(data=data, max_new=MAX_NEW, temperature=temperature), encoding="utf-8")
    return run


def _sample(run: Path, model_dir: Path, out: Path, *extra: str) -> list[dict]:
    code = main(
        ["sample", str(run), "--output", str(out), "--set", f"model.name_or_path={model_dir}", *extra]
    )
    assert code == 0
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def _argmax_decode(model_dir: Path, prompt_text: str) -> tuple[str, bool]:
    """Greedy decoding by hand: the completion text and whether the cap cut it."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir).eval()
    ids = tokenizer(prompt_text, add_special_tokens=False)["input_ids"]
    out: list[int] = []
    with torch.no_grad():
        for _ in range(MAX_NEW):
            logits = model(torch.tensor([ids + out])).logits[0, -1]
            out.append(int(logits.argmax()))
            if out[-1] == tokenizer.eos_token_id:
                return tokenizer.decode(out, skip_special_tokens=True), False
    return tokenizer.decode(out, skip_special_tokens=True), True


def test_greedy_rows_equal_an_argmax_decoding_and_score_reads_them(tmp_path, model_dir, capsys) -> None:
    run = _run(tmp_path, model_dir, temperature=0.7)
    rows = _sample(run, model_dir, tmp_path / "out.jsonl", "--limit", "2", "--greedy")
    assert [r["answer"] for r in rows] == ["5", "3"]  # the data rows' own fields, in order
    for row, source in zip(rows, ROWS[:2], strict=True):
        assert row["prompt"] == source["prompt"] and row["sample"] == 0 and row["model"] == str(model_dir)
        rendered = f"u:{source['prompt'][0]['content']}\na:"  # the template by hand
        assert (row["completion"], row["truncated"]) == _argmax_decode(model_dir, rendered)
    capsys.readouterr()
    assert (
        main(["score", str(run), "--input", str(tmp_path / "out.jsonl"), "--tokenizer", str(model_dir)]) == 0
    )


def test_samples_per_prompt_follow_the_seed(tmp_path, model_dir) -> None:
    run = _run(tmp_path, model_dir, temperature=1.0)
    first = _sample(run, model_dir, tmp_path / "a.jsonl", "--samples", "3")
    again = _sample(run, model_dir, tmp_path / "b.jsonl", "--samples", "3")
    other = _sample(run, model_dir, tmp_path / "c.jsonl", "--samples", "3", "--seed", "4")
    assert len(first) == 9 and [r["sample"] for r in first] == [0, 1, 2] * 3
    assert [r["answer"] for r in first] == ["5"] * 3 + ["3"] * 3 + ["12"] * 3
    assert first == again  # training.seed (3) by default: the same rows
    assert [r["completion"] for r in first] != [r["completion"] for r in other]
    assert len({r["completion"] for r in first[:3]}) > 1  # one prompt's samples differ from each other


def test_bad_requests_name_the_fix(tmp_path, model_dir, capsys) -> None:
    run = _run(tmp_path, model_dir, temperature=1.0)
    out = tmp_path / "out.jsonl"
    assert main(["sample", str(run), "--output", str(out)]) == 2  # the run's model is the default: tiny
    assert "--set model.name_or_path=" in capsys.readouterr().err
    at = f"model.name_or_path={model_dir}"
    assert main(["sample", str(run), "--output", str(out), "--set", at, "--split", "eval"]) == 2
    assert "data.eval_size is 0" in capsys.readouterr().err
    assert main(["sample", str(run), "--output", str(out), "--set", at, "--samples", "0"]) == 2
    assert "--samples must be >= 1" in capsys.readouterr().err
    missing = f"model.name_or_path={tmp_path / 'nowhere'}"
    assert main(["sample", str(run), "--output", str(out), "--set", missing]) == 2
    assert "model.name_or_path" in capsys.readouterr().err and not out.exists()
