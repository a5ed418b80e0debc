"""What a dead or hostile judge server costs the HTTP backend at its defaults (CPU, loopback, no model).

1. A server that accepts connections and never answers: 64 rollouts x 4 steps = 256 requests with
   ``timeout_s: 1`` (every other option at its default). Unbounded this would cost
   256 x 5 attempts x 1 s / 16 in flight = 80 s per batch; the breaker opens after the first attempts
   and the next batch (within the cooldown) fails at once.
2. A server answering 200 MB chunked bodies: the growth of peak RSS while 16 requests are cut at
   ``max_response_bytes`` (1 MiB).

    python plugins/botgrpo-judge/scripts/measure_http_bounds.py
"""

from __future__ import annotations

import logging
import resource
import sys
import time
from pathlib import Path

#: The plugin's test infrastructure (the misbehaving servers) lives with its tests, not in the package.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))


def main() -> None:
    from judge_testing.hostile import ScriptedServer, SilentServer

    from botgrpo_core.signals import Sample
    from botgrpo_judge.params import StepsParams
    from botgrpo_judge.scorer import JudgeScorer

    logging.basicConfig(level=logging.ERROR)
    samples = [Sample(f"what is {i}+1?", "\n".join(f"{i}+{k}={i + k}" for k in range(4))) for i in range(64)]
    with SilentServer() as server:
        params = StepsParams(
            model="judge", backend="openai", openai={"base_url": server.url, "timeout_s": 1.0}
        )
        scorer = JudgeScorer(params, "steps")
        for batch in (1, 2):
            start = time.perf_counter()
            scorer.score(samples)
            print(f"silent server, batch {batch}: {time.perf_counter() - start:.2f} s for 256 requests")
        metrics = scorer.metrics()
        scorer.close()
        print(
            f"  connections accepted: {server.accepted}; "
            + ", ".join(f"{k}={v:g}" for k, v in sorted(metrics.items()) if k.startswith("backend_"))
        )
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with ScriptedServer() as server:
        server.stream(200 * 1024 * 1024, declare_length=False)
        scorer = JudgeScorer(
            StepsParams(model="judge", backend="openai", openai={"base_url": server.url}), "steps"
        )
        start = time.perf_counter()
        results = scorer.score(samples[:4])
        elapsed = time.perf_counter() - start
        scorer.close()
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    print(f"200 MB answers, 16 requests: {elapsed:.2f} s, peak RSS +{grown:.0f} MiB; sample 1: {results[0]}")


if __name__ == "__main__":
    main()
