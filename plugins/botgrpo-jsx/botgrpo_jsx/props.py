"""Props for rendering a component: the dataset row's ``props`` field, else synthesised from usage.

The component's props are the names it destructures from its first parameter (``({ items, onPick })``)
or reads from it (``props.title``). Each gets a value that fits how the code uses it:

==========================================  =====================================================
usage                                       value
==========================================  =====================================================
``items.map(...)``, ``.length``, ``[...xs]``  ``[]``
``onPick(...)``, ``onX`` names, ``fn()``      a function returning ``undefined``
``user.name`` (other member access)          an inert stub object (any property, callable, empty)
``<Icon />`` (the prop as an element type)     an inert stub component (renders its children)
``children`` given to ``cloneElement``,     an element (``<span>text</span>``)
``Children.*``, ``isValidElement``
``{title}`` as a child, ``children``         ``"text"``
anything else                                left out (``undefined``, as a caller might)
==========================================  =====================================================

Stubs and functions cannot travel as JSON, so they are markers (``{"$botgrpo": "stub"}``) that the
renderer turns into values. A component that then still crashes uses a prop in a way no caller
could satisfy, or crashes for a reason of its own.
"""

from __future__ import annotations

import re
from typing import Any

from botgrpo_jsx.treesitter import Parsed, query

STUB = {"$botgrpo": "stub"}
FUNCTION = {"$botgrpo": "function"}
ELEMENT = {"$botgrpo": "element"}
_ELEMENT_USE = r"(?:cloneElement|Children\s*\.\s*\w+|isValidElement)\s*\(\s*"
_ARRAY_USE = r"\.\s*(?:map|filter|forEach|length|slice|some|every|reduce|find|findIndex|join|concat|flatMap|includes|indexOf|sort)\b"
_PATTERNS = (
    "(formal_parameters . (required_parameter pattern: (object_pattern) @obj))",
    "(formal_parameters . (object_pattern) @obj)",
    "(formal_parameters . (required_parameter pattern: (identifier) @param))",
    "(formal_parameters . (identifier) @param)",
    "(arrow_function parameter: (identifier) @param)",
)
_MAX_PROPS = 64
_RESERVED = frozenset({"ref", "key"})


def _pattern_names(parsed: Parsed, pattern: Any) -> list[str]:
    names = []
    for child in pattern.named_children:
        if child.type == "shorthand_property_identifier_pattern":
            names.append(parsed.text(child))
        elif child.type in ("pair_pattern", "object_assignment_pattern"):
            key = child.child_by_field_name("key") or child.child_by_field_name("left")
            if key is not None:
                names.append(parsed.text(key))
    return names


def prop_names(parsed: Parsed) -> list[str]:
    """Names the code's components take as props (first-parameter patterns and ``param.x`` reads)."""
    from tree_sitter import QueryCursor

    q = query(parsed.grammar, _PATTERNS)
    captures = QueryCursor(q).captures(parsed.root) if q is not None else {}
    names: list[str] = []
    for pattern in captures.get("obj", []):
        names += _pattern_names(parsed, pattern)
    params = {parsed.text(p) for p in captures.get("param", [])}
    text = parsed.index.text
    for param in params:
        names += re.findall(rf"\b{re.escape(param)}\s*\.\s*([A-Za-z_$][\w$]*)", text)
    # `ref` and `key` are React's, not props: a synthesised string ref is an error in React 19
    return list(dict.fromkeys(n for n in names if n.isidentifier() and n not in _RESERVED))[:_MAX_PROPS]


def value_for(name: str, code: str) -> Any:
    """A value that fits how ``code`` uses the prop ``name`` (see the module table), or ``None``."""
    n = re.escape(name)
    if re.search(rf"<\s*{n}[\s/>]", code) and name[:1].isupper():
        return STUB
    if name == "children":
        return ELEMENT if re.search(rf"{_ELEMENT_USE}(?:props\s*\.\s*)?children\b", code) else "text"
    if re.search(rf"\b{n}\s*\??\.?{_ARRAY_USE}", code) or re.search(rf"\.\.\.\s*{n}\s*[\],]", code):
        return []
    if re.match(r"^on[A-Z]", name) or re.search(rf"(?<![.\w$]){n}\s*\??\.?\s*\(", code):
        return FUNCTION
    if re.search(rf"(?<![.\w$]){n}\s*\??\.\s*[A-Za-z_$]", code) or re.search(rf"(?<![.\w$]){n}\s*\[", code):
        return STUB
    if re.search(rf"\{{\s*(?:[\w$]+\.)?{n}\s*\}}", code):
        return "text"
    return None


def synthesise(parsed: Parsed) -> dict[str, Any]:
    """Props for the code's component from how it uses them."""
    code = parsed.index.text
    out = {}
    for name in prop_names(parsed):
        value = value_for(name, code)
        if value is not None:
            out[name] = value
    return out
