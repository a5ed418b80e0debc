"""Reading one run's ``metrics.jsonl`` (written by ``botgrpo train``): its evaluation rows give the
success curve, its training rows the step times and the share of groups without spread."""

from __future__ import annotations

import gzip
import json
import math
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

STEP_KEYS = ("step", "global_step")
#: keys of a training row that hold the wall time of that step
STEP_TIME_KEYS = ("step_time",)  # TRL: generation + scoring + loss/backward of one optimizer step


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Rows of a JSON-lines file, ``.gz`` read as gzip (a torn last line, from a killed run, is skipped; a missing
    file has none)."""
    rows = []
    if not path.is_file():
        return rows
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        text = f.read()
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return rows


def _step(row: dict[str, Any]) -> int | None:
    for key in STEP_KEYS:
        if isinstance(row.get(key), (int, float)):
            return int(row[key])
    return None


def _eval_values(row: dict[str, Any]) -> dict[str, float] | None:
    """The evaluation metrics of a ``metrics.jsonl`` row (``kind: eval``), ``eval/`` prefix removed.

    ``botgrpo train`` writes ``eval/sampled/<metric>`` and ``eval/greedy/<metric>`` keys, so a bench
    metric reads ``sampled/compile_rate``. Training and summary rows give None.
    """
    if row.get("kind") != "eval":
        return None
    return {
        k[len("eval/") :]: float(v)
        for k, v in row.items()
        if k.startswith("eval/") and isinstance(v, (int, float))
    }


def run_curves(run_dir: Path) -> tuple[list[tuple[int, dict[str, float]]], list[dict[str, Any]]]:
    """``(eval points [(step, metrics)], training rows)`` of one run, eval points sorted by step."""
    evals: dict[int, dict[str, float]] = {}
    train = []
    for row in read_jsonl(Path(run_dir) / "metrics.jsonl"):
        step = _step(row)
        if step is None:
            continue
        values = _eval_values(row)
        if values is not None:
            evals.setdefault(step, {}).update(values)
        elif row.get("kind") == "train":
            train.append(row)
    return sorted(evals.items()), train


def steps_to_target(
    points: Sequence[tuple[int, dict[str, float]]], metric: str, target: float, higher: bool = True
) -> int | None:
    """First evaluation step whose ``metric`` reaches ``target`` (None when it never does)."""
    for step, values in points:
        v = values.get(metric)
        if v is not None and (v >= target if higher else v <= target):
            return step
    return None


def logged_step_seconds(train_rows: Sequence[dict[str, Any]]) -> list[float]:
    """The wall seconds of each training step the log records (under any of :data:`STEP_TIME_KEYS`)."""
    return [float(r[k]) for r in train_rows for k in STEP_TIME_KEYS if isinstance(r.get(k), (int, float))]


def step_seconds(train_rows: Sequence[dict[str, Any]], result: dict[str, Any], steps: int) -> float | None:
    """Mean wall seconds per training step: from the log's step times, else the run's training time."""
    times = logged_step_seconds(train_rows)
    if times:
        return statistics.fmean(times)
    summary = result.get("summary") or {}
    for key in ("train_time_s", "train_s", "training_s"):
        if isinstance(summary.get(key), (int, float)) and steps:
            return float(summary[key]) / steps
    train_s = result.get("train_s")
    return float(train_s) / steps if isinstance(train_s, (int, float)) and steps else None


def mean_of(rows: Sequence[dict[str, Any]], key: str, last: int | None = None) -> float | None:
    values = [float(r[key]) for r in rows if isinstance(r.get(key), (int, float)) and not math.isnan(r[key])]
    if last:
        values = values[-last:]
    return statistics.fmean(values) if values else None


def curve_mean(points: Sequence[tuple[int, dict[str, float]]], metric: str) -> float | None:
    """The metric averaged over the evaluations after step 0 (area under the curve / its length)."""
    values = [v[metric] for step, v in points if step > 0 and metric in v]
    return statistics.fmean(values) if values else None
