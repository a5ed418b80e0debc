"""Syntax-error spans from a tree-sitter parse.

tree-sitter marks what it could not parse with ``ERROR`` nodes (a range of skipped or unassembled
tokens) and ``MISSING`` nodes (a zero-width token it inserted to recover). Each becomes a span:

- an ``ERROR`` node: its range, trimmed of surrounding whitespace;
- a ``MISSING`` node inside the code: zero width says nothing to a token aligner, so it is widened to
  the neighbouring tokens (the one before and the one after the insertion point);
- a ``MISSING`` node at the end of the input ("unexpected end of input"): blaming the last character
  would punish the innocent end of the code, so the span is the opening token of the construct that
  was never closed (the ``{`` of a block, the ``(`` of a call, the ``<div>`` of an element).

When a repair explains every error, its cause replaces these spans: one missing bracket
(:func:`located_cause`), else one unclosed or stray JSX tag (:func:`botgrpo_jsx.tag_blame.located_tag`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from botgrpo_core.signals.steps import trim_range
from botgrpo_jsx.blame import Blame, missing_brackets, token_around
from botgrpo_jsx.treesitter import (
    Parsed,
    ParseTimeout,
    edited,
    iter_error_nodes,
    parses_with_insertion,
    query,
)

if TYPE_CHECKING:
    from tree_sitter import Node


#: An ``import`` line whose clause has no ``from`` (``import React, { useState }``): it was cut off there.
_IMPORT_NO_FROM = re.compile(
    r"^import[ \t]+(?:[A-Za-z_$][\w$]*[ \t]*,[ \t]*)?"
    r"(?:\{[^}\n]*\}|\*[ \t]*as[ \t]+[A-Za-z_$][\w$]*|(?!from\b)[A-Za-z_$][\w$]*)(?=[ \t]*;?[ \t]*$)",
    re.MULTILINE,
)
#: ``= ()`` or ``= async ()`` ending a line: empty parentheses are an arrow's parameters or nothing.
_ARROW_NO_ARROW = re.compile(r"=[ \t]*(?:async[ \t]*)?(\([ \t]*\))[ \t]*$", re.MULTILINE)
#: ``const (`` / ``let (`` at a line's start: a declaration whose name is missing.
_NAMELESS = re.compile(r"^[ \t]*((?:const|let)[ \t]*\()", re.MULTILINE)
_TOKEN = re.compile(r"[\w$]+|\S")
_WORD_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
#: A span longer than this many characters is cut to its first line (an ERROR can swallow a file).
_MAX_OPENER_CHARS = 120


@dataclass(frozen=True)
class SyntaxError_:
    """One syntax error in ``str`` indices of the parsed code."""

    start: int
    end: int
    message: str
    meta: dict[str, Any]
    #: the verified repair, when one is known: ``str`` range ``[start, end)`` replaced by the text
    edit: tuple[int, int, str] | None = None


def _leaf_before(parsed: Parsed, byte: int) -> Node | None:
    """The token ending at or before ``byte`` (skipping whitespace)."""
    end = len(parsed.source[:byte].rstrip())
    if end == 0:
        return None
    return parsed.root.descendant_for_byte_range(end - 1, end)


def _leaf_after(parsed: Parsed, byte: int) -> Node | None:
    """The token starting at or after ``byte`` (skipping whitespace)."""
    rest = parsed.source[byte:]
    start = byte + (len(rest) - len(rest.lstrip()))
    if start >= len(parsed.source):
        return None
    return parsed.root.descendant_for_byte_range(start, start + 1)


def _first_line(parsed: Parsed, start: int, end: int) -> tuple[int, int]:
    """Cut ``[start, end)`` (str indices) to its first non-blank line when it is long."""
    if end - start <= _MAX_OPENER_CHARS:
        return start, end
    text = parsed.index.text
    newline = text.find("\n", start, end)
    return start, (end if newline < 0 else max(newline, start + 1))


def _is_at_end(parsed: Parsed, byte: int) -> bool:
    return not parsed.source[byte:].strip()


def _after_whole_statements(parsed: Parsed, node: Node) -> int:
    """Where an ERROR's own trouble starts: past the whole, error-free statements it begins with.

    tree-sitter's recovery can wrap a file's first statements into the ERROR of a later one (SmolLM2's
    ``const Table = () {`` after three good imports: one ERROR from line 1); those imports are innocent.
    """
    start = node.start_byte
    for child in node.children:
        if child.type == "comment" and not child.has_error:
            continue
        if child.has_error or child.is_missing or not child.type.endswith(("_statement", "_declaration")):
            break
        start = child.end_byte
    if start == node.start_byte:
        return 0
    rest = parsed.source[start:]
    return parsed.index.char_of_byte(start + len(rest) - len(rest.lstrip()))


#: What closes each opening token, and what each closing token closes.
_CLOSER_OF = {"(": ")", "[": "]", "{": "}", "${": "}"}
_OPENER_OF = {")": "(", "]": "[", "}": "{"}
#: Seconds for the parse that checks an ERROR's loose tokens (an incremental parse: well under 1 ms).
_PREFIX_PARSE_S = 0.05


def _first_inner_error(node: Node) -> Node | None:
    """The first ERROR or MISSING node strictly inside ``node``, in source order."""
    for child in node.children:
        if child.is_error or child.is_missing:
            return child
        if child.has_error:
            return _first_inner_error(child) or child
    return None


def _closers_before(node: Node, byte: int) -> list[str] | None:
    """The brackets that close what the tokens of ``node`` before ``byte`` leave open, outermost first;
    ``None`` when one of them closes nothing, or a JSX tag is left open (an unclosed tag is blamed on
    its opening tag, :func:`located_tag`). A whole node without an error is balanced: only the nodes
    holding an error, or ``byte``, are read token by token."""
    stack: list[str] = []
    for child in node.children:
        if child.start_byte >= byte:
            break
        if child.type == "jsx_opening_element" and child.end_byte <= byte:
            return None
        if child.child_count == 0:
            if child.is_missing:
                continue
            if child.type in _CLOSER_OF:
                stack.append(_CLOSER_OF[child.type])
            elif child.type in _OPENER_OF and (not stack or stack.pop() != child.type):
                return None  # a closing bracket that closes nothing
        elif child.end_byte > byte or child.has_error:
            inner = _closers_before(child, byte)
            if inner is None:
                return None
            stack.extend(inner)
    return stack


def _after_open_prefix(parsed: Parsed, node: Node) -> int:
    """Where an ERROR that runs to the end of the input starts its own trouble: its first inner error,
    when the code before that error, its open brackets closed (an expression put where the error
    stood, if one is needed), parses. The ERROR's loose tokens before it are then openers that the end
    of the input left open (a page cut off by the token cap: ``const App = () => {`` and its good
    statements), not the break a left-to-right parser meets first. That parse is kept in
    ``parsed.memo["open_prefix"]`` (its redeclarations are checked too). 0 when the rule does not hold."""
    if not _is_at_end(parsed, node.end_byte):
        return 0
    inner = _first_inner_error(node)
    closers = None if inner is None else _closers_before(parsed.root, inner.start_byte)
    if inner is None or closers is None:
        return 0
    at = parsed.index.char_of_byte(inner.start_byte)
    for fill in ("", "0"):
        try:
            repaired = edited(
                parsed, at, parsed.index.length, fill + "".join(reversed(closers)), _PREFIX_PARSE_S
            )
        except ParseTimeout:
            return 0
        if not repaired.root.has_error:
            parsed.memo.setdefault("open_prefix", (at, repaired))
            return at
    return 0


def syntax_errors(parsed: Parsed, max_errors: int = 20) -> list[SyntaxError_]:
    """The syntax errors of a parse, in source order (at most ``max_errors``)."""
    text = parsed.index.text
    errors: list[SyntaxError_] = []
    for node in iter_error_nodes(parsed.root, max_errors):
        if node.is_missing:
            errors.append(_missing_error(parsed, node))
            continue
        start, end = trim_range(text, *parsed.char_range(node))
        start = max(start, _after_whole_statements(parsed, node), _after_open_prefix(parsed, node))
        if end <= start:  # a zero-width ERROR: widen like a missing token
            errors.append(_widen(parsed, node, "unexpected input"))
            continue
        first = node.child(0)
        token = parsed.text(first)[:40] if first is not None else parsed.text(node)[:40]
        meta = {"error": "unexpected input", "near": token, "grammar": parsed.grammar}
        errors.append(SyntaxError_(start, end, f"unexpected {token!r}", meta))
    return errors


def located_cause(parsed: Parsed, deadline_s: float) -> SyntaxError_ | None:
    """The missing bracket behind a parse's errors (:mod:`botgrpo_jsx.blame`), if a repair holds.

    Each place the indentation allows is tried in turn: the bracket is inserted there and the code
    parsed again. The first place whose repair parses without any error is the cause (its span: the
    tokens either side of it); when none does, ``None`` (keep tree-sitter's own spans). A parse whose
    error is known to lie in one byte range (``parsed.memo["within"]``, set by :mod:`botgrpo_jsx.units`
    on a unit put back alone) tries only the places and tags in it.
    """
    if "cause" not in parsed.memo:
        parsed.memo["cause"] = _locate(parsed, deadline_s)
    return parsed.memo["cause"]


def _within(parsed: Parsed, byte: int) -> bool:
    window = parsed.memo.get("within")
    return window is None or window[0] <= byte <= window[1]


def _locate(parsed: Parsed, deadline_s: float) -> SyntaxError_ | None:
    for blame in missing_brackets(parsed):
        if "within" in parsed.memo:
            kept = tuple(p for p in blame.positions if _within(parsed, p))
            blame = Blame(kept, blame.text, blame.message)
        found = _repair(parsed, blame, deadline_s)
        if found is not False:
            return found
    return None


def _repair(parsed: Parsed, blame: Blame, deadline_s: float) -> SyntaxError_ | bool | None:
    """The first of ``blame``'s places whose repair parses; ``False`` when none does, ``None`` when the
    parse deadline ran out (keep tree-sitter's spans)."""
    insert = blame.text.encode()
    for position in blame.positions:
        verdict = parses_with_insertion(parsed, position, insert, deadline_s)
        if verdict is None:
            return None  # over the parse deadline: keep tree-sitter's spans
        if not verdict:
            continue
        lo, hi = token_around(parsed, position)
        start, end = trim_range(
            parsed.index.text, parsed.index.char_of_byte(lo), parsed.index.char_of_byte(hi)
        )
        if end <= start:
            return None
        at = parsed.index.char_of_byte(position)
        meta = {"error": blame.message, "repair": blame.text, "at": at, "grammar": parsed.grammar}
        return SyntaxError_(start, end, blame.message, meta, (at, at, blame.text))
    return False


def _missing_error(parsed: Parsed, node: Node) -> SyntaxError_:
    missing = node.type
    if _is_at_end(parsed, node.start_byte) and node.parent is not None:
        construct = node.parent
        opener = construct.child(0) if construct.child_count else construct
        if opener is not None and opener.is_missing:
            opener = construct
        start, end = _first_line(parsed, *parsed.char_range(opener))
        start, end = trim_range(parsed.index.text, start, end)
        if end > start:
            meta = {
                "error": "unexpected end of input",
                "missing": missing,
                "unclosed": construct.type,
                "grammar": parsed.grammar,
            }
            return SyntaxError_(start, end, f"unclosed {construct.type}: missing {missing!r}", meta)
    return _widen(parsed, node, f"missing {missing!r}")


def _widen(parsed: Parsed, node: Node, message: str) -> SyntaxError_:
    """Span the tokens either side of a zero-width error position."""
    byte = node.start_byte
    before = _leaf_before(parsed, byte)
    after = _leaf_after(parsed, byte)
    lo = before.start_byte if before is not None else byte
    hi = after.end_byte if after is not None else byte
    start, end = parsed.index.char_of_byte(lo), parsed.index.char_of_byte(hi)
    if end <= start:  # nothing around (empty code): one character at the position, if any
        start = min(parsed.index.char_of_byte(byte), max(parsed.index.length - 1, 0))
        end = min(start + 1, parsed.index.length)
    meta = {"error": message, "grammar": parsed.grammar}
    return SyntaxError_(start, end, message, meta)


def imports_without_from(code: str) -> list[SyntaxError_]:
    """Each one-line ``import`` whose clause no ``from`` follows, blamed where ``from`` is missing: the
    clause's last token and the next token (a missing token's neighbours, as :func:`_widen` does;
    esbuild names the next one: ``Expected "from" but found "import"``). ``str`` indices of ``code``."""
    out = []
    for match in _IMPORT_NO_FROM.finditer(code):
        end = match.end()
        last = end - 1 if code[end - 1] == "}" else len(code[:end].rstrip("$_" + _WORD_CHARS))
        nxt = _TOKEN.search(code, end)
        stop = nxt.end() if nxt is not None else end
        message = "import without `from`"
        meta = {"error": message, "missing": "from"}
        out.append(SyntaxError_(last, stop, message, meta))
    return out


def known_shapes(code: str) -> list[SyntaxError_]:
    """Errors of a shape no JavaScript parses, read off the text (``str`` indices of ``code``), each one
    span where the parser's recovery smears: :func:`imports_without_from`; an arrow's empty parameters
    ending a line with no ``=>`` after them (``const Gallery = ()`` then ``async function ...``: the
    ``()`` and the next token); a ``const``/``let`` starting a line with ``(`` for a name (``const () =>``:
    the keyword and the ``(``)."""
    out = imports_without_from(code)
    for match in _ARROW_NO_ARROW.finditer(code):
        nxt = _TOKEN.search(code, match.end())
        if nxt is not None and code.startswith("=>", nxt.start()):
            continue
        stop = nxt.end() if nxt is not None else match.end()
        meta = {"error": "arrow function without `=>`", "missing": "=>"}
        out.append(SyntaxError_(match.start(1), stop, meta["error"], meta))
    for match in _NAMELESS.finditer(code):
        meta = {"error": "declaration without a name", "missing": "name"}
        out.append(SyntaxError_(match.start(1), match.end(), meta["error"], meta))
    return sorted(out, key=lambda e: e.start)


#: A ``{...}`` among a JSX tag's attributes: tree-sitter accepts any expression there, JSX only a spread.
_TAG_EXPRESSIONS = (
    "(jsx_opening_element (jsx_expression) @attr)",
    "(jsx_self_closing_element (jsx_expression) @attr)",
)


def bare_tag_expressions(parsed: Parsed, limit: int = 20) -> list[SyntaxError_]:
    """Each ``{...}`` among a JSX tag's attributes that is not a spread (``<Item {removeItem} />``):
    tree-sitter parses it, JSX allows only ``{...props}`` there (esbuild: ``Expected "..." but found
    "removeItem"``). The span is the ``{`` and the token after it, where the ``...`` is missing."""
    from tree_sitter import QueryCursor

    q = query(parsed.grammar, _TAG_EXPRESSIONS)
    if q is None or b"{" not in parsed.source:
        return []
    found: list[SyntaxError_] = []
    for node in sorted(QueryCursor(q).captures(parsed.root).get("attr", []), key=lambda n: n.start_byte):
        first = node.named_children[0] if node.named_child_count else None
        if node.has_error or (first is not None and first.type == "spread_element"):
            continue
        after = _leaf_after(parsed, node.start_byte + 1)
        end = after.end_byte if after is not None else node.end_byte
        start, stop = parsed.index.char_of_byte(node.start_byte), parsed.index.char_of_byte(end)
        meta = {
            "error": "expression among a tag's attributes (only {...spread} is allowed)",
            "missing": "...",
        }
        found.append(SyntaxError_(start, stop, meta["error"], meta))
        if len(found) >= limit:
            break
    return found


def valid_prefix(parsed: Parsed, first_error_byte: int | None) -> list[tuple[int, int]]:
    """Ranges (str indices) of the well-formed top-level statements before the first error."""
    ranges = []
    for child in parsed.root.children:
        if first_error_byte is not None and child.end_byte > first_error_byte:
            break
        if child.has_error or child.is_missing or child.type == "comment":
            continue
        ranges.append(parsed.char_range(child))
    return ranges
