"""A bounded in-memory cache of judge answers within one run.

Keys are tuples such as ``(backend, model, mode, template identity, question, step prefix)``; they are
hashed to 16-byte digests, so a cache of long prompts costs little memory. Rollouts of one prompt often
share their first steps, so step-prefix keys hit often in GRPO batches.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


def digest(key: tuple[Hashable, ...]) -> bytes:
    """A stable 16-byte digest of a tuple of strings, numbers and nested tuples."""
    return hashlib.blake2b(repr(key).encode("utf-8", "surrogatepass"), digest_size=16).digest()


class LRUCache(Generic[V]):
    """Least-recently-used cache with hit and miss counters; ``max_entries = 0`` disables it."""

    def __init__(self, max_entries: int) -> None:
        self.max_entries = max_entries
        self._data: OrderedDict[bytes, V] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def get(self, key: tuple[Hashable, ...]) -> V | None:
        if self.max_entries <= 0:
            return None
        k = digest(key)
        value = self._data.get(k)
        if value is None:
            self.misses += 1
            return None
        self._data.move_to_end(k)
        self.hits += 1
        return value

    def put(self, key: tuple[Hashable, ...], value: V) -> None:
        if self.max_entries <= 0:
            return
        k = digest(key)
        self._data[k] = value
        self._data.move_to_end(k)
        while len(self._data) > self.max_entries:
            self._data.popitem(last=False)

    def __len__(self) -> int:
        return len(self._data)
