"""scripts/react_span_stats.py on a real (untrained) tiny React model: one JSON object of span statistics,
scored with the signal params and sampled at the temperature it is given."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def _script():
    spec = importlib.util.spec_from_file_location(
        "react_span_stats", ROOT / "scripts" / "react_span_stats.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_span_stats_of_a_tiny_react_model(tmp_path: Path) -> None:
    from botgrpo_bench.react import ReactParams, ReactTask
    from botgrpo_core.config.sections import TinyModelSpec
    from botgrpo_core.engine.tiny import build_tiny_model, char_tokenizer, save_pretrained

    task = ReactTask(ReactParams(grammar="spec", sections=(2, 2), error_rate=0.3))
    tokenizer = char_tokenizer(task.chars)
    model = build_tiny_model(
        tokenizer, TinyModelSpec(hidden_size=16, num_layers=1, num_heads=2, max_positions=320)
    )
    folder = save_pretrained(model, tokenizer, tmp_path / "model")
    out = tmp_path / "stats.json"
    argv = [str(folder), "--sections", "2", "--n", "3", "--param", "blame=words", "--temperature", "0.7"]
    assert _script().main([*argv, "--out", str(out)]) == 0
    stats = json.loads(out.read_text())
    assert stats["pages"] == 3 and stats["sections"] == 2
    assert stats["params"] == {"blame": "words"} and stats["temperature"] == 0.7
    assert stats["signal"] == "bench.react_sections"
