"""scripts/benchmark.py runs end to end at a tiny size (the README's throughput table comes from it)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "benchmark.py"


def test_benchmark_prints_every_workload_with_every_row(need_node: None, tmp_path: Path) -> None:
    figures = tmp_path / "run.json"
    out = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--n",
            "16",
            "--repeats",
            "1",
            "--render-n",
            "0",
            "--json",
            str(figures),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout
    assert re.search(r"workload cut: 16 completions, mean 20\d\d chars, \d+ do not parse", out), out
    assert re.search(r"workload whole: 16 completions", out), out
    assert re.search(r"workload 2kb: 16 completions", out), out
    rows = re.findall(r"^\| (.+?) \| (\d+) \| ([\d.]+) \|$", out, re.MULTILINE)
    names = [name for name, _, _ in rows]
    for label in ("in-process", "pool of 2"):
        for what in ("jsx.compiles", "jsx.syntax", "jsx.rules"):
            assert names.count(f"{what}, {label}") == 3, names
        for how in ("one after the other", "as the mixture runs them"):
            assert names.count(f"all three, {label}, {how}") == 3, names
    assert all(int(rate) > 0 for _, rate, _ in rows)
    # --json holds the same figures, one per printed row (the README's tables are recomputable from it)
    saved = json.loads(figures.read_text())
    assert [r["configuration"] for r in saved["rows"]] == names
    assert all(abs(r["samples_per_s"] - int(rate)) <= 0.51 for r, (_, rate, _) in zip(saved["rows"], rows))
    assert set(saved["workloads"]) == {"2kb", "whole", "cut"} and saved["n"] == 16
