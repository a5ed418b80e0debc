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
skipped (the tree is the parser's guess there, and so are scopes inside an ERROR; an error in a declaration's value or body keeps its
name, which the text holds), except the whole statements an ERROR begins with
(tree-sitter's recovery wraps a file's good imports into a later statement's ERROR). The scopes and
declarations are found by one tree-sitter query (in C); Python reads only their statements.
"""

from __future__ import annotations

import bisect
import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from botgrpo_jsx.treesitter import Parsed, query

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
    """The whole, error-free statements an ERROR node begins with (comments between them skipped)."""
    out = []
    for inner in error.children:
        if inner.type == "comment" and not inner.has_error:
            continue
        if inner.has_error or not inner.type.endswith(("_statement", "_declaration")):
            break
        out.append(inner)
    return out


#: The nodes the checks start from, found by tree-sitter (in C) rather than a Python walk of every node.
_PATTERNS = ("(program) @scope", "(statement_block) @scope", "(lexical_declaration) @decl", "(ERROR) @error")


def _captures(parsed: Parsed) -> dict[str, list[Node]]:
    """The query's nodes, each list in source order; those inside an ERROR (not the root) left out:
    the tree is the parser's guess there (an ERROR's own leading statements are read by the caller)."""
    if "binding_nodes" in parsed.memo:
        return parsed.memo["binding_nodes"]
    from tree_sitter import QueryCursor

    q = query(parsed.grammar, _PATTERNS)
    found = QueryCursor(q).captures(parsed.root) if q is not None else {}
    errors = sorted((n.start_byte, n.end_byte) for n in found.get("error", []) if n != parsed.root)

    reach = list(itertools.accumulate((b for _, b in errors), max))  # the furthest end so far

    def inside_error(n: Node) -> bool:
        k = bisect.bisect_right(errors, (n.start_byte, float("inf"))) - 1
        return k >= 0 and reach[k] >= n.end_byte

    out = {
        key: sorted((n for n in found.get(key, []) if not inside_error(n)), key=lambda n: n.start_byte)
        for key in ("scope", "decl")
    }
    parsed.memo["binding_nodes"] = out
    return out


def redeclarations(parsed: Parsed, typescript: bool = False, limit: int = 20) -> list[Redeclared]:
    """The later declarations of names declared earlier in the same scope, in source order."""
    found: list[Redeclared] = []
    scopes = _captures(parsed)["scope"]
    if parsed.root.type == "ERROR":
        scopes = [parsed.root, *scopes]
    for node in scopes:
        seen: dict[str, bool] = {}  # name -> declared lexically
        entries = [("param", n) for n in _parameters(node)] if node.type == "statement_block" else []
        # an ERROR (as the root, or wrapping a scope's first statements) keeps its whole statements
        statements = _leading_statements(node) if node.type == "ERROR" else node.named_children
        for statement in statements:
            entries.extend(_declarations(statement, typescript))
            if statement.type == "ERROR":
                entries.extend(
                    d for inner in _leading_statements(statement) for d in _declarations(inner, typescript)
                )
        for kind, name_node in entries:
            name = parsed.text(name_node)
            lexical = kind in _LEXICAL
            if name in seen and (lexical or seen[name]):
                start, end = parsed.char_range(name_node)
                found.append(Redeclared(start, end, name))
            seen[name] = seen.get(name, False) or lexical
    found.sort(key=lambda r: r.start)
    return found[:limit]


def uninitialized_consts(parsed: Parsed, limit: int = 20) -> list[Redeclared]:
    """``const`` declarators without a value (``const { a, b };``): esbuild's "This constant must be
    initialized", which tree-sitter parses (a ``for (const x of y)`` head is no declarator; ``declare
    const`` in TypeScript needs none). The span is the declarator's name."""
    found: list[Redeclared] = []
    for node in _captures(parsed)["decl"]:
        first, nxt, parent = node.child(0), node.next_sibling, node.parent
        if first is None or first.type != "const" or node.has_error:
            continue
        if (nxt is not None and nxt.type == "ERROR") or (
            parent is not None and parent.type == "ambient_declaration"
        ):
            continue  # `const b = (;`: a broken value; `declare const x: T;`
        for declarator in node.named_children:
            name = (
                declarator.child_by_field_name("name") if declarator.type == "variable_declarator" else None
            )
            if name is None or name.has_error or declarator.child_by_field_name("value") is not None:
                continue
            if any(c.is_missing for c in declarator.children):
                continue
            start, end = parsed.char_range(name)
            found.append(Redeclared(start, end, parsed.text(name)))
            if len(found) >= limit:
                return found
    return found


#: Declarations whose name a parser declares only once the whole node is read (esbuild: a function's
#: name after its body, so an error in the body comes first).
_DECLARED_AT_END = frozenset({"function_declaration", "generator_function_declaration", "class_declaration"})


def declared_before(parsed: Parsed, found: Redeclared, at: int) -> bool:
    """Whether a left-to-right parser has declared ``found``'s name before ``str`` index ``at``: the
    binding that holds it (a pattern, else the name) ends before ``at``, and so does a function or class
    declaration it names."""
    index = parsed.index
    node = parsed.root.descendant_for_byte_range(
        index.byte_of_char(found.start), index.byte_of_char(found.end)
    )
    end = node.end_byte if node is not None else index.byte_of_char(found.end)
    while node is not None and node.parent is not None:
        parent = node.parent
        if parent.type in _DECLARED_AT_END or parent.type.endswith("_pattern"):
            end = max(end, parent.end_byte)
        elif parent.type not in _PATTERN_FIELD and parent.type not in ("rest_pattern",):
            break
        node = parent
    return end <= index.byte_of_char(at)
