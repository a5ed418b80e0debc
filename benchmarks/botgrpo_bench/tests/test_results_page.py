"""The published results pages are recomputable from what the repository holds: ``python -m
botgrpo_bench.results_pages``, run on the committed folders, writes docs/results.md and every study page byte for
byte; the index has one row per study of ``STUDIES``, and its primary statistics are what the records give."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from botgrpo_bench.report import RECORD_FILES, write_doc
from botgrpo_bench.results_pages import (
    INDEX,
    MARK,
    PREFACES,
    README,
    STUDIES,
    Comparison,
    Study,
    runs_ratio,
    summary_table,
    write_pages,
)

ROOT = Path(__file__).resolve().parents[3]


def test_every_page_is_written_again_from_the_committed_folders(tmp_path: Path) -> None:
    written = write_pages(ROOT, tmp_path)
    assert [p.relative_to(tmp_path) for p in written] == [INDEX, *(s.page for s in STUDIES), README]
    stale = [
        str(p.relative_to(tmp_path))
        for p in written
        if p.read_text(encoding="utf-8") != (ROOT / p.relative_to(tmp_path)).read_text(encoding="utf-8")
    ]
    assert not stale, f"{stale} differ from what `python -m botgrpo_bench.results_pages` writes now: run it"
    joined = Path("docs/results/regimes.jsonl")
    assert (tmp_path / joined).read_bytes() == (ROOT / joined).read_bytes()
    # what a page came from travels with it: the copies form a results folder of their own
    for study in STUDIES:
        for folder in study.folders:
            copied = tmp_path / (study.assets or "docs/results") / Path(folder).name
            for name in RECORD_FILES:
                if (ROOT / "docs/results" / folder / name).is_file():
                    assert (copied / name).read_bytes() == (
                        ROOT / "docs/results" / folder / name
                    ).read_bytes()


def test_the_index_has_a_row_per_study_each_with_its_page_and_preface() -> None:
    index = (ROOT / INDEX).read_text(encoding="utf-8")
    assert MARK in (ROOT / PREFACES / "index.md").read_text(encoding="utf-8")
    rows = [line for line in index.splitlines() if line.startswith("| [")]
    assert len(rows) == len(STUDIES) == len({s.slug for s in STUDIES})
    for study, row in zip(STUDIES, rows, strict=True):
        assert f"]({study.page.relative_to(INDEX.parent).as_posix()})" in row
        assert (ROOT / study.preface).is_file() and (ROOT / study.page).is_file()
        if study.figure and f"]({study.figure})" in index:  # the index shows a figure once it is written
            assert (ROOT / "docs" / study.figure).is_file(), study.figure


def _runs(folder: Path, rows: list[tuple[str, int, int | None]]) -> None:
    folder.mkdir(parents=True)
    lines = [
        json.dumps({"method": m, "seed": s, "steps_to_target": t, "steps": 50, "status": "ok"})
        for m, s, t in rows
    ]
    (folder / "runs.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_the_primary_statistic_is_the_ratio_of_seed_mean_steps_with_misses_as_bounds(tmp_path: Path) -> None:
    """By hand: GRPO 50, miss (counted at 50), 10 against BoT-GRPO 30, 30, 20 -> (50+50+10)/3 / (80/3) = 1.375, a
    lower bound; per seed 1.67, >= 1.67, 0.50. With no miss it is a ratio; with BoT-GRPO missing, none."""
    _runs(tmp_path / "docs/results/a", [("grpo", 0, 50), ("grpo", 1, None), ("grpo", 2, 10)])
    with open(tmp_path / "docs/results/a/runs.jsonl", "a", encoding="utf-8") as f:
        for seed, steps in ((0, 30), (1, 30), (2, 20)):
            f.write(
                json.dumps({"method": "bot-grpo", "seed": seed, "steps_to_target": steps, "steps": 50}) + "\n"
            )
    assert runs_ratio("a")(tmp_path) == "n/a (no paired runs)"  # failed runs (no status ok) are left out
    rows = [("grpo", 0, 50), ("grpo", 1, None), ("grpo", 2, 10), ("bot-grpo", 0, 30), ("bot-grpo", 1, 30)]
    _runs(tmp_path / "docs/results/b", [*rows, ("bot-grpo", 2, 20)])
    assert runs_ratio("b")(tmp_path) == ">= 1.37 (per seed 1.67, >= 1.67, 0.50)"  # 36.67 / 26.67
    _runs(
        tmp_path / "docs/results/c",
        [("grpo", 0, 20), ("grpo", 1, 40), ("bot-grpo", 0, 10), ("bot-grpo", 1, 20)],
    )
    assert runs_ratio("c")(tmp_path) == "2.00 (per seed 2.00, 2.00)"
    _runs(tmp_path / "docs/results/d", [("grpo", 0, 20), ("bot-grpo", 0, None)])
    assert runs_ratio("d")(tmp_path) == "n/a (per seed <= 0.40)"


def test_adding_a_study_is_one_entry(tmp_path: Path) -> None:
    """A new study: its preface, its records and one :class:`Study`; the index gets its row."""
    _runs(tmp_path / "docs/results/new-level", [("grpo", 0, 40), ("bot-grpo", 0, 20)])
    new = Study(
        slug="new-study",
        title="A new study",
        short="new",
        task="t",
        model="m",
        seeds="1",
        statistic_label="GRPO / BoT-GRPO steps",
        statistic=runs_ratio("new-level"),
        verdict="v",
        reports=("new-level",),
    )
    (tmp_path / PREFACES).mkdir(parents=True)
    (tmp_path / PREFACES / "index.md").write_text(f"# Index\n\n{MARK}\n", encoding="utf-8")
    (tmp_path / PREFACES / "new-study.md").write_text(
        "# A new study\n\n<!-- nav -->\n\nWhat was measured.\n", encoding="utf-8"
    )
    index, page = write_pages(tmp_path, studies=[new])
    assert (
        "| [A new study](results/new-study.md) | t | m | 1 | GRPO / BoT-GRPO steps: **2.00 (per seed 2.00)** |"
        in (index.read_text(encoding="utf-8"))
    )
    text = page.read_text(encoding="utf-8")
    # the navigation line comes from the list of studies (one home): the index and each study's short name
    assert text.startswith("# A new study\n\n[Results index](../results.md) · [new](new-study.md)\n\nWhat")
    assert "- [`new-level`](new-level/summary.md): grpo seed 0, bot-grpo seed 0" in text
    assert summary_table(tmp_path, [new]).count("\n") == 3


def test_writing_a_page_in_place_rewrites_nothing_it_reads(tmp_path: Path) -> None:
    """A page written again from its own asset folders (``docs/results/<name>``) keeps them as they are."""
    folder = tmp_path / "page" / "bench-a"
    folder.mkdir(parents=True)
    (folder / "summary.md").write_text("# Bench `a`\n\n![curves](curves.png)\n", encoding="utf-8")
    (folder / "curves.png").write_bytes(b"png")
    doc = write_doc([folder], tmp_path / "page.md")
    assert doc.read_text(encoding="utf-8") == "## Bench `a`\n\n![curves](page/bench-a/curves.png)\n"
    assert sorted(p.name for p in folder.iterdir()) == ["curves.png", "summary.md"]
    assert (folder / "curves.png").read_bytes() == b"png"


def test_the_paired_statistic_fills_in_as_seeds_finish(tmp_path: Path) -> None:
    """A running level says how many paired seeds are in; then the mean difference, per seed, t and signs
    (hand computed: d = +0.02, -0.01, +0.05; mean 0.02, sd 0.03, t = 0.02 / (0.03 / sqrt 3) = 1.15)."""
    compute = Comparison("lvl", "lvl", planned=8, smallest=0.03, metric="accuracy").statistic
    assert compute(tmp_path) == "n/a (0 of 8 paired seeds in)"
    folder = tmp_path / "docs" / "results" / "lvl"
    folder.mkdir(parents=True)
    runs = [("bot-grpo", 0, 0.12), ("grpo", 0, 0.10), ("bot-grpo", 1, 0.09), ("grpo", 1, 0.10)]
    runs += [("bot-grpo", 2, 0.15), ("grpo", 2, 0.10), ("bot-grpo", 3, 0.50)]  # seed 3: no grpo run yet
    rows = [{"method": m, "seed": s, "status": "ok", "curve_mean": v} for m, s, v in runs]
    rows.append({"method": "grpo", "seed": 3, "status": "failed", "curve_mean": None})
    (folder / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert compute(tmp_path) == (
        "+0.020 (per seed +0.020, -0.010, +0.050; 3 of 8 paired seeds; t = 1.15, p = 0.37; higher in 2, lower in 1)"
    )


def test_a_paired_study_opens_with_its_figure_and_table(tmp_path: Path) -> None:
    """The block a paired study's page opens with: the figure (a real PNG from the paired seeds' curves) and the
    per-seed table; a control names both folders; a level with no pair yet says so; a preface without the
    headline mark is an error naming the preface."""
    folder = tmp_path / "docs" / "results" / "lvl"
    folder.mkdir(parents=True)
    runs = [("bot-grpo", 0, 0.12), ("grpo", 0, 0.10), ("bot-grpo", 1, 0.09), ("grpo", 1, 0.10)]
    runs.append(("grpo", 2, 0.30))  # unpaired: not in the table or the figure
    rows = [
        {"method": m, "seed": s, "status": "ok", "curve_mean": v, "curve": [[0, 0.05], [5, v], [10, v]]}
        | {"initial": 0.05, "final": v, "initial_sampled/length": 120.4, "final_sampled/length": 80.6}
        for m, s, v in runs
    ]
    (folder / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    level = Comparison(
        "Level x",
        "lvl",
        planned=4,
        smallest=0.03,
        metric="accuracy",
        figure=True,
        finals=(("sampled/length", "length"), ("sampled/cut", "cut")),
    )
    block = level.block(tmp_path, tmp_path)
    assert "![Level x](lvl/paired.png)" in block
    assert (folder / "paired.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "| 0 | 0.120 | 0.100 | 0.020 |\n| 1 | 0.090 | 0.100 | -0.010 |\n\n" in block
    assert "| 2 |" not in block and "2 of 4 paired seeds in" in block
    assert "| run | accuracy | length | cut |" in block  # step 0 -> last; a measure not recorded is n/a
    assert "| bot-grpo seed 1 | 0.050 -> 0.090 | 120 -> 81 | n/a |\n| grpo seed 1 | 0.050 -> 0.100 |" in block
    control = Comparison("C", "ctl", 4, 0.03, "accuracy", ref="bot-grpo", ref_folder="lvl")
    assert control.block(tmp_path, tmp_path) == (
        "### C: bot-grpo (`ctl`) - bot-grpo (`lvl`), accuracy averaged over the evaluations after step 0\n\n"
        "No paired seed has finished yet (0 of 4).\n"
    )
    study = Study("s", "S", "s", "t", "m", "1", "x", "fixed", "v", comparisons=(level,))
    (tmp_path / PREFACES).mkdir(parents=True)
    (tmp_path / study.preface).write_text("# S\n\nno mark here\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"results_prefaces/s.md: no <!-- headline --> line"):
        write_pages(tmp_path, studies=[study])
