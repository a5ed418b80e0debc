"""Hang and memory bombs through sympy.steps and sympy.answer: time and outcome of each (markdown).

Two rounds: the default caps (each bomb is refused by a cap before any work), then the caps
lifted (``--lifted``), where the pool's per-completion deadline and memory limit are what stop it.
After every bomb a normal completion is scored, to show the pool keeps serving.

Run: ``python plugins/botgrpo-sympy/scripts/bombs.py [--lifted] [--timeout 2]``.
"""

from __future__ import annotations

import argparse
import time

from botgrpo_core.signals import Sample, SampleError
from botgrpo_sympy.params import AnswerParams, StepsParams
from botgrpo_sympy.plugin import ANSWER, STEPS

BOMBS = {
    "power tower 9^9^9": "9^9^9",
    "power tower (LaTeX)": "9^{9^{9}}",
    "2^(10^(10^10))": "2^(10^(10^10))",
    "huge factorial 100000!": "100000!",
    "factorial(10^7)": "factorial(10^7)",
    "10^5-term expansion (x+1)^100000": "(x+1)^100000",
    "10^5-term polynomial written out": " + ".join(f"x^{k}" for k in range(100_000)),
    "100k nested parentheses": "(" * 100_000 + "1" + ")" * 100_000,
    "100k nested braces (LaTeX)": "{" * 100_000 + "1" + "}" * 100_000,
    "1 MB of digits": "1" * 1_000_000,
    "tower inside \\gcd (LaTeX)": "\\gcd(9^{9^{9}}, 3)",
    "tower as a root index (LaTeX)": "\\sqrt[9^{9^{9}}]{2}",
    "6-variable expansion (a+b+c+d+f+g)^400": "(a+b+c+d+f+g)^400",
}
GOOD = Sample(prompt="Q: 17+5-8=", completion="17+5=22\n22-8=14\nA: 14", row={"answer": "14"})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lifted", action="store_true", help="lift the caps: the pool has to stop the bombs")
    parser.add_argument("--timeout", type=float, default=2.0)
    parser.add_argument("--memory-mb", type=int, default=512)
    args = parser.parse_args()
    limits = (
        {
            "max_exponent": 10**12,
            "max_bits": 10**13,
            "max_factorial": 10**9,
            "max_chars": 10**7,
            "max_nodes": 10**7,
            "max_depth": 10**7,
            "max_digits": 10**7,
        }
        if args.lifted
        else {}
    )
    common = {"workers": 1, "timeout_s": args.timeout, "memory_mb": args.memory_mb, "limits": limits}
    steps = STEPS.make_scorer(StepsParams(max_step_chars=10**7, **common))
    answer = ANSWER.make_scorer(AnswerParams(**common))
    steps.score([GOOD])
    answer.score([GOOD])
    print(
        f"caps {'lifted' if args.lifted else 'default'}, timeout {args.timeout:g} s, memory {args.memory_mb} MB\n"
    )
    print("| bomb | sympy.steps | s | sympy.answer | s | next normal sample |")
    print("|---|---|---|---|---|---|")
    try:
        for name, bomb in BOMBS.items():
            cells = []
            for scorer, sample in (
                (steps, Sample(prompt="", completion=f"{bomb} = 1")),
                (answer, Sample(prompt="", completion=f"\\boxed{{{bomb}}}", row={"answer": "1"})),
            ):
                start = time.monotonic()
                (result,) = scorer.score([sample])
                elapsed = time.monotonic() - start
                if isinstance(result, SampleError):
                    what = f"SampleError({result.reason})"
                elif isinstance(result, list):
                    reasons = [c["reason"] for s in result for c in s.meta["claims"]] or ["no claim"]
                    what = f"{[s.value for s in result]} {reasons[0][:40]}"
                else:
                    what = str(result)
                cells += [what, f"{elapsed:.2f}"]
            ok = [s.value for s in steps.score([GOOD])[0]] == [1.0, 1.0, 1.0] and answer.score([GOOD]) == [
                1.0
            ]
            print(
                f"| {name} | {cells[0]} | {cells[1]} | {cells[2]} | {cells[3]} | {'ok' if ok else 'WRONG'} |"
            )
        print(f"\nworker restarts: sympy.steps {steps.pool.restarts}, sympy.answer {answer.pool.restarts}")
    finally:
        steps.close()
        answer.close()


if __name__ == "__main__":
    main()
