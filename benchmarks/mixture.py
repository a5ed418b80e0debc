"""Mixture overhead: alignment + mixing + BoT advantages, against the BoT advantages alone.

Two measurements, each a ratio against a baseline measured in the same run:

1. ``512 rollouts x 2048 tokens`` with three cheap signals (a global exact-answer check, a local regex,
   DAPO length shaping), timed from samples to token rewards to BoT advantages, divided by the time of the
   BoT advantage computation alone on the same ``(B, T)`` rewards. The mixture's own work (result
   checks, span alignment, mixing) is timed directly by replaying the scorers' recorded results, since
   "full minus scorers" is the difference of two noisy second-long timings.
2. Per-sample cost of scoring through the worker-process pool (``workers: 2``) against in-process
   scoring of the same signal, as milliseconds per sample and their difference.

Run: ``python benchmarks/mixture.py [--rollouts 512 --tokens 2048 --repeats 5]``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

import torch

from botgrpo_core.config.models import RewardsConfig
from botgrpo_core.estimators.compute import compute_advantages
from botgrpo_core.rewards.mixture import RewardMixture
from botgrpo_core.rewards.offsets import TokenOffsets
from botgrpo_core.signals import Sample


def _batch(rollouts: int, tokens: int, group_size: int, seed: int = 0) -> list[Sample]:
    rng = random.Random(seed)
    words = ["step", "12+7=19", "so", "wrong", "A:", "42", "\n", "check", "bad", "ok"]
    samples = []
    for i in range(rollouts):
        length = rng.randint(tokens // 2, tokens)
        pieces = [rng.choice(words) for _ in range(length)]
        text, offsets, position = "", [], 0
        for piece in pieces:  # one token per word plus a space: ragged, realistic offsets
            token = piece + " "
            offsets.append((position, position + len(token)))
            position += len(token)
            text += token
        samples.append(
            Sample(
                prompt=f"prompt {i // group_size}",
                completion=text,
                token_ids=tuple(range(length)),
                offsets=TokenOffsets(offsets),  # as make_samples builds them
                row={"answer": "42"},
            )
        )
    return samples


def _median_time(fn, repeats: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rollouts", type=int, default=512)
    parser.add_argument("--tokens", type=int, default=2048)
    parser.add_argument("--group-size", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--pool-samples", type=int, default=256)
    args = parser.parse_args()
    torch.set_num_threads(1)

    samples = _batch(args.rollouts, args.tokens, args.group_size)
    config = RewardsConfig(
        alpha=1.0,
        beta=0.2,
        signals=[
            {"name": "core.exact_answer", "cache": False},
            {"name": "core.regex", "params": {"pattern": "wrong|bad", "value": -1.0}, "cache": False},
            {
                "name": "core.length",
                "params": {"max_length": args.tokens, "cache": args.tokens // 4},
                "cache": False,
            },
        ],
    )
    mixture = RewardMixture(config)
    out = mixture.score_batch(samples)
    rewards, mask = out.token_rewards, out.mask

    def advantages_only() -> None:
        compute_advantages("bot", rewards, mask, group_size=args.group_size)

    def full_pipeline() -> None:
        o = mixture.score_batch(samples)
        compute_advantages("bot", o.token_rewards, o.mask, group_size=args.group_size, nan_policy="mask")

    def scorers_only() -> None:  # the signals' own work, which the mixture cannot make cheaper
        for runner in mixture.runners:
            runner._scorer.score(samples)

    # Replay: each signal returns the results its scorer produced for this batch, so the timing below is
    # the mixture's own work on real scorer output (checks, alignment, mixing) plus the advantages.
    recorded = {runner.spec.name: runner._score_raw(list(samples)) for runner in mixture.runners}
    replay = RewardMixture(config)
    for runner in replay.runners:
        runner._score_raw = lambda batch, results=recorded[runner.spec.name]: list(results)  # type: ignore[method-assign]

    def mixture_only() -> None:
        o = replay.score_batch(samples)
        compute_advantages("bot", o.token_rewards, o.mask, group_size=args.group_size, nan_policy="mask")

    t_adv = _median_time(advantages_only, args.repeats)
    t_full = _median_time(full_pipeline, args.repeats)
    t_sig = _median_time(scorers_only, args.repeats)
    t_mix = _median_time(mixture_only, args.repeats)
    t_overhead = t_mix - t_adv
    spans = sum(len(r) for results in recorded.values() for r in results if isinstance(r, list))
    print(
        f"batch: {args.rollouts} rollouts x up to {args.tokens} tokens, group size {args.group_size}, 3 signals"
    )
    print(f"BoT advantages alone (baseline):                 {t_adv * 1e3:9.2f} ms")
    print(f"signal scorers alone:                            {t_sig * 1e3:9.2f} ms")
    print(f"full: scoring + checks + alignment + mixing + advantages: {t_full * 1e3:9.2f} ms")
    print(f"full - scorers (noisy difference):               {(t_full - t_sig) * 1e3:9.2f} ms")
    print(f"mixture alone on replayed scorer results:        {t_overhead * 1e3:9.2f} ms ({spans} spans)")
    print(f"ratio mixture alone / advantages alone:          {t_overhead / t_adv:9.2f}x")
    print(f"ratio full / advantages alone:                   {t_full / t_adv:9.2f}x")

    pool_samples = samples[: args.pool_samples]
    in_process = RewardMixture(
        RewardsConfig(beta=0.0, signals=[{"name": "core.exact_answer", "cache": False}])
    )
    pooled = RewardMixture(
        RewardsConfig(beta=0.0, signals=[{"name": "core.exact_answer", "cache": False, "workers": 2}])
    )
    try:
        t_in = _median_time(lambda: in_process.score_batch(pool_samples), args.repeats)
        t_pool = _median_time(lambda: pooled.score_batch(pool_samples), args.repeats)
    finally:
        pooled.close()
    n = len(pool_samples)
    print(f"\nper-sample scoring, {n} samples of ~{len(pool_samples[0].completion) // 1024} KB:")
    print(f"in-process:            {t_in / n * 1e3:8.3f} ms/sample")
    print(f"worker pool (2 procs): {t_pool / n * 1e3:8.3f} ms/sample")
    print(f"pool overhead:         {(t_pool - t_in) / n * 1e3:8.3f} ms/sample ({t_pool / t_in:.2f}x)")


if __name__ == "__main__":
    main()
