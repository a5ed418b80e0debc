"""The React prompt set (issue 37 item 1): counts, no duplicates, the held-out 50 fixed by their rule."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

import botgrpo_bench
from botgrpo_bench.react_prompts import (
    ANSWER_FORMAT,
    CATEGORIES,
    HELDOUT_SIZE,
    heldout_ids,
    load_react_prompts,
    user_message,
)

DATA = Path(botgrpo_bench.__file__).parent / "data"


def _normal(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", text.lower()).strip()


def test_counts_categories_and_no_duplicates() -> None:
    rows = load_react_prompts()
    assert len(rows) >= 250
    assert len({r["id"] for r in rows}) == len(rows)
    assert len({_normal(r["request"]) for r in rows}) == len(
        rows
    )  # no request twice, up to case and punctuation
    counts = Counter(r["category"] for r in rows)
    assert set(counts) == set(CATEGORIES) and min(counts.values()) >= 15
    for r in rows:
        assert re.match(
            r"^(Write|Create|Build|Make|I need) (a|an) React (function )?component\b", r["request"]
        ), r
        assert r["request"].endswith(".") and 60 <= len(r["request"]) <= 200


def test_heldout_is_the_fixed_rule_and_disjoint_from_training() -> None:
    rows = load_react_prompts()
    train, heldout = load_react_prompts("train"), load_react_prompts("heldout")
    assert len(heldout) == HELDOUT_SIZE and len(train) + len(heldout) == len(rows)
    train_ids, held_ids = {r["id"] for r in train}, {r["id"] for r in heldout}
    assert not train_ids & held_ids
    assert not {_normal(r["request"]) for r in train} & {_normal(r["request"]) for r in heldout}
    # the split in the file is the rule's, so nobody chose it by hand
    assert held_ids == heldout_ids([(r["id"], r["category"]) for r in rows])
    per_category = Counter(r["category"] for r in heldout)
    assert set(per_category) == set(CATEGORIES) and set(per_category.values()) <= {3, 4}


def test_the_rule_is_stratified_and_depends_on_its_seed_only() -> None:
    rows = [(f"r{i:03d}", f"c{i % 5}") for i in range(100)]
    held = heldout_ids(rows, size=12, seed=1)
    assert held == heldout_ids(list(reversed(rows)), size=12, seed=1)  # order-free
    assert len(held) == 12 and sorted(Counter(int(h[1:]) % 5 for h in held).values()) == [2, 2, 2, 3, 3]
    assert held != heldout_ids(rows, size=12, seed=2)
    with pytest.raises(ValueError, match=r"held out of category 'c\d', which has 1"):
        heldout_ids(rows[:5], size=10)


def test_loader_refuses_an_unknown_split_and_returns_copies() -> None:
    with pytest.raises(ValueError, match="'train' or 'heldout'"):
        load_react_prompts("test")  # type: ignore[arg-type]
    first = load_react_prompts()[0]
    first["request"] = "changed"
    assert load_react_prompts()[0]["request"] != "changed"
    assert user_message(load_react_prompts()[0]).endswith(ANSWER_FORMAT)


def test_the_data_ships_with_the_package_and_its_licence_note() -> None:
    lines = (DATA / "react_prompts.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["id"] for line in lines] == [r["id"] for r in load_react_prompts()]
    pyproject = (DATA.parent.parent / "pyproject.toml").read_text(encoding="utf-8")
    assert '"data/*.jsonl"' in pyproject
    sources = (DATA / "SOURCES.md").read_text(encoding="utf-8")
    assert "react_prompts.jsonl" in sources and "Apache-2.0" in sources
