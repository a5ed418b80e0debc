"""Mutations of valid React code with known locations: the negatives for measuring the signals.

Each mutation is planned on the tree-sitter tree of the *valid* original (so sites are exact), applied
as text edits, and carries the ranges where a good detector should put its span, in ``str`` indices
of the mutated text. Kinds and the signal expected to catch them:

=====================  =======================================================  ==========================
kind                   edit                                                     expected signal (rule)
=====================  =======================================================  ==========================
drop_closing_tag       delete an element's ``</Name>``                          compiles, syntax, rules
                                                                                 (unclosed_tag)
delete_brace           delete one ``{`` or ``}`` token                          compiles, syntax
delete_paren           delete one ``(`` or ``)`` token                          compiles, syntax
remove_key             delete ``key={...}`` from an element returned by .map    rules (missing_key)
wrap_hook_in_if        wrap a statement calling a hook in ``if (...) { }``      rules (hooks)
return_before_hook     an ``if (...) return null;`` before a hook's statement    rules (hooks)
rename_component_use   rename a declared component at its use (``<FooX>``)      rules (undefined_component)
class_attr             ``className=`` -> ``class=`` on a DOM element            rules (class_attribute)
=====================  =======================================================  ==========================
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass, field

from botgrpo_jsx.rules import _HOOK, _PASCAL, _element_root_name, _opening, _returned_elements
from botgrpo_jsx.treesitter import Parsed, parse

KINDS = (
    "drop_closing_tag",
    "delete_brace",
    "delete_paren",
    "remove_key",
    "wrap_hook_in_if",
    "return_before_hook",
    "rename_component_use",
    "class_attr",
)
#: The rule a mutation kind should trigger in ``jsx.rules`` (None: a pure syntax mutation).
EXPECTED_RULE = {
    "drop_closing_tag": "unclosed_tag",
    "delete_brace": None,
    "delete_paren": None,
    "remove_key": "missing_key",
    "wrap_hook_in_if": "hooks",
    "return_before_hook": "hooks",
    "rename_component_use": "undefined_component",
    "class_attr": "class_attribute",
}
#: Whether the mutated code must fail to compile.
BREAKS_SYNTAX = {k: k in ("drop_closing_tag", "delete_brace", "delete_paren") for k in KINDS}


@dataclass(frozen=True)
class Mutation:
    """A mutated code string and where the mutation is (ranges in its own ``str`` indices)."""

    kind: str
    code: str
    locations: tuple[tuple[int, int], ...]
    edits: tuple[tuple[int, int, str], ...] = field(default=(), repr=False)


def _apply(code: str, edits: list[tuple[int, int, str]], locations: list[tuple[int, int]]) -> Mutation | None:
    """Apply non-overlapping edits (original indices) and map locations into the new text."""
    edits = sorted(edits)
    for (_, e1, _), (s2, _, _) in itertools.pairwise(edits):
        if s2 < e1:
            return None
    out, pos = [], 0
    for s, e, rep in edits:
        out.append(code[pos:s])
        out.append(rep)
        pos = e
    out.append(code[pos:])

    def moved(x: int) -> int:
        shift = 0
        for s, e, rep in edits:
            if e <= x:
                shift += len(rep) - (e - s)
            elif s < x:  # inside an edited region: the edit's new start
                return s + shift
        return x + shift

    return Mutation("", "".join(out), tuple((moved(a), moved(b)) for a, b in locations), tuple(edits))


def _walk(parsed: Parsed) -> list:
    nodes, stack = [], [parsed.root]
    while stack:
        node = stack.pop()
        nodes.append(node)
        stack.extend(reversed(node.children))
    return nodes


def _in_code(node) -> bool:
    """Not inside a string, template, comment, regex or JSX text (deleting there breaks nothing)."""
    p = node.parent
    while p is not None:
        if p.type in ("string", "template_string", "comment", "regex", "jsx_text"):
            return False
        p = p.parent
    return True


def _sites(parsed: Parsed, kind: str) -> list[tuple[list[tuple[int, int, str]], list[tuple[int, int]]]]:
    """Candidate (edits, locations) of one kind, in original ``str`` indices."""
    text = parsed.index.text
    cr = parsed.char_range
    sites = []
    nodes = _walk(parsed)
    if kind == "drop_closing_tag":
        for n in nodes:
            close = n.child_by_field_name("close_tag") if n.type == "jsx_element" else None
            opening = n.child_by_field_name("open_tag") if close is not None else None
            if close is None or opening is None or close.child_by_field_name("name") is None:
                continue
            s, e = cr(close)
            sites.append(([(s, e, "")], [cr(opening), (s, s)]))
    elif kind in ("delete_brace", "delete_paren"):
        tokens = ("{", "}") if kind == "delete_brace" else ("(", ")")
        for n in nodes:
            if n.child_count == 0 and n.type in tokens and _in_code(n):
                s, e = cr(n)
                sites.append(([(s, e, "")], [(s, s)]))
    elif kind == "remove_key":
        returned = set()
        for n in nodes:  # elements returned by a .map(...) callback
            fn = n.child_by_field_name("function") if n.type == "call_expression" else None
            prop = (
                fn.child_by_field_name("property")
                if fn is not None and fn.type == "member_expression"
                else None
            )
            args = n.child_by_field_name("arguments")
            if prop is None or parsed.text(prop) != "map" or args is None or not args.named_children:
                continue
            body = args.named_children[0].child_by_field_name("body")
            returned |= {_opening(e).id for e in _returned_elements(body)} if body is not None else set()
        for n in nodes:
            if n.type != "jsx_attribute" or not n.named_children or parsed.text(n.named_children[0]) != "key":
                continue
            if n.parent is None or n.parent.id not in returned:
                continue
            s, e = cr(n)
            while s > 0 and text[s - 1] in " \t":  # take the space before the attribute too
                s -= 1
            sites.append(([(s, e, "")], [cr(n.parent)]))
    elif kind in ("wrap_hook_in_if", "return_before_hook"):
        for n in nodes:
            if n.type != "call_expression":
                continue
            fn = n.child_by_field_name("function")
            if fn is None or fn.type != "identifier" or not _HOOK.match(parsed.text(fn)):
                continue
            stmt = n
            while stmt.parent is not None and stmt.parent.type != "statement_block":
                stmt = stmt.parent
            if stmt.parent is None or stmt.type not in ("expression_statement", "lexical_declaration"):
                continue
            s, e = cr(stmt)
            if kind == "wrap_hook_in_if":
                sites.append(([(s, s, "if (typeof window !== 'undefined') { "), (e, e, " }")], [cr(n)]))
            else:
                sites.append(([(s, s, "if (typeof window === 'undefined') return null; ")], [cr(n)]))
    elif kind == "rename_component_use":
        for n in nodes:
            if n.type not in ("jsx_opening_element", "jsx_self_closing_element"):
                continue
            name = n.child_by_field_name("name")
            if name is None or name.type != "identifier" or not _PASCAL.match(parsed.text(name)):
                continue
            if _element_root_name(name, parsed) is None:
                continue
            s, e = cr(name)
            edits = [(s, e, parsed.text(name) + "X")]
            if n.type == "jsx_opening_element" and n.parent is not None:
                close = n.parent.child_by_field_name("close_tag")
                cname = close.child_by_field_name("name") if close is not None else None
                if cname is not None:
                    cs, ce = cr(cname)
                    edits.append((cs, ce, parsed.text(cname) + "X"))
            sites.append((edits, [(s, e + 1)]))
    elif kind == "class_attr":
        for n in nodes:
            if (
                n.type != "jsx_attribute"
                or not n.named_children
                or parsed.text(n.named_children[0]) != "className"
            ):
                continue
            element = n.parent
            name = element.child_by_field_name("name") if element is not None else None
            if name is None or name.type != "identifier" or _PASCAL.match(parsed.text(name)):
                continue
            s, e = cr(n.named_children[0])
            sites.append(([(s, e, "class")], [(s, s + 5)]))
    return sites


def mutate(code: str, kind: str, rng: random.Random, max_sites: int = 2) -> list[Mutation]:
    """Up to ``max_sites`` mutations of one kind at distinct random sites of valid ``code``."""
    if kind not in KINDS:
        raise ValueError(f"unknown mutation kind {kind!r}; choose from {KINDS}")
    parsed = parse(code, 5.0)
    sites = _sites(parsed, kind)
    rng.shuffle(sites)
    out = []
    for edits, locations in sites[:max_sites]:
        m = _apply(code, edits, locations)
        if m is not None and m.code != code:
            out.append(Mutation(kind, m.code, m.locations, m.edits))
    return out


def covers(span_start: int, span_end: int, locations: tuple[tuple[int, int], ...]) -> bool:
    """Whether a span touches any location (a zero-width location counts when inside or at an edge)."""
    return any(span_start <= b and span_end >= a for a, b in locations)
