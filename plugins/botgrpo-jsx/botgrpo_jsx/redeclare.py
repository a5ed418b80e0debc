"""Names declared twice in one scope: an error a JavaScript engine (and esbuild) reports, a tree does not.

tree-sitter parses ``import { useEffect, useEffect } from "react"`` or ``import Clock ...; const Clock = ...``
without an error, and so did ``jsx.syntax``; esbuild rejects the file with "The symbol X has already been
declared" at the second declaration (29 of 101 failing SmolLM2 pages, 13 of them first at that). The
rules are esbuild's, checked against it case by case (``tests/test_syntax.py``):

- in one scope, a *lexical* declaration (``import``, ``const``, ``let``, ``class``) conflicts with any
  other declaration of the name; ``var``, ``function`` and parameters do not conflict with each other;
- a function's parameters (and a ``catch`` parameter) share the scope of its body block; a ``for (let
  ...)`` head does not share its body's; an inner block is a scope of its own (shadowing is legal);
- the later declaration is the error. ``var`` is kept to its block (a ``var`` in a nested block that
  meets a ``let`` of the function is missed: no false alarm, a rare miss).

Also ``const`` declared without a value (:func:`uninitialized_consts`).

TypeScript merges an import with a value of the same name (it may be a type), so with ``typescript``
imports are left out, as esbuild's TSX loader does. Declarations inside or holding a parse error are
skipped (the tree is the parser's guess there; an error in a declaration's value or body keeps its
name, which the text holds), except the whole statements an ERROR begins with
(tree-sitter's recovery wraps a file's good imports into a later statement's ERROR). One pass over the tree: O(nodes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from botgrpo_jsx.treesitter import Parsed

if TYPE_CHECKING:
    from tree_sitter import Node

_LEXICAL = frozenset({"import", "const", "let", "class"})
_FUNCTIONS = frozenset(
    {
        "function_declaration",
        "generator_function_declaration",
        "function_expression",
        "function",
        "generator_function",
        "arrow_function",
        "method_definition",
    }
)
_PATTERN_FIELD = {
    "pair_pattern": "value",
    "assignment_pattern": "left",
    "object_assignment_pattern": "left",
    "required_parameter": "pattern",
    "optional_parameter": "pattern",
}


@dataclass(frozen=True)
class Redeclared:
    """A later declaration of a name its scope already declares: ``str`` range of the name."""

    start: int
    end: int
    name: str


def _pattern_names(node: Node | None, out: list[Node]) -> None:
    """The identifiers a binding pattern declares (``{a, b: [c], ...d}``, ``x = 1``, ``p: T``)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if n is None or n.has_error:
            continue
        if n.type in ("identifier", "shorthand_property_identifier_pattern"):
            out.append(n)
        elif n.type in _PATTERN_FIELD:
            stack.append(n.child_by_field_name(_PATTERN_FIELD[n.type]))
        elif n.type in ("object_pattern", "array_pattern", "rest_pattern", "formal_parameters"):
            stack.extend(reversed(n.named_children))


def _declarations(statement: Node, typescript: bool) -> list[tuple[str, Node]]:
    """(kind, name node) of what one statement of a scope declares in it."""
    if statement.type == "export_statement":
        inner = statement.child_by_field_name("declaration")
        return [] if inner is None else _declarations(inner, typescript)
    kind = statement.type
    names: list[Node] = []
    if kind == "import_statement":
        if statement.has_error or typescript or any(c.type == "type" for c in statement.children):
            return []
        for clause in (c for c in statement.named_children if c.type == "import_clause"):
            for part in clause.named_children:
                if part.type == "identifier":
                    names.append(part)
                elif part.type == "namespace_import":
                    names.extend(c for c in part.named_children if c.type == "identifier")
                elif part.type == "named_imports":
                    for spec in (s for s in part.named_children if s.type == "import_specifier"):
                        name = spec.child_by_field_name("alias") or spec.child_by_field_name("name")
                        if name is not None and name.type == "identifier":
                            names.append(name)
        return [("import", n) for n in names]
    if kind in ("lexical_declaration", "variable_declaration"):
        first = statement.child(0)
        word = "var" if kind == "variable_declaration" else (first.type if first is not None else "let")
        for declarator in statement.named_children:
            if declarator.type == "variable_declarator":
                _pattern_names(declarator.child_by_field_name("name"), names)
        return [(word if word in ("const", "let", "var") else "let", n) for n in names]
    if kind in ("class_declaration", "function_declaration", "generator_function_declaration"):
        name = statement.child_by_field_name("name")
        if name is None or name.has_error or name.is_missing:
            return []
        return [("class" if kind == "class_declaration" else "function", name)]
    return []


def _parameters(block: Node) -> list[Node]:
    """The parameters that share ``block``'s scope: its function's, or its ``catch``'s."""
    parent = block.parent
    names: list[Node] = []
    if parent is None:
        return names
    if parent.type in _FUNCTIONS and parent.child_by_field_name("body") == block:
        params = parent.child_by_field_name("parameters")
        if params is not None:
            _pattern_names(params, names)
        else:
            _pattern_names(parent.child_by_field_name("parameter"), names)
    elif parent.type == "catch_clause" and parent.child_by_field_name("body") == block:
        _pattern_names(parent.child_by_field_name("parameter"), names)
    return names


def _leading_statements(error: Node) -> list[Node]:
    """The whole, error-free statements an ERROR node begins with."""
    out = []
    for inner in error.children:
        if inner.has_error or not inner.type.endswith(("_statement", "_declaration")):
            break
        out.append(inner)
    return out


def redeclarations(parsed: Parsed, typescript: bool = False, limit: int = 20) -> list[Redeclared]:
    """The later declarations of names declared earlier in the same scope, in source order."""
    found: list[Redeclared] = []
    stack = [parsed.root]
    while stack:
        node = stack.pop()
        if node.type == "ERROR" and node != parsed.root:
            continue
        if node.type in ("program", "statement_block", "ERROR"):
            seen: dict[str, bool] = {}  # name -> declared lexically
            entries = [("param", n) for n in _parameters(node)] if node.type == "statement_block" else []
            # an ERROR (as the root, or wrapping a scope's first statements) keeps its whole statements
            statements = _leading_statements(node) if node.type == "ERROR" else node.named_children
            for statement in statements:
                entries.extend(_declarations(statement, typescript))
                if statement.type == "ERROR":
                    entries.extend(
                        d
                        for inner in _leading_statements(statement)
                        for d in _declarations(inner, typescript)
                    )
            for kind, name_node in entries:
                name = parsed.text(name_node)
                lexical = kind in _LEXICAL
                if name in seen and (lexical or seen[name]):
                    start, end = parsed.char_range(name_node)
                    found.append(Redeclared(start, end, name))
                seen[name] = seen.get(name, False) or lexical
        if node.type != "ERROR":
            stack.extend(reversed(node.children))
    found.sort(key=lambda r: r.start)
    return found[:limit]


def uninitialized_consts(parsed: Parsed, limit: int = 20) -> list[Redeclared]:
    """``const`` declarators without a value (``const { a, b };``): esbuild's "This constant must be
    initialized", which tree-sitter parses (a ``for (const x of y)`` head is no declarator). The span is
    the declarator's name."""
    found: list[Redeclared] = []
    stack = [parsed.root]
    while stack and len(found) < limit:
        node = stack.pop()
        if node.type == "ambient_declaration":  # `declare const x: T;` (TypeScript) needs no value
            continue
        nxt = node.next_sibling if node.type == "lexical_declaration" else None
        if node.has_error or (nxt is not None and nxt.type == "ERROR"):  # `const b = (;`: a broken value
            stack.extend(reversed(node.children))
            continue
        if node.type == "lexical_declaration" and node.child(0) is not None and node.child(0).type == "const":
            for declarator in node.named_children:
                name = (
                    declarator.child_by_field_name("name")
                    if declarator.type == "variable_declarator"
                    else None
                )
                if name is None or name.has_error or declarator.child_by_field_name("value") is not None:
                    continue
                if any(c.is_missing for c in declarator.children):
                    continue
                start, end = parsed.char_range(name)
                found.append(Redeclared(start, end, parsed.text(name)))
            continue
        stack.extend(reversed(node.children))
    return found
