"""Blame on JSX tags: the unclosed (or stray closing) tag behind a parse's errors, and where it had to close.

The tag stack of :func:`botgrpo_jsx.tags.tag_problems` names the orphan tags; each is repaired in turn
(:func:`botgrpo_jsx.tags.tag_repairs`) and the code parsed again. The first repair that parses is the cause
(:func:`located_tag`); for an opening tag left open, the first place where inserting its closing tag parses is
where it had to close (:func:`tag_close_point`). Both are tried after one missing bracket
(:func:`botgrpo_jsx.syntax.located_cause`) has not explained the errors.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from botgrpo_core.signals.steps import trim_range
from botgrpo_jsx.blame import token_around
from botgrpo_jsx.syntax import SyntaxError_, _within
from botgrpo_jsx.tags import tag_problems, tag_repairs
from botgrpo_jsx.treesitter import Parsed, parses_with_edit
from botgrpo_jsx.violation import violation
from botgrpo_jsx.walk import walk

if TYPE_CHECKING:
    from botgrpo_jsx.walk import Tag

#: Tag problems (orphan tags) tried as the cause of a parse's errors, each with its few repairs.
MAX_TAG_PROBLEMS = 3
#: Places on an unclosed tag's own line tried for its closing tag.
_MAX_INLINE = 8
#: Lines looked at after an unclosed tag for the line where its children end.
_MAX_CLOSE_LINES = 400


def located_tag(parsed: Parsed, deadline_s: float) -> SyntaxError_ | None:
    """The unclosed (or stray closing) JSX tag behind a parse's errors, if a repair holds.

    The tag stack of :func:`botgrpo_jsx.tags.tag_problems` names the orphans; each (at most
    :data:`MAX_TAG_PROBLEMS`) is repaired in turn by :func:`botgrpo_jsx.tags.tag_repairs` and the
    code parsed again, all within one ``deadline_s``. The first repair that parses without any
    error is the cause: its span is the orphan tag (the first line of it, as jsx.rules' span).
    ``None`` when no repair holds or the deadline ran out (keep tree-sitter's own spans).
    """
    if "tag_cause" not in parsed.memo:
        parsed.memo["tag_cause"] = _locate_tag(parsed, deadline_s)
    return parsed.memo["tag_cause"]


def _locate_tag(parsed: Parsed, deadline_s: float) -> SyntaxError_ | None:
    deadline = time.monotonic() + deadline_s
    problems = [p for p in tag_problems(parsed, walk(parsed).tags) if _within(parsed, p.tag.node.start_byte)]
    for problem in problems[:MAX_TAG_PROBLEMS]:
        for repair in tag_repairs(problem):
            verdict = parses_with_edit(parsed, repair.start, repair.end, repair.text, deadline)
            if verdict is None:
                return None  # over the parse deadline: keep tree-sitter's spans
            if not verdict:
                continue
            tag = problem.tag
            found = violation(parsed, "unclosed_tag", tag.node, problem.message)
            start, end = trim_range(parsed.index.text, found.start, found.end)
            if end <= start:
                return None
            name = f"</{tag.name}>" if tag.closing else f"<{tag.name}>"
            message = f"{name} closes no open tag" if tag.closing else f"{name} is never closed"
            meta = {"error": message, "repair": repair.description, "grammar": parsed.grammar}
            index = parsed.index
            edit = (index.char_of_byte(repair.start), index.char_of_byte(repair.end), repair.text.decode())
            if not tag.closing:
                parsed.memo["tag_close"] = _close_point(parsed, problem.tag, problem.by, deadline)
            return SyntaxError_(start, end, message, meta, edit)
    return None


def tag_close_point(parsed: Parsed, deadline_s: float) -> SyntaxError_ | None:
    """Where the unclosed tag :func:`located_tag` blames had to close, when an insertion there parses."""
    located_tag(parsed, deadline_s)
    return parsed.memo.get("tag_close")


def _inline_places(source: bytes, start: int, line_end: int) -> list[int]:
    """Places on the tag's own line where its children may end: before a tag, or before a ``)``, ``}``,
    ``:``, ``;`` or ``,`` that ends the expression holding it (``<li>{x.name})}``, ``? <p>{t} :``),
    outside the children's ``{...}``, after some content (not an empty element); at most :data:`_MAX_INLINE` of them, left to right."""
    places: list[int] = []
    depth = 0
    for i in range(start, line_end):
        c = source[i : i + 1]
        if c == b"{":
            depth += 1
        elif c == b"}" and depth > 0:
            depth -= 1
        elif depth == 0 and c in (b")", b"}", b":", b";", b",", b"<") and source[start:i].strip():
            places.append(len(source[:i].rstrip()))
            if len(places) >= _MAX_INLINE:
                break
    return places


def _close_candidates(source: bytes, tag: Tag, by: Tag | None) -> list[int]:
    """Byte places for an unclosed tag's closing tag, likeliest first: the end of its own line when it
    has content there (``<h2>Title``), else before the next line indented no deeper than the tag's line
    (where its children end), else before the closing tag that closed the tag around it."""
    node = tag.node
    line_start = source.rfind(b"\n", 0, node.start_byte) + 1
    indent = len(source[line_start : node.start_byte]) - len(
        source[line_start : node.start_byte].lstrip(b" \t")
    )
    line_end = source.find(b"\n", node.end_byte)
    line_end = len(source) if line_end < 0 else line_end
    places = _inline_places(source, node.end_byte, line_end)
    if source[node.end_byte : line_end].strip():
        places.append(node.end_byte + len(source[node.end_byte : line_end].rstrip()))
    last, pos = line_end, line_end
    for _ in range(_MAX_CLOSE_LINES):
        if pos >= len(source):
            break
        nxt = source.find(b"\n", pos + 1)
        nxt = len(source) if nxt < 0 else nxt
        line = source[pos + 1 : nxt]
        if line.strip():
            if len(line) - len(line.lstrip(b" \t")) <= indent:
                places.append(len(source[:last].rstrip()))
                break
            last = nxt
        pos = nxt
    if by is not None:
        places.append(by.node.start_byte)
    return list(dict.fromkeys(p for p in places if p >= node.end_byte))


def _balanced_between(tags: list[Tag], start: int, end: int) -> bool:
    """Whether the JSX tags in bytes ``[start, end)`` close each other by name (none left open)."""
    stack: list[str] = []
    for t in tags:
        if t.node.start_byte < start or t.node.end_byte > end:
            continue
        if not t.closing:
            stack.append(t.name)
        elif not stack or stack.pop() != t.name:
            return False
    return not stack


def _close_point(parsed: Parsed, tag: Tag, by: Tag | None, deadline: float) -> SyntaxError_ | None:
    close = f"</{tag.name}>".encode()
    tags = walk(parsed).tags
    for position in _close_candidates(parsed.source, tag, by):
        if not _balanced_between(tags, tag.node.end_byte, position):
            continue  # tree-sitter pairs tags without their names: `<h2><p>x</p></div></h2>` parses
        if not parses_with_edit(parsed, position, position, close, deadline):
            continue  # no, or over the deadline (then the next is too)
        # the token before the place and the blank after it, up to the next token (not that token: it
        # may be the next section's, which is not to blame)
        lo, _ = token_around(parsed, position)
        rest = parsed.source[position:]
        hi = position + len(rest) - len(rest.lstrip())
        start, end = parsed.index.char_of_byte(lo), parsed.index.char_of_byte(hi)
        if end <= start:
            return None
        at = parsed.index.char_of_byte(position)
        message = f"<{tag.name}> had to close here"
        meta = {"error": message, "repair": f"insert </{tag.name}>", "at": at, "grammar": parsed.grammar}
        return SyntaxError_(start, end, message, meta, (at, at, close.decode()))
    return None
