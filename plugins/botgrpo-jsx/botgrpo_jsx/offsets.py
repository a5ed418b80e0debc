"""Offset conversions between the units our backends report and Python ``str`` indices.

tree-sitter reports UTF-8 byte offsets, esbuild a 1-based line plus a UTF-8 byte column, and
TypeScript UTF-16 code-unit offsets. Signals must return spans in ``str`` indices (code points) of the
completion, so every backend position goes through a :class:`TextIndex` of the exact text that
backend saw. Texts are first passed through :func:`sanitize`, which keeps one code point per code
point (so indices are unchanged) but makes the text encodable: a lone surrogate (possible in a
``str`` decoded with ``surrogateescape``) cannot be written as UTF-8 at all.
"""

from __future__ import annotations

import re

import numpy as np

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def sanitize(text: str) -> str:
    """Replace lone surrogates with U+FFFD, keeping the length (and so every index) unchanged."""
    if text.isascii():
        return text
    return _LONE_SURROGATE.sub(REPLACEMENT, text)


class TextIndex:
    """Maps byte, UTF-16 and line/column positions of one text onto its ``str`` indices.

    Positions inside a multi-byte character map to that character's index; positions past the end
    clamp to ``len(text)``. ASCII texts (the common case) take a shortcut with no tables.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.length = len(text)
        self.ascii = text.isascii()
        self._byte_starts: np.ndarray | None = None
        self._utf16_starts: np.ndarray | None = None
        self._line_starts: list[int] | None = None
        if not self.ascii:
            # One uint32 per code point; "surrogatepass" so a stray surrogate cannot raise here.
            cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
            utf8_len = 1 + (cps >= 0x80) + (cps >= 0x800) + (cps >= 0x10000)
            utf16_len = 1 + (cps >= 0x10000)
            self._byte_starts = np.concatenate(([0], np.cumsum(utf8_len, dtype=np.int64)))
            self._utf16_starts = np.concatenate(([0], np.cumsum(utf16_len, dtype=np.int64)))

    @property
    def byte_length(self) -> int:
        """Length of the text in UTF-8 bytes."""
        return self.length if self._byte_starts is None else int(self._byte_starts[-1])

    def char_of_byte(self, offset: int) -> int:
        """``str`` index of the character containing UTF-8 byte ``offset``."""
        if offset <= 0:
            return 0
        if self._byte_starts is None:
            return min(offset, self.length)
        return int(np.searchsorted(self._byte_starts, offset, side="right")) - 1

    def char_of_utf16(self, offset: int) -> int:
        """``str`` index of the character containing UTF-16 code unit ``offset``."""
        if offset <= 0:
            return 0
        if self._utf16_starts is None:
            return min(offset, self.length)
        return int(np.searchsorted(self._utf16_starts, offset, side="right")) - 1

    def byte_of_char(self, index: int) -> int:
        """UTF-8 byte offset where character ``index`` starts."""
        index = max(0, min(index, self.length))
        return index if self._byte_starts is None else int(self._byte_starts[index])

    def line_start(self, line: int) -> int:
        """``str`` index where 1-based ``line`` starts (clamped to the text)."""
        if self._line_starts is None:
            self._line_starts = [0] + [m.end() for m in re.finditer("\n", self.text)]
        line = max(1, min(line, len(self._line_starts)))
        return self._line_starts[line - 1]

    def char_of_line_byte_col(self, line: int, byte_col: int) -> int:
        """``str`` index of 1-based ``line`` and 0-based UTF-8 byte column (esbuild's convention)."""
        start = self.line_start(line)
        return self.char_of_byte(self.byte_of_char(start) + max(0, byte_col))
