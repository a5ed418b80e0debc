"""Sample completions of a real model with vLLM on CPU (run in .venv-vllm), for signal-truth sets and pilots.

    .venv-vllm/bin/python scripts/smollm2_generate.py PROMPTS.jsonl OUT.jsonl --samples 3 --max-tokens 256

PROMPTS.jsonl rows carry ``prompt`` (a string or TRL's conversational list of messages); every other field is
copied to the output. Each output row adds ``completion`` (text), ``truncated`` (the length cap cut it: no EOS),
``sample`` (0..n-1), ``model``, ``temperature`` and ``seed``: the format ``botgrpo score --input`` reads.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("prompts", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument(
        "--model", default="smollm2-135m-instruct", help="a named model, .gguf file or folder"
    )
    parser.add_argument("--samples", type=int, default=1, help="completions per prompt")
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--temperature", type=float, default=0.7)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--limit", type=int, default=0, help="first N prompts only (0: all)")
    parser.add_argument("--split", default=None, help="only rows whose 'split' field equals this")
    args = parser.parse_args()

    from vllm import SamplingParams

    from botgrpo_core.engine.vllm_engine import start_named_engine

    rows = [json.loads(line) for line in args.prompts.read_text().splitlines() if line.strip()]
    if args.split:
        rows = [r for r in rows if r.get("split") == args.split]
    rows = rows[: args.limit] if args.limit else rows
    llm, tokenizer = start_named_engine(args.model, max_model_len=1024, seed=args.seed)
    prompts = []
    for row in rows:
        messages = (
            row["prompt"] if isinstance(row["prompt"], list) else [{"role": "user", "content": row["prompt"]}]
        )
        prompts.append(tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False))
    # the engine's seed makes a run repeatable; a per-request SamplingParams(seed=...) fails on vLLM's CPU
    # backend ("CPU Generator does not use offset")
    params = SamplingParams(n=args.samples, temperature=args.temperature, max_tokens=args.max_tokens)
    start = time.perf_counter()
    outputs = llm.generate(prompts, params)
    seconds = time.perf_counter() - start
    tokens = 0
    with args.output.open("w") as out:
        for row, result in zip(rows, outputs, strict=True):
            for k, sample in enumerate(result.outputs):
                tokens += len(sample.token_ids)
                record = {
                    **row,
                    "completion": sample.text,
                    "truncated": sample.finish_reason == "length",
                    "sample": k,
                    "model": args.model,
                    "temperature": args.temperature,
                    "seed": args.seed,
                }
                out.write(json.dumps(record) + "\n")
    print(
        f"{len(rows)} prompts x {args.samples}: {tokens} tokens in {seconds:.1f} s ({tokens / seconds:.0f}/s)"
    )


if __name__ == "__main__":
    main()
