"""A fixed, seeded subset of GSM8K's *train* split as prompts for SmolLM2 (issue 36 item 5: signal truth).

    git -C /work/.mirror/openai+grade-school-math/repo show HEAD:grade_school_math/data/train.jsonl > train.jsonl
    python scripts/make_gsm8k_train_subset.py train.jsonl data/gsm8k_train_subset.jsonl

Rule: the 7,473 train rows in file order, ``random.Random(36).sample(range(len(rows)), 120)``, sorted by index.
Each output row: ``id`` (``gsm8k-train-<index>``, the 0-based line of train.jsonl), ``question``, ``answer`` (the
number after ``####`` in GSM8K's solution, commas removed), ``prompt`` (TRL's chat format: the question and an
instruction to show the calculations line by line and end with ``#### <number>``). GSM8K is MIT-licensed
(Copyright (c) 2021 OpenAI); its licence sits beside the subset (``data/GSM8K_LICENSE``). Only the train split is
read: the test split is held out by this project's rule.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

SEED = 36
COUNT = 120
INSTRUCTION = (
    "Solve step by step. Show each calculation on its own line, like '3 * 4 = 12'. "
    "End with a last line '#### <number>' giving the final answer."
)


def subset(rows: list[dict[str, str]], seed: int = SEED, count: int = COUNT) -> list[dict[str, object]]:
    """The seeded subset of GSM8K train rows, as prompt rows."""
    picked = sorted(random.Random(seed).sample(range(len(rows)), count))
    out: list[dict[str, object]] = []
    for index in picked:
        question = rows[index]["question"].strip()
        answer = rows[index]["answer"].rsplit("####", 1)[1].strip().replace(",", "")
        out.append(
            {
                "id": f"gsm8k-train-{index}",
                "question": question,
                "answer": answer,
                "prompt": [{"role": "user", "content": f"{question}\n{INSTRUCTION}"}],
            }
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("train", type=Path, help="GSM8K's grade_school_math/data/train.jsonl")
    parser.add_argument("output", type=Path)
    args = parser.parse_args()
    if args.train.name.startswith("test"):
        raise SystemExit("only the train split may be used")
    rows = [json.loads(line) for line in args.train.read_text().splitlines() if line.strip()]
    with args.output.open("w") as out:
        for row in subset(rows):
            out.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
