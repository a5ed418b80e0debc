"""Turn a bench's runs into ``results.jsonl``, ``runs.jsonl``, ``summary.md``, ``meta.json`` and PNG plots.

The numbers are :mod:`botgrpo_bench.aggregate`'s, the page :mod:`botgrpo_bench.summary`'s, the plots
:mod:`botgrpo_bench.plots`'. ``python -m botgrpo_bench.report --doc DOC.md [--preface P.md] RESULTS_DIR...``
writes a docs page from results folders (their summaries, with the plots copied next to the page).
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from botgrpo_bench.aggregate import collect, ratio_summary
from botgrpo_bench.plots import make_plots
from botgrpo_bench.summary import render_summary

if TYPE_CHECKING:
    from botgrpo_bench.config import BenchFile
    from botgrpo_bench.plan import Job


def write_report(
    bench: BenchFile,
    jobs: Sequence[Job],
    results: Sequence[dict[str, Any]],
    out_dir: Path,
    meta: dict[str, Any],
) -> dict[str, Any]:
    """Write results.jsonl, runs.jsonl, summary.md, meta.json and the plots; returns the summary numbers."""
    eval_rows, run_rows = collect(bench, jobs, results)
    for name, rows in (("results.jsonl", eval_rows), ("runs.jsonl", run_rows)):
        with open(out_dir / name, "w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r, default=str) + "\n")
    warm = {}
    for name, path in (meta.get("warm_starts") or {}).items():
        if path and (Path(path) / "warm_start.json").is_file():
            warm[name] = json.loads((Path(path) / "warm_start.json").read_text())
    plots = make_plots(bench, eval_rows, run_rows, out_dir)
    numbers = {task: ratio_summary(run_rows, task, bench.reference, bench.candidate) for task in bench.tasks}
    text = render_summary(bench, run_rows, numbers, warm, plots, meta)
    (out_dir / "summary.md").write_text(text, encoding="utf-8")
    (out_dir / "meta.json").write_text(json.dumps(meta, indent=2, default=str) + "\n", encoding="utf-8")
    return {"ratios": numbers, "plots": plots}


def write_doc(results_dirs: Sequence[Path], doc: Path, *, preface: str = "") -> Path:
    """Write ``doc``: ``preface``, then each results folder's summary (headings one level down) with its
    plots copied to ``<doc folder>/<doc stem>/<results folder name>/``."""
    doc = Path(doc)
    parts = [preface.rstrip() + "\n"] if preface else []
    for results_dir in map(Path, results_dirs):
        text = (results_dir / "summary.md").read_text(encoding="utf-8")
        assets = doc.parent / doc.stem / results_dir.name
        assets.mkdir(parents=True, exist_ok=True)
        for png in results_dir.glob("*.png"):
            shutil.copy2(png, assets / png.name)
            text = text.replace(f"]({png.name})", f"]({doc.stem}/{results_dir.name}/{png.name})")
        text = "\n".join("#" + line if line.startswith("#") else line for line in text.splitlines())
        parts.append(text.rstrip() + "\n")
    doc.write_text("\n".join(parts), encoding="utf-8")
    return doc


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m botgrpo_bench.report --doc docs/results.md [--preface P.md] RESULTS_DIR...``."""
    import argparse

    parser = argparse.ArgumentParser(description="write a docs page from bench results folders")
    parser.add_argument("results_dirs", nargs="+", type=Path, help="folders written by `botgrpo bench`")
    parser.add_argument("--doc", required=True, type=Path, help="the markdown page to write")
    parser.add_argument("--preface", type=Path, help="markdown put before the generated sections")
    args = parser.parse_args(argv)
    preface = args.preface.read_text(encoding="utf-8") if args.preface else ""
    print(write_doc(args.results_dirs, args.doc, preface=preface))
    return 0


if __name__ == "__main__":
    sys.exit(main())
