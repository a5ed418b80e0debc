"""Training rows of the real-model tasks (``react-requests``, ``word-problems``): a fixed train split, drawn as
many times as a run asks."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any


def shuffled_repeats(
    split: Sequence[dict[str, Any]], n: int, seed: int, row: Callable[[dict[str, Any]], dict[str, Any]]
) -> list[dict[str, Any]]:
    """``n`` rows made by ``row`` from ``split`` shuffled by ``seed``, repeated in new shuffles past its size."""
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    while len(out) < n:
        order = rng.sample(list(split), len(split))
        out += [row(r) for r in order[: n - len(out)]]
    return out
