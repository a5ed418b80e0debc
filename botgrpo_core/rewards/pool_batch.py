"""One :meth:`~botgrpo_core.rewards.pool.WorkerPool.map` call's bookkeeping: its items, their queues (one,
or one per worker with affinity), results, the items running, and the batch's deadline."""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass
class _Batch:
    """One :meth:`WorkerPool.map` call: its items, results, the queues and how many are running.

    Without affinity there is one queue; with it, one per worker (item ``i`` queued for worker
    ``affinity[i] % workers``), and an idle worker whose queue is empty takes the last item of the
    longest other queue, so the batch never waits on one busy worker.
    """

    items: Sequence[Any]
    timeout: float
    affinity: Sequence[int] | None = None
    workers: int = 1
    results: list[Any] = field(init=False)
    queues: list[deque[int]] = field(init=False)
    running: int = 0
    #: pickled messages of items too large to wait in a busy worker's pipe, until one is idle
    held: dict[int, bytes] = field(default_factory=dict)
    #: the whole batch's deadline (``time.monotonic()``; inf: none) and its length in seconds
    end: float = math.inf
    limit: float | None = None

    def __post_init__(self) -> None:
        self.results = [None] * len(self.items)
        if self.affinity is None:
            self.queues = [deque(range(len(self.items)))]
            return
        if len(self.affinity) != len(self.items):
            raise ValueError(
                f"WorkerPool.map: {len(self.affinity)} affinity keys for {len(self.items)} items"
            )
        self.queues = [deque() for _ in range(self.workers)]
        for i, key in enumerate(self.affinity):
            self.queues[key % self.workers].append(i)

    @property
    def pending(self) -> bool:
        return any(self.queues)

    def next_for(self, worker: int) -> int:
        """The next item for worker ``worker`` (index): its own queue's first, else another's last."""
        if len(self.queues) == 1:
            return self.queues[0].popleft()
        own = self.queues[worker]
        return own.popleft() if own else max(self.queues, key=len).pop()

    def put_back(self, worker: int, items: Sequence[int]) -> None:
        """Queue items that were taken for worker ``worker`` but did not run again, first in its queue."""
        queue = self.queues[worker if len(self.queues) > 1 else 0]
        queue.extendleft(reversed(items))

    def finish(self, item: int, result: Any) -> None:
        self.results[item] = result
        self.running -= 1
