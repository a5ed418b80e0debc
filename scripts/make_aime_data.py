"""Build the math recipes' data files from public AIME datasets (run once, on your machine).

    python scripts/make_aime_data.py            # writes data/aime_train.jsonl and data/aime_2024.jsonl
    python scripts/make_aime_data.py --out DIR

- ``aime_train.jsonl``: AIME 1983-2023 from ``di-zhang-fdu/AIME_1983_2024`` on the Hugging Face hub
  (its 2024 rows are left out: 2024 is the held-out year);
- ``aime_2024.jsonl``: AIME 2024 I and II from ``HuggingFaceH4/aime_2024``, the recipes' ``data.eval_path``.

Each row is ``{"problem": ..., "answer": ..., "source": "AIME 1999 I #4"}``: ``problem`` is the recipes'
``data.prompt_field`` and ``answer`` the ``reference_field`` of ``sympy.answer`` / ``judge.steps``. AIME
answers are integers 0-999, written without leading zeros (``"033"`` -> ``"33"``). A problem that also
appears in the held-out year is dropped from training. The download uses ``datasets.load_dataset`` (install
``datasets``); :func:`build` does the rest and is what the tests run, on ``tests/data/`` fixtures.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

TRAIN_DATASET = "di-zhang-fdu/AIME_1983_2024"
EVAL_DATASET = "HuggingFaceH4/aime_2024"
HELD_OUT_YEAR = 2024
TRAIN_FILE, EVAL_FILE = "aime_train.jsonl", "aime_2024.jsonl"

#: column names of the two datasets' layouts (the first one present is used)
_PROBLEM = ("Question", "Problem", "problem", "question")
_ANSWER = ("Answer", "answer")
_YEAR = ("Year", "year")


def _column(row: Mapping[str, Any], names: tuple[str, ...]) -> Any:
    for name in names:
        if name in row:
            return row[name]
    raise ValueError(f"a row has none of the columns {', '.join(names)} (it has: {', '.join(row)})")


def _answer(value: Any) -> str:
    text = str(value).strip()
    match = re.fullmatch(r"0*(\d+)", text)
    return str(int(match[1])) if match else text


def _key(problem: str) -> str:
    """Problems compared without case and whitespace differences."""
    return " ".join(problem.lower().split())


def aime_rows(rows: Iterable[Mapping[str, Any]], *, years: range | None = None) -> list[dict[str, Any]]:
    """Rows of either dataset's layout as recipe rows: non-empty, within ``years``, each problem once."""
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for row in rows:
        problem = str(_column(row, _PROBLEM) or "").strip()
        answer = _answer(_column(row, _ANSWER) or "")
        year = int(str(_column(row, _YEAR)).strip()[:4])
        if not problem or not answer or (years is not None and year not in years) or _key(problem) in seen:
            continue
        seen.add(_key(problem))
        part = str(row.get("Part") or "").strip()
        number = row.get("Problem Number")
        source = " ".join(str(x) for x in ("AIME", year, part, f"#{number}" if number else "") if x)
        out.append({"problem": problem, "answer": answer, "source": source})
    return out


def build(
    train_source: Iterable[Mapping[str, Any]], eval_source: Iterable[Mapping[str, Any]], out: Path
) -> dict[str, int]:
    """Write the two files into ``out``; returns how many rows each has."""
    held_out = aime_rows(eval_source, years=range(HELD_OUT_YEAR, HELD_OUT_YEAR + 1))
    eval_keys = {_key(r["problem"]) for r in held_out}
    train = [
        r
        for r in aime_rows(train_source, years=range(1983, HELD_OUT_YEAR))
        if _key(r["problem"]) not in eval_keys
    ]
    out.mkdir(parents=True, exist_ok=True)
    for name, rows in ((TRAIN_FILE, train), (EVAL_FILE, held_out)):
        with (out / name).open("w", encoding="utf-8") as f:
            f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    return {TRAIN_FILE: len(train), EVAL_FILE: len(held_out)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--out", type=Path, default=Path("data"), help="folder for the JSONL files (default: data)"
    )
    parser.add_argument("--train-dataset", default=TRAIN_DATASET, help="hub id of AIME 1983-2023")
    parser.add_argument("--eval-dataset", default=EVAL_DATASET, help="hub id of AIME 2024")
    args = parser.parse_args(argv)
    from datasets import load_dataset

    counts = build(
        load_dataset(args.train_dataset, split="train"),
        load_dataset(args.eval_dataset, split="train"),
        args.out,
    )
    for name, n in counts.items():
        print(f"{args.out / name}: {n} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
