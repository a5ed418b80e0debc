"""Token character offsets: decode completion ids and give each token its ``[start, end)`` in the text.

Plugins speak in characters of the completion text; the loss speaks in tokens. :func:`decode_with_offsets`
decodes completion token ids and gives each token its character range in the decoded text. For
byte-level BPE a token may hold part of a multi-byte character; such a token covers that whole character
(both tokens that share it overlap it), so no later offset shifts. Ill-formed bytes (a completion cut
mid-character) decode to U+FFFD as ``tokenizer.decode`` does (one per maximal subpart for byte-level BPE,
one per byte of a bad run of sentencepiece byte pieces), and the tokens holding them cover it: linear in the
completion. Offsets are checked against ``tokenizer.decode`` (which may strip leading spaces, as
sentencepiece decoders do); tokenizers whose pieces do not otherwise concatenate to the decoded text fall
back to exact (quadratic) prefix decoding. :mod:`botgrpo_core.rewards.alignment` maps spans onto these
ranges.
"""

from __future__ import annotations

import codecs
import functools
from collections.abc import Sequence
from typing import Any

import numpy as np


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


# --- decoding --------------------------------------------------------------------------------------------------
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
        if _is_byte_piece(piece):
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
    lengths = np.fromiter((len(c) for c in chunks), dtype=np.int64, count=len(chunks))
    ends = np.cumsum(lengths)
    byte_ranges = np.stack([ends - lengths, ends], axis=1)  # (T, 2)
    if kind == "sentencepiece":
        is_byte = np.fromiter((_is_byte_piece(p) for p in pieces), dtype=bool, count=len(pieces))
        decoded, is_char_start = _byte_fallback_chars(data, byte_ranges, is_byte)
    else:  # ill-formed bytes (a cut character) -> U+FFFD
        decoded, is_char_start = utf8_char_starts(data)
    # sentencepiece decoders (Llama, Mistral) strip the space the first piece's "▁" stands for
    stripped = len(decoded) - len(text)
    if decoded == text or (stripped > 0 and decoded.endswith(text) and decoded[:stripped].isspace()):
        chars = byte_to_char_offsets(data, byte_ranges, is_char_start) - stripped
        return text, TokenOffsets(np.maximum(chars, 0))
    return text, TokenOffsets(_prefix_offsets(tokenizer, ids, text, skip_special_tokens))


def _is_byte_piece(piece: str) -> bool:
    return len(piece) == 6 and piece.startswith("<0x") and piece.endswith(">")


def _byte_fallback_chars(data: bytes, byte_ranges: np.ndarray, is_byte: np.ndarray) -> tuple[str, np.ndarray]:
    """:func:`utf8_char_starts` as a sentencepiece ``ByteFallback`` decoder reads the pieces: each run of
    byte pieces (``<0xE6>``) decodes as a whole, and a run that is not valid UTF-8 becomes one U+FFFD
    per byte (``[<0xE5>, <0xAD>]`` -> two). Other pieces are text. Linear: one decode per run.

    :param byte_ranges: ``(T, 2)`` byte range of each piece in ``data``; ``is_byte``: ``(T,)`` bool.
    """
    is_char_start = (np.frombuffer(data, dtype=np.uint8) & 0xC0) != 0x80  # (nbytes,)
    edges = np.flatnonzero(np.diff(np.concatenate([[False], is_byte, [False]]).astype(np.int8)))
    parts, done = [], 0
    for first, stop in zip(edges[::2], edges[1::2]):  # runs [first, stop) of byte pieces
        a, b = int(byte_ranges[first, 0]), int(byte_ranges[stop - 1, 1])
        try:
            data[a:b].decode("utf-8")
        except UnicodeDecodeError:
            parts += [data[done:a].decode("utf-8", errors="replace"), "\ufffd" * (b - a)]
            is_char_start[a:b] = True
            done = b
    parts.append(data[done:].decode("utf-8", errors="replace"))
    return "".join(parts), is_char_start


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
