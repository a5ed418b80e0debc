"""React rules checked on a tree-sitter tree, each reported as a span of the offending code.

Rules (names are the keys of ``RulesParams.weights``):

- ``missing_key``: the element returned by a ``.map(...)`` callback has no ``key`` prop.
- ``hooks``: a hook (``useX``) called in a condition, a loop, a nested callback, a class, after an early
  ``return`` of its component, or outside any component or custom hook (the Rules of Hooks; ``use()``
  itself may be conditional and is exempt).
- ``undefined_component``: a capitalised JSX element (or the root of ``<A.B>``) that nothing in the
  file declares or imports. Declarations are collected file-wide, not per scope: a deliberate
  over-approximation, so a valid file is never flagged (measured on the corpus: see the README).
- ``unclosed_tag``: an opening tag without a closing tag, or a closing tag whose name differs.
- ``class_attribute``: ``class=`` (or ``for=``) on a DOM element, where React wants ``className``
  (``htmlFor``).
- ``missing_export``: the prompt asks for an exported component and none is exported.

Queries run in tree-sitter's C code; Python only looks at the nodes they return.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from botgrpo_jsx.treesitter import Parsed, query

if TYPE_CHECKING:
    from tree_sitter import Node

RULES = ("missing_key", "hooks", "undefined_component", "unclosed_tag", "class_attribute", "missing_export")
ExportRequirement = Literal["any", "default"]

_HOOK = re.compile(r"^use[A-Z0-9]\w*$")
_COMPONENT_OR_HOOK = re.compile(r"^(?:[A-Z]|use[A-Z0-9])")
_PASCAL = re.compile(r"^[A-Z]")
#: Wrappers whose function argument is still the component (``memo(function X() {...})``).
_HOC = re.compile(r"^(?:React\.)?(?:memo|forwardRef|observer|styled|withRouter|connect\(.*\))$", re.DOTALL)
_FUNCTIONS = frozenset(
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

# Binding positions; each pattern is kept only where the grammar has its node types.
_DECLARATIONS = (
    "(import_clause (identifier) @decl)",
    "(import_specifier name: (identifier) @decl)",
    "(import_specifier alias: (identifier) @decl)",
    "(namespace_import (identifier) @decl)",
    "(variable_declarator name: (identifier) @decl)",
    "(shorthand_property_identifier_pattern) @decl",
    "(pair_pattern value: (identifier) @decl)",
    "(array_pattern (identifier) @decl)",
    "(assignment_pattern left: (identifier) @decl)",
    "(object_assignment_pattern left: (shorthand_property_identifier_pattern) @decl)",
    "(rest_pattern (identifier) @decl)",
    "(required_parameter pattern: (identifier) @decl)",
    "(optional_parameter pattern: (identifier) @decl)",
    "(formal_parameters (identifier) @decl)",
    "(arrow_function parameter: (identifier) @decl)",
    "(function_declaration name: (identifier) @decl)",
    "(function_expression name: (identifier) @decl)",
    "(generator_function_declaration name: (identifier) @decl)",
    "(class_declaration name: (_) @decl)",
    "(abstract_class_declaration name: (_) @decl)",
    "(class name: (_) @decl)",
    "(enum_declaration name: (identifier) @decl)",
    "(for_in_statement left: (identifier) @decl)",
    "(catch_clause parameter: (identifier) @decl)",
    "(assignment_expression left: (identifier) @decl)",
)
_USES = (
    "(call_expression) @call",
    "(jsx_opening_element) @open",
    "(jsx_self_closing_element) @selfclose",
    "(jsx_closing_element) @close",
    "(export_statement) @export",
    "(assignment_expression left: (member_expression) @cjs)",
)
_PATTERNS = _DECLARATIONS + _USES


@dataclass(frozen=True)
class Violation:
    """One rule violation in ``str`` indices of the parsed code."""

    rule: str
    start: int
    end: int
    message: str


def check_rules(
    parsed: Parsed, enabled: frozenset[str], require_export: ExportRequirement | None = None
) -> list[Violation]:
    """All violations of the ``enabled`` rules in one parse, in source order."""
    from tree_sitter import QueryCursor

    q = query(parsed.grammar, _PATTERNS)
    captures: dict[str, list[Node]] = QueryCursor(q).captures(parsed.root) if q is not None else {}
    out: list[Violation] = []
    calls = [(c, f) for c in captures.get("call", []) if (f := c.child_by_field_name("function")) is not None]
    if "missing_key" in enabled:
        out += _missing_keys(parsed, calls)
    if "hooks" in enabled:
        out += _hooks(parsed, calls)
    elements = captures.get("open", []) + captures.get("selfclose", [])
    if "undefined_component" in enabled:
        declared = {parsed.text(n) for n in captures.get("decl", [])}
        out += _undefined_components(parsed, elements, declared)
    if "unclosed_tag" in enabled:
        out += _unclosed_tags(parsed, captures.get("open", []), captures.get("close", []))
    if "class_attribute" in enabled:
        out += _class_attributes(parsed, elements)
    if "missing_export" in enabled and require_export is not None:
        out += _missing_export(parsed, captures.get("export", []), captures.get("cjs", []), require_export)
    out.sort(key=lambda v: (v.start, v.end, v.rule))
    return out


def _violation(parsed: Parsed, rule: str, node: Node, message: str, first_line: bool = True) -> Violation:
    start, end = parsed.char_range(node)
    if first_line:
        newline = parsed.index.text.find("\n", start, end)
        if newline > start:
            end = newline
    return Violation(rule, start, end, message)


# --- missing_key -------------------------------------------------------------------------------------------
def _returned_elements(body: Node) -> list[Node]:
    """JSX elements a callback body can return (through parentheses, ternaries and ``&&``)."""
    if body.type == "statement_block":
        exprs = []
        stack = list(body.named_children)
        while stack:
            node = stack.pop()
            if node.type in _FUNCTIONS or node.type == "class_declaration":
                continue  # a nested function's returns are not the callback's
            if node.type == "return_statement":
                exprs += [c for c in node.named_children if c.type != "comment"][:1]
            else:
                stack += node.named_children
    else:
        exprs = [body]
    found = []
    while exprs:
        node = exprs.pop()
        if node.type == "parenthesized_expression":
            exprs += node.named_children[-1:]
        elif node.type == "ternary_expression":
            exprs += [
                c
                for c in (node.child_by_field_name("consequence"), node.child_by_field_name("alternative"))
                if c
            ]
        elif node.type == "binary_expression" and (right := node.child_by_field_name("right")) is not None:
            exprs.append(right)
        elif node.type in ("jsx_element", "jsx_self_closing_element"):
            found.append(node)
    return found


def _opening(element: Node) -> Node:
    return (
        element.child_by_field_name("open_tag") or element.child(0) or element
        if element.type == "jsx_element"
        else element
    )


def _attributes(opening: Node) -> list[Node]:
    return [c for c in opening.named_children if c.type in ("jsx_attribute", "jsx_expression")]


def _attribute_name(attribute: Node, parsed: Parsed) -> str | None:
    if attribute.type != "jsx_attribute" or attribute.named_child_count == 0:
        return None
    return parsed.text(attribute.named_children[0])


def _missing_keys(parsed: Parsed, calls: list[tuple[Node, Node]]) -> list[Violation]:
    out = []
    for call, callee in calls:
        if callee.type != "member_expression":
            continue
        prop = callee.child_by_field_name("property")
        if prop is None or parsed.text(prop) not in ("map", "flatMap"):
            continue
        args = call.child_by_field_name("arguments")
        fn = next((a for a in args.named_children if a.type != "comment"), None) if args is not None else None
        if fn is None or fn.type not in _FUNCTIONS:
            continue
        body = fn.child_by_field_name("body")
        if body is None:
            continue
        for element in _returned_elements(body):
            opening = _opening(element)
            attrs = _attributes(opening)
            # A spread ({...props}) may carry the key: do not guess.
            if any(a.type == "jsx_expression" for a in attrs):
                continue
            if any(_attribute_name(a, parsed) == "key" for a in attrs):
                continue
            fragment = opening.child_by_field_name("name") is None
            message = (
                "a fragment returned from .map() cannot take a key: use <Fragment key={...}>"
                if fragment
                else "element returned from .map() has no `key` prop"
            )
            out.append(_violation(parsed, "missing_key", opening, message))
    return out


# --- hooks ---------------------------------------------------------------------------------------------------
def _hook_name(callee: Node, parsed: Parsed) -> str | None:
    if callee.type == "identifier":
        name = parsed.text(callee)
    elif callee.type == "member_expression":
        obj, prop = callee.child_by_field_name("object"), callee.child_by_field_name("property")
        if obj is None or prop is None or parsed.text(obj) != "React":
            return None
        name = parsed.text(prop)
    else:
        return None
    return name if _HOOK.match(name) else None


def _field_of(parent: Node, child: Node) -> str | None:
    for i, c in enumerate(parent.children):
        if c.id == child.id:
            return parent.field_name_for_child(i)
    return None


def _function_name(fn: Node, parsed: Parsed) -> tuple[str | None, bool]:
    """(name the function is known by, whether it is an anonymous default export)."""
    own = fn.child_by_field_name("name")
    if own is not None and fn.type != "method_definition":
        return parsed.text(own), False
    node = fn
    while node.parent is not None:
        parent = node.parent
        if parent.type == "variable_declarator":
            name = parent.child_by_field_name("name")
            return (parsed.text(name) if name is not None else None), False
        if parent.type == "export_statement":
            return None, True
        if parent.type in ("pair", "public_field_definition", "field_definition"):
            key = parent.child_by_field_name("key") or parent.child_by_field_name("name")
            return (parsed.text(key) if key is not None else None), False
        if parent.type == "assignment_expression":
            left = parent.child_by_field_name("left")
            if left is not None and left.type == "member_expression":
                left = left.child_by_field_name("property") or left
            return (parsed.text(left) if left is not None else None), False
        if (
            parent.type == "arguments"
            and parent.parent is not None
            and parent.parent.type == "call_expression"
        ):
            callee = parent.parent.child_by_field_name("function")
            if callee is not None and _HOC.match(parsed.text(callee)):
                node = parent.parent  # memo(...) / forwardRef(...): the wrapper's binding names it
                continue
            return None, False
        if parent.type in ("parenthesized_expression", "as_expression", "satisfies_expression"):
            node = parent
            continue
        return None, False
    return None, False


def _returns(node: Node) -> bool:
    """Whether ``node`` holds a ``return`` of the function it is in (nested functions skipped)."""
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "return_statement":
            return True
        if current is not node and current.type in _FUNCTIONS:
            continue  # a return in there leaves that function, not ours
        stack.extend(current.children)
    return False


def _after_return(block: Node, child: Node) -> bool:
    """Whether a statement before ``child`` in ``block`` can return: the hook is then skipped on some renders."""
    for statement in block.children:
        if statement.id == child.id:
            return False
        if _returns(statement):
            return True
    return False


def _hooks(parsed: Parsed, calls: list[tuple[Node, Node]]) -> list[Violation]:
    out = []
    for call, callee in calls:
        name = _hook_name(callee, parsed)
        if name is None:
            continue
        problem = None
        child, node = call, call.parent
        while node is not None:
            kind = node.type
            if kind in _FUNCTIONS:
                if kind == "method_definition":
                    problem = f"`{name}` called in a class method: hooks work only in function components"
                    break
                fn_name, default_export = _function_name(node, parsed)
                if (
                    problem is None
                    and not default_export
                    and not (fn_name and _COMPONENT_OR_HOOK.match(fn_name))
                ):
                    where = f"`{fn_name}`" if fn_name else "a callback"
                    problem = f"`{name}` called inside {where}, which is neither a component nor a hook"
                break
            field = _field_of(node, child)
            if problem is None:
                if kind == "if_statement" and field != "condition":
                    problem = f"`{name}` called conditionally (inside an if)"
                elif kind == "ternary_expression" and field != "condition":
                    problem = f"`{name}` called conditionally (inside a ?: branch)"
                elif kind == "binary_expression" and field == "right":
                    op = node.child_by_field_name("operator")
                    if op is not None and parsed.text(op) in ("&&", "||", "??"):
                        problem = f"`{name}` called conditionally (right of {parsed.text(op)})"
                elif kind in ("switch_case", "switch_default"):
                    problem = f"`{name}` called conditionally (inside a switch case)"
                elif kind in _LOOPS and field in _LOOPS[kind]:
                    problem = f"`{name}` called inside a loop"
                elif kind == "statement_block" and _after_return(node, child):
                    problem = f"`{name}` called after an early return (not every render reaches it)"
            child, node = node, node.parent
        else:
            problem = problem or f"`{name}` called at module level, outside any component"
        if problem is not None:
            out.append(_violation(parsed, "hooks", call, problem))
    return out


# --- undefined_component -------------------------------------------------------------------------------------
def _element_root_name(name: Node, parsed: Parsed) -> str | None:
    """The identifier that must be in scope for this element name, or ``None`` (DOM tag, namespace)."""
    if name.type == "jsx_namespace_name":
        return None
    if name.type in ("member_expression", "nested_identifier"):
        root = parsed.text(name).split(".", 1)[0].strip()
        return None if root == "this" else root
    text = parsed.text(name)
    if not text or "-" in text or not _PASCAL.match(text):
        return None  # lower case: an intrinsic DOM element; with a dash: a custom element
    return text


def _undefined_components(parsed: Parsed, elements: list[Node], declared: set[str]) -> list[Violation]:
    out = []
    for element in elements:
        name = element.child_by_field_name("name")
        if name is None:
            continue
        root = _element_root_name(name, parsed)
        if root is not None and root not in declared:
            out.append(
                _violation(parsed, "undefined_component", name, f"<{root}> is neither defined nor imported")
            )
    return out


# --- unclosed_tag ----------------------------------------------------------------------------------------------
def _unclosed_tags(parsed: Parsed, openings: list[Node], closings: list[Node]) -> list[Violation]:
    out = []
    for opening in openings:
        parent = opening.parent
        label = (
            parsed.text(opening.child_by_field_name("name")) if opening.child_by_field_name("name") else ""
        )
        if parent is None or parent.type != "jsx_element":
            out.append(_violation(parsed, "unclosed_tag", opening, f"<{label}> is never closed"))
            continue
        close = parent.child_by_field_name("close_tag")
        if close is None or close.is_missing or close.end_byte == close.start_byte:
            out.append(_violation(parsed, "unclosed_tag", opening, f"<{label}> is never closed"))
            continue
        close_name = close.child_by_field_name("name")
        closing_label = parsed.text(close_name) if close_name is not None else ""
        if closing_label != label:
            message = f"<{label}> is closed by </{closing_label}>"
            out.append(_violation(parsed, "unclosed_tag", opening, message))
            out.append(_violation(parsed, "unclosed_tag", close, message))
    for close in closings:
        if close.parent is None or close.parent.type != "jsx_element":
            out.append(_violation(parsed, "unclosed_tag", close, f"{parsed.text(close)} closes no open tag"))
    return out


# --- class_attribute -------------------------------------------------------------------------------------------
_DOM_RENAMES = {"class": "className", "for": "htmlFor"}


def _class_attributes(parsed: Parsed, elements: list[Node]) -> list[Violation]:
    out = []
    for element in elements:
        name = element.child_by_field_name("name")
        if name is None or name.type != "identifier" or _PASCAL.match(parsed.text(name)):
            continue  # only DOM elements: a component may legitimately take a `class` prop
        for attribute in _attributes(element):
            attr = _attribute_name(attribute, parsed)
            if attr in _DOM_RENAMES:
                node = attribute.named_children[0]
                message = f"`{attr}=` on <{parsed.text(name)}>: React uses `{_DOM_RENAMES[attr]}`"
                out.append(_violation(parsed, "class_attribute", node, message))
    return out


# --- missing_export ----------------------------------------------------------------------------------------------
def _exports(parsed: Parsed, exports: list[Node], cjs: list[Node]) -> tuple[bool, bool]:
    """(has a default export, has a named export of a capitalised name)."""
    default = named = False
    for node in exports:
        if node.parent is None or node.parent.type != "program":
            continue
        if any(c.type == "default" for c in node.children):
            default = True
            continue
        decl = node.child_by_field_name("declaration")
        if decl is not None:
            names = [decl.child_by_field_name("name")]
            names += [
                d.child_by_field_name("name") for d in decl.named_children if d.type == "variable_declarator"
            ]
            named = named or any(n is not None and _PASCAL.match(parsed.text(n)) for n in names)
        for clause in (c for c in node.named_children if c.type == "export_clause"):
            for spec in clause.named_children:
                alias = spec.child_by_field_name("alias")
                ident = spec.child_by_field_name("name")
                if alias is not None and parsed.text(alias) == "default":
                    default = True
                elif ident is not None and _PASCAL.match(parsed.text(alias or ident)):
                    named = True
    for left in cjs:
        text = parsed.text(left)
        if text == "module.exports" or text == "exports.default":
            default = True
        elif text.startswith(("exports.", "module.exports.")):
            named = True
    return default, named


def _missing_export(
    parsed: Parsed, exports: list[Node], cjs: list[Node], requirement: ExportRequirement
) -> list[Violation]:
    default, named = _exports(parsed, exports, cjs)
    if default or (requirement == "any" and named):
        return []
    wanted = "a default export" if requirement == "default" else "an exported component"
    # Blame the first top-level component declaration (it is what should have been exported).
    for child in parsed.root.named_children:
        decl = child.child_by_field_name("declaration") if child.type == "export_statement" else child
        if decl is None:
            continue
        names = [decl.child_by_field_name("name")]
        names += [
            d.child_by_field_name("name") for d in decl.named_children if d.type == "variable_declarator"
        ]
        for name in names:
            if name is not None and _PASCAL.match(parsed.text(name)):
                return [
                    _violation(parsed, "missing_export", name, f"the prompt asks for {wanted}; none found")
                ]
    start, end = 0, parsed.index.length
    return (
        [Violation("missing_export", start, end, f"the prompt asks for {wanted}; none found")] if end else []
    )


_DEFAULT_EXPORT_ASK = re.compile(
    r"default[- ]export|export\s+default|export(?:ed)?\s+as\s+(?:the\s+)?default", re.I
)
_EXPORT_ASK = re.compile(r"\bexport(?:s|ed|ing)?\b", re.I)


def export_requirement_from_prompt(prompt: str) -> ExportRequirement | None:
    """Whether a prompt asks for an exported component (``default`` when it says so)."""
    if _DEFAULT_EXPORT_ASK.search(prompt):
        return "default"
    if _EXPORT_ASK.search(prompt):
        return "any"
    return None
