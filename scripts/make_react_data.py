"""Build the React recipe's data files from a public dataset of React requests (run once, on your machine).

    python scripts/make_react_data.py           # writes data/react_specs_train.jsonl and data/react_specs_eval.jsonl
    python scripts/make_react_data.py --out DIR --eval-rows 200

The requests are the user turns of ``cfahlgren1/react-code-instructions`` on the Hugging Face hub (MIT;
"build a todo app with ...", the prompts behind ~70k generated React apps); only the requests are kept,
never the generated code, since the policy writes its own. Each row is ``{"prompt": ...}``; the jsx
signals read the exports a prompt asks for (``require_export: auto``), and a row may add
``"require_export": "default"`` by hand. Requests are whitespace-normalised, kept when 15 to ``max_chars``
characters long, each once (ignoring case). A stable hash of the request puts about ``eval_fraction`` of
them in the held-out file (at most ``eval_rows``), so reruns give the same split. The download uses
``datasets.load_dataset``; :func:`build` does the rest and is what the tests run, on a ``tests/data/`` fixture.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

DATASET = "cfahlgren1/react-code-instructions"
TRAIN_FILE, EVAL_FILE = "react_specs_train.jsonl", "react_specs_eval.jsonl"
MIN_CHARS = 15


def request(row: Mapping[str, Any]) -> str | None:
    """The first user turn of a chat row (``messages``: ``[{"role", "content"}, ...]``), whitespace-normalised."""
    for message in row.get("messages") or ():
        if isinstance(message, Mapping) and message.get("role") == "user":
            return " ".join(str(message.get("content") or "").split()) or None
    return None


def react_rows(rows: Iterable[Mapping[str, Any]], *, max_chars: int = 600) -> list[dict[str, Any]]:
    """Recipe rows: one per distinct request of a usable length."""
    out, seen = [], set()
    for row in rows:
        text = request(row)
        if text is None or not MIN_CHARS <= len(text) <= max_chars or text.lower() in seen:
            continue
        seen.add(text.lower())
        out.append({"prompt": text})
    return out


def is_held_out(prompt: str, fraction: float) -> bool:
    digest = hashlib.sha256(prompt.lower().encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < fraction


def build(
    source: Iterable[Mapping[str, Any]],
    out: Path,
    *,
    eval_fraction: float = 0.02,
    eval_rows: int = 500,
    max_chars: int = 600,
) -> dict[str, int]:
    """Write the two files into ``out``; returns how many rows each has."""
    rows = react_rows(source, max_chars=max_chars)
    held = [r for r in rows if is_held_out(r["prompt"], eval_fraction)][:eval_rows]
    held_keys = {r["prompt"] for r in held}
    train = [r for r in rows if r["prompt"] not in held_keys and not is_held_out(r["prompt"], eval_fraction)]
    out.mkdir(parents=True, exist_ok=True)
    for name, part in ((TRAIN_FILE, train), (EVAL_FILE, held)):
        with (out / name).open("w", encoding="utf-8") as f:
            f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in part)
    return {TRAIN_FILE: len(train), EVAL_FILE: len(held)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--out", type=Path, default=Path("data"), help="folder for the JSONL files (default: data)"
    )
    parser.add_argument("--dataset", default=DATASET, help="hub id of the requests dataset")
    parser.add_argument("--eval-fraction", type=float, default=0.02, help="share of requests held out")
    parser.add_argument("--eval-rows", type=int, default=500, help="at most this many held-out rows")
    parser.add_argument("--max-chars", type=int, default=600, help="longest request kept")
    args = parser.parse_args(argv)
    from datasets import load_dataset

    counts = build(
        load_dataset(args.dataset, split="train"),
        args.out,
        eval_fraction=args.eval_fraction,
        eval_rows=args.eval_rows,
        max_chars=args.max_chars,
    )
    for name, n in counts.items():
        print(f"{args.out / name}: {n} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
