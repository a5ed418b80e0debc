"""Benchmark of botgrpo-judge on a tiny judge built in code (CPU, one thread; no downloads).

Prints steps scored per second, and ratios against baselines measured in the same run:

1. ``logprob`` mode, transformers backend: one forward pass per completion over its token tree (layouts
   ``prefix`` and ``tagged``) against the baseline of one forward pass per step prompt.
2. ``generate`` mode, transformers backend: one judge answer per completion, and one per step; the ratio
   logprob / generate says how much cheaper reading P(yes) - P(no) is than writing verdicts.
3. ``openai`` backend against the bundled OpenAI-compatible server (its own process) on loopback: ``concurrency`` 1
   (sequential requests) against 4 and 16, with the server batching concurrent requests; and again with
   a simulated 20 ms of network and queueing latency per request, which is what concurrency hides.

The run cache is off (``cache_size: 0``) so every step is really scored.

    python plugins/botgrpo-judge/scripts/bench_judge.py [--rollouts 32] [--repeats 3]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

#: The plugin's test infrastructure (tiny judge, local server) lives with its tests, not in the package.
TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path.insert(0, str(TESTS))

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


def rollouts(count: int, seed: int = 0) -> list[Any]:
    """Arithmetic rollouts of 3-6 steps (one per line), as a policy would write them."""
    from botgrpo_core.signals import Sample

    rng = random.Random(seed)
    samples = []
    for _ in range(count):
        value = rng.randint(1, 20)
        question, lines = str(value), []
        for _ in range(rng.randint(2, 5)):
            operand, sign = rng.randint(1, 9), rng.choice("+-")
            new = value + operand if sign == "+" else value - operand
            new += rng.choice((0, 0, 0, 1, -1))  # some wrong steps
            lines.append(f"{value}{sign}{operand}={new}")
            question += f"{sign}{operand}"
            value = new
        lines.append(f"A: {value}")
        samples.append(Sample(f"what is {question}?", "\n".join(lines)))
    return samples


@contextlib.contextmanager
def served(folder: str, latency_s: float) -> Iterator[str]:
    """Run ``python -m judge_testing.server`` in its own process (as a real server would be); yields its URL."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")])),
    }
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "judge_testing.server",
            "--model",
            folder,
            "--port",
            "0",
            "--latency-s",
            str(latency_s),
        ],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # "serving DIR at http://127.0.0.1:PORT/v1"
        if " at http" not in line:
            raise RuntimeError(f"the judge server did not start: {line!r}")
        yield line.rsplit(" at ", 1)[1].strip()
    finally:
        process.terminate()
        process.wait(timeout=30)


def timed(fn: Callable[[], Any], repeats: int) -> float:
    """Median wall time of ``fn`` over ``repeats`` runs (after one warm-up run)."""
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rollouts", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--hidden", type=int, default=64, help="width of the tiny judge")
    parser.add_argument("--layers", type=int, default=3)
    args = parser.parse_args(argv)

    import torch

    torch.set_num_threads(1)
    from judge_testing.tiny_judge import arithmetic_examples, build_tiny_judge, teach

    from botgrpo_judge.params import StepsParams
    from botgrpo_judge.scorer import JudgeScorer

    folder = tempfile.mkdtemp(prefix="judge-bench-")
    build_tiny_judge(folder, hidden_size=args.hidden, num_layers=args.layers, num_heads=4)
    teach(folder, arithmetic_examples(32), steps=20)
    samples = rollouts(args.rollouts)
    steps = sum(len(s.completion.split("\n")) for s in samples)
    common = {"model": folder, "yes_tokens": [" yes", "yes"], "no_tokens": [" no", "no"], "cache_size": 0}
    print(
        f"tiny judge: width {args.hidden}, {args.layers} layers; {len(samples)} rollouts, {steps} steps; "
        f"torch threads 1; median of {args.repeats}\n"
    )

    def rate(params: StepsParams, setup: Callable[[JudgeScorer], None] | None = None) -> float:
        scorer = JudgeScorer(params, "steps")
        if setup is not None:
            setup(scorer)
        seconds = timed(lambda: scorer.score(samples), args.repeats)
        scorer.close()
        return steps / seconds

    def per_step_rows(scorer: JudgeScorer) -> None:
        scorer.backend.tree_ok = False  # type: ignore[attr-defined]

    results: dict[str, float] = {}
    results["logprob, one pass per step prompt (baseline)"] = rate(StepsParams(**common), per_step_rows)
    results["logprob, one pass per completion (prefix tree)"] = rate(StepsParams(**common))
    results["logprob, one pass per completion (tagged)"] = rate(StepsParams(**common, layout="tagged"))
    results["generate, one answer per completion (32 tokens)"] = rate(
        StepsParams(**common, mode="generate", max_new_tokens=32)
    )
    results["generate, one answer per step (8 tokens)"] = rate(
        StepsParams(**common, mode="generate", generate_per="step", max_new_tokens=8)
    )
    base = results["logprob, one pass per step prompt (baseline)"]
    print(f"{'transformers backend':<52} {'steps/s':>9} {'x baseline':>11}")
    for name, value in results.items():
        print(f"{name:<52} {value:>9.1f} {value / base:>11.2f}")
    best_logprob = results["logprob, one pass per completion (prefix tree)"]
    print(
        f"\nlogprob (prefix tree) / generate per completion: "
        f"{best_logprob / results['generate, one answer per completion (32 tokens)']:.1f}x; "
        f"/ generate per step: {best_logprob / results['generate, one answer per step (8 tokens)']:.1f}x"
    )

    for latency in (0.0, 0.02):
        with served(folder, latency) as url:
            http: dict[int, float] = {}
            for concurrency in (1, 4, 16):
                params = StepsParams(
                    **{**common, "model": "tiny"},
                    backend="openai",
                    openai={"base_url": url, "concurrency": concurrency, "top_logprobs": 20},
                )
                http[concurrency] = rate(params)
            label = (
                f"openai backend, {'no added latency' if not latency else f'{latency * 1000:.0f} ms latency'}"
            )
            print(f"\n{label:<52} {'steps/s':>9} {'x sequential':>13}")
            for concurrency, value in http.items():
                print(f"{'concurrency ' + str(concurrency):<52} {value:>9.1f} {value / http[1]:>13.2f}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
