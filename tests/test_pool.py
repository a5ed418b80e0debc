"""WorkerPool: results in order; raise / timeout / memory / crash each cost one item, and the pool goes on."""

from __future__ import annotations

import pytest
from pool_fixtures import pid, seen_here, work

from botgrpo_core.rewards.pool import WorkerPool, _Batch
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


def test_timeout_returns_without_waiting_for_the_replacement(tmp_path) -> None:
    """The replacement of a timed-out worker starts in the background: here it is held in its initializer
    until the test lets it go, so ``map`` returning at all shows it did not wait (no wall-clock bound)."""
    from pool_fixtures import held_start

    pids, hold = tmp_path / "pids", tmp_path / "hold"
    with WorkerPool(
        work, workers=1, timeout_s=0.3, initializer=held_start, initargs=(str(pids), str(hold))
    ) as p:
        assert p.map(["warm"]) == ["WARM"]  # first start is waited for
        hold.touch()  # every later start spins in its initializer until the file goes
        assert p.map(["hang"])[0].reason == "timeout"
        assert not p._workers[0].ready  # returned while the replacement is still starting
        hold.unlink()
        assert p.map(["next"]) == ["NEXT"]  # the replacement takes the next task once ready


def test_replacement_that_started_unwatched_is_not_declared_hung(monkeypatch) -> None:
    """A replacement that became ready while no task was pending is taken up, even past its start deadline."""
    import time

    with WorkerPool(work, workers=2, timeout_s=0.3) as p:
        assert p.map(["a", "b"]) == ["A", "B"]
        monkeypatch.setattr(WorkerPool, "_start_timeout", lambda self: 2.0)  # replacements only
        assert p.map(["hang"])[0].reason == "timeout"  # one worker is replaced in the background
        fresh = next(w for w in p._workers if not w.ready)
        _wait_for(fresh.conn.poll, "the replacement's ready message")  # read by the pool only in map()
        _wait_for(lambda: time.monotonic() > fresh.start_deadline + 0.1, "its start deadline to pass")
        assert p.map(["y"]) == ["Y"]  # an item the other worker takes: no pending item waits on the new one
        assert p.map(["c", "d"]) == ["C", "D"]


def test_affinity_queues_items_per_worker_and_an_idle_worker_takes_anothers_last() -> None:
    batch = _Batch(list("abcdef"), 1.0, affinity=[0, 1, 2, 4, 7, 9], workers=2)
    assert [list(q) for q in batch.queues] == [[0, 2, 3], [1, 4, 5]]  # key % workers
    assert [batch.next_for(0), batch.next_for(0), batch.next_for(0)] == [0, 2, 3]
    assert batch.next_for(0) == 5  # its own queue is empty: the last of the longest other
    assert [batch.next_for(1), batch.next_for(1)] == [1, 4] and not batch.pending
    with pytest.raises(ValueError, match="2 affinity keys for 3 items"):
        _Batch([1, 2, 3], 1.0, affinity=[0, 1], workers=2)


def test_items_with_one_key_meet_the_same_worker_again() -> None:
    """What a worker keeps between tasks (a parse cache) serves the next task on the same key."""
    keys = [f"k{i}" for i in range(40)]
    affinity = [hash(k) for k in keys]
    with WorkerPool(seen_here, workers=2, timeout_s=30, memory_mb=None) as pool:
        first = pool.map(keys, affinity=affinity)
        second = pool.map(keys, affinity=affinity)
        everywhere = pool.map(["x"] * 40, affinity=[0] * 40)  # one key: the other worker still helps
    assert len({p for p, _ in first}) == 2 and not any(hit for _, hit in first)
    # an item meets its worker's cache exactly when it ran in the same worker both times
    assert [hit for _, hit in second] == [p1 == p2 for (p1, _), (p2, _) in zip(first, second)]
    # each worker starts on its own queue's first item, in both calls (later ones may be taken by the
    # other worker once its queue is empty, depending on timing)
    assert sum(hit for _, hit in second) >= 2
    assert len({p for p, _ in everywhere}) == 2


@pytest.mark.parametrize(("item", "reason"), [("hang", "timeout"), ("exit", "crash"), ("memory", "memory")])
def test_items_waiting_behind_a_lost_one_run_on_the_replacement(item: str, reason: str) -> None:
    """With one worker, "a" and "b" wait in its pipe while the bad item runs: they are run again, not lost."""
    with WorkerPool(work, workers=1, timeout_s=0.5, memory_mb=256) as p:
        results = p.map([item, "a", "b"])
        assert isinstance(results[0], SampleError) and results[0].reason == reason, results[0]
        assert results[1:] == ["A", "B"]
        assert p.restarts == 1


@pytest.mark.timeout(60)  # a regression blocks in send() for good: fail, not hang the suite
def test_a_large_item_waits_for_an_idle_worker() -> None:
    """An item too large to wait in a busy worker's pipe is not sent to it: sending would block this
    process while the worker hangs, past the running item's deadline."""
    from botgrpo_core.rewards.pool import PIPELINE_MAX_BYTES

    big = "x" * (64 * PIPELINE_MAX_BYTES)  # over any socket buffer: a blocking send would never return
    with WorkerPool(work, workers=1, timeout_s=0.5) as p:
        results = p.map(["hang", big])
    assert results[0].reason == "timeout" and results[1] == big.upper()


def test_pipelining_keeps_order_and_is_configurable() -> None:
    items = [f"x{i}" for i in range(50)]
    for depth in (1, 2, 5):
        with WorkerPool(work, workers=2, timeout_s=5, pipeline_depth=depth) as p:
            assert p.map(items) == [s.upper() for s in items]
    with pytest.raises(ValueError, match="pipeline_depth"):
        WorkerPool(work, workers=1, pipeline_depth=0)


def _wait_for(predicate, what: str, limit_s: float = 60.0):
    """Poll until ``predicate()`` is truthy (a bound for a hung test, not a timing assertion)."""
    import time

    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(0.01)
    raise AssertionError(f"gave up waiting for {what}")


@pytest.mark.timeout(120)
def test_an_external_kill_and_a_kill_of_the_replacement_while_it_starts_cost_one_item(tmp_path) -> None:
    """Issue 26 finding 1: SIGKILL a worker while it runs an item, then its replacement while it is in its
    initializer. Before: ``map`` raised "a worker died during start-up" for the whole batch, and every later
    call failed with ``OSError: handle is closed``. Now the start is tried again after a back-off, the
    killed item's error says what killed it (reason ``killed``, not ``memory``), the rest is scored."""
    import os
    import signal
    import threading

    from pool_fixtures import hang_marked, held_start

    pids, hold, running = tmp_path / "pids", tmp_path / "hold", tmp_path / "running"
    started = lambda: [int(x) for x in pids.read_text().split()] if pids.exists() else []  # noqa: E731

    def killer() -> None:
        first = int(_wait_for(lambda: running.exists() and running.read_text(), "the item to run"))
        hold.touch()  # the next start stays in its initializer until the file goes
        os.kill(first, signal.SIGKILL)
        second = _wait_for(lambda: started()[1:2], "the replacement to start")[0]
        os.kill(second, signal.SIGKILL)
        hold.unlink()

    with WorkerPool(
        hang_marked, workers=1, timeout_s=60, initializer=held_start, initargs=(str(pids), str(hold))
    ) as p:
        thread = threading.Thread(target=killer)
        thread.start()
        results = p.map([f"hang:{running}", "a", "b"])
        thread.join()
        assert len(started()) == 3  # the first worker, the replacement killed starting, the third
        assert isinstance(results[0], SampleError) and results[0].reason == "killed", results[0]
        assert "SIGKILL" in str(results[0]) and "from outside the pool" in str(results[0])
        assert results[1:] == ["A", "B"]
        assert p.map(["c"]) == ["C"]  # and the pool keeps serving


def test_exit_causes_name_the_signal_or_the_exit_code() -> None:
    from botgrpo_core.rewards.pool import exit_cause

    assert exit_cause(3) == "exit code 3"
    assert exit_cause(-9).startswith("killed by SIGKILL from outside the pool")
    assert exit_cause(-6) == "killed by SIGABRT"


@pytest.mark.timeout(120)
def test_workers_that_cannot_start_raise_after_the_retries_and_a_later_map_starts_afresh(
    tmp_path, monkeypatch
) -> None:
    """A start that keeps failing is tried START_ATTEMPTS times with back-off, then ``map`` raises
    WorkerStartError naming the cause; once the cause is gone, the same pool serves again."""
    from pool_fixtures import die_at_start_if

    from botgrpo_core.rewards import pool as pool_module
    from botgrpo_core.rewards.pool import START_ATTEMPTS, WorkerStartError

    monkeypatch.setattr(pool_module, "START_BACKOFF_S", 0.01)
    flag = tmp_path / "broken"
    flag.touch()
    with WorkerPool(work, workers=1, timeout_s=5, initializer=die_at_start_if, initargs=(str(flag),)) as p:
        with pytest.raises(WorkerStartError, match=rf"exit code 7\); {START_ATTEMPTS} failed start"):
            p.map(["a"])
        with pytest.raises(WorkerStartError):  # still broken: loud again, never "handle is closed"
            p.map(["a", "b"])
        flag.unlink()
        assert p.map(["a", "b", "c"]) == ["A", "B", "C"]


@pytest.mark.timeout(120)
def test_a_replacement_that_cannot_start_fails_the_batch_loudly_and_the_pool_recovers(
    tmp_path, monkeypatch
) -> None:
    """Two workers, both busy; one is killed from outside and its replacements cannot start: ``map`` raises
    (no item is silently an error), the other worker's abandoned items are dropped with it, and the next
    ``map``, once workers start again, gets its own answers."""
    import os
    import signal
    import threading

    from pool_fixtures import die_at_start_if, hang_marked

    from botgrpo_core.rewards import pool as pool_module
    from botgrpo_core.rewards.pool import WorkerStartError

    monkeypatch.setattr(pool_module, "START_BACKOFF_S", 0.01)
    flag, running = tmp_path / "broken", tmp_path / "running"
    with WorkerPool(
        hang_marked,
        workers=2,
        timeout_s=60,
        initializer=die_at_start_if,
        initargs=(str(flag),),
        pipeline_depth=1,
    ) as p:
        assert p.map(["x", "y"]) == ["X", "Y"]

        def killer() -> None:
            pid = int(_wait_for(lambda: running.exists() and running.read_text(), "the item to run"))
            flag.touch()
            os.kill(pid, signal.SIGKILL)

        thread = threading.Thread(target=killer)
        thread.start()
        with pytest.raises(WorkerStartError, match="exit code 7"):
            p.map([f"hang:{running}", "spin", "a", "b"])  # one item per worker: the second spins on
        thread.join()
        flag.unlink()
        assert p.map([f"j{k}" for k in range(20)]) == [f"J{k}" for k in range(20)]


@pytest.mark.timeout(120)
def test_a_batch_deadline_bounds_a_batch_of_hanging_items() -> None:
    """Issue 26 finding 7 for every signal with per-sample processes: each item is bounded by timeout_s (60 s
    here), the batch by batch_timeout_s; past it, running items are killed and the rest are not started."""
    import time

    with WorkerPool(work, workers=2, timeout_s=60, batch_timeout_s=0.5) as p:
        assert p.map(["warm", "up"]) == ["WARM", "UP"]
        start = time.monotonic()
        results = p.map(["a", "hang", "hang", "hang", "b"])
        elapsed = time.monotonic() - start
        assert results[0] == "A"
        late = results[1:]
        assert all(isinstance(r, SampleError) and r.reason == "timeout" for r in late), late
        assert all("batch_timeout_s=0.5" in str(r) for r in late)
        assert elapsed < 0.5 + 10 < 60  # the batch deadline plus slack, not one item's 60 s
        assert p.restarts == 2  # both busy workers were replaced
        assert p.map(["c", "d"], batch_timeout_s=30) == ["C", "D"]  # per call, and the pool serves on
    with pytest.raises(ValueError, match="batch_timeout_s"):
        WorkerPool(work, workers=1, batch_timeout_s=0)
