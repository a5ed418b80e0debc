"""React rules checked on a tree-sitter tree, each reported as a span of the offending code.

Rules (names are the keys of ``RulesParams.weights``):

- ``missing_key``: the element returned by a ``.map(...)`` callback has no ``key`` prop.
- ``hooks``: a hook (``useX``) called in a condition, a loop, a nested callback, a class, after an early
  ``return`` of its component, or outside any component or custom hook (the Rules of Hooks; ``use()``
  itself may be conditional and is exempt).
- ``undefined_component``: a capitalised JSX element (or the root of ``<A.B>``) that nothing in the
  file declares or imports. Declarations are collected file-wide, not per scope: a deliberate
  over-approximation, so a valid file is never flagged (measured on the corpus: see the README).
- ``unclosed_tag``: an opening tag never closed, or a closing tag with no open tag of its name
  (tags matched by name and indentation, so the orphan is blamed, not its ancestors).
- ``class_attribute``: ``class=`` (or ``for=``) on a DOM element, where React wants ``className``
  (``htmlFor``); ``class=`` on a component too, unless the file reads a ``class`` prop.
- ``missing_export``: the prompt asks for an exported component and none is exported.

One linear walk (:mod:`botgrpo_jsx.walk`) gathers calls, tags, exports and declared names with their
context. On code with a syntax error only the local rules run (``unclosed_tag``, ``class_attribute``;
see :func:`check_rules`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Literal

from botgrpo_jsx.tags import unclosed_tags
from botgrpo_jsx.treesitter import Parsed
from botgrpo_jsx.violation import Violation, violation
from botgrpo_jsx.walk import FUNCTIONS, Call, walk

if TYPE_CHECKING:
    from tree_sitter import Node

RULES = ("missing_key", "hooks", "undefined_component", "unclosed_tag", "class_attribute", "missing_export")
ExportRequirement = Literal["any", "default"]

_HOOK = re.compile(r"^use[A-Z0-9]\w*$")
_COMPONENT_OR_HOOK = re.compile(r"^(?:[A-Z]|use[A-Z0-9])")
_PASCAL = re.compile(r"^[A-Z]")


def check_rules(
    parsed: Parsed,
    enabled: frozenset[str],
    require_export: ExportRequirement | None = None,
    bracket_error: bool = False,
    declared_elsewhere: frozenset[str] = frozenset(),
) -> list[Violation]:
    """All violations of the ``enabled`` rules in one parse, in source order.

    On code with a syntax error the tree after the error is the parser's guess (a deleted ``{``
    turns a component's body into module-level statements), so the structural rules (``hooks``,
    ``missing_key``, ``undefined_component``, ``missing_export``) stay silent; ``class_attribute``
    still checks the statements that parse, and ``unclosed_tag`` the tags that parse, unless
    ``bracket_error`` says the error is a missing bracket (its repair parses: no tag is wrong).
    ``declared_elsewhere``: names declared in code the parse does not hold (units set aside for a
    syntax error, :mod:`botgrpo_jsx.units`), which ``undefined_component`` takes as declared.
    """
    facts = walk(parsed)
    out: list[Violation] = []
    parses = not parsed.root.has_error
    if "missing_key" in enabled and parses:
        out += _missing_keys(parsed, facts.calls)
    if "hooks" in enabled and parses:
        out += _hooks(parsed, facts.calls)
    if "undefined_component" in enabled and parses:
        elements = [e for e, _ in facts.elements]
        out += _undefined_components(parsed, elements, facts.declared | declared_elsewhere)
    if "unclosed_tag" in enabled and not bracket_error:
        out += unclosed_tags(parsed, facts.tags)
    if "class_attribute" in enabled:
        out += _class_attributes(parsed, [e for e, broken in facts.elements if not broken])
    if "missing_export" in enabled and require_export is not None and parses:
        out += _missing_export(parsed, facts.exports, facts.cjs_exports, require_export)
    out.sort(key=lambda v: (v.start, v.end, v.rule))
    return out


# --- missing_key -------------------------------------------------------------------------------------------
def _returned_elements(body: Node) -> list[Node]:
    """JSX elements a callback body can return (through parentheses, ternaries and ``&&``)."""
    if body.type == "statement_block":
        exprs = []
        stack = list(body.named_children)
        while stack:
            node = stack.pop()
            if node.type in FUNCTIONS or node.type == "class_declaration":
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


def _missing_keys(parsed: Parsed, calls: list[Call]) -> list[Violation]:
    out = []
    for c in calls:
        call, callee = c.node, c.callee
        if callee.type != "member_expression":
            continue
        prop = callee.child_by_field_name("property")
        if prop is None or parsed.text(prop) not in ("map", "flatMap"):
            continue
        args = call.child_by_field_name("arguments")
        fn = next((a for a in args.named_children if a.type != "comment"), None) if args is not None else None
        if fn is None or fn.type not in FUNCTIONS:
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
            out.append(violation(parsed, "missing_key", opening, message))
    return out


# --- hooks ---------------------------------------------------------------------------------------------------
def _hook_name(callee: Node, parsed: Parsed) -> str | None:
    if callee.type == "identifier":
        name = parsed.text(callee)
    elif callee.type == "member_expression":
        obj, prop = callee.child_by_field_name("object"), callee.child_by_field_name("property")
        if obj is None or prop is None or obj.type != "identifier" or parsed.text(obj) != "React":
            return None
        name = parsed.text(prop)
    else:
        return None
    return name if _HOOK.match(name) else None


def _hook_problem(call: Call, name: str) -> str | None:
    fn = call.function
    if fn is None:
        return (
            f"`{name}` {call.problem}"
            if call.problem
            else f"`{name}` called at module level, outside any component"
        )
    if fn.method:
        return f"`{name}` called in a class method: hooks work only in function components"
    if call.problem:
        return f"`{name}` {call.problem}"
    if not fn.default_export and not (fn.name and _COMPONENT_OR_HOOK.match(fn.name)):
        where = f"`{fn.name}`" if fn.name else "a callback"
        return f"`{name}` called inside {where}, which is neither a component nor a hook"
    return None


def _hooks(parsed: Parsed, calls: list[Call]) -> list[Violation]:
    out = []
    for call in calls:
        name = _hook_name(call.callee, parsed)
        if name is None:
            continue
        problem = _hook_problem(call, name)
        if problem is not None:
            out.append(violation(parsed, "hooks", call.node, problem))
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
                violation(parsed, "undefined_component", name, f"<{root}> is neither defined nor imported")
            )
    return out


# --- class_attribute -------------------------------------------------------------------------------------------
_DOM_RENAMES = {"class": "className", "for": "htmlFor"}
# Code that reads a prop named `class` (a reserved word: only as `props.class`, `props["class"]`, a
# destructuring key `{ class: c }` or a TypeScript property `class?: string`).
_READS_CLASS_PROP = re.compile(rb"""\.\s*class\b|\[\s*['"]class['"]\s*\]|\bclass\s*\??\s*:""")


def _class_attributes(parsed: Parsed, elements: list[Node]) -> list[Violation]:
    """``class=``/``for=`` on DOM elements; ``class=`` on components too, unless the file reads a ``class`` prop.

    A React component gets ``class`` as a prop it never reads unless it is written to (its own
    declaration destructures or reads ``class``, which the file then shows); one that spreads its
    props onto a DOM element passes ``class`` on, where React wants ``className``. ``for=`` on a
    component stays allowed: design systems take it as a prop (reactstrap's ``<Label for=...>``).
    """
    out = []
    reads_class: bool | None = None  # looked up once, at the first component with `class=`
    for element in elements:
        name = element.child_by_field_name("name")
        if name is None or name.type == "jsx_namespace_name":
            continue
        tag = parsed.text(name)
        component = name.type != "identifier" or bool(_PASCAL.match(tag))
        for attribute in _attributes(element):
            attr = _attribute_name(attribute, parsed)
            if attr not in _DOM_RENAMES or (component and attr != "class"):
                continue
            if component:
                if reads_class is None:
                    reads_class = _READS_CLASS_PROP.search(parsed.source) is not None
                if reads_class:
                    continue
                message = f"`class=` on the component <{tag}>: React components take `className`"
            else:
                message = f"`{attr}=` on <{tag}>: React uses `{_DOM_RENAMES[attr]}`"
            out.append(violation(parsed, "class_attribute", attribute.named_children[0], message))
    return out


# --- missing_export ----------------------------------------------------------------------------------------------
def _exports(parsed: Parsed, exports: list[Node], cjs: list[Node]) -> tuple[bool, bool]:
    """(has a default export, has a named export of a capitalised name); ``exports`` are top-level."""
    default = named = False
    for node in exports:
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
                    violation(parsed, "missing_export", name, f"the prompt asks for {wanted}; none found")
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
