"""Build the labelled lines of SmolLM2's GSM8K-train solutions (issue 36 item 5), without the checker.

    python scripts/make_smollm2_labels.py --show      # the lines for the hand labeller: unsure + the sample
    python scripts/make_smollm2_labels.py             # writes data/smollm2_gsm8k_train_labels.jsonl

Every non-empty line of every solution in ``data/smollm2_gsm8k_train_solutions.jsonl`` gets the verdict it
deserves: ``scripts/smollm2_reference.py`` (exact fractions, its own tokenizer, no sympy, no eval) proposes one;
every line it is unsure about is labelled by hand (``data/smollm2_gsm8k_train_hand.jsonl``), and so is a seeded
random sample of the lines it is sure about (``SAMPLE`` lines, ``random.Random(SEED)``): on those the hand label
wins and the disagreements are counted. Output rows: ``solution`` (``<id>#<sample>``), ``line`` (0-based index
in ``completion.split("\\n")``), ``text``, ``label`` (+1 true claim, -1 false claim, 0 no checkable claim),
``by`` (``reference`` | ``hand``), ``why``, ``answer_line`` (the reference read it as an answer line).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from smollm2_reference import label_solution

DATA = Path(__file__).resolve().parent.parent / "data"
SOLUTIONS = DATA / "smollm2_gsm8k_train_solutions.jsonl"
HAND = DATA / "smollm2_gsm8k_train_hand.jsonl"
LABELS = DATA / "smollm2_gsm8k_train_labels.jsonl"
SEED = 36
SAMPLE = 150


def prompt_text(row: dict) -> str:
    prompt = row["prompt"]
    return prompt if isinstance(prompt, str) else "\n".join(m["content"] for m in prompt)


def proposals(hand: dict[tuple[str, int], dict] | None = None) -> list[dict]:
    """One row per non-empty line with the reference's proposal (``hand`` labels inform answer lines)."""
    out = []
    hand = hand or {}
    for row in (json.loads(x) for x in SOLUTIONS.read_text().splitlines() if x.strip()):
        lines = row["completion"].split("\n")
        key = f"{row['id']}#{row['sample']}"
        known = {line: h["label"] for (sol, line), h in hand.items() if sol == key}
        props = label_solution(prompt_text(row), lines, row["truncated"], known)
        for k, (line, prop) in enumerate(zip(lines, props, strict=True)):
            if line.strip():
                out.append(
                    {
                        "solution": f"{row['id']}#{row['sample']}",
                        "line": k,
                        "text": line,
                        "label": prop.label,
                        "sure": prop.sure,
                        "why": prop.why,
                        "answer_line": prop.why.startswith("answer"),
                    }
                )
    return out


def sample_keys(rows: list[dict]) -> set[tuple[str, int]]:
    """The seeded sample of lines with a digit that get a hand label whatever the reference says (drawn from
    all of them, so it does not move when the reference changes); its sure lines measure the reference."""
    digits = [(r["solution"], r["line"]) for r in rows if any(c.isdigit() for c in r["text"])]
    return set(random.Random(SEED).sample(digits, min(SAMPLE, len(digits))))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", action="store_true", help="print the lines that need a hand label")
    args = parser.parse_args()
    hand = {}
    if HAND.exists():
        for x in HAND.read_text().splitlines():
            if x.strip():
                h = json.loads(x)
                hand[(h["solution"], h["line"])] = h
    picked = sample_keys(proposals())  # the sample does not depend on the hand labels
    rows = proposals(hand)
    need = [r for r in rows if not r["sure"] or (r["solution"], r["line"]) in picked]
    if args.show:
        for r in need:
            if (r["solution"], r["line"]) not in hand:
                tag = "SAMPLE" if r["sure"] else "UNSURE"
                print(
                    json.dumps(
                        {
                            "solution": r["solution"],
                            "line": r["line"],
                            "ref": r["label"],
                            "tag": tag,
                            "why": r["why"],
                            "text": r["text"],
                        }
                    )
                )
        return
    missing = [r for r in need if (r["solution"], r["line"]) not in hand]
    if missing:
        raise SystemExit(f"{len(missing)} lines still need a hand label (run with --show)")
    disagree: list[dict] = []
    with LABELS.open("w") as out:
        for r in rows:
            h = hand.get((r["solution"], r["line"]))
            if h is not None and r["sure"] and h["label"] != r["label"]:
                disagree.append({**r, "hand": h["label"]})
            record = {
                "solution": r["solution"],
                "line": r["line"],
                "text": r["text"],
                "label": h["label"] if h else r["label"],
                "by": "hand" if h else "reference",
                "why": (h.get("note") or r["why"]) if h else r["why"],
                "answer_line": r["answer_line"],
            }
            out.write(json.dumps(record) + "\n")
    unsure = sum(not r["sure"] for r in rows)
    sampled_sure = [r for r in rows if r["sure"] and (r["solution"], r["line"]) in picked]
    in_sample = [d for d in disagree if (d["solution"], d["line"]) in picked]
    print(
        f"{len(rows)} lines, {len(hand)} labelled by hand: {unsure} the reference is unsure about; "
        f"of the seeded sample of {len(picked)} lines with a digit, {len(sampled_sure)} the reference is sure "
        f"about, {len(in_sample)} of them labelled otherwise by hand; hand labels differing from a sure "
        f"reference label, all: {len(disagree)}"
    )
    for d in disagree:
        print(f"  reference {d['label']:+d} hand {d['hand']:+d}: {d['text'][:120]!r}")


if __name__ == "__main__":
    main()
