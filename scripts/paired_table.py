"""The primary statistic of a real-model level from its committed records: per seed the candidate's and the
reference's value, their paired difference, the paired t-test and the sign test (botgrpo_bench.paired).

    .venv/bin/python scripts/paired_table.py docs/results/real-multi23                       # bot-grpo - grpo
    .venv/bin/python scripts/paired_table.py docs/results/real-multi23-shuffled \\
        --reference-folder docs/results/real-multi23 --reference bot-grpo                     # a control

``--key`` names the field of ``runs.jsonl`` (default ``curve_mean``: the held-out metric averaged over the
evaluations after step 0); runs whose status is not ``ok`` are left out and named.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def values(folder: Path, method: str, key: str) -> dict[int, float]:
    out = {}
    for line in (folder / "runs.jsonl").read_text(encoding="utf-8").splitlines():
        run = json.loads(line)
        if run["method"] != method:
            continue
        if run.get("status") != "ok" or run.get(key) is None:
            print(
                f"left out: {folder.name} {method} seed {run['seed']} ({run.get('status')})", file=sys.stderr
            )
            continue
        out[int(run["seed"])] = float(run[key])
    return out


def main() -> int:
    from botgrpo_bench.paired import paired, paired_table

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "folder", type=Path, help="a record folder with runs.jsonl (docs/results/real-<level>)"
    )
    parser.add_argument("--candidate", default="bot-grpo")
    parser.add_argument("--reference", default="grpo")
    parser.add_argument("--reference-folder", type=Path, default=None, help="default: the same folder")
    parser.add_argument("--key", default="curve_mean")
    args = parser.parse_args()
    cand = values(args.folder, args.candidate, args.key)
    ref = values(args.reference_folder or args.folder, args.reference, args.key)
    try:
        result = paired(cand, ref)
    except ValueError as exc:
        print(f"error: {exc} ({args.candidate}: seeds {sorted(cand)}, {args.reference}: {sorted(ref)})")
        return 2
    print(paired_table(result, candidate=args.candidate, reference=args.reference))
    return 0


if __name__ == "__main__":
    sys.exit(main())
