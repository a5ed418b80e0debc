"""Evaluate botgrpo-sympy on the committed labelled data; print the README's tables (markdown).

- Steps (``data/steps_labelled.jsonl``): every completion goes through ``sympy.steps`` (its worker
  pool, default params except ``step_split: lines``); per category: precision and recall of -1
  (refuted), precision of +1, and the rate of 0 (not checkable).
- Prose (``tests/data/prose_corpus.jsonl``, built by ``make_prose_corpus.py``): grade-school and
  competition-style solutions with their wrong twins; the issue-14 goals (false alarms on correct
  lines and clean solutions, corrupted steps caught) and a per-cause breakdown by writing feature.
- Answers (``data/answer_pairs.jsonl``): every pair goes through ``sympy.answer`` (worker pool) and
  through math-verify (``parse`` + ``verify``, in this process) on the same completion text;
  accuracy of each against the labels, and their agreement.

Run: ``python plugins/botgrpo-sympy/scripts/evaluate.py`` (needs ``pip install math-verify``, the
plugin's ``eval`` extra). Takes about a minute on 2 cores.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from pathlib import Path

from botgrpo_core.signals import Sample, SampleError
from botgrpo_sympy.metrics import (
    FEATURES,
    StepMetrics,
    issue27_goals,
    issue40_goals,
    line_values,
    prose_figures,
    prose_goals,
)
from botgrpo_sympy.params import AnswerParams, StepsParams
from botgrpo_sympy.plugin import ANSWER, STEPS

DATA = Path(__file__).resolve().parent.parent / "data"
PROSE = Path(__file__).resolve().parent.parent / "tests" / "data" / "prose_corpus.jsonl"
#: The params the README recommends for prose solutions.
PROSE_PARAMS = {"step_split": "lines"}


def _fmt(x: float) -> str:
    return "n/a" if x != x else f"{x:.3f}"


def evaluate_steps(workers: int) -> None:
    records = [json.loads(line) for line in (DATA / "steps_labelled.jsonl").read_text().splitlines()]
    samples = [
        Sample(prompt=r["prompt"], completion="\n".join(s["text"] for s in r["steps"])) for r in records
    ]
    scorer = STEPS.make_scorer(StepsParams(step_split="lines", workers=workers))
    try:
        results = scorer.score(samples)
    finally:
        scorer.close()
    groups: dict[str, list[tuple[int, int]]] = defaultdict(list)
    errors = 0
    for record, result in zip(records, results, strict=True):
        if isinstance(result, SampleError):
            errors += 1
            continue
        completion = "\n".join(s["text"] for s in record["steps"])
        for step, value in zip(record["steps"], line_values(completion, result), strict=True):
            pair = (step["label"], int(value))
            cat = record["category"]
            family = cat if cat.startswith("heldout") else "dev"
            groups[cat].append(pair)
            groups[f"ALL {family}"].append(pair)
            groups["ALL"].append(pair)
    print("### sympy.steps on the labelled steps\n")
    print(
        "| category | steps | labelled -1 | precision(-1) | recall(-1) | precision(+1) | rate of 0 | 0 among +-1 |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for cat in sorted(groups, key=lambda c: (c.startswith("ALL"), c)):
        m = StepMetrics.of(groups[cat])
        neg = sum(v for (lab, _), v in m.counts.items() if lab == -1)
        print(
            f"| {cat} | {m.n} | {neg} | {_fmt(m.precision(-1))} | {_fmt(m.recall(-1))} | {_fmt(m.precision(1))} "
            f"| {_fmt(m.zero_rate())} | {_fmt(m.zero_rate(among_labelled_claims=True))} |"
        )
    print(f"\nworker errors: {errors}\n")


def _pct(counts: tuple[int, int]) -> str:
    hits, n = counts
    return f"{hits}/{n} = {100 * hits / n:.1f}%" if n else "n/a"


def evaluate_prose(workers: int) -> None:
    records = [json.loads(line) for line in PROSE.read_text(encoding="utf-8").splitlines()]
    samples = [
        Sample(prompt=r["prompt"], completion="\n".join(x["text"] for x in r["lines"])) for r in records
    ]
    scorer = STEPS.make_scorer(StepsParams(workers=workers, **PROSE_PARAMS))
    try:
        results = scorer.score(samples)
    finally:
        scorer.close()
    errors = [r["id"] for r, res in zip(records, results, strict=True) if isinstance(res, SampleError)]
    ok = [(r, res) for r, res in zip(records, results, strict=True) if not isinstance(res, SampleError)]
    fig = prose_figures(
        [r for r, _ in ok],
        [line_values("\n".join(x["text"] for x in r["lines"]), res) for r, res in ok],  # one value per line
    )
    print(f"### sympy.steps on the prose corpus ({len(records)} solutions, params {PROSE_PARAMS})\n")
    print("| figure | all | dev | held-out | goal | met (all) |")
    print("|---|---|---|---|---|---|")
    by_split = [prose_goals(fig.only(split)) for split in (None, "dev", "heldout")]
    for (what, counts, goal, met), (*_, dev, _, _), (*_, held, _, _) in zip(*by_split, strict=True):
        print(f"| {what} | {_pct(counts)} | {_pct(dev)} | {_pct(held)} | {goal} | {'yes' if met else 'NO'} |")
    extra = [
        ("competition clean solutions with any -1 span", lambda f: f.false_alarm_solutions("competition")),
        ("correct answer lines scored -1", lambda f: f.rate(-1, kind="clean", label="correct", answer=True)),
        (
            "wrong final answers (answer twins) scored -1",
            lambda f: f.rate(-1, kind="answer_twin", label="wrong"),
        ),
        (
            "grade-school correct step lines scored +1",
            lambda f: f.rate(1, style="gsm8k", kind="clean", label="correct", answer=False),
        ),
        (
            "competition correct step lines scored +1",
            lambda f: f.rate(1, style="competition", kind="clean", label="correct", answer=False),
        ),
        ("lines without a claim scored -1", lambda f: f.rate(-1, kind="clean", label="none")),
    ]
    for what, figure in extra:
        cells = " | ".join(_pct(figure(fig.only(split))) for split in (None, "dev", "heldout"))
        print(f"| {what} | {cells} | | |")
    for goals in (issue27_goals, issue40_goals):
        by_split = [goals(fig.only(split)) for split in (None, "dev", "heldout")]
        for (what, counts, goal, met), (*_, dev, _, _), (*_, held, _, _) in zip(*by_split, strict=True):
            print(
                f"| {what} | {_pct(counts)} | {_pct(dev)} | {_pct(held)} | {goal} | {'yes' if met else 'NO'} |"
            )
    print(f"\nworker errors: {len(errors)} {errors[:5]}\n")
    print(
        "Per cause (writing feature of the line): correct lines of clean solutions, corrupted lines of twins\n"
    )
    print("| feature | correct lines | scored -1 | scored +1 | corrupted lines | scored -1 |")
    print("|---|---|---|---|---|---|")
    for name in [*FEATURES, "plain"]:
        bad, n = fig.rate(-1, kind="clean", label="correct", feature=name)
        good, _ = fig.rate(1, kind="clean", label="correct", feature=name)
        caught, m = fig.rate(-1, kind="step_twin", label="wrong", feature=name)
        print(f"| {name} | {n} | {bad} | {_pct((good, n))} | {m} | {_pct((caught, m))} |")
    print()


def evaluate_answers(workers: int) -> None:
    from math_verify import parse, verify

    pairs = [json.loads(line) for line in (DATA / "answer_pairs.jsonl").read_text().splitlines()]
    completions = [f"The final answer is $\\boxed{{{p['pred']}}}$." for p in pairs]
    scorer = ANSWER.make_scorer(AnswerParams(workers=workers))
    try:
        ours = scorer.score(
            [
                Sample(prompt="", completion=c, row={"answer": p["gold"]})
                for c, p in zip(completions, pairs, strict=True)
            ]
        )
    finally:
        scorer.close()
    theirs = []
    for c, p in zip(completions, pairs, strict=True):
        try:
            theirs.append(float(verify(parse(f"$\\boxed{{{p['gold']}}}$"), parse(c))))
        except Exception:
            theirs.append(0.0)
    by_cat: dict[str, Counter] = defaultdict(Counter)
    disagreements = []
    for p, a, b in zip(pairs, ours, theirs, strict=True):
        a = 0.0 if isinstance(a, SampleError) else a
        for key in (p["category"], "ALL"):
            c = by_cat[key]
            c["n"] += 1
            c["ours"] += a == p["label"]
            c["mv"] += b == p["label"]
            c["agree"] += a == b
        if a != b:
            disagreements.append((p["category"], p["gold"], p["pred"], p["label"], a, b))
    print("### sympy.answer vs math-verify on the answer pairs\n")
    print("| category | pairs | sympy.answer accuracy | math-verify accuracy | agreement |")
    print("|---|---|---|---|---|")
    for cat in sorted(by_cat, key=lambda c: (c == "ALL", c)):
        c = by_cat[cat]
        print(
            f"| {cat} | {c['n']} | {c['ours'] / c['n']:.3f} | {c['mv'] / c['n']:.3f} | {c['agree'] / c['n']:.3f} |"
        )
    print("\nDisagreements (category, gold, pred, label, sympy.answer, math-verify):\n")
    for row in disagreements:
        print(f"- {row}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--only", choices=["steps", "prose", "answers"])
    args = parser.parse_args()
    if args.only in (None, "steps"):
        evaluate_steps(args.workers)
    if args.only in (None, "prose"):
        evaluate_prose(args.workers)
    if args.only in (None, "answers"):
        evaluate_answers(args.workers)


if __name__ == "__main__":
    main()
