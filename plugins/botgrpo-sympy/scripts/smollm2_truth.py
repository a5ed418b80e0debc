"""Score ``sympy.steps`` against the labelled lines of SmolLM2's GSM8K-train solutions (issue 36 item 5).

    python scripts/smollm2_truth.py [--workers 1] [--params '{"step_split": "lines"}'] [--show-misses]

Every solution of ``data/smollm2_gsm8k_train_solutions.jsonl`` goes through ``sympy.steps`` (default params
unless ``--params``; ``Sample.truncated`` from the row; the prompt is the user message's text). A line's value
is -1 when a span starting in it is -1, else +1 when one is +1, else 0 (no span: 0). Against the labels of
``data/smollm2_gsm8k_train_labels.jsonl`` it reports, with counts: the precision of -1 (goal >= 97%), the share
of false lines scored +1 (goal <= 2%), the share of false lines left at 0, the recall of -1 and the share of
true lines scored +1, for step lines and answer lines apart and together.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from botgrpo_core.signals import Sample, SampleError
from botgrpo_sympy.params import StepsParams
from botgrpo_sympy.plugin import STEPS

DATA = Path(__file__).resolve().parent.parent / "data"
SOLUTIONS = DATA / "smollm2_gsm8k_train_solutions.jsonl"
LABELS = DATA / "smollm2_gsm8k_train_labels.jsonl"


def prompt_text(row: dict) -> str:
    prompt = row["prompt"]
    return prompt if isinstance(prompt, str) else "\n".join(m["content"] for m in prompt)


def line_verdicts(completion: str, spans: list) -> dict[int, int]:
    """Line index -> -1 if a span starting in it is -1, else +1 if one is +1, else 0."""
    per_line: dict[int, set[float]] = {}
    for span in spans:
        start, value = (span[0], span[2]) if isinstance(span, tuple) else (span.start, span.value)
        per_line.setdefault(completion.count("\n", 0, start), set()).add(value)
    return {k: -1 if -1.0 in v else 1 if 1.0 in v else 0 for k, v in per_line.items()}


def score(params: dict, workers: int) -> tuple[list[dict], int]:
    """The labelled rows, each with ``value`` (the checker's verdict), and the count of worker errors."""
    rows = [json.loads(x) for x in SOLUTIONS.read_text().splitlines() if x.strip()]
    samples = [
        Sample(prompt=prompt_text(r), completion=r["completion"], row=r, truncated=r["truncated"])
        for r in rows
    ]
    scorer = STEPS.make_scorer(StepsParams(workers=workers, **params))
    try:
        results = scorer.score(samples)
    finally:
        scorer.close()
    verdicts: dict[str, dict[int, int]] = {}
    errors = 0
    for row, result in zip(rows, results, strict=True):
        key = f"{row['id']}#{row['sample']}"
        if isinstance(result, SampleError):
            errors += 1
            verdicts[key] = {}
        else:
            verdicts[key] = line_verdicts(row["completion"], list(result))
    labelled = [json.loads(x) for x in LABELS.read_text().splitlines() if x.strip()]
    for lab in labelled:
        lab["value"] = verdicts[lab["solution"]].get(lab["line"], 0)
    return labelled, errors


def figures(rows: list[dict]) -> dict[str, tuple[int, int]]:
    """``name -> (hits, n)`` for the issue's figures."""
    c = Counter((r["label"], r["value"]) for r in rows)
    neg_pred = sum(v for (_, p), v in c.items() if p == -1)
    false = sum(v for (lab, _), v in c.items() if lab == -1)
    true = sum(v for (lab, _), v in c.items() if lab == 1)
    none = sum(v for (lab, _), v in c.items() if lab == 0)
    return {
        "precision of -1 (goal >= 97%)": (c[(-1, -1)], neg_pred),
        "false lines scored +1 (goal <= 2%)": (c[(-1, 1)], false),
        "false lines left at 0": (c[(-1, 0)], false),
        "recall of -1 (false lines scored -1)": (c[(-1, -1)], false),
        "true lines scored +1": (c[(1, 1)], true),
        "true lines scored -1": (c[(1, -1)], true),
        "lines without a claim scored -1": (c[(0, -1)], none),
        "lines without a claim scored +1": (c[(0, 1)], none),
    }


def _pct(hits: int, n: int) -> str:
    return f"{hits}/{n} = {100 * hits / n:.1f}%" if n else f"{hits}/0"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--params", default="{}", help="sympy.steps params as JSON (default: the defaults)")
    parser.add_argument("--show-misses", action="store_true", help="print every line where label != value")
    args = parser.parse_args()
    params = json.loads(args.params)
    rows, errors = score(params, args.workers)
    parts = {
        "step lines": [r for r in rows if not r["answer_line"]],
        "answer lines": [r for r in rows if r["answer_line"]],
        "all lines": rows,
    }
    table = {name: figures(part) for name, part in parts.items()}
    labels = Counter(r["label"] for r in rows)
    print(f"### sympy.steps on SmolLM2's GSM8K-train solutions (params {params or 'defaults'})\n")
    print(
        f"{len(rows)} labelled lines: {labels[1]} true, {labels[-1]} false, {labels[0]} without a claim; "
        f"worker errors: {errors}\n"
    )
    print("| figure | " + " | ".join(parts) + " |")
    print("|---|" + "---|" * len(parts))
    for name in table["all lines"]:
        print(f"| {name} | " + " | ".join(_pct(*table[p][name]) for p in parts) + " |")
    if args.show_misses:
        print()
        for r in rows:
            if r["label"] != r["value"]:
                print(
                    f"label {r['label']:+d} value {r['value']:+d} [{r['by']}] {r['solution']}:{r['line']} "
                    f"{r['text'][:150]!r}"
                )


if __name__ == "__main__":
    main()
