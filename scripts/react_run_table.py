"""The per-run table of docs/results.md's React section, from each run's metrics and summary.

    python scripts/react_run_table.py "5. words + whitespace=docs/results/regimes-react3/metrics" \
        "6. centred=docs/results/regimes-react3-centred/metrics"

Each argument is ``SETTINGS=FOLDER``; the folder holds ``<method>_seed<k>.metrics.jsonl.gz`` (a run's
``metrics.jsonl``) and ``<method>_seed<k>.summary.json`` (its ``summary.json``), as
``--collect RUN_ROOT`` writes them from a bench folder's ``runs/<task>/<method>/seed<k>``.
Columns: the held-out evaluations (every 5 steps; run mean and best leave out step 0), the first
evaluation with a trivial share >= 0.5, the training batches' outcome and local-signal means over the
first and last 20 steps (1-20 and 81-100 in a 100-step run), the share of rollouts clipped at the length
cap over the last 20 steps, and the run's wall time (``summary.json``, evaluations included).
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import statistics
import sys
from pathlib import Path

HEADER = (
    "| settings | method | seed | run mean spec | best spec | final spec | run mean compile | best compile | "
    "final compile | final trivial | trivial >= 0.5 from step | train outcome, first 20 -> last 20 steps | "
    "local mean, first 20 -> last 20 steps | clipped, last 20 steps | run min |"
)
OUTCOME, LOCAL = "signals/bench.react_spec/mean", "signals/bench.react_sections/mean"
CLIPPED = "completions/clipped_ratio"


def row(settings: str, method: str, seed: int, metrics: list[dict], wall_s: float) -> str:
    """One table row of a run's metrics records."""
    ev = [r for r in metrics if r.get("kind") == "eval"]
    tr = [r for r in metrics if r.get("kind") == "train"]
    spec = [r["eval/sampled/spec_rate"] for r in ev]
    comp = [r["eval/sampled/compile_rate"] for r in ev]
    trivial = [r["eval/sampled/trivial_rate"] for r in ev]
    first = next((r["step"] for r in ev if r["eval/sampled/trivial_rate"] >= 0.5), "-")
    outcome = [r[OUTCOME] for r in tr]
    clipped = f"{statistics.fmean(r[CLIPPED] for r in tr[-20:]):.2f}" if tr and CLIPPED in tr[-1] else "-"
    others = [k for k in (tr[0] if tr else {}) if k.endswith("/mean") and k.startswith("signals/")]
    others = [k for k in others if k not in (OUTCOME, LOCAL, "signals/bench.react_trivial/mean")]
    local = "(other signals)" if others else "(beta 0)"
    if tr and LOCAL in tr[0]:
        local = f"{statistics.fmean(r[LOCAL] for r in tr[:20]):+.3f} -> {statistics.fmean(r[LOCAL] for r in tr[-20:]):+.3f}"
    return (
        f"| {settings} | {method} | {seed} | {statistics.fmean(spec[1:]):.4f} | {max(spec[1:]):.3f} | {spec[-1]:.3f} | "
        f"{statistics.fmean(comp[1:]):.3f} | {max(comp[1:]):.3f} | {comp[-1]:.3f} | {trivial[-1]:.3f} | {first} | "
        f"{statistics.fmean(outcome[:20]):.3f} -> {statistics.fmean(outcome[-20:]):.3f} | {local} | {clipped} | "
        f"{wall_s / 60:.0f} |"
    )


def table(specs: list[str]) -> str:
    """The markdown table of every run in the ``SETTINGS=FOLDER`` specs, in order (method, then seed)."""
    from botgrpo_bench.runs import read_jsonl

    lines = [HEADER, "|" + "---|" * (HEADER.count("|") - 1)]
    for spec in specs:
        settings, _, folder = spec.rpartition("=")
        for path in sorted(Path(folder).glob("*.metrics.jsonl.gz")):
            method, _, seed = path.name.removesuffix(".metrics.jsonl.gz").rpartition("_seed")
            metrics = read_jsonl(path)
            summary = json.loads(
                (path.parent / f"{method}_seed{seed}.summary.json").read_text(encoding="utf-8")
            )
            lines.append(row(settings, method, int(seed), metrics, float(summary["wall_s"])))
    return "\n".join(lines)


def collect(run_root: Path, out: Path) -> None:
    """Copy ``run_root/<method>/seed<k>``'s metrics (gzipped) and summary into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    for run in sorted(run_root.glob("*/seed*")):
        method, seed = run.parent.name, run.name.removeprefix("seed")
        target = out / f"{method}_seed{seed}.metrics.jsonl.gz"
        # mtime 0: the same bytes on every collect
        with (
            (run / "metrics.jsonl").open("rb") as src,
            open(target, "wb") as raw,
            gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as dst,
        ):
            shutil.copyfileobj(src, dst)
        shutil.copy(run / "summary.json", out / f"{method}_seed{seed}.summary.json")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("specs", nargs="*", help="SETTINGS=FOLDER, in table order")
    parser.add_argument(
        "--collect", nargs=2, metavar=("RUN_ROOT", "OUT"), help="copy a bench task's runs into OUT"
    )
    args = parser.parse_args(argv)
    if args.collect:
        collect(Path(args.collect[0]), Path(args.collect[1]))
    if args.specs:
        print(table(args.specs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
