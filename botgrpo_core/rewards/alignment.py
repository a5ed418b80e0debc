"""Token character offsets, and span-to-token alignment.

Plugins speak in characters of the completion text; the loss speaks in tokens. This module maps
one onto the other:

- :func:`decode_with_offsets` decodes completion token ids and gives each token its ``[start, end)``
  character range in the decoded text. For byte-level BPE a token may hold part of a multi-byte
  character; such a token covers that whole character (both tokens that share it overlap it), so no
  later offset shifts. Ill-formed bytes (a completion cut mid-character) decode to U+FFFD as
  ``tokenizer.decode`` does, one per maximal subpart, and the tokens holding them cover it: linear in
  the completion. Offsets are checked against ``tokenizer.decode``; tokenizers whose pieces do not
  concatenate to the decoded text fall back to exact (quadratic) prefix decoding.
- :func:`align_spans` turns character spans into a ``(B, T)`` tensor, vectorised: a span
  ``[start, end)`` adds its value to every token whose character range overlaps it (placement
  ``span``), or only to the last such token (placement ``last``, for step-end rewards).
"""

from __future__ import annotations

import codecs
import functools
import itertools
import numbers
import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

if TYPE_CHECKING:
    import torch

    from botgrpo_core.signals import Span

Placement = Literal["span", "last"]


class AlignmentError(ValueError):
    """Spans or offsets that do not fit the completion text."""


class TokenOffsets(Sequence[tuple[int, int]]):
    """Token character ranges backed by one ``(N, 2)`` int64 array.

    Plugins see a plain sequence of ``(start, end)`` tuples; the mixture pads the array straight into
    its ``(B, T, 2)`` tensor, so a batch's offsets never pass through per-token Python.
    """

    __slots__ = ("array",)

    def __init__(self, array: np.ndarray | Sequence[tuple[int, int]]) -> None:
        arr = np.array(array, dtype=np.int64)  # a copy: freezing it never touches the caller's array
        if arr.size == 0:
            arr = arr.reshape(0, 2)
        if arr.ndim != 2 or arr.shape[1] != 2:
            raise ValueError(f"token offsets must have shape (N, 2), got {arr.shape}")
        arr.setflags(write=False)  # shared by every holder of the sample
        self.array = arr

    def __len__(self) -> int:
        return self.array.shape[0]

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return TokenOffsets(self.array[index])
        start, end = self.array[index].tolist()
        return (start, end)

    def __iter__(self) -> Any:
        return map(tuple, self.array.tolist())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TokenOffsets):
            return bool(np.array_equal(self.array, other.array))
        if isinstance(other, Sequence):
            return list(self) == [tuple(pair) for pair in other]
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"TokenOffsets({list(self)!r})"

    def __reduce__(self) -> tuple[Any, ...]:  # samples travel to worker processes
        return (TokenOffsets, (np.array(self.array),))


# --- offsets --------------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def _byte_decoder() -> dict[str, int]:
    """Inverse of GPT-2's ``bytes_to_unicode`` (byte-level BPE writes each byte as a printable char)."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
    printable += list(range(ord("®"), ord("ÿ") + 1))
    chars = printable[:]
    extra = 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            chars.append(256 + extra)
            extra += 1
    return {chr(c): b for b, c in zip(printable, chars)}


def _decoder_kind(tokenizer: Any) -> str:
    backend = getattr(tokenizer, "backend_tokenizer", None) or getattr(tokenizer, "_tokenizer", None)
    decoder = getattr(backend, "decoder", None)
    if decoder is None:
        return "plain"
    text = repr(decoder) + str(getattr(decoder, "__getstate__", lambda: "")())
    if "ByteLevel" in text:
        return "byte_level"
    if "ByteFallback" in text or "Metaspace" in text or "▁" in text:
        return "sentencepiece"
    return "plain"


def _piece_bytes(piece: str, kind: str) -> bytes:
    if kind == "byte_level":
        table = _byte_decoder()
        return bytes(table[c] for c in piece) if all(c in table for c in piece) else piece.encode()
    if kind == "sentencepiece":
        if len(piece) == 6 and piece.startswith("<0x") and piece.endswith(">"):
            try:
                return bytes([int(piece[3:5], 16)])
            except ValueError:
                pass
        return piece.replace("▁", " ").encode()
    return piece.encode()


def utf8_char_starts(data: bytes) -> tuple[str, np.ndarray]:
    """Decode UTF-8 ``data`` as ``data.decode("utf-8", errors="replace")`` and mark where each character starts.

    A valid character starts at its lead byte (continuation bytes are ``10xxxxxx``). An ill-formed
    sequence becomes one U+FFFD per *maximal subpart* (Unicode 15, section 3.9, "U+FFFD Substitution of
    Maximal Subparts", which Python's and Rust's ``from_utf8_lossy`` decoders follow), and that U+FFFD
    starts at the subpart's first byte. Linear: each strict decode resumes after the last error.

    :returns: ``(text, is_char_start)`` with ``is_char_start`` a ``(len(data),)`` bool array whose
        ``sum()`` is ``len(text)``.
    """
    arr = np.frombuffer(data, dtype=np.uint8)
    is_char_start = (arr & 0xC0) != 0x80  # (nbytes,)
    view, pos, parts = memoryview(data), 0, []
    while True:
        try:
            parts.append(codecs.utf_8_decode(view[pos:], "strict", True)[0])
            return "".join(parts), is_char_start
        except UnicodeDecodeError as exc:  # bytes [start, end) are one maximal subpart: one U+FFFD
            start, end = pos + exc.start, pos + exc.end
            parts.append(codecs.utf_8_decode(view[pos:start], "strict", True)[0] + "\ufffd")
            is_char_start[start:end] = False
            is_char_start[start] = True
            pos = end


def byte_to_char_offsets(
    data: bytes, byte_offsets: np.ndarray, is_char_start: np.ndarray | None = None
) -> np.ndarray:
    """Map byte boundaries of UTF-8 ``data`` to character indices of ``data.decode()``.

    A boundary inside a multi-byte character maps to the end of that character when it closes a
    range and to its start when it opens one; callers pass ``(starts, ends)`` and get both.

    :param byte_offsets: ``(N, 2)`` int array of ``[start, end)`` byte ranges.
    :param is_char_start: ``(nbytes,)`` bool, the first byte of each character (from
        :func:`utf8_char_starts` when ``data`` may be ill-formed); default: the lead bytes of valid UTF-8.
    :returns: ``(N, 2)`` int array of character ranges.
    """
    arr = np.frombuffer(data, dtype=np.uint8)
    if is_char_start is None:
        is_char_start = (arr & 0xC0) != 0x80  # continuation bytes are 10xxxxxx
    char_of_byte = np.cumsum(is_char_start) - 1  # (nbytes,)
    n_chars = int(is_char_start.sum())
    starts, ends = byte_offsets[:, 0], byte_offsets[:, 1]
    out = np.empty_like(byte_offsets)
    char_at = np.append(char_of_byte, n_chars)  # a boundary at the end maps to n_chars
    out[:, 0] = char_at[np.minimum(starts, len(arr))]
    # end: one past the character that holds the range's last byte (an empty range stays empty)
    last_byte = np.minimum(np.maximum(ends - 1, 0), len(arr))
    out[:, 1] = np.where(ends > starts, char_at[last_byte] + 1, out[:, 0])
    return out


def decode_with_offsets(
    tokenizer: Any, token_ids: Sequence[int], *, skip_special_tokens: bool = True
) -> tuple[str, TokenOffsets]:
    """Decode completion ids and give each token its character range in the decoded text.

    Special tokens that decoding skips get an empty range at their position.

    :returns: ``(text, offsets)`` with ``len(offsets) == len(token_ids)``.
    """
    ids = [int(i) for i in token_ids]
    text = tokenizer.decode(ids, skip_special_tokens=skip_special_tokens)
    if not ids:
        return text, TokenOffsets(np.empty((0, 2), dtype=np.int64))
    special = set(getattr(tokenizer, "all_special_ids", ()) or ()) if skip_special_tokens else set()
    kind = _decoder_kind(tokenizer)
    pieces = tokenizer.convert_ids_to_tokens(ids)
    chunks = [b"" if i in special else _piece_bytes(p, kind) for i, p in zip(ids, pieces)]
    data = b"".join(chunks)
    decoded, is_char_start = utf8_char_starts(data)  # ill-formed bytes (a cut character) -> U+FFFD
    if decoded == text:
        lengths = np.fromiter((len(c) for c in chunks), dtype=np.int64, count=len(chunks))
        ends = np.cumsum(lengths)
        byte_ranges = np.stack([ends - lengths, ends], axis=1)
        return text, TokenOffsets(byte_to_char_offsets(data, byte_ranges, is_char_start))
    return text, TokenOffsets(_prefix_offsets(tokenizer, ids, text, skip_special_tokens))


def _prefix_offsets(tokenizer: Any, ids: list[int], text: str, skip: bool) -> list[tuple[int, int]]:
    """Exact but quadratic fallback: decode every prefix and take the common-prefix lengths."""
    offsets: list[tuple[int, int]] = []
    previous = 0
    for t in range(len(ids)):
        prefix = tokenizer.decode(ids[: t + 1], skip_special_tokens=skip)
        # A prefix that ends inside a multi-byte char decodes to U+FFFD: it has not reached that char yet.
        stable = len(prefix.rstrip("\ufffd")) if t + 1 < len(ids) else len(text)
        common = 0
        limit = min(stable, len(text))
        while common < limit and prefix[common] == text[common]:
            common += 1
        end = max(previous, common)
        offsets.append((min(previous, end), end))
        previous = end
    return offsets


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
    flat_out = out.view(-1)
    if placement == "last":
        hit = count > 0
        flat_out.index_add_(0, (stop - 1)[hit], value_t[hit])
        return out
    # Expand every (span, token) pair: exact sums, no cumulative-sum round-off.
    span_of_pair = torch.repeat_interleave(torch.arange(int(row_t.numel())), count)  # (P,)
    pair_rank = torch.arange(span_of_pair.numel()) - torch.repeat_interleave(
        torch.cumsum(count, 0) - count, count
    )
    token_of_pair = first[span_of_pair] + pair_rank
    non_empty = (flat_end - flat_start)[token_of_pair] > 0  # empty-range tokens overlap nothing
    flat_out.index_add_(0, token_of_pair[non_empty], value_t[span_of_pair][non_empty])
    return out


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
