"""Throughput of the jsx signals: samples/s for 512 completions of ~2 KB, against esbuild alone.

    python scripts/benchmark.py [--n 512] [--repeats 5] [--workload 2kb|whole|cut|all] [--render-n 64]
        [--json results/throughput-N.json]

Three workloads, each completion in a fence with a unique first line, and unique per row (the parse
cache, which lets jsx.syntax and jsx.rules share a parse of the same completion within a batch as in a
mixture, never carries one row's parses into another, nor the warm-up's):

- ``2kb``: the issue's workload: whole corpus components of 1,000-3,500 characters and their mutants
  (mean ~2.1 KB; ~22% do not parse);
- ``whole``: whole corpus components of every size up to 8 KB and their mutants (mean ~2.6 KB; ~19%
  broken): larger completions;
- ``cut``: corpus components and their mutants cut or padded to 2,000 characters, so nearly all
  (~94%) do not parse and the blame repairs run on each: the worst case.

Rows: esbuild alone (the baseline: the Node worker's compile requests of the extracted code, the
extraction included), then jsx.compiles, jsx.syntax, jsx.rules and all three together, in-process
(workers=0) and through the worker pool (workers=2). "All three" is measured twice: one signal after the other, and in the order
botgrpo's mixture runs them (``jsx.compiles`` prefetched: its esbuild requests run on a thread while
the other two score, then it is collected). Each figure is the median of ``--repeats`` runs (the
shared 2-core machine varies by up to 2x between runs); ratios are against the baseline measured in
the same run. Then jsx.renders on ``--render-n`` whole corpus components (one sandboxed Node process
per sample, 2 at a time; 0 skips it), reported apart: it is another order of magnitude.
``--json`` also writes every figure with the run's settings, machine and commit (the README's
tables come from the files in ``scripts/results/``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from botgrpo_core.signals import Sample
from botgrpo_jsx import nodeenv
from botgrpo_jsx.execution import close_pools
from botgrpo_jsx.extract import extract_code
from botgrpo_jsx.node import NodeWorker
from botgrpo_jsx.params import CompilesParams, RendersParams, RulesParams, SyntaxParams
from botgrpo_jsx.plugin import make_compiles, make_renders, make_rules, make_syntax
from botgrpo_jsx.treesitter import parse

# the mutations are test support (tests/jsx_testing), not part of the shipped package
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from jsx_testing.mutations import KINDS, mutate

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "data" / "components"
WORKLOADS = ("2kb", "whole", "cut")


def completions(n: int, seed: int = 0, workload: str = "cut") -> list[str]:
    rng = random.Random(seed)
    codes = []
    for path in sorted(CORPUS.iterdir()):
        code = path.read_text()
        if workload == "whole" and len(code) > 8000:
            continue  # one 145 KB bundle is not a completion
        if workload == "2kb" and not 1000 <= len(code) <= 3500:
            continue
        codes.append(code)
        codes += [m.code for m in mutate(code, rng.choice(KINDS), rng, 1)]
    out = []
    while len(out) < n:
        code = rng.choice(codes)
        if workload == "cut":
            code = (code * (1 + 2000 // max(1, len(code))))[:2000] if len(code) < 2000 else code[:2000]
        # a unique first line: no two completions are the same text (no cache hit across samples)
        out.append(f"Here is the component:\n```tsx\n// sample {len(out)}\n{code}\n```\n")
    return out


def rate(fn: Callable[[], object], n: int, warm: Callable[[], object], repeats: int) -> float:
    """Median samples/s of ``repeats`` calls of ``fn`` (each gets fresh completions), after ``warm``."""
    warm()  # warm-up: pools started, grammars loaded, Node worker running
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return n / statistics.median(times)


class Report:
    """The printed tables, and the same figures kept for ``--json``."""

    def __init__(self) -> None:
        self.workloads: dict[str, dict[str, float]] = {}
        self.rows: list[dict[str, object]] = []

    def row(self, workload: str, configuration: str, samples_per_s: float, baseline: float) -> None:
        print(f"| {configuration} | {samples_per_s:.0f} | {samples_per_s / baseline:.2f} |")
        self.rows.append(
            {
                "workload": workload,
                "configuration": configuration,
                "samples_per_s": round(samples_per_s, 1),
                "vs_baseline": round(samples_per_s / baseline, 3),
            }
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=512)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--workload", choices=(*WORKLOADS, "all"), default="all")
    ap.add_argument("--render-n", type=int, default=64)
    ap.add_argument("--json", type=Path, help="also write every figure to this file")
    args = ap.parse_args()
    node = nodeenv.find_node()
    modules = nodeenv.node_modules()
    if node is None or modules is None:
        raise SystemExit(f"benchmark needs esbuild: {nodeenv.unavailable_reason()}")
    report = Report()
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    for workload in WORKLOADS if args.workload == "all" else (args.workload,):
        table(report, workload, completions(args.n, workload=workload), node.node, modules, args.repeats)
    close_pools()
    renders = renders_row(args.render_n) if args.render_n else None
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        meta = {
            "command": "python scripts/benchmark.py " + " ".join(sys.argv[1:]),
            "started": started,
            "commit": _commit(),
            "machine": f"{os.cpu_count()} CPUs ({platform.processor() or platform.machine()}), "
            f"Python {platform.python_version()}, load average at the end {os.getloadavg()}",
            "n": args.n,
            "repeats": args.repeats,
            "workloads": report.workloads,
            "rows": report.rows,
            "renders": renders,
        }
        args.json.write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")


def _commit() -> str | None:
    """The checkout's commit (``None`` outside a git checkout)."""
    try:
        out = subprocess.run(
            ["git", "describe", "--always", "--dirty"], capture_output=True, text=True, cwd=CORPUS, timeout=10
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def table(report: Report, workload: str, texts: list[str], node: str, modules: Path, repeats: int) -> None:
    """One workload's table: the baseline, each signal, all three (in turn, and prefetched)."""
    rows = iter(range(1 << 30))

    def fresh(n: int | None = None) -> list[Sample]:
        """The completions with a first line of their own: no parse of an earlier row is reused."""
        row = next(rows)
        return [
            Sample("Write a component", t.replace("// sample", f"// row {row} sample")) for t in texts[:n]
        ]

    broken = sum(parse(extract_code(t).code, 5.0).root.has_error for t in texts)  # type: ignore[union-attr]
    mean = sum(map(len, texts)) / len(texts)
    print(f"\nworkload {workload}: {len(texts)} completions, mean {mean:.0f} chars, {broken} do not parse")
    report.workloads[workload] = {
        "completions": len(texts),
        "mean_chars": round(mean, 1),
        "do_not_parse": broken,
    }
    with NodeWorker(node, modules) as worker:

        def compile_all() -> None:
            codes = [extract_code(s.completion).code for s in fresh()]  # type: ignore[union-attr]
            worker.request([{"op": "compile", "code": code, "loader": "tsx"} for code in codes])

        base = rate(compile_all, len(texts), compile_all, repeats)
    print("| configuration | samples/s | vs esbuild alone |\n| --- | --- | --- |")
    report.row(workload, "esbuild alone, one request per snippet (baseline)", base, base)
    for workers in (0, 2):
        signal_rows(report, workload, workers, fresh, len(texts), base, repeats)


def signal_rows(
    report: Report,
    workload: str,
    workers: int,
    fresh: Callable[..., list[Sample]],
    n: int,
    base: float,
    repeats: int,
) -> None:
    """The rows of one worker setting: each signal, then all three in turn and as the mixture runs them."""
    compiles = make_compiles(CompilesParams(workers=workers))
    syntax = make_syntax(SyntaxParams(workers=workers))
    rules = make_rules(RulesParams(workers=workers))
    label = "in-process" if workers == 0 else f"pool of {workers}"
    for name, scorer in (("jsx.compiles", compiles), ("jsx.syntax", syntax), ("jsx.rules", rules)):
        r = rate(lambda s=scorer: s.score(fresh()), n, lambda s=scorer: s.score(fresh(64)), repeats)
        report.row(workload, f"{name}, {label}", r, base)

    def in_turn(batch: list[Sample]) -> None:
        for scorer in (compiles, syntax, rules):
            scorer.score(batch)

    def as_mixture(batch: list[Sample]) -> None:
        compiles.prefetch(batch)  # the mixture's order: prefetching signals start, and score last
        syntax.score(batch)
        rules.score(batch)
        compiles.score(batch)

    for how, run in (("one after the other", in_turn), ("as the mixture runs them", as_mixture)):
        r = rate(lambda f=run: f(fresh()), n, lambda f=run: f(fresh(64)), repeats)
        report.row(workload, f"all three, {label}, {how}", r, base)
    compiles.close()


def renders_row(count: int) -> dict[str, float]:
    """jsx.renders on whole corpus components (cut ones rarely compile, and what does not is not rendered)."""
    renders = make_renders(RendersParams(parallel=2))
    files = sorted(CORPUS.iterdir())
    subset = [
        Sample("Write a component", f"```tsx\n// sample {i}\n{files[i % len(files)].read_text()}\n```\n")
        for i in range(count)
    ]
    renders.score(subset[:2])
    t = time.perf_counter()
    verdicts = renders.score(subset)
    r = len(subset) / (time.perf_counter() - t)
    print(
        f"\n| jsx.renders, 2 processes at once ({len(subset)} samples, {sum(v == 1.0 for v in verdicts)} render) | {r:.1f} |"
    )
    renders.close()
    return {"samples": len(subset), "render": sum(v == 1.0 for v in verdicts), "samples_per_s": round(r, 2)}


if __name__ == "__main__":
    main()
