"""WorkerPool: results in order; raise / timeout / memory / crash each cost one item, and the pool goes on."""

from __future__ import annotations

import pytest
from pool_fixtures import pid, work

from botgrpo_core.rewards.pool import WorkerPool
from botgrpo_core.signals import SampleError


@pytest.fixture(scope="module")
def pool():
    with WorkerPool(work, workers=2, timeout_s=0.5, memory_mb=256) as p:
        yield p


def test_results_in_order(pool: WorkerPool) -> None:
    items = [f"x{i}" for i in range(20)]
    assert pool.map(items) == [s.upper() for s in items]
    assert pool.map([]) == []


@pytest.mark.parametrize(
    ("item", "reason"),
    [
        ("raise", "error"),
        ("hang", "timeout"),
        ("memory", "memory"),
        ("exit", "crash"),
        ("unpicklable", "error"),
    ],
)
def test_a_bad_item_costs_only_itself(pool: WorkerPool, item: str, reason: str) -> None:
    restarts = pool.restarts
    results = pool.map(["a", item, "b"])
    assert results[0] == "A" and results[2] == "B"
    assert isinstance(results[1], SampleError)
    assert results[1].reason == reason, results[1]
    if reason in ("timeout", "memory", "crash"):
        assert pool.restarts == restarts + 1  # the worker was replaced
    assert pool.map(["after"]) == ["AFTER"]  # and the pool keeps serving


def test_hung_worker_is_killed_and_replaced() -> None:
    with WorkerPool(pid, workers=1, timeout_s=5) as single:
        before = single.map([0])[0]
        with WorkerPool(work, workers=1, timeout_s=0.3) as hanging:
            assert hanging.map(["hang"])[0].reason == "timeout"
            assert hanging.map(["ok"]) == ["OK"]
        assert single.map([0])[0] == before  # untouched pool keeps its worker


def test_per_call_timeout_and_validation() -> None:
    with WorkerPool(work, workers=1, timeout_s=30) as p:
        assert p.map(["hang"], timeout_s=0.2)[0].reason == "timeout"
    with pytest.raises(ValueError, match="workers"):
        WorkerPool(work, workers=0)
    p = WorkerPool(work, workers=1)
    p.close()
    with pytest.raises(RuntimeError, match="closed"):
        p.map(["x"])


def test_timeout_returns_without_waiting_for_the_replacement() -> None:
    import time

    from pool_fixtures import slow_start

    with WorkerPool(work, workers=1, timeout_s=0.3, initializer=slow_start, initargs=(1.5,)) as p:
        assert p.map(["warm"]) == ["WARM"]  # first start is waited for
        start = time.monotonic()
        assert p.map(["hang"])[0].reason == "timeout"
        assert time.monotonic() - start < 1.2  # deadline + kill, not + the 1.5 s start-up of the new worker
        assert p.map(["next"]) == ["NEXT"]  # the replacement takes the next task once ready


def test_replacement_that_started_unwatched_is_not_declared_hung(monkeypatch) -> None:
    """A replacement that became ready while no task was pending is taken up, even past its start deadline."""
    import time

    monkeypatch.setattr(WorkerPool, "_start_timeout", lambda self: 2.0)
    with WorkerPool(work, workers=2, timeout_s=0.3) as p:
        assert p.map(["a", "b"]) == ["A", "B"]
        assert p.map(["hang"])[0].reason == "timeout"  # one worker is replaced in the background
        time.sleep(2.5)  # the replacement is ready long before its start deadline, which has now passed
        assert p.map(["y"]) == ["Y"]  # an item the other worker takes: no pending item waits on the new one
        assert p.map(["c", "d"]) == ["C", "D"]
