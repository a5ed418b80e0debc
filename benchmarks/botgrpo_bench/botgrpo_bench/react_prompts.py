"""The React prompt set: component requests written for this project, for a real model's React level.

``data/react_prompts.jsonl`` holds 280 natural requests ("Write a React component called Counter
that ..."), 20 in each of 14 categories (:data:`CATEGORIES`: state, lists with keys, forms, effects,
props, composition, conditional rendering, context, refs, reducers, custom hooks, memoisation, data
fetching, events). Each row: ``id`` (``react-001`` ...), ``category``, ``request``, ``split``
(``train`` or ``heldout``). The held-out 50 are fixed by :func:`heldout_ids` (a seeded draw, stratified by
category, chosen before any measurement) and are for evaluation only: :func:`load_react_prompts` with
``split="train"`` never returns one. Licence and provenance: ``data/SOURCES.md``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from functools import cache
from importlib import resources
from typing import Literal

Split = Literal["train", "heldout"]

CATEGORIES = (
    "state",
    "lists",
    "forms",
    "effects",
    "props",
    "composition",
    "conditional",
    "context",
    "refs",
    "reducer",
    "custom_hooks",
    "memo",
    "data",
    "events",
)
HELDOUT_SIZE = 50
HELDOUT_SEED = 37  # issue 37; fixed with the set, before any model saw it
ANSWER_FORMAT = "Return the full code in one ```jsx code block."
_FILE = "react_prompts.jsonl"


def heldout_ids(
    rows: Sequence[tuple[str, str]], size: int = HELDOUT_SIZE, seed: int = HELDOUT_SEED
) -> frozenset[str]:
    """The held-out ids of ``rows`` (``(id, category)`` pairs), stratified by category.

    ``random.Random(seed)`` shuffles the sorted categories; each category gives ``size // c`` ids
    (``c`` categories) and the first ``size % c`` of the shuffled ones one more, each category's ids
    drawn from its sorted ids by the same generator. So every category is evaluated, as evenly as
    ``size`` allows (50 of 14 categories: 8 give 4, 6 give 3).
    """
    by_category: dict[str, list[str]] = {}
    for row_id, category in rows:
        by_category.setdefault(category, []).append(row_id)
    rng = random.Random(seed)
    categories = rng.sample(sorted(by_category), len(by_category))
    base, extra = divmod(size, len(categories))
    out: set[str] = set()
    for n, category in enumerate(categories):
        ids, take = sorted(by_category[category]), base + (n < extra)
        if take > len(ids):
            raise ValueError(f"react prompts: {take} held out of category {category!r}, which has {len(ids)}")
        out.update(rng.sample(ids, take))
    return frozenset(out)


@cache
def _rows() -> tuple[dict[str, str], ...]:
    text = resources.files("botgrpo_bench").joinpath("data", _FILE).read_text(encoding="utf-8")
    rows = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        missing = {"id", "category", "request", "split"} - row.keys()
        if missing:
            raise ValueError(f"botgrpo_bench/data/{_FILE} line {n}: missing {sorted(missing)}")
        rows.append(row)
    return tuple(rows)


def load_react_prompts(split: Split | None = None) -> list[dict[str, str]]:
    """The rows of the prompt set (copies), all of them or one ``split``'s, in id order.

    :raises ValueError: an unknown ``split``.
    """
    if split not in (None, "train", "heldout"):
        raise ValueError(f"react prompts: split must be 'train' or 'heldout', not {split!r}")
    return [dict(r) for r in _rows() if split is None or r["split"] == split]


def user_message(row: dict[str, str]) -> str:
    """The user turn for ``row``: its request, then :data:`ANSWER_FORMAT`."""
    return f"{row['request']} {ANSWER_FORMAT}"
