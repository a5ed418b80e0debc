"""Bounded YAML for run files and ``--set`` values: what a file may cost to read, and keys that count once.

``yaml.safe_load`` runs no code, but it accepts documents whose cost is out of proportion to their size
and keys that silently replace each other. :func:`parse_yaml` refuses, each with the line and the fix:

- a key given twice in one mapping (YAML keeps the last one without a word);
- aliases that add over :data:`MAX_NODES` values to the document (the "billion laughs": ``&a [*b, *b,
  ...]`` nested a few levels is a tiny file that any recursive reader, e.g. ``repr``, walks for hours), or
  that refer to their own ancestor (an infinite document); values written out are not counted there;
- over :data:`MAX_VALUES` values written out, nesting deeper than :data:`MAX_DEPTH` levels (a recursive
  reader's ``RecursionError``), text that is not UTF-8, and files over :data:`MAX_FILE_BYTES`.

libyaml parses when PyYAML has it (50,000 keys: well under a second, against ~10 s in pure Python). A first
pass over the parser's events counts values and nesting before anything is composed (libyaml's composer
recurses once per level); aliases, when there are any, are measured on the composed node graph before any
Python object is built, in time linear in the number of distinct nodes (each alias target measured once).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

#: most values (mapping keys and values, list items, scalars) aliases may add to a document
MAX_NODES = 100_000
#: most values a document may write out (a run file holds hundreds; the file size bounds it too)
MAX_VALUES = 1_000_000
#: deepest nesting of mappings and lists
MAX_DEPTH = 64
#: largest run file read
MAX_FILE_BYTES = 16 * 2**20


class YAMLTextError(ValueError):
    """YAML text that is malformed or too costly; the message starts with the line when there is one."""


def read_text(path: str | os.PathLike[str], what: str) -> str:
    """The UTF-8 text of ``path`` (at most :data:`MAX_FILE_BYTES`).

    :raises OSError: the file cannot be read.
    :raises YAMLTextError: too large, or not UTF-8 (naming the line and byte).
    """
    with Path(path).open("rb") as handle:
        data = handle.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise YAMLTextError(f"the {what} is over {MAX_FILE_BYTES // 2**20} MiB; is it the right file?")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise YAMLTextError(
            f"line {line}: the {what} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
            "save it as UTF-8"
        ) from None


_BASE: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's parser when PyYAML was built with it


class _Loader(_BASE):  # type: ignore[misc, valid-type]
    """``yaml.SafeLoader`` (libyaml's when there is one) that refuses a key given twice in one mapping
    (merge keys ``<<`` may still be overridden, as YAML intends)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[tuple[str, str], int] = {}
        for key_node, _ in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = (key_node.tag, key_node.value)
            line = key_node.start_mark.line + 1
            if key in seen:
                raise YAMLTextError(
                    f"line {line}: key {key_node.value!r} is given twice in one mapping (first at line "
                    f"{seen[key]}); YAML would silently keep the last one: remove one of them"
                )
            seen[key] = line
        return super().construct_mapping(node, deep=deep)


def _children(node: yaml.Node) -> list[tuple[Any, yaml.Node]]:
    """``(path part, child)`` of a node: a mapping's keys and values, a list's items."""
    if isinstance(node, yaml.MappingNode):
        out: list[tuple[Any, yaml.Node]] = []
        for key, value in node.value:
            part = key.value if isinstance(key, yaml.ScalarNode) else "?"
            out += [(part, key), (part, value)]
        return out
    if isinstance(node, yaml.SequenceNode):
        return list(enumerate(node.value))
    return []


def _measure(root: yaml.Node) -> tuple[dict[int, int], dict[int, int]]:
    """Per node id: the number of values it expands to, and its height (iterative post-order, memoised).

    :raises YAMLTextError: an alias inside the node it names.
    """
    size: dict[int, int] = {}
    height: dict[int, int] = {}
    open_nodes: set[int] = set()  # the current path: a child found here is a cycle
    stack: list[tuple[yaml.Node, bool, yaml.Node]] = [(root, False, root)]  # (node, done, its parent)
    while stack:
        node, done, parent = stack.pop()
        key = id(node)
        if done:
            open_nodes.discard(key)
            kids = [id(child) for _, child in _children(node)]
            size[key] = 1 + sum(size[k] for k in kids)
            height[key] = 1 + max((height[k] for k in kids), default=0)
            continue
        if key in size:
            continue
        if key in open_nodes:
            raise YAMLTextError(
                f"line {parent.start_mark.line + 1}: an alias refers to a node that contains it (an "
                "infinite document); copy the values instead"
            )
        open_nodes.add(key)
        stack.append((node, True, parent))
        stack.extend((child, False, node) for _, child in _children(node) if id(child) not in size)
    return size, height


def _worst_path(root: yaml.Node, measure: dict[int, int], limit: int) -> str:
    """The key path of the innermost node whose ``measure`` alone is over ``limit`` (where to look)."""
    parts: list[str] = []
    node = root
    while len(parts) < 8:
        over = [(part, child) for part, child in _children(node) if measure[id(child)] > limit]
        if not over:
            break
        part, node = max(over, key=lambda pair: measure[id(pair[1])])
        parts.append(f"[{part}]" if isinstance(part, int) else f".{part}")
    return ("".join(parts).lstrip(".") or "(top level)") + (" ..." if len(parts) == 8 else "")


def _scan(text: str) -> tuple[int, bool]:
    """``(values written out, whether there is an alias)`` from the parser's events, before composing.

    :raises YAMLTextError: nesting past :data:`MAX_DEPTH` (as the composer counts it: a node inside ``n``
        open mappings and lists is at level ``n + 1``) or over :data:`MAX_VALUES` values.
    :raises yaml.YAMLError: a syntax error.
    """
    parser = _BASE(text)
    try:
        values, open_nodes, aliases = 0, 0, False
        while True:
            try:
                event = parser.get_event()
            except yaml.YAMLError as exc:  # libyaml stops at 1,000 open levels itself: say it our way
                mark = getattr(exc, "problem_mark", None)
                if mark is None or "nesting depth" not in str(exc):
                    raise
                raise YAMLTextError(
                    f"line {mark.line + 1}: the YAML nests over {MAX_DEPTH} levels deep; flatten it"
                ) from None
            if isinstance(event, (yaml.CollectionEndEvent, yaml.DocumentEndEvent, yaml.StreamEndEvent)):
                open_nodes -= isinstance(event, yaml.CollectionEndEvent)
                if isinstance(event, yaml.StreamEndEvent):
                    return values, aliases
                continue
            if not isinstance(event, yaml.NodeEvent):
                continue
            values += 1
            aliases = aliases or isinstance(event, yaml.AliasEvent)
            if open_nodes + 1 > MAX_DEPTH:
                line = event.start_mark.line + 1
                raise YAMLTextError(f"line {line}: the YAML nests over {MAX_DEPTH} levels deep; flatten it")
            if values > MAX_VALUES:
                raise YAMLTextError(
                    f"line {event.start_mark.line + 1}: the YAML holds over {MAX_VALUES:,} values; a run file "
                    "holds hundreds: is it the right file? (long data goes in data.path)"
                )
            open_nodes += isinstance(event, yaml.CollectionStartEvent)
    finally:
        parser.dispose()


def parse_yaml(text: str) -> Any:
    """``yaml.safe_load(text)`` within the bounds above.

    :raises yaml.YAMLError: a syntax error (with its mark).
    :raises YAMLTextError: a duplicate key, an alias bomb, a cycle, too many values or too deep a nesting.
    """
    distinct, aliases = _scan(text)
    loader = _Loader(text)
    try:
        root = loader.get_single_node()
        if root is None:
            return None
        if not aliases:  # no value counted twice, no cycle, no level added: the scan's bounds hold
            return loader.construct_document(root)
        size, height = _measure(root)
        if size[id(root)] - distinct > MAX_NODES:
            raise YAMLTextError(
                f"{_worst_path(root, size, MAX_NODES)}: aliases (*name) expand the YAML to "
                f"{size[id(root)]:,} values ({distinct:,} written out), over the limit of {MAX_NODES:,} "
                "values added by aliases (an alias bomb?); write the values out instead"
            )
        if height[id(root)] > MAX_DEPTH:
            raise YAMLTextError(
                f"{_worst_path(root, height, MAX_DEPTH - 8)}: the YAML nests {height[id(root)]} levels deep, "
                f"over the limit of {MAX_DEPTH}; flatten it"
            )
        return loader.construct_document(root)
    finally:
        loader.dispose()
