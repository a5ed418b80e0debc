"""Bounded YAML for run files and ``--set`` values: what a file may cost to read, and keys that count once.

``yaml.safe_load`` runs no code, but it accepts documents whose cost is out of proportion to their size
and keys that silently replace each other. :func:`parse_yaml` refuses, each with the line and the fix:

- a key given twice in one mapping (YAML keeps the last one without a word);
- aliases that expand past :data:`MAX_NODES` values (the "billion laughs": ``&a [*b, *b, ...]`` nested a
  few levels is a tiny file that any recursive reader, e.g. ``repr``, walks for hours), or that refer
  to their own ancestor (an infinite document);
- nesting deeper than :data:`MAX_DEPTH` levels (a recursive reader's ``RecursionError``);
- text that is not UTF-8, and files over :data:`MAX_FILE_BYTES`.

The size and depth are measured on the composed node graph before any Python object is built, in time
linear in the number of distinct nodes (each alias target is measured once).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

#: most values (mapping keys and values, list items, scalars) a document may expand to through aliases
MAX_NODES = 100_000
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


class _Loader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses a key given twice in one mapping (merge keys ``<<`` may still be
    overridden, as YAML intends) and nesting past :data:`MAX_DEPTH` while composing (PyYAML's composer
    recurses once per level: 5,000 ``[`` would end in ``RecursionError``)."""

    _depth = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                line = self.peek_event().start_mark.line + 1
                raise YAMLTextError(f"line {line}: the YAML nests over {MAX_DEPTH} levels deep; flatten it")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

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


def parse_yaml(text: str) -> Any:
    """``yaml.safe_load(text)`` within the bounds above.

    :raises yaml.YAMLError: a syntax error (with its mark).
    :raises YAMLTextError: a duplicate key, an alias bomb, a cycle or too deep a nesting.
    """
    loader = _Loader(text)
    try:
        root = loader.get_single_node()
        if root is None:
            return None
        size, height = _measure(root)
        if size[id(root)] > MAX_NODES:
            raise YAMLTextError(
                f"{_worst_path(root, size, MAX_NODES)}: aliases (*name) expand the YAML to "
                f"{size[id(root)]:,} values, over the limit of {MAX_NODES:,} (an alias bomb?); write the "
                "values out instead"
            )
        if height[id(root)] > MAX_DEPTH:
            raise YAMLTextError(
                f"{_worst_path(root, height, MAX_DEPTH - 8)}: the YAML nests {height[id(root)]} levels deep, "
                f"over the limit of {MAX_DEPTH}; flatten it"
            )
        return loader.construct_document(root)
    finally:
        loader.dispose()
