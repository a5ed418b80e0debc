"""The shipped word-problem sets are what scripts/make_word_problems.py makes (deterministic, seed 0): the grade set
(25 per template) and the easy set (``--level easy``, 40 per template); answers are right and the splits disjoint."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "benchmarks/botgrpo_bench/botgrpo_bench/data"


def _script():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(
        "make_word_problems", ROOT / "scripts/make_word_problems.py"
    )
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


@pytest.mark.parametrize(("level", "per_template"), [("grade", 25), ("easy", 40)])
def test_the_shipped_sets_are_the_generators(level: str, per_template: int) -> None:
    script = _script()
    templates, stem = script.LEVELS[level]
    rows = script.make(per_template, 0, templates)
    for split in ("train", "heldout"):
        expected = "".join(json.dumps(r) + "\n" for r in rows if r["split"] == split)
        assert (DATA / f"{stem}_{split}.jsonl").read_text() == expected
    train = {r["prompt"][0]["content"] for r in rows if r["split"] == "train"}
    heldout = {r["prompt"][0]["content"] for r in rows if r["split"] == "heldout"}
    assert not train & heldout and len(heldout) == len(rows) // 5


def test_easy_answers_follow_the_stories() -> None:
    import re

    for line in (DATA / "easy_problems_train.jsonl").read_text().splitlines():
        row = json.loads(line)
        text = row["prompt"][0]["content"]
        a, b = (int(x) for x in re.findall(r"\d+", text)[:2])
        answer = int(row["answer"])
        assert answer in (a + b, a - b, a * b, a // b if a % b == 0 else None, b * a), row
