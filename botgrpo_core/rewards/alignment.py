"""Span-to-token alignment: character spans of the completion onto its tokens.

Plugins speak in characters of the completion text; the loss speaks in tokens.
:func:`~botgrpo_core.rewards.offsets.decode_with_offsets` (re-exported here) gives each token its character
range; :func:`align_spans` turns character spans into a ``(B, T)`` tensor, vectorised: a span
``[start, end)`` adds its value to every token whose character range overlaps it (placement ``span``), or
only to the last such token (placement ``last``, for step-end rewards).
"""

from __future__ import annotations

import itertools
import numbers
import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

import numpy as np

from botgrpo_core.rewards.offsets import TokenOffsets

if TYPE_CHECKING:
    import torch

    from botgrpo_core.signals import Span

Placement = Literal["span", "last"]


class AlignmentError(ValueError):
    """Spans or offsets that do not fit the completion text."""


#: Most spans one sample may return; a result with more is that sample's error (reason ``too_many_spans``,
#: counted in ``signals/<name>/error_frac``), so a signal cannot make alignment's work or memory grow
#: without bound. Alignment itself costs O(spans + tokens), so the cap is generous: a span per token of a
#: 16K-token completion. A signal that scores every token returns ``TokenValues`` instead.
MAX_SPANS_PER_SAMPLE = 16_384


# --- spans -> tokens -----------------------------------------------------------------------------------------
class CheckedSpans(list):  # type: ignore[type-arg]
    """A sample's spans, already checked, with their numbers as one ``(S, 3)`` float64 array.

    ``table[k] = (start, end, value)`` of ``self[k]``. The mixture builds it while checking a signal's
    result, so :func:`align_spans` reads a batch's spans with array ops instead of per-span Python.
    """

    __slots__ = ("table",)

    def __init__(self, spans: Sequence[Span], table: np.ndarray) -> None:
        super().__init__(spans)
        self.table = table


_SPAN_NUMBERS = operator.attrgetter("start", "end", "value")


def span_table(spans: Sequence[Span]) -> np.ndarray:
    """``(S, 3)`` float64 ``(start, end, value)`` of ``spans`` (offsets are exact up to 2**53).

    :raises TypeError, ValueError: a span field is not a number.
    """
    if not spans:
        return np.empty((0, 3), dtype=np.float64)
    flat = itertools.chain.from_iterable(map(_SPAN_NUMBERS, spans))
    return np.fromiter(flat, dtype=np.float64, count=3 * len(spans)).reshape(-1, 3)


def misfit_spans(table: np.ndarray, text_lengths: np.ndarray | int) -> np.ndarray:
    """``(S,)`` bool: the rows of a :func:`span_table` that do not fit their completion.

    A span fits when ``0 <= start <= end <= length``, both offsets are whole numbers and its value is
    finite; :func:`span_problem` says why one does not.

    :param text_lengths: the completion length, or ``(S,)`` lengths (one per span).
    """
    start, end, value = table[:, 0], table[:, 1], table[:, 2]
    fits = (start >= 0) & (start <= end) & (end <= text_lengths) & np.isfinite(value)
    fits &= (start == np.floor(start)) & (end == np.floor(end))
    return ~fits


def _whole(x: object) -> bool:
    return not isinstance(x, bool) and (
        isinstance(x, numbers.Integral) or (isinstance(x, float) and x.is_integer())
    )


def span_problem(span: Span, text_length: int) -> str | None:
    """Why a span does not fit a completion of ``text_length`` characters, or ``None`` if it does."""
    if not (_whole(span.start) and _whole(span.end)):
        return f"span {(span.start, span.end)} has non-integer offsets (need str indices)"
    if not (0 <= span.start <= span.end):
        return f"span {(span.start, span.end)} is not a range (need 0 <= start <= end)"
    if span.end > text_length:
        return f"span {(span.start, span.end)} ends past the completion (length {text_length})"
    if span.value != span.value or span.value in (float("inf"), float("-inf")):
        return f"span {(span.start, span.end)} has a non-finite value {span.value}"
    return None


def offsets_tensor(
    offsets: Sequence[Sequence[tuple[int, int]]], num_tokens: int | None = None
) -> torch.Tensor:
    """Pad per-sample offsets into a ``(B, T, 2)`` long tensor; padding is ``(-1, -1)``.

    Rows may be :class:`TokenOffsets` or ``(N, 2)`` integer arrays (the fast path), or lists of pairs.
    """
    import torch

    width = num_tokens if num_tokens is not None else max((len(o) for o in offsets), default=0)
    out = np.full((len(offsets), width, 2), -1, dtype=np.int64)
    for row, row_offsets in enumerate(offsets):
        n = min(len(row_offsets), width)
        if n == 0:
            continue
        if isinstance(row_offsets, TokenOffsets):
            out[row, :n] = row_offsets.array[:n]
        elif isinstance(row_offsets, np.ndarray):
            out[row, :n] = row_offsets[:n]
        else:  # fromiter over the flattened pairs is several times faster than asarray(list of tuples)
            flat = np.fromiter(itertools.chain.from_iterable(row_offsets[:n]), dtype=np.int64, count=2 * n)
            out[row, :n] = flat.reshape(n, 2)
    return torch.from_numpy(out)


def align_spans(
    spans: Sequence[Sequence[Span]],
    offsets: torch.Tensor,
    text_lengths: Sequence[int],
    *,
    placement: Placement = "span",
) -> torch.Tensor:
    """Spread span values over tokens.

    :param spans: per sample, a list of spans in completion characters.
    :param offsets: ``(B, T, 2)`` token character ranges, padding ``(-1, -1)`` (see :func:`offsets_tensor`).
    :param text_lengths: ``(B,)`` completion lengths in characters.
    :param placement: ``span``: each overlapping token gets the value; ``last``: only the last one.
    :returns: ``(B, T)`` float32; overlapping spans add up. A zero-width span ``[a, a)`` counts as the
        character at ``a`` (the last character when ``a`` is the end of the text).
    :raises AlignmentError: for a span outside its text.
    """
    import torch

    if placement not in ("span", "last"):
        raise ValueError(f"placement must be 'span' or 'last', got {placement!r}")
    B, T = offsets.shape[0], offsets.shape[1]
    out = torch.zeros(B, T, dtype=torch.float32)
    if not any(len(row_spans) for row_spans in spans) or T == 0:
        return out
    row_t, start_t, end_t, value_t = _span_columns(spans, text_lengths)
    first, stop, flat_start, flat_end = _token_ranges(offsets, text_lengths, row_t, start_t, end_t)
    count = (stop - first).clamp(min=0)  # (S,) tokens each span touches
    if placement == "last":
        hit = count > 0
        out.view(-1).index_add_(0, (stop - 1)[hit], value_t[hit])
        return out
    # Each span adds its value at its first token and takes it back after its last: a (B, T + 1) float64
    # difference table, summed along each row. Time and memory O(S + B T), however wide and many the
    # spans (expanding every (span, token) pair cost 7 GiB for 8 x 5,000 full-width spans of 4,000
    # tokens). float64 sums of float32 values round below float32's resolution; tokens no span covers
    # (an exact integer count) are exactly 0, and so are empty-range tokens (they overlap nothing).
    hit = count > 0
    row, start_col = row_t[hit], first[hit] - row_t[hit] * T
    stop_col = stop[hit] - row_t[hit] * T  # (S',) in [1, T]
    value = value_t[hit].double()
    diff = torch.zeros(B, T + 1, dtype=torch.float64)
    diff.index_put_((row, start_col), value, accumulate=True)
    diff.index_put_((row, stop_col), -value, accumulate=True)
    cover = torch.zeros(B, T + 1, dtype=torch.int64)
    cover.index_put_((row, start_col), torch.ones_like(row), accumulate=True)
    cover.index_put_((row, stop_col), -torch.ones_like(row), accumulate=True)
    covered = cover.cumsum(1)[:, :T] > 0
    covered &= (flat_end - flat_start).view(B, T) > 0
    return torch.where(covered, diff.cumsum(1)[:, :T], 0.0).float()


def align_each(
    spans: Sequence[Sequence[Span]],
    offsets: torch.Tensor,
    text_lengths: Sequence[int],
    *,
    placement: Placement = "span",
) -> tuple[torch.Tensor, dict[int, Exception]]:
    """:func:`align_spans` on the batch; should it raise, row by row, so a sample whose spans cannot be
    aligned costs that sample only: its row stays 0 and ``{row: the exception}`` says which and why."""
    import torch

    try:
        return align_spans(spans, offsets, text_lengths, placement=placement), {}
    except Exception:  # any failure here is isolated below, row by row
        pass
    out = torch.zeros(offsets.shape[0], offsets.shape[1], dtype=torch.float32)
    errors: dict[int, Exception] = {}
    for i, row in enumerate(spans):
        try:
            out[i] = align_spans([row], offsets[i : i + 1], [text_lengths[i]], placement=placement)[0]
        except Exception as exc:  # e.g. AlignmentError, MemoryError: this row's error
            errors[i] = exc
    return out, errors


def _span_columns(
    spans: Sequence[Sequence[Span]], text_lengths: Sequence[int]
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """All spans of the batch as ``(S,)`` columns: row, start, end, value (checked to fit their text).

    A zero-width span ``[a, a)`` becomes ``[a, a + 1)``, or ``[a - 1, a)`` at the end of the text; one in
    an empty text is dropped (it touches nothing).
    """
    import torch

    counts = [len(row_spans) for row_spans in spans]
    tables = [
        row_spans.table if isinstance(row_spans, CheckedSpans) else span_table(row_spans)
        for row_spans in spans
        if row_spans
    ]
    table = np.concatenate(tables)  # (S, 3) float64: start, end, value
    rows = np.repeat(np.arange(len(spans)), counts)  # (S,)
    lengths = np.asarray(text_lengths, dtype=np.int64)
    bad = misfit_spans(table, lengths[rows])
    if bad.any():
        k = int(np.argmax(bad))
        row = int(rows[k])
        span = spans[row][k - (sum(counts[:row]))]
        raise AlignmentError(f"sample {row}: {span_problem(span, int(lengths[row]))}")
    row_t = torch.from_numpy(rows)
    start_t, end_t = torch.from_numpy(table[:, 0]).long(), torch.from_numpy(table[:, 1]).long()
    value_t = torch.from_numpy(table[:, 2]).float()
    length_t = torch.from_numpy(lengths)[row_t]  # (S,)
    empty = start_t == end_t
    at_end = empty & (start_t == length_t)
    start_t = torch.where(at_end, start_t - 1, start_t)
    end_t = torch.where(empty & ~at_end, end_t + 1, end_t)
    keep = start_t >= 0
    return row_t[keep], start_t[keep], end_t[keep], value_t[keep]


def _token_ranges(
    offsets: torch.Tensor,
    text_lengths: Sequence[int],
    row_t: torch.Tensor,
    start_t: torch.Tensor,
    end_t: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per span, the flat index of the first token it touches and one past the last (two searchsorted
    calls over the batch flattened into one sorted sequence), plus the flat token starts and ends."""
    import torch

    B = offsets.shape[0]
    # Row r's offsets live in [r * big, (r + 1) * big), so the flattened starts and ends are non-decreasing.
    big = int(max(max(text_lengths), int(offsets.max())) + 2)
    row_base = (torch.arange(B, dtype=torch.long) * big).unsqueeze(1)  # (B, 1)
    padding = offsets[..., 0] < 0  # (B, T)
    flat_start = (torch.where(padding, big - 1, offsets[..., 0]) + row_base).reshape(-1)
    flat_end = (torch.where(padding, big - 1, offsets[..., 1]) + row_base).reshape(-1)
    base = row_t * big
    first = torch.searchsorted(flat_end, start_t + base, right=True)  # first token with end > start
    stop = torch.searchsorted(flat_start, end_t + base, right=False)  # first token with start >= end
    return first, stop, flat_start, flat_end
