"""GPU check of the ``vllm`` backend: one command on any CUDA machine with vLLM installed.

    pip install -e "plugins/botgrpo-judge[vllm]"   # next to the botgrpo core
    python plugins/botgrpo-judge/scripts/gpu_check_vllm.py

It builds a tiny judge in code (no downloads), saves it to a temporary folder, teaches it for a few seconds
to answer yes/no about little sums (so P(yes) and P(no) are large), then scores the same rollouts with
``judge.steps`` in ``logprob`` mode through the ``transformers`` backend (float32, the reference) and the
``vllm`` backend (offline engine, prompt per step, top-k logprobs covering the whole vocabulary), for both
layouts, and through ``judge.outcome``. It prints the largest differences of P(yes), P(no) and the step
values, the steps per second of each backend, and a greedy ``generate`` comparison (informational), and
exits 1 when a logprob difference exceeds ``--tolerance``.

``--dry-run`` runs everything except vLLM (checks the script on a machine without a GPU).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

#: The plugin's test infrastructure (the tiny judge) lives with its tests, not in the package.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


def rollouts(count: int, seed: int = 0) -> list[Any]:
    """Arithmetic rollouts, some steps wrong, one step per line."""
    from botgrpo_core.signals import Sample

    rng = random.Random(seed)
    samples = []
    for _ in range(count):
        value = rng.randint(1, 20)
        question, lines = str(value), []
        for _ in range(rng.randint(2, 4)):
            operand, sign = rng.randint(1, 9), rng.choice("+-")
            new = (value + operand if sign == "+" else value - operand) + rng.choice((0, 0, 1, -2))
            lines.append(f"{value}{sign}{operand}={new}")
            question += f"{sign}{operand}"
            value = new
        lines.append(f"A: {value}")
        samples.append(Sample(f"what is {question}?", "\n".join(lines), row={"answer": str(value)}))
    return samples


def flatten(results: list[Any]) -> list[tuple[float, float, float]]:
    """``(p_yes, p_no, value)`` of every step span."""
    out = []
    for spans in results:
        if not isinstance(spans, list):
            raise SystemExit(f"a sample failed: {spans!r}")
        out.extend((s.meta["p_yes"], s.meta["p_no"], s.value) for s in spans)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rollouts", type=int, default=64)
    parser.add_argument("--dtype", default="float32", help="vLLM dtype (float32, bfloat16, float16)")
    parser.add_argument(
        "--tolerance", type=float, default=None, help="default: 2e-4 (float32), 2e-2 otherwise"
    )
    parser.add_argument("--gpu-memory-utilization", type=float, default=0.25)
    parser.add_argument("--dry-run", action="store_true", help="skip vLLM (no GPU needed)")
    args = parser.parse_args(argv)
    tolerance = args.tolerance if args.tolerance is not None else (2e-4 if args.dtype == "float32" else 2e-2)

    import torch
    from judge_testing.tiny_judge import arithmetic_examples, build_tiny_judge, teach

    from botgrpo_judge.params import OutcomeParams, StepsParams
    from botgrpo_judge.scorer import JudgeScorer

    device = "cuda" if torch.cuda.is_available() else "cpu"
    folder = tempfile.mkdtemp(prefix="judge-gpu-check-")
    # head_dim 64: a size every vLLM attention kernel supports
    build_tiny_judge(folder, hidden_size=128, num_layers=2, num_heads=2, max_positions=2048)
    teach(folder, arithmetic_examples(48), steps=40)
    from transformers import AutoTokenizer

    vocab = len(AutoTokenizer.from_pretrained(folder))
    samples = rollouts(args.rollouts)
    common: dict[str, Any] = {
        "model": folder,
        "yes_tokens": [" yes", "yes"],
        "no_tokens": [" no", "no"],
        "cache_size": 0,
        "transformers": {"device": device, "dtype": "float32"},
        "vllm": {
            "dtype": args.dtype,
            "top_logprobs": vocab,  # the whole vocabulary: exact sums, comparable to transformers
            "gpu_memory_utilization": args.gpu_memory_utilization,
            "enforce_eager": True,
            "colocate": True,  # the transformers reference shares the GPU in this process
            "max_model_len": 2048,
        },
    }
    report: dict[str, Any] = {
        "device": torch.cuda.get_device_name(0) if device == "cuda" else "cpu",
        "torch": torch.__version__,
        "dtype": args.dtype,
        "tolerance": tolerance,
        "rollouts": len(samples),
    }
    try:
        import vllm

        report["vllm"] = vllm.__version__
    except ImportError:
        if not args.dry_run:
            print("vLLM is not installed: pip install -e 'plugins/botgrpo-judge[vllm]' (or use --dry-run)")
            return 2
    failed = False

    def timed_score(scorer: JudgeScorer, batch: list[Any]) -> tuple[list[Any], float]:
        scorer.score(batch[:2])  # warm-up (kernels, engine caches); the cache is off
        start = time.perf_counter()
        results = scorer.score(batch)
        return results, time.perf_counter() - start

    for layout in ("prefix", "tagged"):
        reference, seconds = timed_score(JudgeScorer(StepsParams(**common, layout=layout), "steps"), samples)
        ref = flatten(reference)
        entry: dict[str, Any] = {"steps": len(ref), "transformers_steps_per_s": round(len(ref) / seconds, 1)}
        if not args.dry_run:
            scorer = JudgeScorer(StepsParams(**common, layout=layout, backend="vllm"), "steps")
            got_results, seconds = timed_score(scorer, samples)
            got = flatten(got_results)
            diffs = [max(abs(a - b) for a, b in zip(x, y)) for x, y in zip(ref, got)]
            entry.update(
                vllm_steps_per_s=round(len(got) / seconds, 1),
                max_abs_diff=max(diffs),
                mean_abs_diff=sum(diffs) / len(diffs),
                mean_p_yes=sum(r[0] for r in ref) / len(ref),
            )
            failed |= len(got) != len(ref) or max(diffs) > tolerance
        report[f"steps_{layout}"] = entry

    outcome_ref = JudgeScorer(OutcomeParams(**common, reference_field="answer"), "outcome").score(samples)
    if not args.dry_run:
        outcome = JudgeScorer(
            OutcomeParams(**common, reference_field="answer", backend="vllm"), "outcome"
        ).score(samples)
        diff = max(abs(a - b) for a, b in zip(outcome_ref, outcome))
        report["outcome_max_abs_diff"] = diff
        failed |= diff > tolerance
        # generate mode, informational: greedy texts can part ways on near-ties across kernels
        gen = {**common, "mode": "generate", "max_new_tokens": 16}
        texts_ref = JudgeScorer(StepsParams(**gen), "steps").backend.generate(
            [s.prompt for s in samples[:16]]
        )
        texts = JudgeScorer(StepsParams(**gen, backend="vllm"), "steps").backend.generate(
            [s.prompt for s in samples[:16]]
        )
        report["generate_same_text"] = sum(a == b for a, b in zip(texts_ref, texts)) / len(texts)
    report["ok"] = not failed
    print(json.dumps(report, indent=2))
    print("PASS" if not failed else f"FAIL: a logprob difference exceeds {tolerance}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
