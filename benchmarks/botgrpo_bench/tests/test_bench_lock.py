"""One bench per results folder (issue 60 item 26): two benches on one folder both exited 1 and ``summary.md`` listed
runs as failed whose results said ok (each took the other's runs in progress for failed). The folder's
``bench.lock`` (the run lock's flock, held for the whole bench) refuses a second bench, naming the first, before it
reads or writes anything; a lock a killed bench left is taken over."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest
from test_bench_e2e import BENCH  # bench_full.yaml (tests/ is on sys.path)

import botgrpo_bench.bench as bench_module
from botgrpo_bench.bench import BENCH_LOCK, run_bench
from botgrpo_bench.config import BenchError, load_bench
from botgrpo_core.engine.run_lock import OutputDirLock


class _WarmStartReached(Exception):
    pass


@pytest.fixture
def reached(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The bench's warm start replaced by one that stops the bench there (and says it was reached)."""
    seen: list[str] = []

    def stop(bench: object, log: object) -> None:
        seen.append("warm start")
        raise _WarmStartReached

    monkeypatch.setattr(bench_module, "warm_starts", stop)
    return seen


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_second_bench_on_a_folder_is_refused_before_it_touches_it(
    tmp_path: Path, reached: list[str]
) -> None:
    bench = load_bench(BENCH, overrides=["include=[math]", "seeds=[0]"])
    out = tmp_path / "results"
    out.mkdir()
    (out / "runs.jsonl").write_text('{"label": "math/bot-grpo/seed0"}\n', encoding="utf-8")
    first = OutputDirLock(
        out, print, lock_file=BENCH_LOCK, holder="botgrpo bench"
    )  # the bench already running
    with first:
        before = _files(out)
        with pytest.raises(BenchError) as refused:
            run_bench(bench, out, command="botgrpo bench", quick=False, log=lambda m: None)
        message = str(refused.value)
        assert f"is in use by botgrpo bench pid {os.getpid()} on host {socket.gethostname()}" in message
        assert "One bench runs in a results folder at a time" in message and "--output" in message
        assert reached == [] and _files(out) == before  # nothing read further, nothing written
    # the first bench has ended: the next one takes the folder, and leaves no lock behind
    with pytest.raises(_WarmStartReached):
        run_bench(bench, out, command="botgrpo bench", quick=False, log=lambda m: None)
    assert reached == ["warm start"] and not (out / BENCH_LOCK).exists()


def test_a_lock_left_by_a_killed_bench_is_taken_over(tmp_path: Path, reached: list[str]) -> None:
    bench = load_bench(BENCH, overrides=["include=[math]", "seeds=[0]"])
    out = tmp_path / "results"
    out.mkdir()
    dead = {"pid": 999999, "host": socket.gethostname(), "started": "earlier", "command": "botgrpo bench"}
    (out / BENCH_LOCK).write_text(json.dumps(dead) + "\n", encoding="utf-8")
    said: list[str] = []
    with pytest.raises(_WarmStartReached):
        run_bench(bench, out, command="botgrpo bench", quick=False, log=said.append)
    assert any("taking over a stale lock of botgrpo bench pid 999999" in m for m in said), said
