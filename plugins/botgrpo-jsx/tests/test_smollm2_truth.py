"""scripts/smollm2_truth.py: the committed labels are what esbuild says today, notes included, and the score reads
them (the README's SmolLM2 figures come from it)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "smollm2_truth.py"


def _module():
    spec = importlib.util.spec_from_file_location("smollm2_truth", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_an_end_of_file_error_keeps_the_note_on_its_opening_tag(need_node: None) -> None:
    truth = _module()
    code = "export default function A() {\n  return (\n    <div>\n      <p>hi</p>\n  );\n}\n"
    ok, first = truth.run_esbuild(truth._esbuild(), code, "jsx")
    assert not ok and first is not None
    assert "closing" in first["message"] and first["note_lines"] == [3]  # "The opening "div" tag is here"
    ok, first = truth.run_esbuild(truth._esbuild(), "const a = 1;\nconst a = 2;\n", "jsx")
    assert not ok and first["line"] == 2 and first["note_lines"] == [1]  # where the symbol was declared


def test_the_committed_labels_score(need_node: None, tmp_path: Path) -> None:
    out = tmp_path / "figures.json"
    subprocess.run(
        [sys.executable, str(SCRIPT), "score", "--json", str(out)], check=True, capture_output=True
    )
    figures = json.loads(out.read_text())
    assert figures["jsx_compiles_agrees"] == figures["pages"] == 108
    strict, noted = figures["syntax_on_first_error_line"], figures["syntax_on_first_error_or_its_note"]
    assert strict + len(figures["on_a_note_line"]) == noted and noted >= strict
    assert strict + len(figures["missed"]) == figures["failing_with_a_line"]
    assert set(figures["on_a_note_line"]) <= {
        m["page"] for m in figures["missed"]
    }  # strict misses, on a note
