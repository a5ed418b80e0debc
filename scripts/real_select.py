"""Apply the real-model bench's stage-1 rule to a task's learning-rate levels (issue 37, benchmarks/bench_real.yaml):
each method takes the rate whose seed-0 run has the higher run mean; ties the lower rate.

    .venv/bin/python scripts/real_select.py react-lr5e-5 react-lr2e-4    # -> benchmarks/results/real_select_react.json

Reads each level's committed records (``docs/results/real-<level>/regimes.jsonl``, written by scripts/real_bench.py)
and the levels' rates from the bench file; prints the choice per method and writes it, with the run means it
compared, to ``benchmarks/results/real_select_<task>.json`` (``<task>``: the levels' common name before ``-lr``).
Exit 1, naming the run, when a level's seed-0 run of a method is missing or unfinished.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks" / "bench_real.yaml"
KEY = "training.learning_rate"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("levels", nargs="+", help="the task's stage-1 levels, e.g. react-lr5e-5 react-lr2e-4")
    parser.add_argument("--methods", nargs="+", default=["bot-grpo", "grpo"])
    parser.add_argument(
        "--records", type=Path, default=ROOT / "docs" / "results", help="folder of real-<level>/"
    )
    parser.add_argument("--output", type=Path, help="default: benchmarks/results/real_select_<task>.json")
    args = parser.parse_args(argv)

    from botgrpo_bench.config import load_bench
    from botgrpo_bench.regimes import read_regimes_jsonl
    from botgrpo_bench.selection import level_values, select_setting

    values = level_values(load_bench(str(BENCH)), args.levels, KEY)
    records = []
    for level in args.levels:
        path = args.records / f"real-{level}" / "regimes.jsonl"
        if not path.is_file():
            print(
                f"real_select: {path} is missing (has scripts/real_bench.py run level {level}?)",
                file=sys.stderr,
            )
            return 1
        records += read_regimes_jsonl(path)
    try:
        chosen = select_setting(records, values, args.methods)
    except ValueError as exc:
        print(f"real_select: {exc}", file=sys.stderr)
        return 1
    task = args.levels[0].split("-lr")[0]
    out = args.output or ROOT / "benchmarks" / "results" / f"real_select_{task}.json"
    result = {"rule": "higher seed-0 run mean per method; ties the lower rate", "key": KEY, "levels": values}
    result["chosen"] = chosen
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    for method, pick in chosen.items():
        means = ", ".join(f"{lv} {m:.3f}" for lv, m in pick["candidates"].items())
        print(f"{method}: {pick['level']} ({KEY} {pick['value']:g}); seed-0 run means: {means}")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
