"""``unclosed_tag``: JSX tags matched by name (and indentation), the orphans blamed.

An HTML parser's recovery: a closing tag pops the nearest open tag of its name, and the tags
opened above that one are the ones never closed. tree-sitter's own pairing would blame the
ancestors of a tag whose closing tag was deleted.
"""

from __future__ import annotations

from botgrpo_jsx.treesitter import Parsed
from botgrpo_jsx.violation import Violation, violation
from botgrpo_jsx.walk import Tag


def unclosed_tags(parsed: Parsed, tags: list[Tag]) -> list[Violation]:
    """Match JSX tags by name with a stack, the way an HTML parser recovers, and blame the orphans.

    A closing tag pops the nearest open tag of its name; the tags opened above that one are the
    ones never closed (after a deleted ``</span>``, the ``<span>``, not the ``<div>`` around it that
    tree-sitter leaves unclosed). Between same-name tags the indentation decides: a ``</div>``
    that starts its line closes the open ``<div>`` starting a line at the same indentation.
    A closing tag with no open tag of its name closes nothing.
    """
    out: list[Violation] = []
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
            if tag.name in broken_names:
                continue
            message = f"</{tag.name}> closes no open tag"
            out.append(violation(parsed, "unclosed_tag", tag.node, message))
            continue
        out += [_never_closed(parsed, orphan, tag) for orphan in stack.cut(match)[1:]]
    out += [_never_closed(parsed, orphan, None) for orphan in stack.cut(0)]
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


def _never_closed(parsed: Parsed, orphan: Tag, by: Tag | None) -> Violation:
    where = f" (</{by.name}> closes the tag around it)" if by is not None else ""
    return violation(parsed, "unclosed_tag", orphan.node, f"<{orphan.name}> is never closed{where}")
