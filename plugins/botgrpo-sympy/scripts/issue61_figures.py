"""Issue 61's figures per family: its hand-written solutions and their false twins, and its answer pairs.

    cd plugins/botgrpo-sympy && ../../.venv/bin/python scripts/issue61_figures.py [--show]

Steps (``tests/data/prose_corpus.jsonl``, records of set ``issue61``, ``StepsParams(step_split="lines")``, one value
per line as ``metrics.line_values`` reads it): per family, correct lines scored -1 (false flags) and corrupted lines
scored -1 (recall on the false twins). Answers (``data/answer_pairs.jsonl``, category ``issue61``): ``sympy.answer``
(default params) gives 1 exactly where the pair's label is 1. Put an older checker first on ``PYTHONPATH`` for the
"before" column (``git archive <commit> plugins/botgrpo-sympy/botgrpo_sympy``).
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
#: The family (the issue's numbering) of each hand-written solution of tests/data/competition_issue61.txt.
FAMILIES = {
    "1 equation derived by squaring": ["i61-h001", "i61-h002"],
    "2 repeating decimals": ["i61-h003", "i61-h004", "i61-h010"],
    "2 values carried into a later case": ["i61-h005", "i61-h006"],
    "3 degrees dropped": ["i61-h007", "i61-h008"],
    "4 number misreads (.3x, * 100%, 2,78.5)": ["i61-h009", "i61-g001", "i61-g003"],
    "5 a remark in brackets after a claim": ["i61-g002", "i61-g004"],
    "6 answer lines (a fraction above, a base)": ["i61-h011", "i61-h012"],
}


def step_figures(show: bool) -> list[str]:
    params = StepsParams(step_split="lines")
    rows = [json.loads(line) for line in (PLUGIN / "tests/data/prose_corpus.jsonl").read_text().splitlines()]
    rows = [r for r in rows if r.get("set") == "issue61"]
    out = []
    for family, ids in FAMILIES.items():
        alarms = correct = caught = wrong = 0
        for r in rows:
            if (r["twin_of"] or r["id"]) not in ids:
                continue
            text = "\n".join(x["text"] for x in r["lines"])
            values = line_values(text, check_steps(params, r["prompt"], text))
            for line, value in zip(r["lines"], values, strict=True):
                if r["kind"] == "clean" and line["label"] == "correct":
                    correct += 1
                    alarms += value == -1
                if r["kind"] != "clean" and line["label"] == "wrong":
                    wrong += 1
                    caught += value == -1
                if (
                    show
                    and (value == -1) != (line["label"] == "wrong")
                    and line["label"] in ("correct", "wrong")
                ):
                    print(f"  {r['kind']:>10} {line['label']:>7} scored {value:+.0f}: {line['text']}")
        out.append(f"| {family} | {alarms}/{correct} | {caught}/{wrong} |")
    return out


def answer_figures(show: bool) -> str:
    pairs = [json.loads(line) for line in (PLUGIN / "data/answer_pairs.jsonl").read_text().splitlines()]
    chosen = [p for p in pairs if p["category"] == "issue61"]
    params = AnswerParams()
    bad = [
        p
        for p in chosen
        if check_answer(params, f"The final answer is $\\boxed{{{p['pred']}}}$.", p["gold"])[0] != p["label"]
    ]
    if show:
        for p in bad:
            print(f"  answer {p['pred']!r} against {p['gold']!r}: label {p['label']}")
    return f"| 6 answer forms (sympy.answer, {len(chosen)} pairs) | answers agreed {len(chosen) - len(bad)}/{len(chosen)} | |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", action="store_true", help="print each line scored against its label")
    args = parser.parse_args()
    print("| family | correct lines scored -1 | false twins scored -1 |")
    print("|---|---|---|")
    for line in step_figures(args.show):
        print(line)
    print(answer_figures(args.show))


if __name__ == "__main__":
    main()
