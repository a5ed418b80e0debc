"""Issue 40's figures per set: its dev and held-out prose solutions, and its answer pairs.

    cd plugins/botgrpo-sympy && ../../.venv/bin/python scripts/issue40_figures.py [--split heldout|dev] [--show]

Steps (``tests/data/prose_corpus.jsonl``, records of set ``issue40``, default ``StepsParams(step_split="lines")``,
one value per line as ``metrics.line_values`` reads it): competition-style correct lines scored -1, grade-school
clean solutions with any -1, corrupted (wrong) lines scored -1. Answers (``data/answer_pairs.jsonl``, categories
``issue40`` and ``issue40_heldout``): ``sympy.answer`` (default params) gives 1 exactly where the pair's label is 1.
``scripts/evaluate.py`` gives the whole corpora's figures; this script only splits out issue 40's sets.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from botgrpo_sympy.answer import check_answer
from botgrpo_sympy.metrics import line_values
from botgrpo_sympy.params import AnswerParams, StepsParams
from botgrpo_sympy.steps import check_steps

PLUGIN = Path(__file__).resolve().parents[1]


def step_figures(split: str, show: bool) -> str:
    """The three step figures of issue 40's ``split`` records, as one line (misses printed when ``show``)."""
    params = StepsParams(step_split="lines")
    rows = [json.loads(line) for line in (PLUGIN / "tests/data/prose_corpus.jsonl").read_text().splitlines()]
    rows = [r for r in rows if r.get("set") == "issue40" and r.get("split", "dev") == split]
    alarms, correct, flagged, clean, caught, wrong = 0, 0, 0, 0, 0, 0
    for r in rows:
        text = "\n".join(x["text"] for x in r["lines"])
        values = line_values(text, check_steps(params, r["prompt"], text))
        for line, value in zip(r["lines"], values, strict=True):
            if r["kind"] == "clean" and line["label"] == "correct" and r["style"] == "competition":
                correct += 1
                alarms += value == -1
            if r["kind"] != "clean" and line["label"] == "wrong":
                wrong += 1
                caught += value == -1
            if show and (value == -1) != (line["label"] == "wrong") and line["label"] in ("correct", "wrong"):
                print(f"  {r['kind']:>10} {line['label']:>7} scored {value:+.0f}: {line['text']}")
        if r["kind"] == "clean" and r["style"] == "gsm8k":
            clean += 1
            flagged += -1 in values
    return (
        f"issue40 {split}: competition correct lines scored -1 {alarms}/{correct}; grade-school clean solutions "
        f"with a -1 {flagged}/{clean}; corrupted lines scored -1 {caught}/{wrong}"
    )


def answer_figures(show: bool) -> list[str]:
    """``sympy.answer``'s agreement with the labels, per issue-40 category."""
    pairs = [json.loads(line) for line in (PLUGIN / "data/answer_pairs.jsonl").read_text().splitlines()]
    out = []
    for category in ("issue40", "issue40_heldout"):
        chosen = [p for p in pairs if p["category"] == category]
        bad = [
            p
            for p in chosen
            if int(
                check_answer(AnswerParams(), f"The final answer is $\\boxed{{{p['pred']}}}$", p["gold"])[0]
                == 1
            )
            != p["label"]
        ]
        out.append(f"answers {category}: agree {len(chosen) - len(bad)}/{len(chosen)}")
        if show:
            out += [f"  {p['gold']!r} vs {p['pred']!r} (label {p['label']})" for p in bad]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--split", choices=["dev", "heldout", "heldout2"], action="append", help="default: all"
    )
    parser.add_argument(
        "--show", action="store_true", help="print each line or pair scored against its label"
    )
    args = parser.parse_args()
    for split in args.split or ["dev", "heldout", "heldout2"]:
        print(step_figures(split, args.show))
    print("\n".join(answer_figures(args.show)))


if __name__ == "__main__":
    main()
