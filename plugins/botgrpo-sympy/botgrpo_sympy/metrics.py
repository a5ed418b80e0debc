"""Scores of a step checker against labelled steps and the prose corpus (tests and scripts/evaluate.py)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple


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


# --- the prose corpus (tests/data/prose_corpus.jsonl): false alarms and caught errors ---------------------
#: Writing features of a line, for the per-cause breakdown (regexes on the line text).
FEATURES: dict[str, re.Pattern[str]] = {
    "leading-dot decimal": re.compile(r"(?<![\d.])\.\d"),
    "$ in an expression": re.compile(r"\$\d"),
    "percent": re.compile(r"%"),
    "thousands ,": re.compile(r"\d,\d{3}"),
    "thousands space/NBSP": re.compile(r"\d[ \u00a0\u202f]\d{3}(?![\d/])"),
    "mixed number": re.compile(r"\d \d+/\d"),
    "unicode minus/dash": re.compile(r"[−–]"),
    "× ÷ x signs": re.compile(r"[×÷]|\d x \d|\d x \$"),
    "of/by before a number": re.compile(r"\b(?:of|by) \$?\d"),
    "unit glued to a number": re.compile(r"\d(?:g|kg|L|ml|m|km|cm|h)\b"),
    "function notation": re.compile(r"(?<![A-Za-z\\])[a-zA-Z]\((?:-?\d|[a-z]\()"),
    "degrees": re.compile(r"\\circ|°"),
    "case / substitution": re.compile(r"(?i)\b(?:if|plug\w*|other solution|for|let|suppose)\b[^=]*="),
    "condition": re.compile(r"\$[^$]*(?:[<>]|\\[lg]eq?\b)[^$]*\$"),
    "chain with a variable": re.compile(r"[a-z](?:\^\{?\d\}?)?\s*=[^=$]+=[^=]"),
    "answer line": re.compile(r"(?i)^\s*(?:####|the answer is|answer:|\$?\\boxed)"),
}


def features(text: str) -> list[str]:
    """The writing features of a line (``plain`` when it has none)."""
    found = [name for name, pattern in FEATURES.items() if pattern.search(text)]
    return found or ["plain"]


class LineOutcome(NamedTuple):
    """One line of the prose corpus and the value ``sympy.steps`` gave it."""

    style: str  # gsm8k | competition
    kind: str  # clean | step_twin | answer_twin
    split: str  # dev | heldout
    label: str  # correct | none | wrong
    features: tuple[str, ...]
    value: int
    group: str = ""  # the record's ``set`` (``issue27``: the solutions written for issue 27), else ""

    @property
    def answer(self) -> bool:
        return "answer line" in self.features


@dataclass
class ProseFigures:
    """Per-line outcomes on the prose corpus, and per solution whether any span was -1."""

    rows: list[LineOutcome]
    solutions: list[tuple[str, str, str, bool]]  # (style, kind, split, any -1 span)
    split: str | None = None  # restrict every figure to one split

    def only(self, split: str | None) -> ProseFigures:
        return ProseFigures(self.rows, self.solutions, split)

    def rate(self, value: int, feature: str | None = None, **where: Any) -> tuple[int, int]:
        """``(hits, n)``: lines matching ``where`` (fields of :class:`LineOutcome`) scored ``value``."""
        where = {**where, "split": self.split} if self.split else where
        picked = [
            r
            for r in self.rows
            if all(getattr(r, k) == v for k, v in where.items() if v is not None)
            and (feature is None or feature in r.features)
        ]
        return sum(r.value == value for r in picked), len(picked)

    def false_alarm_solutions(self, style: str | None = None) -> tuple[int, int]:
        picked = [
            s
            for s in self.solutions
            if s[1] == "clean" and style in (None, s[0]) and self.split in (None, s[2])
        ]
        return sum(s[3] for s in picked), len(picked)


def line_values(completion: str, spans: Iterable[Any]) -> list[float]:
    """One value per line that holds a span, in order: -1 if a span starting in it is -1, else +1 if one is +1,
    else 0 (a step's value when ``step_split: lines``, whether its claims got one span or one per clause).

    ``spans``: ``(start, end, value, meta)`` tuples or ``Span`` objects."""
    per_line: dict[int, list[float]] = {}
    for span in spans:
        start, value = (span[0], span[2]) if isinstance(span, tuple) else (span.start, span.value)
        per_line.setdefault(completion.count("\n", 0, start), []).append(value)
    out = []
    for line in sorted(per_line):
        values = per_line[line]
        out.append(-1.0 if -1.0 in values else 1.0 if 1.0 in values else 0.0)
    return out


def prose_figures(records: list[dict], spans_per_record: list[list[float]]) -> ProseFigures:
    """Collect the outcome of every line (``spans_per_record``: one value per line, in order)."""
    rows, solutions = [], []
    for record, values in zip(records, spans_per_record, strict=True):
        split = record.get("split", "dev")
        for line, value in zip(record["lines"], values, strict=True):
            feats = tuple(features(line["text"]))
            group = record.get("set", "")
            rows.append(
                LineOutcome(record["style"], record["kind"], split, line["label"], feats, int(value), group)
            )
        solutions.append((record["style"], record["kind"], split, -1 in [int(v) for v in values]))
    return ProseFigures(rows, solutions)


def _share(hits_n: tuple[int, int]) -> float:
    hits, n = hits_n
    return hits / n if n else float("nan")


def prose_goals(fig: ProseFigures) -> list[tuple[str, tuple[int, int], str, bool]]:
    """The goals of issue 14 on the prose corpus: ``(what, (hits, n), goal, met)``."""
    rows = [
        (
            "grade-school correct step lines scored -1",
            fig.rate(-1, style="gsm8k", kind="clean", label="correct", answer=False),
            "<= 1%",
            lambda x: x <= 0.01,
        ),
        (
            "grade-school clean solutions with any -1 span",
            fig.false_alarm_solutions("gsm8k"),
            "<= 3%",
            lambda x: x <= 0.03,
        ),
        (
            "corrupted steps scored -1",
            fig.rate(-1, kind="step_twin", label="wrong"),
            ">= 95%",
            lambda x: x >= 0.95,
        ),
        (
            "competition-style correct steps scored -1",
            fig.rate(-1, style="competition", kind="clean", label="correct", answer=False),
            "<= 2%",
            lambda x: x <= 0.02,
        ),
    ]
    return [(what, counts, goal, bool(ok(_share(counts)))) for what, counts, goal, ok in rows]


def issue27_goals(fig: ProseFigures) -> list[tuple[str, tuple[int, int], str, bool]]:
    """The goals of issue 27 on its own solutions (``set: issue27``; clean lines of every kind, answers too)."""
    correct = fig.rate(-1, group="issue27", kind="clean", label="correct")
    caught = [
        fig.rate(-1, group="issue27", kind=kind, label="wrong")
        for kind in ("hand_twin", "step_twin", "answer_twin")
    ]
    corrupted = (sum(h for h, _ in caught), sum(n for _, n in caught))
    return [
        ("issue-27 correct lines scored -1", correct, "<= 1%", _share(correct) <= 0.01),
        ("issue-27 corrupted lines scored -1", corrupted, ">= 95%", _share(corrupted) >= 0.95),
    ]


def issue40_goals(fig: ProseFigures) -> list[tuple[str, tuple[int, int], str, bool]]:
    """The goals of issue 40 on the whole corpus (all sets; answer lines included): competition-style correct
    lines scored -1, grade-school clean solutions with a -1, corrupted lines (every twin kind) caught; and the
    issue-40 solutions' own correct lines (``set: issue40``)."""
    competition = fig.rate(-1, style="competition", kind="clean", label="correct")
    gsm = fig.false_alarm_solutions("gsm8k")
    caught = [fig.rate(-1, kind=kind, label="wrong") for kind in ("hand_twin", "step_twin", "answer_twin")]
    corrupted = (sum(h for h, _ in caught), sum(n for _, n in caught))
    own = fig.rate(-1, group="issue40", kind="clean", label="correct")
    return [
        ("competition-style correct lines scored -1", competition, "<= 1%", _share(competition) <= 0.01),
        ("grade-school clean solutions with a -1 span", gsm, "<= 0.5%", _share(gsm) <= 0.005),
        (
            "corrupted lines scored -1 (hand, step and answer twins)",
            corrupted,
            ">= 97%",
            _share(corrupted) >= 0.97,
        ),
        ("issue-40 correct lines scored -1", own, "<= 1%", _share(own) <= 0.01 if own[1] else True),
    ]
