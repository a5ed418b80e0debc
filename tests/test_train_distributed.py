"""2 CPU processes (gloo) give the same advantages and metrics as 1 process on the same batch."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from train_fixtures import DIST_COMPLETIONS, arith_plugin, build_trainer, dist_config, dist_results, parse  # noqa: F401

from botgrpo_core.tasks import get_task


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _torchrun(mode: str, out: Path) -> None:
    env = {
        **os.environ,
        "OMP_NUM_THREADS": "1",
        "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), *sys.path]),
    }
    for key in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(key, None)
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc_per_node=2",
        "--master_addr=127.0.0.1",
        f"--master_port={_free_port()}",
        str(Path(__file__).parent / "dist_worker.py"),
        mode,
        str(out),
    ]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


def test_two_processes_match_one(tmp_path, arith_plugin):  # noqa: F811
    config = parse(dist_config(tmp_path))
    trainer, tokenizer, _ = build_trainer(config)  # also writes the tiny model the workers load
    rows = get_task("arithmetic").train_rows(3, seed=7)
    single = dist_results(trainer, tokenizer, rows, 0, len(DIST_COMPLETIONS))

    _torchrun("advantages", tmp_path)
    ranks = [torch.load(tmp_path / f"rank{r}.pt", weights_only=False) for r in range(2)]

    per = len(DIST_COMPLETIONS) // 2
    assert per % 4 != 0  # a group spans both processes: the gather is really needed
    for r, part in enumerate(ranks):  # uncovered: group_mean, filled from the gathered coverage moments
        got, ref = part.pop("centred_rewards"), single["centred_rewards"]
        torch.testing.assert_close(got, ref[r * per : (r + 1) * per, : got.shape[1]], equal_nan=True)
    centred = single.pop("centred_rewards")
    raw = single["bot-grpo-raw"]["advantages"]
    assert not torch.allclose(single["bot-grpo"]["advantages"], raw)  # the fill changed something
    assert centred.shape[0] == raw.shape[0]
    for preset, ref in single.items():
        for r, part in enumerate(ranks):
            got = part[preset]
            rows_ = slice(r * per, (r + 1) * per)
            width = got["advantages"].shape[1]
            assert torch.equal(got["mask"], ref["mask"][rows_, :width])
            assert not ref["mask"][rows_, width:].any()
            torch.testing.assert_close(
                got["advantages"], ref["advantages"][rows_, :width], rtol=1e-6, atol=1e-6
            )
            assert torch.equal(got["keep_group"], ref["keep_group"][rows_])
            assert got["metrics"].keys() == ref["metrics"].keys()
            for key, value in ref["metrics"].items():
                if key.endswith("/cache_hit_frac"):  # each process has its own result cache
                    continue
                assert got["metrics"][key] == pytest.approx(value, rel=1e-6, abs=1e-9, nan_ok=True), (
                    preset,
                    key,
                )
        assert ref["advantages"].abs().max() > 0.1  # not a vacuous comparison


def test_run_training_with_two_processes(tmp_path, arith_plugin):  # noqa: F811
    """The whole run under a 2-process launch: DDP on gloo, one metrics writer, the eval on rank 0."""
    _torchrun("train", tmp_path)
    records = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records if r["kind"] == "train"] == [1, 2]
    assert [r["step"] for r in records if r["kind"] == "eval"] == [0, 2]
    assert (tmp_path / "final_model" / "config.json").is_file()
    assert (tmp_path / "checkpoint-2").is_dir()
