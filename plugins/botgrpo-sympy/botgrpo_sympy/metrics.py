"""Scores of a step checker against labelled steps (used by the tests and scripts/evaluate.py)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class StepMetrics:
    """Confusion counts of (label, predicted) over steps, labels and predictions in {-1, 0, 1}."""

    counts: Counter

    @classmethod
    def of(cls, pairs: Iterable[tuple[int, int]]) -> StepMetrics:
        return cls(Counter((int(label), int(pred)) for label, pred in pairs))

    @property
    def n(self) -> int:
        return sum(self.counts.values())

    def _sum(self, label: int | None = None, pred: int | None = None) -> int:
        return sum(
            v
            for (lab, p), v in self.counts.items()
            if (label is None or lab == label) and (pred is None or p == pred)
        )

    def precision(self, value: int) -> float:
        """Of the steps predicted ``value``, the share labelled ``value`` (nan if none predicted)."""
        predicted = self._sum(pred=value)
        return self.counts[(value, value)] / predicted if predicted else float("nan")

    def recall(self, value: int) -> float:
        """Of the steps labelled ``value``, the share predicted ``value`` (nan if none labelled)."""
        labelled = self._sum(label=value)
        return self.counts[(value, value)] / labelled if labelled else float("nan")

    def zero_rate(self, among_labelled_claims: bool = False) -> float:
        """Share of steps predicted 0 (optionally only among steps labelled +1 or -1)."""
        if among_labelled_claims:
            total = self._sum(label=1) + self._sum(label=-1)
            zeros = self.counts[(1, 0)] + self.counts[(-1, 0)]
            return zeros / total if total else float("nan")
        return self._sum(pred=0) / self.n if self.n else float("nan")
