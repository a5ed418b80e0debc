"""One pass over a tree-sitter tree that gathers what the React rules need, in linear time.

tree-sitter nodes do not store their parent: ``Node.parent`` walks down from the root, and
``field_name_for_child`` scans the siblings, so rules that climb from each call to its function cost
O(depth x siblings) per node and time out on large flat or deeply nested input. Here a single
``TreeCursor`` walk visits every node at most once (not the inside of :data:`OPAQUE` subtrees: types,
imports, strings) and carries the context down instead:

- the enclosing function (its name, whether it is a method, how many ``return``s it has had so far);
- why a hook at this position would run conditionally (the innermost reason: an ``if`` branch, a
  ``?:`` branch, the right of ``&&``/``||``/``??``, a ``switch`` case, a loop, after an early return);
- whether the node lies in a part that does not parse (inside an ``ERROR`` node, or in a top-level
  statement with a syntax error), where rules about structure would only report the parser's guesses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING

from botgrpo_jsx.treesitter import Grammar, Parsed, kind_tables

if TYPE_CHECKING:
    from tree_sitter import Node, TreeCursor

FUNCTIONS = frozenset(
    {
        "function_declaration",
        "function_expression",
        "function",
        "arrow_function",
        "generator_function_declaration",
        "generator_function",
        "method_definition",
    }
)
_LOOPS = {
    "for_statement": {"body", "condition", "increment"},
    "for_in_statement": {"body"},
    "while_statement": {"body", "condition"},
    "do_statement": {"body", "condition"},
}
#: Wrappers whose function argument is still the component (``memo(function X() {...})``).
_HOC = re.compile(r"^(?:React\.)?(?:memo|forwardRef|observer|styled|withRouter|connect\(.*\))$", re.DOTALL)
#: Parents whose child positions can make a hook conditional (see ``_position_problem``).
_POSITIONAL = frozenset(
    {
        "if_statement",
        "ternary_expression",
        "binary_expression",
        "switch_case",
        "switch_default",
        "statement_block",
    }
    | set(_LOOPS)
)
_WRAPPERS = frozenset({"parenthesized_expression", "as_expression", "satisfies_expression"})
#: Subtrees the walk does not enter: TypeScript types, strings, comments and regexes hold no call,
#: JSX element, function, return, export or declaration the rules read (a template string can: it is
#: walked).
OPAQUE = frozenset(
    {
        "type_annotation",
        "type_arguments",
        "type_parameters",
        "interface_declaration",
        "type_alias_declaration",
        "string",
        "comment",
        "regex",
    }
)
#: Where a name is declared (``undefined_component`` reads the file-wide set): a node kind, and the
#: fields of it whose identifier it declares (``None``: every identifier child; ``{ X as Y }``
#: declares both names, ``const {a} = p`` its shorthand ``a``).
BINDINGS: dict[str, frozenset[str] | None] = {
    "import_clause": None,
    "import_specifier": None,
    "namespace_import": None,
    "variable_declarator": frozenset({"name"}),
    "object_pattern": None,
    "object_assignment_pattern": frozenset({"left"}),
    "pair_pattern": frozenset({"value"}),
    "array_pattern": None,
    "assignment_pattern": frozenset({"left"}),
    "rest_pattern": None,
    "required_parameter": frozenset({"pattern"}),
    "optional_parameter": frozenset({"pattern"}),
    "formal_parameters": None,
    "arrow_function": frozenset({"parameter"}),
    "function_declaration": frozenset({"name"}),
    "function_expression": frozenset({"name"}),
    "generator_function_declaration": frozenset({"name"}),
    "class_declaration": frozenset({"name"}),
    "abstract_class_declaration": frozenset({"name"}),
    "class": frozenset({"name"}),
    "enum_declaration": frozenset({"name"}),
    "for_in_statement": frozenset({"left"}),
    "catch_clause": frozenset({"parameter"}),
    "assignment_expression": frozenset({"left"}),
}
#: The kinds of a declared name (a class's name is a ``type_identifier`` in TSX).
_NAMES = frozenset({"identifier", "type_identifier", "shorthand_property_identifier_pattern"})
#: Kinds :func:`_enter` acts on (a kind it gains must be added here: ``test_rules`` compares the walk
#: with one that calls it on every node); any other node whose parent is not in :data:`_SCOPING`
#: has its parent's context, which the walk copies without calling it.
_NOT_PLAIN = (
    FUNCTIONS
    | set(BINDINGS)
    | {
        "return_statement",
        "call_expression",
        "jsx_opening_element",
        "jsx_self_closing_element",
        "jsx_closing_element",
        "export_statement",
        "member_expression",
        "ERROR",
    }
)
#: Parents whose children's context differs from their own (a branch, a function, the program).
_SCOPING = _POSITIONAL | FUNCTIONS | {"program"}
#: A tag further than this from its line's start is not "first on its line" (bounds the look-back).
_MAX_INDENT = 200


@dataclass(slots=True)
class Function:
    """A function the walk is inside: its name, kind, and ``return`` statements seen so far."""

    name: str | None
    default_export: bool
    method: bool
    returns: int = 0


@dataclass(frozen=True, slots=True)
class Call:
    """A call expression with its context (``problem``: why it would run conditionally, or None)."""

    node: Node
    callee: Node
    function: Function | None
    problem: str | None
    broken: bool


@dataclass(frozen=True, slots=True)
class Tag:
    """A JSX opening or closing tag; ``indent`` is its line's indentation when it starts the line.

    ``element``: the start byte of the ``jsx_element`` tree-sitter put it in (an opening and a
    closing tag with the same one are tree-sitter's pair), ``None`` when it is in none.
    """

    node: Node
    closing: bool
    name: str
    indent: int | None
    element: int | None = None


@dataclass
class Facts:
    """What one walk found, in source order."""

    calls: list[Call] = field(default_factory=list)
    #: (opening or self-closing element, whether it lies in a part that does not parse)
    elements: list[tuple[Node, bool]] = field(default_factory=list)
    tags: list[Tag] = field(default_factory=list)
    exports: list[Node] = field(default_factory=list)
    cjs_exports: list[Node] = field(default_factory=list)
    #: every name the file declares (see :data:`BINDINGS`)
    declared: set[str] = field(default_factory=set)
    #: nodes visited, and nodes inside :data:`OPAQUE` subtrees not entered (together: every node once)
    visits: int = 0
    skipped: int = 0


@dataclass(slots=True)
class _Frame:
    node: Node
    type: str
    function: Function | None
    problem: str | None
    broken: bool
    returns_at_entry: int = 0


def walk(parsed: Parsed) -> Facts:
    """Visit every node of ``parsed`` at most once (iteratively: no recursion limit; :data:`OPAQUE`
    subtrees are counted, not entered) and collect :class:`Facts`.

    Kept in ``parsed.memo``: jsx.rules and jsx.syntax's tag blame read the same facts of one parse.
    """
    if "facts" not in parsed.memo:
        parsed.memo["facts"] = _walk(parsed)
    return parsed.memo["facts"]


def _walk(parsed: Parsed) -> Facts:
    facts = Facts()
    cursor = parsed.root.walk()
    frames: list[_Frame] = []
    visits = skipped = 0
    opaque, plain, names = _kind_sets(parsed.grammar)
    while True:
        node = cursor.node
        visits += 1
        if node.child_count:  # a leaf (a token) carries nothing the rules read: no frame for it
            kind_id = node.kind_id
            if kind_id in opaque:  # types, strings: no call, element or function inside
                skipped += node.descendant_count - 1
            else:
                parent = frames[-1] if frames else None
                if parent is not None and kind_id in plain and parent.type not in _SCOPING:
                    # most nodes: their context is their parent's (what _enter would compute)
                    fn = parent.function
                    returns = fn.returns if fn else 0
                    frame = _Frame(node, names[kind_id], fn, parent.problem, parent.broken, returns)
                else:
                    frame = _enter(parsed, node, cursor, frames, facts)
                frames.append(frame)
                cursor.goto_first_child()
                continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                facts.visits, facts.skipped = visits, skipped
                return facts
            frames.pop()


@cache
def _kind_sets(grammar: Grammar) -> tuple[frozenset[int], frozenset[int], dict[int, str]]:
    """Ids of :data:`OPAQUE`'s kinds in ``grammar``, of the kinds :func:`_enter` does nothing with
    (those not in :data:`_NOT_PLAIN`), and every id's name (int tests per node, not type strings)."""
    names, _, _ = kind_tables(grammar)
    opaque = frozenset(i for i, name in names.items() if name in OPAQUE)
    plain = frozenset(i for i, name in names.items() if name not in _NOT_PLAIN)
    return opaque, plain, names


def _enter(parsed: Parsed, node: Node, cursor: TreeCursor, frames: list[_Frame], facts: Facts) -> _Frame:
    kind = node.type
    parent = frames[-1] if frames else None
    function = parent.function if parent is not None else None
    field_name = None  # the cursor's field name, read only where a check needs it
    if parent is None:
        broken, problem = False, None
    else:
        broken = parent.broken or kind == "ERROR" or (parent.type == "program" and node.has_error)
        inherited = None if parent.type in FUNCTIONS else parent.problem
        conditional = None
        if parent.type in _POSITIONAL:
            field_name = cursor.field_name
            conditional = _position_problem(parsed, parent, field_name)
        problem = conditional or inherited
    if kind in BINDINGS:
        _declare(parsed, node, BINDINGS[kind], facts.declared)
    if kind in FUNCTIONS:
        name, default_export = _function_name(parsed, node, frames)
        function = Function(name, default_export, kind == "method_definition")
    frame = _Frame(node, kind, function, problem, broken, function.returns if function else 0)
    if kind == "return_statement" and function is not None:
        function.returns += 1
    elif kind == "call_expression":
        callee = node.child_by_field_name("function")
        if callee is not None:
            facts.calls.append(Call(node, callee, function, problem, broken))
    elif kind in ("jsx_opening_element", "jsx_self_closing_element"):
        facts.elements.append((node, broken))
        if kind == "jsx_opening_element":
            facts.tags.append(_tag(parsed, node, False, parent))
    elif kind == "jsx_closing_element":
        facts.tags.append(_tag(parsed, node, True, parent))
    elif kind == "export_statement" and parent is not None and parent.type == "program":
        facts.exports.append(node)
    elif (
        kind == "member_expression"
        and parent
        and parent.type == "assignment_expression"
        and cursor.field_name == "left"
    ):
        facts.cjs_exports.append(node)
    return frame


def _declare(parsed: Parsed, node: Node, fields: frozenset[str] | None, declared: set[str]) -> None:
    """Add the names ``node`` declares (its identifier children in ``fields``, or all of them)."""
    for child in node.named_children if fields is None else map(node.child_by_field_name, fields):
        if child is not None and child.type in _NAMES:
            declared.add(parsed.text(child))


def _position_problem(parsed: Parsed, parent: _Frame, field_name: str | None) -> str | None:
    """Why code at this position of ``parent`` runs on some renders only (hook rule), or None."""
    kind = parent.type
    if kind == "if_statement" and field_name != "condition":
        return "called conditionally (inside an if)"
    if kind == "ternary_expression" and field_name != "condition":
        return "called conditionally (inside a ?: branch)"
    if kind == "binary_expression" and field_name == "right":
        op = parent.node.child_by_field_name("operator")
        text = parsed.text(op) if op is not None else ""
        return f"called conditionally (right of {text})" if text in ("&&", "||", "??") else None
    if kind in ("switch_case", "switch_default"):
        return "called conditionally (inside a switch case)"
    if kind in _LOOPS and field_name in _LOOPS[kind]:
        return "called inside a loop"
    # In a block, every earlier statement has been walked already: a return among them skips us.
    fn = parent.function
    if kind == "statement_block" and fn is not None and fn.returns > parent.returns_at_entry:
        return "called after an early return (not every render reaches it)"
    return None


def _function_name(parsed: Parsed, fn: Node, ancestors: list[_Frame]) -> tuple[str | None, bool]:
    """(name the function is known by, whether it is an anonymous default export)."""
    own = fn.child_by_field_name("name")
    if own is not None and fn.type != "method_definition":
        return parsed.text(own), False
    i = len(ancestors) - 1
    while i >= 0:
        parent = ancestors[i].node
        kind = parent.type
        if kind == "variable_declarator":
            name = parent.child_by_field_name("name")
            return (parsed.text(name) if name is not None else None), False
        if kind == "export_statement":
            return None, True
        if kind in ("pair", "public_field_definition", "field_definition"):
            key = parent.child_by_field_name("key") or parent.child_by_field_name("name")
            return (parsed.text(key) if key is not None else None), False
        if kind == "assignment_expression":
            left = parent.child_by_field_name("left")
            if left is not None and left.type == "member_expression":
                left = left.child_by_field_name("property") or left
            return (parsed.text(left) if left is not None else None), False
        if kind == "arguments" and i >= 1 and ancestors[i - 1].type == "call_expression":
            callee = ancestors[i - 1].node.child_by_field_name("function")
            if callee is not None and _HOC.match(parsed.text(callee)):
                i -= 2  # memo(...) / forwardRef(...): the wrapper's binding names it
                continue
            return None, False
        if kind in _WRAPPERS:
            i -= 1
            continue
        return None, False
    return None, False


def _tag(parsed: Parsed, node: Node, closing: bool, parent: _Frame | None) -> Tag:
    name_node = node.child_by_field_name("name")
    name = parsed.text(name_node) if name_node is not None else ""
    start = node.start_byte
    line_start = parsed.source.rfind(b"\n", max(0, start - _MAX_INDENT), start) + 1
    lead = parsed.source[line_start:start]
    indent = len(lead) if (line_start > 0 or start < _MAX_INDENT) and not lead.strip() else None
    element = parent.node.start_byte if parent is not None and parent.type == "jsx_element" else None
    return Tag(node, closing, name, indent, element)
