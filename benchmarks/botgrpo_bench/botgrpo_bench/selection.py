"""A setting chosen by a rule fixed before the runs: each method takes the level (a value of one swept setting, e.g.
the learning rate) where its seed-0 run has the higher run mean; ties take the lower value.

The real-model bench (``benchmarks/bench_real.yaml``, issue 37) sweeps the LoRA learning rate over two levels per task
in its stage 1 and fixes stage 2's rates with this rule. :func:`select_setting` applies it to the levels'
``regimes.jsonl`` records (one per task level, method and seed; ``run_mean`` is the level metric averaged over every
evaluation after step 0, :mod:`botgrpo_bench.regimes`); ``scripts/real_select.py`` is its command.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from botgrpo_bench.config import BenchFile


def level_values(bench: BenchFile, levels: Sequence[str], key: str) -> dict[str, float]:
    """``level -> value`` of the dotted run-file ``key`` (e.g. ``training.learning_rate``) in each level of
    ``bench``; ``ValueError`` naming a level that is not in the bench file or does not set the key, or two levels
    with the same value (the rule compares values)."""
    out: dict[str, float] = {}
    for level in levels:
        if level not in bench.tasks:
            raise ValueError(
                f"level {level!r} is not a task of bench {bench.name!r} (known: {', '.join(bench.tasks)})"
            )
        node: Any = bench.tasks[level].run
        for part in key.split("."):
            if not isinstance(node, Mapping) or part not in node:
                raise ValueError(f"level {level!r}: its run file does not set {key!r}")
            node = node[part]
        out[level] = float(node)
    if len(set(out.values())) < len(out):
        raise ValueError(f"levels {', '.join(levels)} share a value of {key!r}: nothing to choose between")
    return out


def select_setting(
    records: Sequence[Mapping[str, Any]],
    values: Mapping[str, float],
    methods: Sequence[str],
    *,
    seed: int = 0,
) -> dict[str, dict[str, Any]]:
    """Per method, the level of ``values`` (``level -> swept value``) whose seed-``seed`` run has the higher
    ``run_mean``; a tie goes to the lower value.

    :param records: ``regimes.jsonl`` rows (``bench_task``, ``method``, ``seed``, ``run_mean``) of at least the
        levels in ``values``; rows of other levels or seeds are ignored.
    :returns: ``method -> {"level", "value", "run_mean", "candidates": {level: run_mean}}``.
    :raises ValueError: naming the (level, method) whose seed-``seed`` run is missing, is recorded twice, or has
        no run mean (a run that failed or has not finished: the rule needs every level's run).
    """
    out: dict[str, dict[str, Any]] = {}
    for method in methods:
        means: dict[str, float] = {}
        for level in values:
            rows = [
                r
                for r in records
                if r.get("bench_task") == level and r.get("method") == method and r.get("seed") == seed
            ]
            if len(rows) != 1:
                what = "no record" if not rows else f"{len(rows)} records"
                raise ValueError(
                    f"level {level!r}, method {method!r}, seed {seed}: {what}; the rule needs one run"
                )
            mean = rows[0].get("run_mean")
            if not isinstance(mean, (int, float)) or not math.isfinite(mean):
                raise ValueError(
                    f"level {level!r}, method {method!r}, seed {seed}: no run mean (failed or unfinished)"
                )
            means[level] = float(mean)
        # the higher run mean; on a tie the lower value (sorted by value first, max keeps the first maximum)
        best = max(sorted(means, key=lambda lv: values[lv]), key=lambda lv: means[lv])
        out[method] = {"level": best, "value": values[best], "run_mean": means[best], "candidates": means}
    return out
