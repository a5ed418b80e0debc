"""A rule violation and the span it gets: the offending node's first line (at most 400 characters)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from botgrpo_jsx.treesitter import Parsed

if TYPE_CHECKING:
    from tree_sitter import Node

#: Longest span a violation gets (its first line, cut here): keeps span building linear.
_MAX_SPAN_CHARS = 400


@dataclass(frozen=True)
class Violation:
    """One rule violation in ``str`` indices of the parsed code."""

    rule: str
    start: int
    end: int
    message: str


def violation(parsed: Parsed, rule: str, node: Node, message: str, first_line: bool = True) -> Violation:
    """The violation of ``rule`` at ``node``, spanning its first line."""
    start, end = parsed.char_range(node)
    if first_line:
        limit = min(end, start + _MAX_SPAN_CHARS)
        newline = parsed.index.text.find("\n", start, limit)
        end = newline if newline > start else limit
    return Violation(rule, start, end, message)
