"""The token table of a parse, for :mod:`botgrpo_jsx.blame`: its leaves with their lines and indentation.

Strings, regexes, numbers and JSX text are one token each (a bracket inside them is text), comments are
left out, and MISSING nodes (error recovery's, zero-width) too. Rows are the lines that have tokens; the
indentation of each row says where its blocks end (``next_le``) and open (``prev_le``).
"""

from __future__ import annotations

import functools

import numpy as np

from botgrpo_jsx.treesitter import Grammar, Parsed, iter_error_nodes, kind_tables

PAIRS = {"{": "}", "(": ")", "[": "]", "${": "}"}
CLOSERS = {"}": "{", ")": "(", "]": "["}
#: "No deeper" allows this many extra columns (a bracket deleted with the space after it).
_SLACK = 1


class Tokens:
    """The leaves of a tree (byte ranges and types) with their lines and indentation."""

    def __init__(self, parsed: Parsed) -> None:
        starts, ends, ids = [], [], []
        names, whole, skip = kind_tables(parsed.grammar)
        cursor = parsed.root.walk()
        first_child, next_sibling, parent = (
            cursor.goto_first_child,
            cursor.goto_next_sibling,
            cursor.goto_parent,
        )
        while True:
            node = cursor.node
            kind = node.kind_id  # an int: cheaper than building each node's type string
            if kind not in whole and first_child():
                continue  # an inner node: its leaves follow
            if kind not in skip:
                start, end = node.start_byte, node.end_byte
                if end > start:  # MISSING nodes (inserted by error recovery) are empty
                    starts.append(start)
                    ends.append(end)
                    ids.append(kind)
            while not next_sibling():
                if not parent():
                    break
            else:
                continue
            break
        kinds = [names.get(k, "ERROR") for k in ids]  # a leaf ERROR has the one id outside the table
        self._ids = np.asarray(ids, dtype=np.int64)
        self._grammar = parsed.grammar
        self._brackets: dict[str, tuple[list[int], list[int]]] = {}
        errors = iter_error_nodes(parsed.root, 1)
        self.error_at: int | None = errors[0].start_byte if errors else None
        self.source = parsed.source
        self.starts = np.asarray(starts, dtype=np.int64)
        self.ends = np.asarray(ends, dtype=np.int64)
        self.kinds = kinds
        newlines = np.flatnonzero(np.frombuffer(parsed.source, dtype=np.uint8) == 10)
        line_starts = np.concatenate(([0], newlines + 1))
        self.line = np.searchsorted(line_starts, self.starts, side="right") - 1
        first = np.ones(len(starts), dtype=bool)
        first[1:] = self.line[1:] != self.line[:-1]
        last = np.ones(len(starts), dtype=bool)
        last[:-1] = self.line[:-1] != self.line[1:]
        self.first, self.last = first, last
        firsts = np.flatnonzero(first)
        self.lines = self.line[firsts]  # the lines that have tokens, in order
        self.first_tok = firsts
        self.last_tok = np.flatnonzero(last)
        self.indents = self.starts[firsts] - line_starts[self.lines]
        self.row = np.searchsorted(self.lines, self.line)  # token -> row of its line in `lines`
        self.next_le = _next_no_deeper(self.indents)

    @functools.cached_property
    def prev_le(self) -> np.ndarray:
        """For each row, the last earlier row indented no deeper (-1 if none); only a lost opener needs it."""
        prev = _next_no_deeper(self.indents[::-1])[::-1]
        return np.where(prev >= 0, len(self.indents) - 1 - prev, -1)

    def brackets(self, opener: str) -> tuple[list[int], list[int]]:
        """The tokens of ``opener``'s kind (``${`` counts as ``{``) and their steps (+1 opener, -1 closer)."""
        if opener not in self._brackets:
            kind_of, step_of = _bracket_tables(self._grammar)
            at = np.flatnonzero(kind_of[self._ids] == _KINDS.index(opener))
            self._brackets[opener] = (at.tolist(), step_of[self._ids[at]].tolist())
        return self._brackets[opener]

    def block_end(self, row: int) -> int | None:
        """The first row after ``row`` indented no deeper (where a block opened on ``row`` ends)."""
        nxt = int(self.next_le[row])
        return nxt if nxt >= 0 else None

    def block_head(self, row: int) -> int | None:
        """The last row before ``row`` indented no deeper (where a block ending on ``row`` opens)."""
        prev = int(self.prev_le[row])
        return prev if prev >= 0 else None


_KINDS = ("{", "(", "[")


@functools.cache
def _bracket_tables(grammar: Grammar) -> tuple[np.ndarray, np.ndarray]:
    """Per node kind id: which bracket kind it is (an index of ``_KINDS``, -1 for none), and its step."""
    names, _, _ = kind_tables(grammar)
    kind_of = np.full(1 << 16, -1, dtype=np.int8)
    step_of = np.zeros(1 << 16, dtype=np.int8)
    for i, name in names.items():
        if name in PAIRS:
            kind_of[i], step_of[i] = _KINDS.index("{" if name == "${" else name), 1
        elif name in CLOSERS:
            kind_of[i], step_of[i] = _KINDS.index(CLOSERS[name]), -1
    return kind_of, step_of


def _next_no_deeper(indents: np.ndarray) -> np.ndarray:
    """For each row, the next row indented no deeper than it (-1 if none): one stack pass.

    "No deeper" allows one extra column (``_SLACK``): a bracket deleted with the space after it
    still counts as leaving its line at the block's indentation.
    """
    out = [-1] * len(indents)
    levels = indents.tolist()
    stack: list[int] = []
    for j, indent in enumerate(levels):
        while stack and levels[stack[-1]] + _SLACK >= indent:
            out[stack.pop()] = j
        stack.append(j)
    return np.asarray(out, dtype=np.int64)
