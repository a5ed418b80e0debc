"""Turn a bench's runs into ``results.jsonl``, ``runs.jsonl``, ``summary.md``, ``meta.json`` and PNG plots
(a regime bench, one with levelled tasks, also ``regimes.jsonl`` and ``regimes_speedup.png``).

The numbers are :mod:`botgrpo_bench.aggregate`'s, the page :mod:`botgrpo_bench.summary`'s, the plots
:mod:`botgrpo_bench.plots`', the regime profile :mod:`botgrpo_bench.regimes`'.
``python -m botgrpo_bench.report --doc DOC.md [--preface P.md] [--regimes OUT.jsonl] RESULTS_DIR...``
writes a docs page from results folders (their summaries, with the plots copied next to the page); with
``--regimes``, the folders' ``regimes.jsonl`` are joined into ``OUT.jsonl`` and the page opens with one
regime section over all of them.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from botgrpo_bench.aggregate import collect, ratio_summary
from botgrpo_bench.plots import make_plots
from botgrpo_bench.summary import render_summary
from botgrpo_bench.target_provenance import bench_file_of

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
    """Write results.jsonl, runs.jsonl, summary.md, meta.json and the plots (a regime bench: also
    regimes.jsonl and regimes_speedup.png); returns the summary numbers (``regimes``: the speed-up profile
    of :func:`botgrpo_bench.regimes.speedup_profile`, None without levelled tasks)."""
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
    section, profile = "", None
    if any(task.level is not None for task in bench.tasks.values()):
        section, profile = _regime_files(bench, run_rows, warm, plots, out_dir, bench_file_of(meta))
        meta = {**meta, "regimes": regime_settings(bench)}
    text = render_summary(bench, run_rows, numbers, warm, plots, meta, section)
    (out_dir / "summary.md").write_text(text, encoding="utf-8")
    (out_dir / "meta.json").write_text(json.dumps(meta, indent=2, default=str) + "\n", encoding="utf-8")
    return {"ratios": numbers, "plots": plots, "regimes": profile}


def regime_settings(bench: BenchFile) -> dict[str, Any]:
    """What a results folder's ``meta.json`` keeps of a regime bench, for the combined docs section."""
    return {
        "profile_fractions": list(bench.profile_fractions),
        "reference": bench.reference,
        "candidate": bench.candidate,
    }


def _regime_files(
    bench: BenchFile,
    run_rows: Sequence[dict[str, Any]],
    warm: dict[str, dict[str, Any]],
    plots: dict[str, str],
    out_dir: Path,
    bench_file: str | None = None,
) -> tuple[str, dict[str, Any]]:
    """``regimes.jsonl`` and, with more than one level, ``regimes_speedup.png`` in ``out_dir``; returns the
    regime section and the profile. ``bench_file``: the file ``bench`` was loaded from, whose ``target:``
    lines' commits the records keep (None: unknown)."""
    from botgrpo_bench.regimes import regime_records, speedup_profile, write_regimes_jsonl
    from botgrpo_bench.regimes_page import plot_speedup, render_regime_section

    records = regime_records(bench, run_rows, warm, bench_file)
    write_regimes_jsonl(records, out_dir / "regimes.jsonl")
    profile = speedup_profile(records, bench.profile_fractions, bench.reference, bench.candidate)
    plot = None
    if len(profile["levels"]) > 1:  # one level (make demo) is one dot: its table and curves say it all
        plot_speedup(profile, out_dir / "regimes_speedup.png")
        plot = plots["regimes_speedup"] = "regimes_speedup.png"
    curves = {name: plots[f"curves_{name}"] for name in bench.tasks if f"curves_{name}" in plots}
    return render_regime_section(profile, plot=plot, curves=curves), profile


def combined_regimes(
    results_dirs: Sequence[Path], doc: Path, out_jsonl: Path, assets: Path | None = None
) -> str:
    """Join the folders' ``regimes.jsonl`` into ``out_jsonl``; returns the regime section over all of them,
    its speed-up plot written to ``<assets>/regimes_speedup.png`` (``assets``: :func:`write_doc`'s, default
    ``<doc folder>/<doc stem>``) and each level's curves plot linked where :func:`write_doc` copies it.
    ``ValueError`` when no folder has a ``regimes.jsonl``."""
    from botgrpo_bench.config import BenchFile
    from botgrpo_bench.regimes import read_regimes_jsonl, speedup_profile, write_regimes_jsonl
    from botgrpo_bench.regimes_page import plot_speedup, render_regime_section

    doc = Path(doc)
    assets = Path(assets) if assets is not None else doc.parent / doc.stem
    prefix = _link_prefix(doc, assets)
    records: list[dict[str, Any]] = []
    curves: dict[str, str] = {}
    settings: dict[str, Any] = {}
    found = [Path(d) for d in results_dirs if (Path(d) / "regimes.jsonl").is_file()]
    if not found:
        raise ValueError(f"--regimes: no regimes.jsonl in {', '.join(map(str, results_dirs))}")
    for results_dir in found:
        folder = read_regimes_jsonl(results_dir / "regimes.jsonl")
        records += folder
        meta_path = results_dir / "meta.json"
        if not settings and meta_path.is_file():
            settings = json.loads(meta_path.read_text(encoding="utf-8")).get("regimes") or {}
        for name in dict.fromkeys(r.get("bench_task") for r in folder):
            if name and (results_dir / f"curves_{name}.png").is_file():  # the first folder with the level
                curves.setdefault(name, f"{prefix}{results_dir.name}/curves_{name}.png")
    write_regimes_jsonl(records, out_jsonl)
    defaults = BenchFile.model_fields
    profile = speedup_profile(
        records,
        settings.get("profile_fractions") or defaults["profile_fractions"].default,
        settings.get("reference") or defaults["reference"].default,
        settings.get("candidate") or defaults["candidate"].default,
    )
    plot_speedup(profile, assets / "regimes_speedup.png")
    return render_regime_section(profile, plot=f"{prefix}regimes_speedup.png", curves=curves)


def _link_prefix(doc: Path, assets: Path) -> str:
    """How ``doc`` links into ``assets``: ``"<doc stem>/"`` for the default, ``""`` for the page's own folder."""
    rel = Path(os.path.relpath(assets, doc.parent)).as_posix()
    return "" if rel == "." else f"{rel}/"


#: what :func:`write_doc` copies of a results folder beside its plots: enough to write the page again
RECORD_FILES = ("summary.md", "meta.json", "regimes.jsonl", "results.jsonl", "runs.jsonl")


def write_doc(
    results_dirs: Sequence[Path],
    doc: Path,
    *,
    preface: str = "",
    regimes: Path | None = None,
    assets: Path | None = None,
    regime_dirs: Sequence[Path] | None = None,
    drop_regimes: bool | None = None,
) -> Path:
    """Write ``doc``: ``preface``, with ``regimes`` the combined regime section (:func:`combined_regimes`
    over ``regime_dirs``, default ``results_dirs``, its records joined into ``regimes``), then each results
    folder's summary (headings one level down) with its plots and records (:data:`RECORD_FILES`) copied to
    ``<assets>/<results folder name>/`` (``assets`` default: ``<doc folder>/<doc stem>``). Those copies are a
    results folder themselves, so the page can be written again from them (``docs/results/<name>`` in place
    of ``runs/bench/<name>``). ``drop_regimes`` (default: with ``regimes``) leaves out each summary's own
    regime section, when a combined one (on this page or another) has its levels."""
    doc = Path(doc)
    root = Path(assets) if assets is not None else doc.parent / doc.stem
    prefix = _link_prefix(doc, root)
    parts = [preface.rstrip() + "\n"] if preface else []
    if regimes is not None:
        joined = results_dirs if regime_dirs is None else regime_dirs
        parts.append(combined_regimes(joined, doc, regimes, root).rstrip() + "\n")
    for results_dir in map(Path, results_dirs):
        text = (results_dir / "summary.md").read_text(encoding="utf-8")
        folder = root / results_dir.name
        folder.mkdir(parents=True, exist_ok=True)
        in_place = folder.resolve() == results_dir.resolve()
        for name in RECORD_FILES:
            if not in_place and (results_dir / name).is_file():
                shutil.copy2(results_dir / name, folder / name)
        for png in results_dir.glob("*.png"):
            if not in_place:
                shutil.copy2(png, folder / png.name)
            text = text.replace(f"]({png.name})", f"]({prefix}{results_dir.name}/{png.name})")
        if regimes is not None if drop_regimes is None else drop_regimes:  # the combined section: one home
            text = _without_section(text, "## Regimes")
        text = "\n".join("#" + line if line.startswith("#") else line for line in text.splitlines())
        parts.append(text.rstrip() + "\n")
    doc.write_text("\n".join(parts), encoding="utf-8")
    return doc


def _without_section(text: str, heading: str) -> str:
    """``text`` without the ``## ...`` section whose heading starts with ``heading`` (up to the next ``## ``)."""
    lines = text.splitlines()
    out, skipping = [], False
    for line in lines:
        if line.startswith("## "):
            skipping = line.startswith(heading)
        if not skipping:
            out.append(line)
    return "\n".join(out) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m botgrpo_bench.report --doc docs/results.md [--preface P.md] [--regimes OUT.jsonl] DIR...``."""
    import argparse

    parser = argparse.ArgumentParser(description="write a docs page from bench results folders")
    parser.add_argument("results_dirs", nargs="+", type=Path, help="folders written by `botgrpo bench`")
    parser.add_argument("--doc", required=True, type=Path, help="the markdown page to write")
    parser.add_argument("--preface", type=Path, help="markdown put before the generated sections")
    parser.add_argument(
        "--regimes",
        type=Path,
        metavar="OUT.jsonl",
        help="join the folders' regimes.jsonl into OUT.jsonl (e.g. docs/results/regimes.jsonl) and open the "
        "page with one regime section over all of them",
    )
    args = parser.parse_args(argv)
    preface = args.preface.read_text(encoding="utf-8") if args.preface else ""
    try:
        print(write_doc(args.results_dirs, args.doc, preface=preface, regimes=args.regimes))
    except ValueError as exc:
        parser.error(str(exc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
