"""Data and model sources: JSONL, a saved datasets folder, chat prompts, a local model folder."""

from __future__ import annotations

import json

import pytest
from train_fixtures import arith_plugin, parse, run_dict  # noqa: F401  (fixture)

from botgrpo_core.engine.data import load_data, to_trainer_rows
from botgrpo_core.engine.run import run_training
from botgrpo_core.engine.setup import TrainingSetupError

QUIET = {"progress": False, "log": lambda m: None}


def _rows(n):
    return [
        {"question": f"Q: {i}+2=\n", "answer": str(i + 2), "expression": f"{i}+2"} for i in range(1, n + 1)
    ]


def _jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_jsonl_split_prompt_field_and_chat(tmp_path, arith_plugin):  # noqa: F811
    data = _jsonl(tmp_path / "rows.jsonl", _rows(20))
    config = parse(
        run_dict(
            tmp_path,
            data={"source": "jsonl", "path": str(data), "prompt_field": "question", "eval_size": 3},
        )
    )
    run_data = load_data(config)
    assert [r["answer"] for r in run_data.eval] == ["20", "21", "22"]  # the last rows are held out
    assert len(run_data.train) == 17 and run_data.task is None
    rows = to_trainer_rows(run_data.train, config)
    assert rows[0] == {"prompt": "Q: 1+2=\n", "answer": "3", "expression": "1+2"}

    chat = parse(
        run_dict(
            tmp_path,
            data={
                "source": "jsonl",
                "path": str(data),
                "prompt_field": "question",
                "chat": True,
                "system_prompt": "Be exact.",
            },
        )
    )
    prompt = to_trainer_rows(load_data(chat).train, chat)[0]["prompt"]
    assert prompt == [{"role": "system", "content": "Be exact."}, {"role": "user", "content": "Q: 1+2=\n"}]


def test_disk_dataset_and_eval_path(tmp_path, arith_plugin):  # noqa: F811
    import datasets

    datasets.Dataset.from_list(_rows(10)).save_to_disk(str(tmp_path / "ds"))
    held_out = _jsonl(tmp_path / "eval.jsonl", _rows(4))
    config = parse(
        run_dict(
            tmp_path,
            data={
                "source": "disk",
                "path": str(tmp_path / "ds"),
                "eval_path": str(held_out),
                "prompt_field": "question",
            },
        )
    )
    run_data = load_data(config)
    assert len(run_data.train) == 10 and len(run_data.eval) == 4


def test_bad_jsonl_line_is_named(tmp_path, arith_plugin):  # noqa: F811
    data = tmp_path / "rows.jsonl"
    data.write_text('{"prompt": "a", "answer": "1"}\n{"prompt": "b", answer: 2}\n')
    config = parse(run_dict(tmp_path, data={"source": "jsonl", "path": str(data)}))
    with pytest.raises(TrainingSetupError, match=r"rows\.jsonl:2 is not valid JSON"):
        load_data(config)


def test_tiny_model_on_jsonl_rows_trains(tmp_path, arith_plugin):  # noqa: F811
    """No task: the tiny model gets a byte-level BPE trained on the prompts; evaluation uses the mixture."""
    data = _jsonl(tmp_path / "rows.jsonl", _rows(24))
    out = tmp_path / "run"
    config = parse(
        run_dict(
            out,
            data={"source": "jsonl", "path": str(data), "prompt_field": "question", "eval_size": 4},
            rewards={"signals": [{"name": "test_arith.answer"}, {"name": "test_arith.digit_spans"}]},
            training={"steps": 1},
        )
    )
    summary = run_training(config, **QUIET)
    assert summary["steps"] == 1
    assert (
        "eval/sampled/reward" in summary["after"] and "eval/sampled/answer_accuracy" not in summary["after"]
    )


def test_local_model_folder(tmp_path, arith_plugin):  # noqa: F811
    """model.name_or_path as a folder saved with save_pretrained (the path real users take)."""
    from botgrpo_core.config.sections import TinyModelSpec
    from botgrpo_core.engine.tiny import build_tiny_model, char_tokenizer, save_pretrained

    tok = char_tokenizer()
    save_pretrained(
        build_tiny_model(tok, TinyModelSpec(hidden_size=32, num_layers=1, num_heads=2)), tok, tmp_path / "m"
    )
    out = tmp_path / "run"
    config = parse(run_dict(out, model={"name_or_path": str(tmp_path / "m")}, training={"steps": 1}))
    summary = run_training(config, **QUIET)
    assert summary["steps"] == 1 and (out / "final_model" / "config.json").is_file()
