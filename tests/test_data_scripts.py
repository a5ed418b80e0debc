"""``scripts/make_*_data.py`` build the recipes' data files (issue 15): their conversion, on small fixtures in
``tests/data/`` laid out as ``datasets.load_dataset`` yields the public datasets' rows (no download here),
and the files they write are what the recipes read."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from botgrpo_core.config.loading import load_config
from botgrpo_core.engine.data import load_data

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "data"


def _script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _rows(name: str) -> list[dict]:
    return [json.loads(line) for line in (FIXTURES / name).read_text(encoding="utf-8").splitlines()]


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _recipe_data(recipe: str, out: Path, train: str, held_out: str):
    """The recipe's data section pointed at ``out`` (as if run from the folder the script wrote into)."""
    config = load_config(
        ROOT / "examples" / "recipes" / recipe,
        [f"data.path={out / train}", f"data.eval_path={out / held_out}", "data.eval_size=1000"],
    )
    recipe_data = load_config(ROOT / "examples" / "recipes" / recipe).data
    assert recipe_data.path == Path("data") / train and recipe_data.eval_path == Path("data") / held_out
    return config, load_data(config)


def test_aime_conversion(tmp_path):
    aime = _script("make_aime_data")
    counts = aime.build(_rows("aime_1983_2024_rows.jsonl"), _rows("aime_2024_rows.jsonl"), tmp_path)
    train, held_out = _jsonl(tmp_path / aime.TRAIN_FILE), _jsonl(tmp_path / aime.EVAL_FILE)
    assert counts == {aime.TRAIN_FILE: len(train), aime.EVAL_FILE: len(held_out)}
    # 8 fixture rows: the 2024 one is held-out year, one is empty, one repeats another with other
    # whitespace, one is also in the held-out set: 4 remain, answers without leading zeros.
    assert [(r["source"], r["answer"]) for r in train] == [
        ("AIME 1983 I #1", "56"),
        ("AIME 1999 I #4", "441"),
        ("AIME 2005 II #7", "1"),
        ("AIME 2019 I #9", "33"),
    ]
    assert [r["answer"] for r in held_out] == ["12", "7", "120"]
    assert not {r["problem"] for r in train} & {r["problem"] for r in held_out}
    assert all(
        set(r) == {"problem", "answer", "source"} and r["problem"] == r["problem"].strip() for r in train
    )


@pytest.mark.parametrize(
    "recipe", ["math-qwen2.5-3b.yaml", "math-smollm3-3b.yaml", "math-phi4-mini-reasoning.yaml"]
)
def test_the_math_recipes_read_the_aime_files(tmp_path, recipe):
    aime = _script("make_aime_data")
    aime.build(_rows("aime_1983_2024_rows.jsonl"), _rows("aime_2024_rows.jsonl"), tmp_path)
    config, data = _recipe_data(recipe, tmp_path, aime.TRAIN_FILE, aime.EVAL_FILE)
    assert len(data.train) == 4 and len(data.eval) == 3
    fields = {config.data.prompt_field} | {
        s.params["reference_field"] for s in config.rewards.signals if "reference_field" in s.params
    }
    assert fields == {"problem", "answer"}
    assert all(fields <= set(row) for row in [*data.train, *data.eval])


def test_a_dataset_with_other_columns_is_a_clear_error():
    aime = _script("make_aime_data")
    with pytest.raises(ValueError, match=r"none of the columns Question, Problem.*\(it has: text\)"):
        aime.aime_rows([{"text": "?"}])


def test_react_conversion(tmp_path):
    react = _script("make_react_data")
    rows = react.react_rows(_rows("react_code_instructions_rows.jsonl"))
    # 9 fixture rows: a case-only duplicate, a 2-character and a 700-character request, and a row with
    # no user turn are dropped; whitespace is normalised.
    assert [r["prompt"][:24] for r in rows] == [
        "Create a todo list app w",
        "Build a weather card com",
        "Make a pricing table wit",
        "Design a login form with",
        "Write a countdown timer ",
    ]
    assert rows[1]["prompt"] == "Build a weather card component that shows the city, temperature and an icon"
    counts = react.build(_rows("react_code_instructions_rows.jsonl"), tmp_path, eval_fraction=0.5)
    train, held_out = _jsonl(tmp_path / react.TRAIN_FILE), _jsonl(tmp_path / react.EVAL_FILE)
    assert counts == {react.TRAIN_FILE: len(train), react.EVAL_FILE: len(held_out)}
    assert sorted(r["prompt"] for r in train + held_out) == sorted(r["prompt"] for r in rows)
    assert held_out == [r for r in rows if react.is_held_out(r["prompt"], 0.5)]
    # The split is a stable hash: the same request lands on the same side in every run, in any row order (of case-only duplicates, the first is kept).
    again = tmp_path / "again"
    react.build(list(reversed(_rows("react_code_instructions_rows.jsonl"))), again, eval_fraction=0.5)
    assert {r["prompt"].lower() for r in _jsonl(again / react.EVAL_FILE)} == {
        r["prompt"].lower() for r in held_out
    }
    # eval_rows caps the held-out file; the rest of the held-out share is not moved into training.
    capped = tmp_path / "capped"
    react.build(_rows("react_code_instructions_rows.jsonl"), capped, eval_fraction=1.0, eval_rows=2)
    assert len(_jsonl(capped / react.EVAL_FILE)) == 2 and _jsonl(capped / react.TRAIN_FILE) == []


def test_the_react_recipe_reads_the_react_files(tmp_path):
    react = _script("make_react_data")
    react.build(_rows("react_code_instructions_rows.jsonl"), tmp_path, eval_fraction=0.5)
    config, data = _recipe_data("react-qwen2.5-3b.yaml", tmp_path, react.TRAIN_FILE, react.EVAL_FILE)
    assert len(data.train) + len(data.eval) == 5 and data.eval
    assert all(config.data.prompt_field in row for row in [*data.train, *data.eval])
