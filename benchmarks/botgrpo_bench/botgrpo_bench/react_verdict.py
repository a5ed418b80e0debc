"""The view task's outcome: the page compiles *and* implements its spec; and the share of trivial pages.

A React reward of compile + lint alone is gamed: the source paper's policy learned to emit empty pages.
Here the outcome (``bench.react_spec``, a global signal) asks for what the prompt asked for:

- 1.0 when the page compiles (``jsx.compiles``: esbuild in Node, else tree-sitter validity) *and*
  implements every section of its :class:`~botgrpo_bench.react_spec.ViewSpec` once;
- otherwise ``partial`` (default 0.5) times the share of sections implemented, compiled or not, less the
  repeats (a section shown twice counts once, and its copy against it), so an honest page with one broken
  tag (every section there: 0.5) or one wrong field (``0.5 (n - 1) / n``) scores above an empty page,
  ``return null`` or one section copied N times (all 0).

A section is *implemented* when the parsed JSX has its element around its field: ``h3 title`` an ``<h3>``
whose child is ``{title}`` (not under a condition); ``em? date`` an ``<em>`` with ``{date}`` as the right
operand of ``show && ...``; ``nav>b price`` a ``<nav>`` whose child ``<b>`` has ``{price}``; ``ol[] name``
an ``<ol>`` with an ``<li>`` below it showing ``{x.name}``. The check is static (one tree-sitter parse,
deadline-bounded, of the code ``botgrpo_jsx.extract`` finds), not a render: for this toy bench it is exact
on the grammar's pages and costs about 1 ms a page (the parse and one tree-sitter query). A real task would render the page and ask a judge (the
React recipe does: ``jsx.renders`` and ``botgrpo-judge``).

``bench.react_trivial`` (a global signal in [0, 1], weight 0 in the bench: logged per step, never rewarded)
is 1 for an empty or trivial page (:func:`is_trivial`: no JSX, under half the spec's fields shown, or a
section repeated in place of others), so the training logs show whether a policy drifts toward them.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from botgrpo_bench.react_spec import PREFIX, ViewSpec

#: code longer than this is not parsed (no section implemented): far above any page of the grammar
MAX_CODE_CHARS = 20_000
#: the tree-sitter parse deadline per page
PARSE_DEADLINE_S = 0.5


class SpecParams(BaseModel):
    """Parameters of ``bench.react_spec``."""

    model_config = ConfigDict(extra="forbid")

    partial: float = Field(
        0.5,
        ge=0.0,
        lt=1.0,
        description="value per share of spec sections implemented when the page does not fully succeed "
        "(0 = a binary outcome: compiles and implements the spec, or nothing)",
    )


@dataclass(frozen=True)
class Element:
    """A JSX element of a parsed page: its ``tag``, the props its children show (``{f}`` -> ``f``;
    ``{x.f}`` -> ``.f``), its parent element (index, -1 at the top) and whether it is the right operand of
    ``show && ...``."""

    tag: str
    shows: frozenset[str]
    parent: int
    conditional: bool


@dataclass(frozen=True)
class PageFacts:
    """What the spec check needs of one page: its elements and every field a JSX expression names."""

    elements: tuple[Element, ...]
    fields: frozenset[str]
    parsed: bool = True


def _tag(node: Any, parsed: Any) -> str:
    if node.type == "jsx_self_closing_element":  # <input /> names itself
        name = node.child_by_field_name("name")
        return parsed.text(name) if name is not None else ""
    opening = node.child_by_field_name("open_tag") or (node.children[0] if node.children else None)
    name = opening.child_by_field_name("name") if opening is not None else None
    return parsed.text(name) if name is not None else ""


def _shown(expr: Any, parsed: Any) -> str | None:
    """``{f}`` -> ``"f"``, ``{x.f}`` -> ``".f"``, anything else None."""
    inner = [c for c in expr.named_children if c.type != "comment"]
    if len(inner) != 1:
        return None
    node = inner[0]
    if node.type == "identifier":
        return parsed.text(node)
    if node.type == "member_expression":
        prop = node.child_by_field_name("property")
        return "." + parsed.text(prop) if prop is not None else None
    return None


def _is_show_and(node: Any, parsed: Any) -> bool:
    parent = node.parent
    if parent is None or parent.type != "binary_expression":
        return False
    op, left, right = (parent.child_by_field_name(k) for k in ("operator", "left", "right"))
    return (
        op is not None
        and parsed.text(op) == "&&"
        and left is not None
        and parsed.text(left) == "show"
        and right is not None
        and right.id == node.id
    )


#: what :func:`page_facts` asks tree-sitter for (the query runs in C; Python sees only the captures); an
#: element is one with a closing tag or a self-closing one (``<input />``: issue 60 item 7, where only the
#: first kind was counted and ``<div><input/><button/></div>`` was one element)
_PATTERNS = (
    "(jsx_element) @element",
    "(jsx_self_closing_element) @element",
    "(jsx_expression (identifier) @field)",
    "(jsx_expression (member_expression property: (property_identifier) @field))",
)


@functools.lru_cache(maxsize=4096)
def page_facts(code: str) -> PageFacts:
    """The elements and shown fields of ``code`` (one tree-sitter parse, bounded; cached per code)."""
    from tree_sitter import QueryCursor

    from botgrpo_jsx.treesitter import ParseTimeout, parse, query

    if len(code) > MAX_CODE_CHARS:
        return PageFacts((), frozenset(), parsed=False)
    try:
        parsed = parse(code, PARSE_DEADLINE_S)
    except ParseTimeout:
        return PageFacts((), frozenset(), parsed=False)
    q = query(parsed.grammar, _PATTERNS)
    captures = QueryCursor(q).captures(parsed.root) if q is not None else {}
    nodes = sorted(captures.get("element", []), key=lambda n: (n.start_byte, -n.end_byte))
    index = {n.id: i for i, n in enumerate(nodes)}
    elements = []
    for node in nodes:
        up = node.parent
        while up is not None and up.id not in index:
            up = up.parent
        shows = frozenset(
            s for c in node.named_children if c.type == "jsx_expression" and (s := _shown(c, parsed))
        )
        parent = index[up.id] if up is not None else -1
        elements.append(Element(_tag(node, parsed), shows, parent, _is_show_and(node, parsed)))
    fields = frozenset(parsed.text(n) for n in captures.get("field", []))
    return PageFacts(tuple(elements), fields)


def _below(facts: PageFacts, index: int, ancestor: int) -> bool:
    while index >= 0:
        index = facts.elements[index].parent
        if index == ancestor:
            return True
    return False


def section_counts(spec: ViewSpec, facts: PageFacts) -> list[int]:
    """Per section of ``spec``: how many times the page has its element around its field (module doc)."""
    els = facts.elements
    out = []
    for s in spec.sections:
        if s.kind == "list":
            n = sum(
                e.tag == "li"
                and f".{s.field}" in e.shows
                and any(els[j].tag == s.tag and _below(facts, i, j) for j in range(len(els)))
                for i, e in enumerate(els)
            )
        elif s.kind == "nest":
            n = sum(
                e.tag == s.tag and s.field in e.shows and e.parent >= 0 and els[e.parent].tag == s.outer
                for e in els
            )
        else:
            n = sum(
                e.tag == s.tag and s.field in e.shows and e.conditional == (s.kind == "cond") for e in els
            )
        out.append(n)
    return out


def implemented(spec: ViewSpec, facts: PageFacts) -> list[bool]:
    """Per section of ``spec``: whether the page has its element around its field."""
    return [n > 0 for n in section_counts(spec, facts)]


def net_sections(counts: Sequence[int]) -> int:
    """Sections implemented less repeats (a section shown twice counts once, and its copy against it)."""
    return sum(n > 0 for n in counts) - sum(max(0, n - 1) for n in counts)


def is_trivial(spec: ViewSpec, facts: PageFacts) -> bool:
    """An empty or trivial page: no JSX element; or its JSX shows fewer than half of the spec's fields
    (``return null``, an empty ``<div>``); or it repeats a section and, the repeats counted against it,
    implements fewer than half of the sections (one section copied N times). A page that tries every
    section and gets tags or fields wrong is a failed attempt, not a trivial one."""
    n = len(spec.sections)
    if not facts.elements or 2 * sum(s.field in facts.fields for s in spec.sections) < n:
        return True
    counts = section_counts(spec, facts)
    return any(c > 1 for c in counts) and 2 * net_sections(counts) < n


def view_spec_of(row: Any) -> ViewSpec:
    """The view spec of a row (``spec``, ``require_export``); ``ValueError`` naming the fix if it is none."""
    key = row.get("spec", "") if hasattr(row, "get") else ""
    if not isinstance(key, str) or not key.startswith(f"{PREFIX} "):
        raise ValueError(
            f"bench.react_spec, bench.react_sections and bench.react_trivial read view specs (rows of the react task with "
            f"data.task_params.grammar: spec, whose spec starts with {PREFIX!r}); this row's spec is "
            f"{str(key)[:60]!r}"
        )
    return ViewSpec.parse(key, bool(row.get("require_export")))


def code_facts(completion: str) -> PageFacts:
    """The facts of the code a completion contains (fenced or bare, as the jsx signals extract it)."""
    from botgrpo_jsx.extract import DEFAULT_LANGUAGES, extract_cached

    view = extract_cached(completion, DEFAULT_LANGUAGES)
    return page_facts(view.code) if view is not None else PageFacts((), frozenset(), parsed=False)


def spec_value(compiles: bool, counts: Sequence[int], partial: float) -> float:
    """The outcome of one page from its compile result and :func:`section_counts`: 1 when it compiles and
    implements every section once, else ``partial`` x the share of sections implemented less repeats."""
    n = max(len(counts), 1)
    net = net_sections(counts)
    if compiles and net == len(counts):
        return 1.0
    return partial * max(net, 0) / n


def succeeds(compiles: bool, spec: ViewSpec, facts: PageFacts) -> bool:
    """The task's success: the page compiles and implements every section of its spec once."""
    return compiles and spec_value(True, section_counts(spec, facts), 0.0) == 1.0


class ReactSpecScorer:
    """``bench.react_spec``: compiles (the jsx plugin's own check, in this process) and implements the spec."""

    def __init__(self, params: SpecParams) -> None:
        from botgrpo_jsx.params import CompilesParams
        from botgrpo_jsx.scorers import CompilesScorer

        self.params = params
        self._compiles = CompilesScorer(CompilesParams(workers=0))

    def score(self, samples: Sequence[Any]) -> list[float | Any]:
        from botgrpo_core.signals import SampleError

        compiled = self._compiles.score(samples)
        out: list[float | Any] = []
        for sample, c in zip(samples, compiled, strict=True):
            try:
                spec = view_spec_of(sample.row)
            except ValueError as exc:
                out.append(SampleError(str(exc)))
                continue
            counts = section_counts(spec, code_facts(sample.completion))
            ok = not isinstance(c, SampleError) and c == 1.0
            out.append(spec_value(ok, counts, self.params.partial))
        return out

    def close(self) -> None:
        self._compiles.close()


class ReactTrivialScorer:
    """``bench.react_trivial``: 1.0 for an empty or trivial page (:func:`is_trivial`), else 0.0."""

    def __init__(self, params: BaseModel) -> None:
        self.params = params

    def score(self, samples: Sequence[Any]) -> list[float | Any]:
        from botgrpo_core.signals import SampleError

        out: list[float | Any] = []
        for sample in samples:
            try:
                spec = view_spec_of(sample.row)
            except ValueError as exc:
                out.append(SampleError(str(exc)))
                continue
            out.append(float(is_trivial(spec, code_facts(sample.completion))))
        return out


def make_spec(params: SpecParams) -> ReactSpecScorer:
    """Build the ``bench.react_spec`` scorer."""
    return ReactSpecScorer(params)


def make_trivial(params: BaseModel) -> ReactTrivialScorer:
    """Build the ``bench.react_trivial`` scorer."""
    return ReactTrivialScorer(params)
