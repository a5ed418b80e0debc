"""Kill a real ``botgrpo train`` at every file operation of a run (or a seeded sample), resume, compare.

For each kill point: SIGKILL the run there, ``--resume`` it (that resume itself killed at a point drawn
from a seeded RNG, half of the time), resume to the end, and compare the folder with an uninterrupted run
file by file (tests/kill_points.differences). Prints one line per point and a JSON summary.

    .venv/bin/python scripts/kill_resume_sweep.py            # every op of the reference run
    .venv/bin/python scripts/kill_resume_sweep.py --points 10 --seed 1
"""

from __future__ import annotations

import argparse
import json
import random
import signal
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from kill_points import TrainServer, differences, finish, run_file


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--points", type=int, default=0, help="a seeded sample of this many ops (0: every op)"
    )
    parser.add_argument("--seed", type=int, default=26)
    parser.add_argument("--json", type=Path, help="write the summary here too")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    start = time.time()
    failures, cpu, outcomes = [], 0.0, Counter()
    with tempfile.TemporaryDirectory(prefix="kill-sweep-") as tmp, TrainServer() as server:
        reference = server.train(run_file(Path(tmp) / "reference"))
        assert reference.code == 0, reference
        ops = reference.ops
        points = sorted(rng.sample(range(len(ops)), args.points)) if args.points else list(range(len(ops)))
        for n, point in enumerate(points):
            run = run_file(Path(tmp) / f"point{n}")
            killed = server.train(run, kill=point)
            second = rng.randrange(len(ops)) if rng.random() < 0.5 else None
            try:
                results = finish(server, run, kill_resume=second)
                problems = differences(run.parent / "run", Path(tmp) / "reference" / "run")
            except AssertionError as exc:
                results, problems = [], [str(exc)[:500]]
            cpu += killed.cpu_s + sum(r.cpu_s for r in results)
            killed_again = sum(r.code == -signal.SIGKILL for r in results)
            outcomes["equal" if not problems else "DIFFERENT"] += 1
            print(
                f"{point:3d} {ops[point]:<48} killed={killed.code} then {len(results)} run(s)"
                f"{' (one killed again)' if killed_again else ''}: {problems or 'equal'}",
                flush=True,
            )
            if problems:
                failures.append({"op": point, "label": ops[point], "problems": problems})
    summary = {
        "reference_ops": len(ops),
        "points": len(points),
        "outcomes": dict(outcomes),
        "failures": failures,
        "cpu_s_children": round(cpu, 1),
        "wall_s": round(time.time() - start, 1),
    }
    print(json.dumps(summary, indent=2))
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2) + "\n")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
