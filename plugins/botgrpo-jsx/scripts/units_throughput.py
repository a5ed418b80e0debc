"""CPU cost of the tree-sitter jsx signals per sample, the unit analysis included (issue 23 part 1).

    python scripts/units_throughput.py [--n 512] [--repeats 3] [--pages 400]

Samples per CPU second (``time.process_time``: the shared machine's wall clock varies with its load)
of jsx.syntax + jsx.rules, of jsx.units alone, and of jsx.units after them (sharing their parses, as
in a mixture), in-process (``workers: 0``), each run on fresh parses (the shared parse cache is
emptied), median of ``--repeats``. Workloads: the ``2kb`` and ``cut`` completions of
``scripts/benchmark.py`` (corpus components and mutants; cut: nearly all broken), and the React
task's long-level demonstration pages of ``scripts/audit_pages.py`` (88% broken, most with 2+ errors).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from botgrpo_core.signals import Sample
from botgrpo_jsx import analysis
from botgrpo_jsx.params import RulesParams, SyntaxParams, UnitsParams
from botgrpo_jsx.plugin import make_rules, make_syntax, make_units

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchmark import completions


def per_cpu_s(
    samples: list[Sample], run: Callable[[list[Sample]], object], repeats: int, fresh: bool
) -> float:
    rates = []
    for _ in range(repeats):
        if fresh:
            analysis._recent.clear()
        t = time.process_time()
        run(samples)
        rates.append(len(samples) / (time.process_time() - t))
    return statistics.median(rates)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=512)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--pages", type=int, default=400)
    args = ap.parse_args()
    syntax, rules = make_syntax(SyntaxParams(workers=0)), make_rules(RulesParams(workers=0))
    units = make_units(UnitsParams(workers=0))
    workloads = {w: [Sample("", c) for c in completions(args.n, workload=w)] for w in ("2kb", "cut")}
    if args.pages:
        from audit_pages import demo_pages

        pages = demo_pages(args.pages, 0, 4, 0.5)
        workloads["pages"] = [Sample(p["row"]["prompt"], p["text"], row=dict(p["row"])) for p in pages]
    units.score(workloads["2kb"][:8])  # grammars loaded
    print("| workload | samples | syntax + rules | units alone | units after syntax + rules |")
    print("| --- | --- | --- | --- | --- |")
    for name, samples in workloads.items():
        both = per_cpu_s(samples, lambda s: (syntax.score(s), rules.score(s)), args.repeats, True)
        alone = per_cpu_s(samples, units.score, args.repeats, True)
        analysis._recent.clear()
        syntax.score(samples)
        rules.score(samples)
        after = per_cpu_s(samples, units.score, 1, False)
        print(f"| {name} | {len(samples)} | {both:.0f} | {alone:.0f} | {after:.0f} |")


if __name__ == "__main__":
    main()
