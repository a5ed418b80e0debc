"""Worker-pool overhead per item: items pipelined to each worker (the default) against one at a time.

Each item spins for a fixed time in the worker (no sleep: a busy CPU, like a parse). For each item
time the script runs the same 1,024 items through ``WorkerPool(workers=2)`` with ``pipeline_depth=1``
(the worker waits for this process's answer to each item before it gets the next) and with the
default depth (the next item already waits in its pipe), interleaved, median of ``--repeats``. The
overhead is the wall time over the ideal ``items x time / workers``, per item. On a 2-core VM one
round trip to a worker costs ~0.4 ms, about what a jsx.rules item costs to run.

Run: ``python benchmarks/pool.py [--items 1024 --repeats 5] [--json benchmarks/results/pool.json]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from botgrpo_core.rewards.pool import PIPELINE_DEPTH, WorkerPool


def spin(seconds: float) -> float:
    """Keep a CPU busy for ``seconds`` (module level: workers import it)."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass
    return seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=1024)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json", type=Path, help="also write the figures (and each timing) to this file")
    args = ap.parse_args()
    rows = []
    workers = 2
    pools = {
        depth: WorkerPool(spin, workers=workers, timeout_s=10, memory_mb=None, pipeline_depth=depth)
        for depth in (1, PIPELINE_DEPTH)
    }
    print(f"{args.items} items, {workers} workers; overhead per item over items x time / workers")
    print("| item time | depth 1 | depth 2 (default) | depth 2 / depth 1 (wall) |\n| --- | --- | --- | --- |")
    try:
        for pool in pools.values():
            pool.map([0.001] * 8)  # start the workers
        for ms in (0.2, 0.7, 1.4):
            items = [ms / 1000] * args.items
            walls: dict[int, list[float]] = {depth: [] for depth in pools}
            for _ in range(args.repeats):
                for depth, pool in pools.items():
                    start = time.perf_counter()
                    pool.map(items)
                    walls[depth].append(time.perf_counter() - start)
            ideal = args.items * ms / 1000 / workers
            wall = {depth: statistics.median(w) for depth, w in walls.items()}
            over = {depth: (w - ideal) / args.items * workers * 1e6 for depth, w in wall.items()}
            print(
                f"| {ms} ms | {over[1]:.0f} us | {over[PIPELINE_DEPTH]:.0f} us | "
                f"{wall[PIPELINE_DEPTH] / wall[1]:.2f} |"
            )
            rows.append(
                {
                    "item_ms": ms,
                    "overhead_us": {str(d): round(o, 1) for d, o in over.items()},
                    "wall_s": {str(d): w for d, w in walls.items()},
                }
            )
    finally:
        for pool in pools.values():
            pool.close()
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        meta = {
            "items": args.items,
            "repeats": args.repeats,
            "workers": workers,
            "date": started,
            "rows": rows,
        }
        args.json.write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
