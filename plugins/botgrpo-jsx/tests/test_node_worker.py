"""The esbuild worker survives the death of esbuild's service process (issue 17)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from botgrpo_core.signals import Sample, SampleError
from botgrpo_jsx import nodeenv
from botgrpo_jsx.bounds import bracket_depth, nested_deeper_than
from botgrpo_jsx.node import NodeWorker
from botgrpo_jsx.params import CompilesParams
from botgrpo_jsx.plugin import make_compiles

VALID = "export default function A() { return <div className='ok'/>; }"
BROKEN = "export default function A() { return <div>; }"


def _compile(code: str) -> dict:
    return {"op": "compile", "code": code, "loader": "tsx"}


@pytest.fixture
def worker(need_node: None):
    node, modules = nodeenv.find_node(), nodeenv.node_modules()
    assert node is not None and modules is not None
    with NodeWorker(node.node, modules, timeout_s=30.0) as w:
        yield w


def _esbuild_service_pids(node_pid: int) -> list[int]:
    """Children of the node process whose executable is esbuild's (from /proc)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            exe = os.readlink(entry / "exe")
        except (OSError, ValueError, IndexError):
            continue
        if ppid == node_pid and "esbuild" in Path(exe).name:
            pids.append(int(entry.name))
    return pids


def test_killed_esbuild_service_is_restarted(worker: NodeWorker) -> None:
    assert worker.request([_compile(VALID)])[0]["ok"] is True
    assert worker._proc is not None
    pids = _esbuild_service_pids(worker._proc.pid)
    assert pids, "esbuild's service process was not found under the worker"
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    replies = worker.request([_compile(VALID), _compile(BROKEN), _compile(VALID)])
    assert [r["ok"] for r in replies] == [True, False, True]
    assert worker.restarts == 1


def test_stack_overflow_bomb_costs_only_its_own_sample(worker: NodeWorker) -> None:
    # 200,000 `!` overflow the Go parser's stack and kill esbuild's service (no bracket to bound).
    bomb = "x = " + "!" * 200_000 + "a;"
    replies = worker.request([_compile(VALID), _compile(bomb), _compile(BROKEN), _compile(VALID)])
    assert isinstance(replies[1], SampleError) and replies[1].reason == "crash"
    assert [replies[i]["ok"] for i in (0, 2, 3)] == [True, False, True]
    # and the worker keeps scoring afterwards
    assert worker.request([_compile(VALID)])[0]["ok"] is True


def test_deep_brackets_are_refused_before_esbuild(need_node: None) -> None:
    scorer = make_compiles(CompilesParams(max_chars=1_000_000))
    samples = [Sample("", "{" * 200_000), Sample("", VALID), Sample("", "(" * 3000 + ")" * 3000)]
    assert scorer.score(samples) == [0.0, 1.0, 0.0]
    assert scorer.metrics()["jsx.compiles/too_deep"] == 2.0
    assert scorer._worker.restarts == 0
    scorer.close()


def test_bracket_depth_reference() -> None:
    assert bracket_depth("") == 0
    assert bracket_depth("}}}") == 0
    assert bracket_depth("f({a: [1, (2)]})") == 4
    assert bracket_depth("(" * 50 + ")" * 50 + "{{") == 50
    assert bracket_depth("'日本' + (x)") == 1


def test_nested_deeper_than_agrees_with_the_full_count() -> None:
    import random

    rng = random.Random(0)
    for _ in range(300):
        code = "".join(rng.choice("({[]}) x") for _ in range(rng.randint(0, 60)))
        for limit in (0, 1, 3, 10):
            assert nested_deeper_than(code, limit) == (bracket_depth(code) > limit), (code, limit)


def test_a_bomb_in_a_compile_batch_costs_only_its_own_sample(need_node: None) -> None:
    """jsx.compiles sends chunks in one esbuild build each; the chunk the bomb kills is compiled again
    one snippet at a time, so only the bomb fails, with the same verdicts as the other snippets'."""
    bomb = "x = " + "!" * 200_000 + "a;"
    codes = [VALID, BROKEN, bomb, VALID.replace("ok", "fine"), BROKEN.replace("div", "span")]
    scorer = make_compiles(CompilesParams(max_chars=1_000_000))
    results = scorer.score([Sample("", f"```tsx\n{c}\n```") for c in codes])
    assert [results[i] for i in (0, 1, 3, 4)] == [1.0, 0.0, 1.0, 0.0]
    assert isinstance(results[2], SampleError) and results[2].reason == "crash"
    assert scorer.metrics()["jsx.compiles/batch_retried"] == 5.0  # the whole chunk, once
    assert scorer.score([Sample("", VALID)]) == [1.0]  # and the worker goes on
    scorer.close()
