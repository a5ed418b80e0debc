"""scripts/react_run_table.py: the React per-run table of docs/results.md, rebuilt from a run's records
(collected from a run folder, gzipped byte-for-byte the same on every collect) against hand-computed rows."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def _script():
    spec = importlib.util.spec_from_file_location("react_run_table", ROOT / "scripts" / "react_run_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(folder: Path, spec: list[float], trivial: list[float], local: bool) -> None:
    folder.mkdir(parents=True)
    rows = []
    for k, (s, t) in enumerate(zip(spec, trivial)):
        rows.append(
            {
                "kind": "eval",
                "step": 5 * k,
                "eval/sampled/spec_rate": s,
                "eval/sampled/compile_rate": 2 * s,
                "eval/sampled/trivial_rate": t,
            }
        )
    for step in range(1, 101):
        train = {
            "kind": "train",
            "step": step,
            "signals/bench.react_spec/mean": 0.2 if step <= 20 else 0.4,
            "completions/clipped_ratio": 0.5 if step > 90 else 0.0,
        }
        if local:
            train["signals/bench.react_sections/mean"] = -0.5 if step > 80 else 0.1
        rows.append(train)
    (folder / "metrics.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    (folder / "summary.json").write_text(json.dumps({"wall_s": 1800.0}))


def test_rows_from_collected_runs(tmp_path: Path) -> None:
    script = _script()
    root = tmp_path / "runs" / "react-long"
    _run(root / "bot-grpo" / "seed0", [0.1, 0.2, 0.0, 0.3], [0.0, 0.1, 0.6, 0.7], local=True)
    _run(root / "grpo" / "seed0", [0.1, 0.1, 0.2, 0.1], [0.0, 0.0, 0.0, 0.1], local=False)
    out = tmp_path / "metrics"
    script.collect(root, out)
    first = {p.name: p.read_bytes() for p in out.iterdir()}
    script.collect(root, out)
    assert first == {p.name: p.read_bytes() for p in out.iterdir()}  # reproducible bytes
    lines = script.table([f"6. centred={out}"]).splitlines()
    assert lines[0] == script.HEADER and len(lines) == 4
    assert lines[2] == (
        "| 6. centred | bot-grpo | 0 | 0.1667 | 0.300 | 0.300 | 0.333 | 0.600 | 0.600 | 0.700 | 10 | "
        "0.200 -> 0.400 | +0.100 -> -0.500 | 0.25 | 30 |"
    )
    assert lines[3].startswith("| 6. centred | grpo | 0 | 0.1333 | 0.200 | 0.100 |")
    assert lines[3].endswith("| 0.100 | - | 0.200 -> 0.400 | (beta 0) | 0.25 | 30 |")
