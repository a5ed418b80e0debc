"""Throughput of the jsx signals: samples/s for 512 completions of ~2 KB, against esbuild alone.

    python scripts/benchmark.py [--n 512] [--render-n 64]

Completions are corpus components (valid) and their mutants, cut or padded to ~2 KB, in fences,
each with a unique first line, and unique per row: the parse cache, which lets jsx.syntax and
jsx.rules share a parse of the same completion within a batch (as in a mixture), never carries one
row's parses into another (nor the warm-up's).
Rows: esbuild alone (the baseline: the Node worker's compile requests, no extraction), then
jsx.compiles, jsx.syntax, jsx.rules and all three together, in-process (workers=0) and through the
worker pool (workers=2). Ratios are against the baseline measured in the same run. Then
jsx.renders on ``--render-n`` whole corpus components (one sandboxed Node process per sample, 2 at
a time; 0 skips it), reported apart: it is another order of magnitude.
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

from botgrpo_core.signals import Sample
from botgrpo_jsx import nodeenv
from botgrpo_jsx.execution import close_pools
from botgrpo_jsx.mutations import KINDS, mutate
from botgrpo_jsx.node import NodeWorker
from botgrpo_jsx.params import CompilesParams, RendersParams, RulesParams, SyntaxParams
from botgrpo_jsx.plugin import make_compiles, make_renders, make_rules, make_syntax

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "data" / "components"


def completions(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    codes = []
    for path in sorted(CORPUS.iterdir()):
        code = path.read_text()
        codes.append(code)
        codes += [m.code for m in mutate(code, rng.choice(KINDS), rng, 1)]
    out = []
    while len(out) < n:
        code = rng.choice(codes)
        code = (code * (1 + 2000 // max(1, len(code))))[:2000] if len(code) < 2000 else code[:2000]
        # a unique first line: no two completions are the same text (no cache hit across samples)
        out.append(f"Here is the component:\n```tsx\n// sample {len(out)}\n{code}\n```\n")
    return out


def rate(fn, n: int, warm=None) -> float:
    (warm or fn)()  # warm-up: pools started, grammars loaded, Node worker running
    t = time.perf_counter()
    fn()
    return n / (time.perf_counter() - t)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=512)
    ap.add_argument("--render-n", type=int, default=64)
    args = ap.parse_args()
    texts = completions(args.n)
    rows = iter(range(1 << 30))

    def fresh(n: int | None = None) -> list[Sample]:
        """The completions with a first line of their own: no parse of an earlier row is reused."""
        row = next(rows)
        return [
            Sample("Write a component", t.replace("// sample", f"// row {row} sample")) for t in texts[:n]
        ]

    print(f"{len(texts)} completions, mean {sum(map(len, texts)) / len(texts):.0f} chars")
    node = nodeenv.find_node()
    modules = nodeenv.node_modules()
    if node is None or modules is None:
        raise SystemExit(f"benchmark needs esbuild: {nodeenv.unavailable_reason()}")
    with NodeWorker(node.node, modules) as worker:
        requests = [{"op": "compile", "code": t, "loader": "tsx"} for t in texts]
        base = rate(lambda: worker.request(requests), len(texts))
    print("| configuration | samples/s | vs esbuild alone |\n| --- | --- | --- |")
    print(f"| esbuild alone (baseline) | {base:.0f} | 1.00 |")
    for workers in (0, 2):
        scorers = {
            "jsx.compiles": make_compiles(CompilesParams(workers=workers)),
            "jsx.syntax": make_syntax(SyntaxParams(workers=workers)),
            "jsx.rules": make_rules(RulesParams(workers=workers)),
        }
        label = "in-process" if workers == 0 else f"pool of {workers}"
        for name, scorer in scorers.items():
            batch, warm = fresh(), fresh(64)
            r = rate(lambda s=scorer, b=batch: s.score(b), len(batch), lambda s=scorer, w=warm: s.score(w))
            print(f"| {name}, {label} | {r:.0f} | {r / base:.2f} |")
        batch, warm = fresh(), fresh(64)
        r = rate(
            lambda sc=scorers, b=batch: [s.score(b) for s in sc.values()],
            len(batch),
            lambda sc=scorers, w=warm: [s.score(w) for s in sc.values()],
        )
        print(f"| all three, {label} | {r:.0f} | {r / base:.2f} |")
    close_pools()
    if args.render_n:
        renders = make_renders(RendersParams(parallel=2))
        # whole corpus components (cut ones rarely compile, and what does not compile is not rendered)
        files = sorted(CORPUS.iterdir())
        subset = [
            Sample("Write a component", f"```tsx\n// sample {i}\n{files[i % len(files)].read_text()}\n```\n")
            for i in range(args.render_n)
        ]
        renders.score(subset[:2])
        t = time.perf_counter()
        verdicts = renders.score(subset)
        r = len(subset) / (time.perf_counter() - t)
        print(
            f"| jsx.renders, 2 processes at once ({len(subset)} samples, {sum(v == 1.0 for v in verdicts)} render) | {r:.1f} | {r / base:.3f} |"
        )
        renders.close()


if __name__ == "__main__":
    main()
