"""The published results pages are recomputable from what the repository holds: each preface's own
``python -m botgrpo_bench.report`` command, run on the committed folders, writes its page byte for byte."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from botgrpo_bench.report import RECORD_FILES, main, write_doc

ROOT = Path(__file__).resolve().parents[3]
#: preface -> the page its report command writes
PAGES = {
    "benchmarks/results_preface.md": "docs/results.md",
    "benchmarks/results_preface_grid.md": "docs/results/grid.md",
}


def report_argv(preface: Path) -> list[str]:
    """The arguments of the preface's one ``python -m botgrpo_bench.report`` command (continuations joined)."""
    text = preface.read_text(encoding="utf-8")
    found = re.findall(r"^python -m botgrpo_bench\.report (?:.*\\\n)*.*$", text, flags=re.M)
    assert len(found) == 1, f"{preface}: one report command expected, found {len(found)}"
    return shlex.split(found[0].replace("\\\n", " "))[3:]


def _swap(argv: list[str], flag: str, value: str) -> list[str]:
    i = argv.index(flag)
    return [*argv[: i + 1], value, *argv[i + 2 :]]


@pytest.mark.parametrize("preface", sorted(PAGES))
def test_each_page_is_written_again_from_the_committed_folders(
    preface: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    argv = report_argv(ROOT / preface)
    page = Path(argv[argv.index("--doc") + 1])
    assert page.as_posix() == PAGES[preface]
    out = tmp_path / page  # the same relative place: the page's links name its stem's folders
    argv = _swap(argv, "--doc", str(out))
    if "--regimes" in argv:
        committed = Path(argv[argv.index("--regimes") + 1])
        argv = _swap(argv, "--regimes", str(tmp_path / committed))
    folders = [a for a in argv if not a.startswith("--") and a.startswith(("docs/", "runs/"))]
    folders = [f for f in folders if Path(f).is_dir()]
    assert all(f.startswith(f"{page.parent / page.stem}/") for f in folders), folders  # committed folders
    assert main(argv) == 0
    assert out.read_text(encoding="utf-8") == (ROOT / page).read_text(encoding="utf-8")
    if "--regimes" in argv:
        assert (tmp_path / committed).read_bytes() == (ROOT / committed).read_bytes()
    # what the page came from travels with it: the copies form a results folder of their own
    for folder in folders:
        copied = out.parent / page.stem / Path(folder).name
        for name in RECORD_FILES:
            if (ROOT / folder / name).is_file():
                assert (copied / name).read_bytes() == (ROOT / folder / name).read_bytes()


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
