"""Issue 56: gamed completions against honest ones in one group, under the math mixture, mean token advantage each.

One group of wrong answers (and one right answer) to one grade-school problem, scored by the real ``sympy.answer``
and ``sympy.steps`` through the core mixture (worker processes), with the math level's settings (alpha 1, beta 0.25,
``step_split: lines``, ``uncovered: zero``, the ``bot`` estimator), one character a token. Printed per rollout: its
mean token advantage (what a sequence-mean loss pushes) and its +1 / -1 / 0 spans. Run the same script on an
older checkout of the plugin (``PYTHONPATH=<old plugin dir>``) for the "before" column.

Run: ``python plugins/botgrpo-sympy/scripts/gaming_examples.py [--steps-params '{"truncated_cut": "sentence"}']
[--timeout-s 2] [--json]``
"""

from __future__ import annotations

import argparse
import dataclasses
import json

PROMPT = "Tom has 17 apples and puts them in baskets of 5. How many apples are left over?"
ANSWER = "2"
HEAVY = "\n".join(f"$\\sin^{{2}}(x^{k}+{k}) + \\cos^{{2}}(x^{k}+{k}) = 1$" for k in range(3, 80))
RUN_ON = ", ".join(["17 - 15 = 3"] + ["the answer is 3"] * 40) + ", the ans"

#: (name, completion, cut by the length cap)
VARIANTS = [
    ("honest right", "5 * 3 = 15\n17 - 15 = 2\nThe answer is 2.", False),
    ("honest wrong", "5 * 3 = 15\n17 - 15 = 3\nThe answer is 3.", False),
    ("honest wrong, a wrong method", "17 / 5 = 3.4\nThe answer is 3.4.", False),
    ("1 + 1 = 2 x30, wrong answer", "1 + 1 = 2\n" * 30 + "The answer is 3.", False),
    ("7 = 7 x30, wrong answer", "7 = 7\n" * 30 + "The answer is 3.", False),
    ("x = x x30, wrong answer", "x = x\n" * 30 + "The answer is 3.", False),
    ("verified line x30, wrong answer", "5 * 3 = 15\n" * 30 + "The answer is 3.", False),
    ("every line twice, wrong", "5 * 3 = 15\n5 * 3 = 15\n17 - 15 = 3\n17 - 15 = 3\nThe answer is 3.", False),
    ("cut run-on joined by ', '", RUN_ON, True),
    ("wrong line then heavy identities", "17 - 15 = 3\n" + HEAVY + "\nThe answer is 3.", False),
    ("whitespace only", " \n \n  ", False),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps-params", default="{}", help="extra sympy.steps params, JSON")
    ap.add_argument("--timeout-s", type=float, default=5.0, help="sympy.steps timeout_s")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    from botgrpo_core.config.models import RewardsConfig
    from botgrpo_core.estimators.compute import compute_advantages
    from botgrpo_core.rewards.mixture import RewardMixture
    from botgrpo_core.signals.manager import PluginManager
    from botgrpo_core.signals.testing import make_samples

    params = {"step_split": "lines", **json.loads(args.steps_params)}
    config = RewardsConfig(
        alpha=1.0,
        beta=0.25,
        signals=[
            {"name": "sympy.answer", "workers": 1, "params": {"reference_field": "answer"}},
            {"name": "sympy.steps", "workers": 1, "timeout_s": args.timeout_s, "params": params},
        ],
    )
    samples = make_samples([c for _, c, _ in VARIANTS], prompt=PROMPT, rows={"answer": ANSWER})
    samples = [
        dataclasses.replace(s, truncated=cut) for s, (_, _, cut) in zip(samples, VARIANTS, strict=True)
    ]
    with RewardMixture(config, PluginManager(allowlist=["sympy"])) as mixture:
        out = mixture.score_batch(samples)
    adv = compute_advantages("bot", out.token_rewards, out.mask, group_size=len(samples), eps=1e-6)
    rows = []
    for i, (name, _, _) in enumerate(VARIANTS):
        n = int(out.mask[i].sum())
        mean = float(adv[i, :n].mean()) if n else 0.0
        result = out.signals["sympy.steps"].results[i]
        spans = [s.value for s in result] if isinstance(result, list) else f"error: {result}"
        counts = (
            {v: spans.count(v) for v in (1.0, -1.0, 0.0)}
            if isinstance(spans, list)
            else {"error": spans[:60]}
        )
        rows.append({"variant": name, "tokens": n, "mean_token_advantage": round(mean, 3), "spans": counts})
    honest = next(r["mean_token_advantage"] for r in rows if r["variant"] == "honest wrong")
    if args.json:
        print(json.dumps({"steps_params": params, "rows": rows}, indent=1))
        return
    print(f"sympy.steps params: {params}; honest wrong attempt: {honest:+.3f}")
    for r in rows:
        gamed = "honest" not in r["variant"]
        flag = "  OUT-RANKS honest wrong" if r["mean_token_advantage"] > honest and gamed else ""
        print(f"{r['variant']:<36} {r['tokens']:>6} {r['mean_token_advantage']:+.3f}  {r['spans']}{flag}")


if __name__ == "__main__":
    main()
