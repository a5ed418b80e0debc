"""Spec pages: React pages whose tags, props and list fields come from the prompt, the regime levels' task.

A view spec names a noun and 1-6 sections; each section names its own tag(s) and field, so the code that
is right differs from prompt to prompt::

    S: view Todo: h3 title; ol[] name; em? date; nav>b price
    function TodoView({title, items, show, date, price}) {
      return <div>
        <h3>{title}</h3>
        <ol>{items.map(x => <li key={x.id}>{x.name}</li>)}</ol>
        {show && <em>{date}</em>}
        <nav><b>{price}</b></nav>
      </div>;
    }

Section kinds (:data:`KINDS`): ``text`` (``h3 title``: a tag around a prop), ``cond`` (``em? date``: the
same under ``show &&``), ``nest`` (``nav>b price``: an outer tag around an inner one) and ``list``
(``ol[] name``: a ``.map`` over ``items`` whose ``<li>`` shows the item's field; at most one per page).
Tags come from :data:`TEXT_TAGS`, :data:`OUTER_TAGS` and :data:`LIST_TAGS`, fields from :data:`FIELDS`
(distinct within a page).

Each section of a demonstration carries one error with the task's ``error_rate`` (:data:`SECTION_ERRORS`),
and every error is one the policy can only avoid by reading its own prompt: a closing tag of another name
(``<h3>{title}</h5>``), a tag never closed, a field of another prop (``{city}`` where the spec says
``title``; the props line then declares it, so it compiles), an inner tag other than the spec's. The ones
marked ``*`` break compilation (``jsx.rules`` blames the tag on its own line); the others compile but miss
the spec, which only the outcome (:mod:`botgrpo_bench.react_verdict`: compiles *and* implements the spec)
sees. No error is a fixed token pattern that every page shares. Deterministic: every draw comes from the
``random.Random`` passed in.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

#: tags of ``text``, ``cond`` and a ``nest``'s inner element
TEXT_TAGS = ("h1", "h2", "h3", "h4", "h5", "p", "b", "i", "em", "span", "small", "strong", "code")
#: the outer element of a ``nest`` section
OUTER_TAGS = ("div", "section", "header", "footer", "nav", "aside", "main", "article")
#: the container of a ``list`` section (its items are ``<li>``)
LIST_TAGS = ("ul", "ol")
#: prop (and list item) fields; a page uses distinct ones, and a ``wrong_field`` error one the page lacks
FIELDS = (
    "title",
    "name",
    "text",
    "label",
    "body",
    "date",
    "city",
    "price",
    "email",
    "role",
    "score",
    "color",
)
KINDS = ("text", "cond", "nest", "list")
#: the first word of a view spec's key (:attr:`ViewSpec.key`)
PREFIX = "view"

#: Errors each section kind can carry; ``*`` marks the ones that break compilation. Each changes only the
#: section's own line (``wrong_field`` also the props line, which declares the field it renders).
SECTION_ERRORS: dict[str, tuple[str, ...]] = {
    "text": ("*close_tag", "*unclosed", "wrong_field"),
    "cond": ("*close_tag", "*unclosed", "wrong_field"),
    "nest": ("*close_tag", "*close_outer", "wrong_tag"),
    "list": ("*close_tag", "wrong_field"),
}
_INDENT = "    "
#: the lines that close a view's root and component, after its sections
CLOSING_LINES = ("  </div>;", "}")


@dataclass(frozen=True)
class ViewSection:
    """One section: its ``kind``, its ``tag`` (text, cond, nest's inner; list: the container), ``outer``
    (nest only) and its ``field``."""

    kind: str
    tag: str
    field: str
    outer: str = ""

    @property
    def key(self) -> str:
        if self.kind == "cond":
            return f"{self.tag}? {self.field}"
        if self.kind == "nest":
            return f"{self.outer}>{self.tag} {self.field}"
        if self.kind == "list":
            return f"{self.tag}[] {self.field}"
        return f"{self.tag} {self.field}"

    @staticmethod
    def parse(text: str) -> ViewSection:
        """``"nav>b price"`` -> the section (inverse of :attr:`key`)."""
        path, field = text.split(" ")
        if path.endswith("?"):
            return ViewSection("cond", path[:-1], field)
        if path.endswith("[]"):
            return ViewSection("list", path[:-2], field)
        if ">" in path:
            outer, tag = path.split(">")
            return ViewSection("nest", tag, field, outer)
        return ViewSection("text", path, field)


@dataclass(frozen=True)
class ViewSpec:
    """A view request: a ``noun``, its ``sections`` in order, and whether it asks for a default export."""

    noun: str
    sections: tuple[ViewSection, ...]
    export: bool = False

    kind = "view"

    @property
    def key(self) -> str:
        """The spec without the export flag (held-out splits ignore it)."""
        return f"{PREFIX} {self.noun}: " + "; ".join(s.key for s in self.sections)

    @property
    def prompt(self) -> str:
        return f"S: {'export ' if self.export else ''}{self.key}\n"

    @property
    def component(self) -> str:
        return f"{self.noun}View"

    @staticmethod
    def parse(key: str, export: bool = False) -> ViewSpec:
        """``"view Todo: h3 title; ol[] name"`` -> the spec (inverse of :attr:`key`)."""
        head, _, body = key.partition(": ")
        noun = head.split(" ", 1)[1]
        return ViewSpec(noun, tuple(ViewSection.parse(s) for s in body.split("; ")), export)


def sample_view(
    rng: random.Random, *, sections: tuple[int, int], nouns: Sequence[str], export_rate: float
) -> ViewSpec:
    """A random view: ``sections[0]..sections[1]`` sections (at most one ``list``), distinct fields."""
    n = rng.randint(*sections)
    fields = rng.sample(FIELDS, n)
    parts = []
    has_list = False
    for field in fields:
        kind = rng.choice(KINDS[:3] if has_list else KINDS)
        has_list |= kind == "list"
        if kind == "list":
            parts.append(ViewSection(kind, rng.choice(LIST_TAGS), field))
        elif kind == "nest":
            parts.append(ViewSection(kind, rng.choice(TEXT_TAGS), field, rng.choice(OUTER_TAGS)))
        else:
            parts.append(ViewSection(kind, rng.choice(TEXT_TAGS), field))
    noun = rng.choice(list(nouns))
    return ViewSpec(noun, tuple(parts), rng.random() < export_rate)


@dataclass(frozen=True)
class SectionError:
    """An injected error: its ``name`` (a :data:`SECTION_ERRORS` entry without ``*``) and the wrong
    ``value`` it uses (a tag or a field name)."""

    name: str
    value: str = ""


def draw_error(section: ViewSection, spec: ViewSpec, rng: random.Random) -> SectionError:
    """One of ``section``'s errors, with the wrong tag or field it uses (never the right one)."""
    name = rng.choice(SECTION_ERRORS[section.kind]).lstrip("*")
    if name == "wrong_field":
        used = {s.field for s in spec.sections}
        return SectionError(name, rng.choice([f for f in FIELDS if f not in used]))
    if name == "close_outer":
        return SectionError(name, rng.choice([t for t in OUTER_TAGS if t != section.outer]))
    if name == "close_tag" and section.kind == "list":
        return SectionError(name, rng.choice([t for t in LIST_TAGS if t != section.tag]))
    if name in ("close_tag", "wrong_tag"):
        return SectionError(name, rng.choice([t for t in TEXT_TAGS if t != section.tag]))
    return SectionError(name)


def section_line(section: ViewSection, error: SectionError | None = None) -> str:
    """The JSX line of one section, with ``error`` injected."""
    name = error.name if error is not None else ""
    value = error.value if error is not None else ""
    field = value if name == "wrong_field" else section.field
    tag = value if name == "wrong_tag" else section.tag
    close = "" if name == "unclosed" else f"</{value if name == 'close_tag' else tag}>"
    if section.kind == "list":
        return f"<{tag}>{{items.map(x => <li key={{x.id}}>{{x.{field}}}</li>)}}{close}"
    inner = f"<{tag}>{{{field}}}{close}"
    if section.kind == "cond":
        return f"{{show && {inner}}}"
    if section.kind == "nest":
        return f"<{section.outer}>{inner}</{value if name == 'close_outer' else section.outer}>"
    return inner


def _params(spec: ViewSpec, errors: dict[int, SectionError]) -> str:
    """The destructured props, each once, in the order the sections use them."""
    names: list[str] = []
    for i, s in enumerate(spec.sections):
        error = errors.get(i)
        field = error.value if error is not None and error.name == "wrong_field" else s.field
        new = ["items"] if s.kind == "list" else ["show", field] if s.kind == "cond" else [field]
        names += [n for n in new if n not in names]
    return "{" + ", ".join(names) + "}"


def render_view(spec: ViewSpec, errors: dict[int, SectionError] | None = None) -> str:
    """The view component with ``errors[i]`` injected into section ``i`` (none: the correct view)."""
    errors = errors or {}
    head = "export default function" if spec.export else "function"
    lines = [f"{head} {spec.component}({_params(spec, errors)}) {{", "  return <div>"]
    lines += [_INDENT + section_line(s, errors.get(i)) for i, s in enumerate(spec.sections)]
    lines += CLOSING_LINES
    return "\n".join(lines)


def view_errors(spec: ViewSpec, rng: random.Random, error_rate: float) -> dict[int, SectionError]:
    """The errors of one demonstration: each section independently carries one with ``error_rate``."""
    errors = {}
    for i, s in enumerate(spec.sections):
        if rng.random() < error_rate:
            errors[i] = draw_error(s, spec, rng)
    return errors


def view_demonstration(spec: ViewSpec, rng: random.Random, error_rate: float) -> str:
    """A view whose every section independently carries one of its kind's errors with ``error_rate``."""
    return render_view(spec, view_errors(spec, rng, error_rate))


def max_view_chars(nouns: Sequence[str], max_sections: int) -> int:
    """An upper bound on a view's length in characters (longest noun, tags, fields and errors)."""
    noun = max(nouns, key=len)
    field = max(FIELDS, key=len)
    frame = len(render_view(ViewSpec(noun, (), export=True)))
    text, outer, lst = max(TEXT_TAGS, key=len), max(OUTER_TAGS, key=len), max(LIST_TAGS, key=len)
    longest = {}
    for kind in KINDS:
        section = ViewSection(kind, lst if kind == "list" else text, field, outer if kind == "nest" else "")
        lines = [section_line(section)] + [
            section_line(section, SectionError(e.lstrip("*"), outer if e == "*close_outer" else text))
            for e in SECTION_ERRORS[kind]
        ]
        longest[kind] = max(len(line) for line in lines) + len(_INDENT) + 1  # + its newline
    other = max(v for k, v in longest.items() if k != "list")
    body = max(max_sections * other, longest["list"] + (max_sections - 1) * other)
    # the props line: a field per section (", " between) and at most once each "items" and "show"
    return frame + body + max_sections * (len(field) + 2) + len("items, show, ")
