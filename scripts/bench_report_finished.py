"""Write a bench folder's report from the runs already finished in it, without starting any run.

``botgrpo bench`` writes its report (summary.md, regimes.jsonl, plots) at the end of an invocation, over
that invocation's grid. When a grid was stopped part-way and completed by other invocations (other seeds
or methods, into the same folder), this joins every finished run of the grid the ``--set`` overrides
describe and writes the report over them; a run not finished is left out and listed::

    python scripts/bench_report_finished.py benchmarks/bench_regimes.yaml --output runs/bench/regimes-react \\
        --set "include=[react-long]" --set "methods=[bot-grpo, grpo]"

Finished means ``bench_result.json`` with status ok and the fingerprint of the run file the bench file
gives today (:func:`botgrpo_bench.execute.saved_result`), the bench's own reuse rule.

Like ``botgrpo bench``, it refuses (exit code 2, before any warm start) an ``--output`` folder whose report
it would shrink: one holding another bench's report, or runs an earlier command recorded there that these
``--set`` overrides leave out (:func:`botgrpo_bench.bench.check_output_record`, the bench's own guard).
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bench_file")
    parser.add_argument("--output", required=True, type=Path, help="the results folder holding the runs")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="as botgrpo bench")
    parser.add_argument("--quick", action="store_true", help="as botgrpo bench")
    args = parser.parse_args(argv)

    from botgrpo_bench.bench import check_output_record, invocation_history, machine_note, signal_quality_all
    from botgrpo_bench.config import BenchError, load_bench
    from botgrpo_bench.execute import saved_result
    from botgrpo_bench.plan import plan
    from botgrpo_bench.report import write_report
    from botgrpo_bench.warm import warm_starts

    bench = load_bench(args.bench_file, quick=args.quick, overrides=args.set)
    try:  # the report rewritten here must keep every run an earlier command recorded in this folder
        check_output_record(bench, args.output)
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    warm = warm_starts(bench, print)  # cached: no training when the warm starts exist
    jobs = plan(bench, args.output, warm)
    found = [(job, saved_result(job)) for job in jobs]
    kept = [(job, result) for job, result in found if result is not None]
    for job, result in found:
        if result is None:
            print(f"not finished, left out: {job.label}")
    if not kept:
        print("no finished run: nothing to report", file=sys.stderr)
        return 1
    sets = " ".join(f"--set {shlex.quote(s)}" for s in args.set)
    quick = " --quick" if args.quick else ""
    command = (
        f"botgrpo bench {args.bench_file}{quick} --output {args.output} {sets} (report of its finished runs)"
    )
    meta = {
        # the folder's earlier invocations, and this one (it starts no run)
        "history": invocation_history(args.output, command=command, runs_s=0.0, runs_started=0),
        "signal_quality": signal_quality_all(bench, warm, print) if bench.signal_quality_samples else {},
        "bench": bench.name,
        "command": command,
        "quick": args.quick,
        "machine": machine_note(),
        "date": time.strftime("%Y-%m-%d %H:%M %Z"),
        "warm_start_s": 0.0,
        "runs_s": sum(float(r.get("wall_s", 0.0)) for _, r in kept),
        "total_s": 0.0,
        "parallel": bench.parallel,
        "threads_per_run": bench.threads_per_run,
        "warm_starts": {k: str(v) if v else None for k, v in warm.items()},
        "runs_left_out": [job.label for job, result in found if result is None],
    }
    write_report(bench, [j for j, _ in kept], [{**r, "reused": True} for _, r in kept], args.output, meta)
    print(args.output / "summary.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
