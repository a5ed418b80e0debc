"""tree-sitter parsing of untrusted code under a deadline.

tree-sitter's TSX grammar parses modern React (TypeScript, fragments, optional chaining, class
fields) at ~0.2 ms/KB, but its error recovery can run for minutes on some malformed inputs. py-tree-sitter
(>= 0.25) calls a ``progress_callback`` while parsing *from a read callback* (it ignores the callback
for a plain bytestring, so we always pass a reader); returning ``True`` cancels the parse. The TSX
grammar runs first; when it exceeds the deadline the JavaScript grammar gets the remaining budget
(the issue's measured fallback), and when both exceed it the caller gets a :class:`ParseTimeout`.
The process-level guard (a killable worker) lives in :mod:`botgrpo_jsx.execution`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any, Literal

from botgrpo_jsx.offsets import TextIndex

if TYPE_CHECKING:
    from tree_sitter import Language, Node, Parser, Query, Tree

Grammar = Literal["tsx", "javascript"]

#: Bytes handed to tree-sitter per read-callback call (the callback is where deadlines are checked too).
_CHUNK = 16 * 1024


class ParseTimeout(Exception):
    """Both grammars exceeded the parse deadline."""


@dataclass
class Parsed:
    """A parse of one code string.

    :param tree: the tree-sitter tree.
    :param grammar: which grammar produced it.
    :param source: the UTF-8 bytes parsed.
    :param index: offsets of ``source``'s text (byte -> ``str`` index).
    :param fallback: ``True`` when TSX exceeded its deadline and the JavaScript grammar was used.
    :param memo: results derived from this parse, kept with it (e.g. the located cause of its errors).
    """

    tree: Tree
    grammar: Grammar
    source: bytes
    index: TextIndex
    fallback: bool = False
    memo: dict[str, Any] = field(default_factory=dict)

    @property
    def root(self) -> Node:
        return self.tree.root_node

    def text(self, node: Node) -> str:
        """The source text of ``node``."""
        return self.source[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def char_range(self, node: Node) -> tuple[int, int]:
        """``node``'s range in ``str`` indices of the parsed code."""
        return self.index.char_of_byte(node.start_byte), self.index.char_of_byte(node.end_byte)


@cache
def language(grammar: Grammar) -> Language:
    """The tree-sitter ``Language`` of a grammar (loaded once per process)."""
    from tree_sitter import Language

    if grammar == "tsx":
        import tree_sitter_typescript

        return Language(tree_sitter_typescript.language_tsx())
    import tree_sitter_javascript

    return Language(tree_sitter_javascript.language())


#: Nodes taken as one token by :func:`botgrpo_jsx.walk.walk`'s token list (a bracket inside is text),
#: and those left out of it (comments).
WHOLE_TOKENS = frozenset({"string", "regex", "jsx_text", "number", "comment", "html_comment"})
SKIPPED_TOKENS = frozenset({"comment", "html_comment"})


@cache
def kind_tables(grammar: Grammar) -> tuple[dict[int, str], frozenset[int], frozenset[int]]:
    """The grammar's node kinds by id, and the ids of :data:`WHOLE_TOKENS` and :data:`SKIPPED_TOKENS`
    (ids are ints: cheaper to test in a walk than each node's type string)."""
    lang = language(grammar)
    names = {i: lang.node_kind_for_id(i) or "" for i in range(lang.node_kind_count)}
    whole = frozenset(i for i, name in names.items() if name in WHOLE_TOKENS)
    skip = frozenset(i for i, name in names.items() if name in SKIPPED_TOKENS)
    return names, whole, skip


@cache
def _parser(grammar: Grammar) -> Parser:
    from tree_sitter import Parser

    return Parser(language(grammar))


@cache
def query(grammar: Grammar, patterns: tuple[str, ...]) -> Query | None:
    """A query of the patterns that exist in ``grammar`` (node names differ between TSX and JS).

    Each pattern is compiled alone first so one grammar's missing node type drops only that pattern.
    """
    from tree_sitter import Query

    lang = language(grammar)
    usable = []
    for pattern in patterns:
        try:
            Query(lang, pattern)
        except Exception:  # a node or field this grammar does not have
            continue
        usable.append(pattern)
    return Query(lang, "\n".join(usable)) if usable else None


def _parse_once(
    grammar: Grammar, source: bytes, deadline: float, old_tree: Tree | None = None
) -> Tree | None:
    def read(byte_offset: int, _point: object) -> bytes:
        return source[byte_offset : byte_offset + _CHUNK]

    def progress(*_state: object) -> bool:
        return time.monotonic() > deadline  # True cancels the parse

    parser = _parser(grammar)
    try:
        if old_tree is not None:
            return parser.parse(read, old_tree, progress_callback=progress)
        return parser.parse(read, progress_callback=progress)
    except ValueError:  # "Parsing failed": cancelled by the progress callback
        parser.reset()
        return None


def parses_with_edit(parsed: Parsed, start: int, end: int, text: bytes, deadline: float) -> bool | None:
    """Whether the code with bytes ``[start, end)`` replaced by ``text`` parses without any error.

    An incremental parse (the old tree edited, its untouched subtrees reused): a few times cheaper
    than parsing again. ``None`` past ``deadline`` (a ``time.monotonic()`` time).
    """
    if time.monotonic() > deadline:
        return None
    old = parsed.source
    new = old[:start] + text + old[end:]
    new_end = start + len(text)
    tree = parsed.tree.copy()
    tree.edit(
        start_byte=start,
        old_end_byte=end,
        new_end_byte=new_end,
        start_point=_point(old, start),
        old_end_point=_point(old, end),
        new_end_point=_point(new, new_end),
    )
    fixed = _parse_once(parsed.grammar, new, deadline, tree)
    return None if fixed is None else not fixed.root_node.has_error


def edited(parsed: Parsed, start: int, end: int, text: str, deadline_s: float) -> Parsed:
    """The parse of ``parsed``'s code with ``str`` range ``[start, end)`` replaced by ``text``: an
    incremental parse of the edited tree, in ``parsed``'s grammar.

    :raises ParseTimeout: past ``deadline_s``.
    """
    code = parsed.index.text
    new_code = code[:start] + text + code[end:]
    index = TextIndex(new_code)
    lo, hi = parsed.index.byte_of_char(start), parsed.index.byte_of_char(end)
    source = new_code.encode("utf-8")
    new_hi = index.byte_of_char(start + len(text))
    tree = parsed.tree.copy()
    tree.edit(
        start_byte=lo,
        old_end_byte=hi,
        new_end_byte=new_hi,
        start_point=_point(parsed.source, lo),
        old_end_point=_point(parsed.source, hi),
        new_end_point=_point(source, new_hi),
    )
    fixed = _parse_once(parsed.grammar, source, time.monotonic() + deadline_s, tree)
    if fixed is None:
        raise ParseTimeout(f"tree-sitter exceeded its {deadline_s:g} s parse deadline on an edit")
    return Parsed(fixed, parsed.grammar, source, index, parsed.fallback)


def parses_with_insertion(parsed: Parsed, position: int, text: bytes, deadline_s: float) -> bool | None:
    """Whether the code with ``text`` inserted at byte ``position`` parses without any error
    (:func:`parses_with_edit` within ``deadline_s`` seconds)."""
    return parses_with_edit(parsed, position, position, text, time.monotonic() + deadline_s)


def _point(source: bytes, byte: int) -> tuple[int, int]:
    """(row, byte column) of ``byte`` in ``source``."""
    return source.count(b"\n", 0, byte), byte - (source.rfind(b"\n", 0, byte) + 1)


def parse(code: str, deadline_s: float, grammar: Grammar = "tsx") -> Parsed:
    """Parse sanitized ``code`` within ``deadline_s`` seconds (TSX, then JS on timeout).

    :raises ParseTimeout: when every grammar tried exceeded the deadline.
    """
    source = code.encode("utf-8")
    index = TextIndex(code)
    start = time.monotonic()
    tree = _parse_once(grammar, source, start + deadline_s)
    if tree is not None:
        return Parsed(tree, grammar, source, index)
    if grammar == "tsx":
        # The fallback gets its own full budget: the caller's hard limit is the worker's kill timeout.
        tree = _parse_once("javascript", source, time.monotonic() + deadline_s)
        if tree is not None:
            return Parsed(tree, "javascript", source, index, fallback=True)
    raise ParseTimeout(
        f"tree-sitter exceeded its {deadline_s:g} s parse deadline on {len(source)} bytes "
        f"(raise the signal's `parse_timeout_s` param if such inputs are legitimate)"
    )


def iter_error_nodes(root: Node, limit: int) -> list[Node]:
    """ERROR and MISSING nodes under ``root`` (outermost ERRORs only), at most ``limit``.

    Only subtrees with ``has_error`` are entered, so a valid tree costs one check.
    """
    found: list[Node] = []
    stack = [root]
    while stack and len(found) < limit:
        node = stack.pop()
        if node.is_error or node.is_missing:
            found.append(node)
            if node.is_missing:
                continue
        if node.has_error:
            # Reverse so that the stack pops children in source order.
            stack.extend(reversed([c for c in node.children if c.has_error or c.is_missing]))
    found.sort(key=lambda n: (n.start_byte, n.end_byte))
    return found
