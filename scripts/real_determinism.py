"""Compare two runs' metrics step by step: does a re-run of a seed reproduce the first run (issue 37)?

    python scripts/real_determinism.py docs/results/real-react-lr5e-5/metrics/bot-grpo_seed0.metrics.jsonl.gz \
        docs/results/real-react/metrics/bot-grpo_seed0.metrics.jsonl.gz

Reads two ``metrics.jsonl`` files (plain or gzipped). Per training step it compares what the rollouts were (mean,
min and max completion length, the outcome signals' means, the reward), which vLLM's sampling decides from the
weights and the run's seed, and what the update computed (loss, grad norm); per evaluation, the held-out metrics.
Prints the first step where the rollouts differ, the largest relative difference of the update's numbers before
it, and each evaluation side by side; exit 0 when every evaluation metric is equal, 1 otherwise.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

#: what the rollouts were: equal when generation drew the same completions
ROLLOUT_KEYS = ("completions/mean_length", "completions/min_length", "completions/max_length", "reward")
#: what the update computed from them
UPDATE_KEYS = ("loss", "grad_norm")
#: what the training model's forward gave on the rollouts; at step 1 the weights are the seed's initial ones, so
#: with the same rollouts a difference here is the forward pass itself (the host's kernels), not the update
FORWARD_KEY = "entropy"


def _by_step(rows: list[dict[str, Any]], kind: str) -> dict[int, dict[str, Any]]:
    return {int(r["step"]): r for r in rows if r.get("kind") == kind and "step" in r}


def _rel(a: float, b: float) -> float:
    return abs(a - b) / max(abs(a), abs(b), 1e-12)


def compare(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> dict[str, Any]:
    """``first_rollout_difference`` (a step, or None), ``update_rel_diff_before`` (the largest relative difference
    of :data:`UPDATE_KEYS` at the steps before it), ``first_step_forward`` (:data:`FORWARD_KEY` of each at the
    first shared step), ``evals`` (``step -> {key: (a, b)}`` for the shared held-out
    keys) and ``evals_equal``."""
    ta, tb = _by_step(a, "train"), _by_step(b, "train")
    steps = sorted(set(ta) & set(tb))
    signal_keys = sorted(k for k in ta.get(steps[0], {}) if k.startswith("signals/") and k.endswith("/mean"))
    first = None
    for s in steps:
        if any(ta[s].get(k) != tb[s].get(k) for k in (*ROLLOUT_KEYS, *signal_keys)):
            first = s
            break
    before = [s for s in steps if first is None or s < first]
    update = max(
        (_rel(ta[s][k], tb[s][k]) for s in before for k in UPDATE_KEYS if k in ta[s] and k in tb[s]),
        default=0.0,
    )
    forward = (ta[steps[0]].get(FORWARD_KEY), tb[steps[0]].get(FORWARD_KEY)) if steps else (None, None)
    ea, eb = _by_step(a, "eval"), _by_step(b, "eval")
    evals = {}
    for s in sorted(set(ea) & set(eb)):
        keys = sorted(
            k for k in ea[s] if k.startswith("eval/") and isinstance(ea[s][k], (int, float)) and k in eb[s]
        )
        evals[s] = {k: (ea[s][k], eb[s][k]) for k in keys}
    equal = all(x == y for row in evals.values() for x, y in row.values())
    return {
        "steps_compared": len(steps),
        "first_rollout_difference": first,
        "update_rel_diff_before": update,
        "first_step_forward": forward,
        "evals": evals,
        "evals_equal": equal,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("first", type=Path)
    parser.add_argument("second", type=Path)
    parser.add_argument(
        "--keys", nargs="*", default=["eval/sampled/compile_rate", "eval/sampled/answer_accuracy"]
    )
    args = parser.parse_args(argv)
    from botgrpo_bench.runs import read_jsonl

    for path in (args.first, args.second):
        if not path.is_file():
            print(f"real_determinism: {path} is not a file", file=sys.stderr)
            return 2
    out = compare(read_jsonl(args.first), read_jsonl(args.second))
    first = out["first_rollout_difference"]
    print(f"training steps compared: {out['steps_compared']}")
    print("rollouts: " + ("the same at every step" if first is None else f"first differ at step {first}"))
    fa, fb = out["first_step_forward"]
    if first != 1 and fa is not None and fb is not None:
        print(
            f"forward at step 1 (the same weights, the same rollouts): {FORWARD_KEY} {fa!r} vs {fb!r} "
            + ("(bit-equal)" if fa == fb else f"(relative difference {_rel(fa, fb):.1e})")
        )
    print(
        f"update (loss, grad norm) before that: largest relative difference {out['update_rel_diff_before']:.2e}"
    )
    for step, row in out["evals"].items():
        shown = {k: v for k, v in row.items() if k in args.keys} or row
        print(
            f"eval step {step}: "
            + ", ".join(f"{k.removeprefix('eval/')} {x:g} vs {y:g}" for k, (x, y) in shown.items())
        )
    print("held-out metrics: " + ("all equal" if out["evals_equal"] else "differ"))
    return 0 if out["evals_equal"] else 1


if __name__ == "__main__":
    sys.exit(main())
