"""``unclosed_tag``: JSX tags matched by name (and indentation), the orphans blamed.

An HTML parser's recovery: a closing tag pops the nearest open tag of its name, and the tags
opened above that one are the ones never closed. tree-sitter's own pairing would blame the
ancestors of a tag whose closing tag was deleted.
"""

from __future__ import annotations

from dataclasses import dataclass

from botgrpo_jsx.treesitter import Parsed
from botgrpo_jsx.violation import Violation, violation
from botgrpo_jsx.walk import Tag


@dataclass(frozen=True)
class TagProblem:
    """One tag the name matching blames: an opening tag never closed (``by``: the closing tag that
    closed the tag around it, ``None`` at the end), one closed by a closing tag of another name
    (``mismatch``), or a closing tag that closes nothing."""

    tag: Tag
    by: Tag | None = None
    #: ``by`` is tree-sitter's pair of ``tag`` (a closing tag of another name), not the tag around it
    mismatch: bool = False

    @property
    def message(self) -> str:
        if self.tag.closing:
            return f"</{self.tag.name}> closes no open tag"
        if self.mismatch and self.by is not None:
            return f"<{self.tag.name}> is closed by </{self.by.name}>"
        where = f" (</{self.by.name}> closes the tag around it)" if self.by is not None else ""
        return f"<{self.tag.name}> is never closed{where}"


def tag_problems(parsed: Parsed, tags: list[Tag]) -> list[TagProblem]:
    """Match JSX tags by name with a stack, the way an HTML parser recovers; the orphans, in order found.

    A closing tag pops the nearest open tag of its name; the tags opened above that one are the
    ones never closed (after a deleted ``</span>``, the ``<span>``, not the ``<div>`` around it that
    tree-sitter leaves unclosed). Between same-name tags the indentation decides: a ``</div>``
    that starts its line closes the open ``<div>`` starting a line at the same indentation.
    A closing tag with no open tag of its name closes nothing.

    Where the code parses, tree-sitter has paired every tag already (it does not compare names):
    then the only problems are its pairs whose names differ (``<p>x</div>``: the ``<p>``, closed by
    the ``</div>``), and the stack, which would also call the page's last ``</div>`` a stray, is
    not used.
    """
    out: list[TagProblem] = []
    if not parsed.root.has_error:
        return _mismatched_pairs(tags)
    stack = _TagStack()
    broken_names = set()  # opening tags with a syntax error inside: whether they are open is a guess
    for tag in tags:
        if tag.node.has_error:
            broken_names.add(tag.name)
            continue
        if not tag.closing:
            stack.push(tag)
            continue
        match = stack.match(tag)
        if match is None:
            if tag.name not in broken_names:
                out.append(TagProblem(tag))
            continue
        out += [TagProblem(orphan, tag) for orphan in stack.cut(match)[1:]]
    out += [TagProblem(orphan) for orphan in stack.cut(0)]
    return out


@dataclass(frozen=True)
class TagRepair:
    """An edit that would fix one :class:`TagProblem`: bytes ``[start, end)`` replaced by ``text``."""

    start: int
    end: int
    text: bytes
    description: str


def tag_repairs(problem: TagProblem) -> list[TagRepair]:
    """The edits that may fix ``problem``, the cheap robust one first.

    A closing tag that closes nothing: delete it. An opening tag never closed: delete it (the
    content stays, where the surrounding JSX or JavaScript takes it), else close it where the tag
    stack says it ends (before the closing tag that closed the tag around it), else take that
    closing tag as its own (``<p>x</div>`` meant ``<p>x</p>``). Which repair holds is for a parse
    to say (:func:`botgrpo_jsx.syntax.located_tag`).
    """
    tag = problem.tag
    start, end = tag.node.start_byte, tag.node.end_byte
    if tag.closing:
        return [TagRepair(start, end, b"", f"delete </{tag.name}>")]
    repairs = [TagRepair(start, end, b"", f"delete <{tag.name}>")]
    by = problem.by
    if by is not None:
        close = f"</{tag.name}>".encode()
        at, by_end = by.node.start_byte, by.node.end_byte
        repairs.append(TagRepair(at, at, close, f"insert </{tag.name}> before </{by.name}>"))
        repairs.append(TagRepair(at, by_end, close, f"</{by.name}> -> </{tag.name}>"))
    return repairs


def unclosed_tags(parsed: Parsed, tags: list[Tag]) -> list[Violation]:
    """The ``unclosed_tag`` violations: :func:`tag_problems`, each on its tag."""
    return [violation(parsed, "unclosed_tag", p.tag.node, p.message) for p in tag_problems(parsed, tags)]


def _mismatched_pairs(tags: list[Tag]) -> list[TagProblem]:
    """The opening tags whose closing tag (tree-sitter's pair: the same element) has another name."""
    opening = {tag.element: tag for tag in tags if not tag.closing and tag.element is not None}
    out = []
    for tag in tags:
        mate = opening.get(tag.element) if tag.closing and tag.element is not None else None
        if mate is not None and mate.name != tag.name:
            out.append(TagProblem(mate, tag, mismatch=True))
    out.sort(key=lambda p: p.tag.node.start_byte)
    return out


class _TagStack:
    """Open tags, with the positions of each name (and name + indentation) for O(1) lookups."""

    def __init__(self) -> None:
        self.tags: list[Tag] = []
        self.by_name: dict[str, list[int]] = {}
        self.by_indent: dict[tuple[str, int | None], list[int]] = {}

    def push(self, tag: Tag) -> None:
        self.by_name.setdefault(tag.name, []).append(len(self.tags))
        self.by_indent.setdefault((tag.name, tag.indent), []).append(len(self.tags))
        self.tags.append(tag)

    def match(self, closing: Tag) -> int | None:
        """Position of the open tag ``closing`` closes: the nearest of its name, or the aligned one."""
        same = self.by_name.get(closing.name)
        if not same:
            return None
        nearest = same[-1]
        if closing.indent is not None and self.tags[nearest].indent not in (None, closing.indent):
            aligned = self.by_indent.get((closing.name, closing.indent))
            if aligned:
                return aligned[-1]
        return nearest

    def cut(self, position: int) -> list[Tag]:
        """Remove and return the tags from ``position`` up."""
        removed = self.tags[position:]
        for tag in reversed(removed):
            self.by_name[tag.name].pop()
            self.by_indent[(tag.name, tag.indent)].pop()
        del self.tags[position:]
        return removed
