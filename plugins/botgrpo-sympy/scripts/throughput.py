"""Throughput of sympy.steps and sympy.answer with their worker pools, against math-verify, same run.

Workloads:
- ``demo``: batches of 64 completions in the demo task's format (``17+5=22`` / ``22-8=14`` / ``A: 14``,
  2-4 operands, 30% wrong steps), the RL loop's per-step scoring batch;
- ``labelled``: every completion of ``data/steps_labelled.jsonl`` (algebra, equations, LaTeX, prose);
- ``answers``: the 510 pairs of ``data/answer_pairs.jsonl`` as ``The final answer is $\\boxed{...}$``;
- ``--prose``: only the prose corpus (``tests/data/prose_corpus.jsonl``: grade-school and competition
  solutions, every line a step) through a pool of ONE worker, warm, and in this process.

For each: the pool (``workers`` processes, started and warmed before timing; start-up reported
separately), the same checker in this process on one core (no pool: the pool's overhead is the
ratio), and for answers math-verify's ``verify(parse(gold), parse(pred))`` per comparison, in this
process. Ratios are printed against math-verify measured in the same run.

Run: ``python plugins/botgrpo-sympy/scripts/throughput.py [--workers 2] [--rounds 5] [--prose | --cpu]``
(``--cpu``: the prose corpus per style in this process, in steps per CPU-second: see ``prose_cpu``).
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

from botgrpo_core.signals import Sample
from botgrpo_sympy.answer import check_answer
from botgrpo_sympy.params import AnswerParams, StepsParams
from botgrpo_sympy.plugin import ANSWER, STEPS
from botgrpo_sympy.steps import check_steps

DATA = Path(__file__).resolve().parent.parent / "data"
PROSE = Path(__file__).resolve().parent.parent / "tests" / "data" / "prose_corpus.jsonl"


def demo_batch(rng: random.Random, size: int = 64) -> list[Sample]:
    samples = []
    for _ in range(size):
        running = rng.randint(1, 20)
        ops = [(rng.choice("+-"), rng.randint(1, 9)) for _ in range(rng.randint(1, 3))]
        prompt = f"Q: {running}" + "".join(f"{s}{b}" for s, b in ops) + "="
        lines = []
        for sign, b in ops:
            value = running + b if sign == "+" else running - b
            if rng.random() < 0.3:
                value += rng.choice([1, -1, 10])
            lines.append(f"{running}{sign}{b}={value}")
            running = value
        lines.append(f"A: {running}")
        samples.append(Sample(prompt=prompt, completion="\n".join(lines), row={"answer": str(running)}))
    return samples


def _count_steps(samples: list[Sample]) -> int:
    return sum(len([line for line in s.completion.split("\n") if line.strip()]) for s in samples)


def timed(fn, rounds: int) -> float:
    """Best-of-``rounds`` wall time of ``fn()`` (the machine is shared: the best run is the least disturbed)."""
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def prose(rounds: int) -> None:
    """sympy.steps on the prose corpus: one worker (the issue-14 figure), and in this process."""
    records = [json.loads(line) for line in PROSE.read_text(encoding="utf-8").splitlines()]
    samples = [
        Sample(prompt=r["prompt"], completion="\n".join(x["text"] for x in r["lines"])) for r in records
    ]
    n = sum(len(r["lines"]) for r in records)
    params = StepsParams(workers=1, step_split="lines")
    scorer = STEPS.make_scorer(params)
    seen, unseen = samples[0::2], samples[1::2]  # twins are neighbours: unseen holds other texts
    n_unseen = sum(len(s.completion.splitlines()) for s in unseen)
    try:
        scorer.score(samples[:1])  # start the worker outside the timing
        scorer.score(seen)  # warm the parsers (the ANTLR runtime builds its DFA lazily)
        fresh = timed(lambda: scorer.score(unseen), 1)
        first = timed(lambda: scorer.score(samples), 1)
        warm = timed(lambda: scorer.score(samples), rounds)
    finally:
        scorer.close()
    local = timed(lambda: [check_steps(params, s.prompt, s.completion) for s in samples], rounds)
    print(f"prose corpus: {len(samples)} solutions, {n} steps (lines)\n")
    print("| what | steps per second | note |")
    print("|---|---|---|")
    print(
        f"| sympy.steps prose, pool of 1 worker, texts it has not seen | {n_unseen / fresh:,.0f} | warmed parsers |"
    )
    print(f"| sympy.steps prose, pool of 1 worker, half seen | {n / first:,.0f} | |")
    print(f"| sympy.steps prose, pool of 1 worker | {n / warm:,.0f} | best of {rounds} |")
    print(f"| sympy.steps prose, 1 core in this process | {n / local:,.0f} | best of {rounds}, no IPC |")


def prose_cpu(rounds: int) -> None:
    """sympy.steps on the prose corpus in this process, per style, in CPU time (steps per CPU-second).

    A shared machine's load slows wall-clock figures several-fold; CPU time of this one process is far
    less affected, so before/after comparisons use it (``PYTHONPATH`` another checkout's plugin first to
    measure it on the same corpus). The first pass (cold parsers) is not counted. A step is a line
    (``step_split: lines``); spans are not counted, as a line may hold one span per clause.
    """
    records = [json.loads(line) for line in PROSE.read_text(encoding="utf-8").splitlines()]
    params = StepsParams(step_split="lines")
    print("| style | steps | steps per CPU-second, warm passes |")
    print("|---|---|---|")
    for style in ("gsm8k", "competition"):
        texts = [
            (r["prompt"], "\n".join(x["text"] for x in r["lines"])) for r in records if r["style"] == style
        ]
        rates, n = [], 0
        for k in range(rounds + 1):
            start, n = time.process_time(), 0
            for prompt, completion in texts:
                check_steps(params, prompt, completion)
                n += completion.count("\n") + 1  # steps = lines (spans: one per clause since issue 40)
            if k:  # pass 0 warms the parsers
                rates.append(n / (time.process_time() - start))
        print(f"| {style} | {n} | {min(rates):,.0f}-{max(rates):,.0f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--prose", action="store_true", help="only the prose corpus, one worker")
    parser.add_argument(
        "--cpu", action="store_true", help="only the prose corpus, in process, CPU time per style"
    )
    args = parser.parse_args()
    if args.cpu:
        prose_cpu(args.rounds)
        return
    if args.prose:
        prose(args.rounds)
        return
    rng = random.Random(0)
    demo = demo_batch(rng)
    records = [json.loads(line) for line in (DATA / "steps_labelled.jsonl").read_text().splitlines()]
    labelled = [
        Sample(prompt=r["prompt"], completion="\n".join(s["text"] for s in r["steps"])) for r in records
    ]
    pairs = [json.loads(line) for line in (DATA / "answer_pairs.jsonl").read_text().splitlines()]
    answers = [
        Sample(
            prompt="", completion=f"The final answer is $\\boxed{{{p['pred']}}}$.", row={"answer": p["gold"]}
        )
        for p in pairs
    ]
    steps_params = StepsParams(workers=args.workers, step_split="lines")
    answer_params = AnswerParams(workers=args.workers)

    start = time.perf_counter()
    steps_scorer = STEPS.make_scorer(steps_params)
    steps_scorer.score(demo[:1])
    steps_start = time.perf_counter() - start
    start = time.perf_counter()
    answer_scorer = ANSWER.make_scorer(answer_params)
    answer_scorer.score(answers[:1])
    answer_start = time.perf_counter() - start
    rows = []
    try:
        n_demo, n_lab = _count_steps(demo), _count_steps(labelled)
        # First passes: the per-process caches (LaTeX parses, the ANTLR runtime's DFA) are cold.
        t = timed(lambda: steps_scorer.score(labelled), 1)
        rows.append(("sympy.steps labelled set, pool, first pass", n_lab / t, "cold caches"))
        t = timed(lambda: answer_scorer.score(answers), 1)
        cold_rate = len(answers) / t
        rows.append(("sympy.answer, pool, first pass", cold_rate, f"{len(answers)} pairs, cold caches"))
        t = timed(lambda: steps_scorer.score(demo), args.rounds)
        rows.append(("sympy.steps demo, pool", n_demo / t, f"{t * 1000:.1f} ms per batch of 64 completions"))
        t1 = timed(lambda: [check_steps(steps_params, s.prompt, s.completion) for s in demo], args.rounds)
        rows.append(("sympy.steps demo, 1 core no pool", n_demo / t1, f"{t1 * 1000:.1f} ms per batch of 64"))
        t = timed(lambda: steps_scorer.score(labelled), max(1, args.rounds // 2))
        rows.append(("sympy.steps labelled set, pool", n_lab / t, f"{len(labelled)} completions, warm"))
        t1 = timed(lambda: [check_steps(steps_params, s.prompt, s.completion) for s in labelled], 1)
        rows.append(("sympy.steps labelled set, 1 core no pool", n_lab / t1, "first pass in this process"))
        t = timed(lambda: answer_scorer.score(answers), max(1, args.rounds // 2))
        ours_rate = len(answers) / t
        rows.append(
            ("sympy.answer, pool", ours_rate, f"{len(answers)} pairs, warm (each reference parsed once)")
        )
        t1 = timed(lambda: [check_answer(answer_params, s.completion, s.row["answer"]) for s in answers], 1)
        rows.append(("sympy.answer, 1 core no pool", len(answers) / t1, "first pass in this process"))
        t = timed(lambda: answer_scorer.score(demo), args.rounds)
        rows.append(("sympy.answer demo, pool", len(demo) / t, f"{t * 1000:.1f} ms per batch of 64"))
    finally:
        steps_scorer.close()
        answer_scorer.close()

    mv_rate = None
    try:
        from math_verify import parse, verify

        def run_mv() -> None:
            for s in answers:
                verify(parse(f"$\\boxed{{{s.row['answer']}}}$"), parse(s.completion))

        run_mv()  # warm-up, like ours
        t = timed(run_mv, 1)
        mv_rate = len(answers) / t
        rows.append(
            ("math-verify, 1 core (in process)", mv_rate, f"{t / len(answers) * 1000:.2f} ms per comparison")
        )
    except ImportError:
        print("math-verify is not installed (pip install 'botgrpo-sympy[eval]'): no reference rate")

    print(
        f"pool start-up incl. warm-up: sympy.steps {steps_start:.1f} s, sympy.answer {answer_start:.1f} s "
        f"({args.workers} workers)\n"
    )
    print("| what | per second | note |")
    print("|---|---|---|")
    for name, rate, note in rows:
        unit = "answers" if "answer" in name or "math-verify" in name else "steps"
        print(f"| {name} | {rate:,.0f} {unit}/s | {note} |")
    if mv_rate:
        print(
            f"\nsympy.answer (pool) / math-verify, answers per second: {cold_rate / mv_rate:.1f}x on a first "
            f"pass (cold caches), {ours_rate / mv_rate:.1f}x warm"
        )


if __name__ == "__main__":
    main()
