"""React pages: one component composed of several sections, the React task's length axis.

A page spec names a noun and 2-5 sections, each one of the task's kinds (at most once per page)::

    S: page Todo: list title; cond name; state 3
    function TodoPage({items, show, name}) {
      const [n, setN] = useState(3);
      return <div>
        <ul>{items.map(x => <li key={x.id}>{x.title}</li>)}</ul>
        {show ? <p>{name}</p> : null}
        <button onClick={() => setN(n + 1)}>{n}</button>
      </div>;
    }

Each section of a demonstration carries its own error with the task's ``error_rate`` (drawn from the
section kind's :data:`SECTION_ERRORS`, the errors that stay inside the section's own line), so a page of
four sections compiles far less often than one section while every section stays as learnable as the
single components of :mod:`botgrpo_bench.react`: the outcome says *that* a page broke, the local signals
(``jsx.syntax``, ``jsx.rules``) say *which* section.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

#: Errors each section kind can carry; ``*`` marks the ones that break compilation. Every one changes only
#: the section's own line(s) (the hook error also adds its ``on`` prop).
SECTION_ERRORS: dict[str, tuple[str, ...]] = {
    "list": ("missing_key", "*unclosed_li", "*missing_paren", "*missing_brace"),
    "cond": ("*unclosed_p", "*mismatched_close", "*missing_brace"),
    "state": ("hook_in_condition", "*missing_paren", "*unclosed_button"),
    "props": ("class_attribute", "*unclosed_h2"),
    "frag": ("*unclosed_fragment", "*unclosed_b"),
}

#: the longest section line per kind with the longest field names, for the completion-length bound
_LONGEST_FIELD = 5  # len("title") == len("label") == len("price")
_INDENT = "    "


@dataclass(frozen=True)
class Section:
    """One part of a page: its ``kind``, one or two ``fields`` (or a ``start`` value for ``state``)."""

    kind: str
    fields: tuple[str, ...] = ()
    start: int = 0

    @property
    def key(self) -> str:
        return f"{self.kind} {self.start}" if self.kind == "state" else f"{self.kind} {' '.join(self.fields)}"

    @staticmethod
    def parse(text: str) -> Section:
        kind, *args = text.split(" ")
        if kind == "state":
            return Section(kind, (), int(args[0]))
        return Section(kind, tuple(args))


@dataclass(frozen=True)
class PageSpec:
    """A page request: a ``noun``, its ``sections`` in order, and whether it asks for a default export."""

    noun: str
    sections: tuple[Section, ...]
    export: bool = False

    kind = "page"

    @property
    def key(self) -> str:
        """The spec without the export flag (held-out splits ignore it)."""
        return f"page {self.noun}: " + "; ".join(s.key for s in self.sections)

    @property
    def prompt(self) -> str:
        return f"S: {'export ' if self.export else ''}{self.key}\n"

    @property
    def component(self) -> str:
        return f"{self.noun}Page"

    @staticmethod
    def parse(key: str, export: bool = False) -> PageSpec:
        """``"page Todo: list title; state 3"`` -> the spec (inverse of :attr:`key`)."""
        head, _, body = key.partition(": ")
        noun = head.split(" ", 1)[1]
        return PageSpec(noun, tuple(Section.parse(s) for s in body.split("; ")), export)


def sample_page(
    rng: random.Random,
    *,
    kinds: Sequence[str],
    sections: tuple[int, int],
    nouns: Sequence[str],
    fields: Sequence[str],
    export_rate: float,
) -> PageSpec:
    """A random page: ``sections[0]..sections[1]`` sections of distinct kinds, in a random order."""
    n = rng.randint(*sections)
    parts = []
    for kind in rng.sample(list(kinds), n):
        if kind == "state":
            parts.append(Section(kind, (), rng.randrange(10)))
        elif kind in ("list", "cond"):
            parts.append(Section(kind, (rng.choice(fields),)))
        else:
            parts.append(Section(kind, tuple(rng.sample(list(fields), 2))))
    noun = rng.choice(nouns)
    return PageSpec(noun, tuple(parts), rng.random() < export_rate)


def _section_line(spec: PageSpec, section: Section, error: str | None) -> str:
    """The JSX line of one section with ``error`` (a :data:`SECTION_ERRORS` name without ``*``)."""
    if section.kind == "list":
        (f,) = section.fields
        key = "" if error == "missing_key" else " key={x.id}"
        close = "" if error == "unclosed_li" else "</li>"
        paren = "" if error == "missing_paren" else ")"
        brace = "" if error == "missing_brace" else "}"
        return f"<ul>{{items.map(x => <li{key}>{{x.{f}}}{close}{paren}{brace}</ul>"
    if section.kind == "cond":
        (f,) = section.fields
        close = {"unclosed_p": "", "mismatched_close": "</div>"}.get(error or "", "</p>")
        brace = "" if error == "missing_brace" else "}"
        return f"{{show ? <p>{{{f}}}{close} : null{brace}"
    if section.kind == "state":
        paren = "" if error == "missing_paren" else ")"
        close = "" if error == "unclosed_button" else "</button>"
        return f"<button onClick={{() => setN(n + 1{paren}}}>{{n}}{close}"
    if section.kind == "props":
        f, g = section.fields
        attr = "class" if error == "class_attribute" else "className"
        close = "" if error == "unclosed_h2" else "</h2>"
        return f'<div {attr}="{spec.noun.lower()}"><h2>{{{f}}}{close}<p>{{{g}}}</p></div>'
    if section.kind == "frag":
        f, g = section.fields
        b_close = "" if error == "unclosed_b" else "</b>"
        frag_close = "" if error == "unclosed_fragment" else "</>"
        return f"<><b>{{{f}}}{b_close}<i>{{{g}}}</i>{frag_close}"
    raise ValueError(f"unknown React section kind {section.kind!r}")


def _params(spec: PageSpec, errors: dict[int, str]) -> str:
    """The destructured props, each once, in the order the sections use them."""
    names: list[str] = []
    for i, s in enumerate(spec.sections):
        if s.kind == "list":
            new = ["items"]
        elif s.kind == "cond":
            new = ["show", *s.fields]
        elif s.kind == "state":
            new = ["on"] if errors.get(i) == "hook_in_condition" else []
        else:
            new = list(s.fields)
        names += [n for n in new if n not in names]
    return "{" + ", ".join(names) + "}" if names else ""


def render_page(spec: PageSpec, errors: dict[int, str] | None = None) -> str:
    """The page component with ``errors[i]`` injected into section ``i`` (none: the correct page)."""
    errors = errors or {}
    head = "export default function" if spec.export else "function"
    lines = [f"{head} {spec.component}({_params(spec, errors)}) {{"]
    for i, s in enumerate(spec.sections):
        if s.kind == "state":
            hook = (
                f"on ? useState({s.start}) : [{s.start}]"
                if errors.get(i) == "hook_in_condition"
                else f"useState({s.start})"
            )
            lines.append(f"  const [n, setN] = {hook};")
    lines.append("  return <div>")
    lines += [_INDENT + _section_line(spec, s, errors.get(i)) for i, s in enumerate(spec.sections)]
    lines += ["  </div>;", "}"]
    return "\n".join(lines)


def page_demonstration(spec: PageSpec, rng: random.Random, error_rate: float) -> str:
    """A page whose every section independently carries one of its kind's errors with ``error_rate``."""
    errors = {
        i: rng.choice(SECTION_ERRORS[s.kind]).lstrip("*")
        for i, s in enumerate(spec.sections)
        if rng.random() < error_rate
    }
    return render_page(spec, errors)


def max_page_chars(kinds: Sequence[str], max_sections: int) -> int:
    """An upper bound on a page's length in characters (the longest noun and fields, the longest error)."""
    longest_noun = "Photo"
    fields = ("x" * _LONGEST_FIELD, "y" * _LONGEST_FIELD)
    per_kind = []
    for kind in kinds:
        section = (
            Section(kind, (), 9)
            if kind == "state"
            else Section(kind, fields[: 1 + (kind in ("props", "frag"))])
        )
        spec = PageSpec(longest_noun, (section,), export=True)
        longest = max(len(render_page(spec, {0: e.lstrip("*")})) for e in (*SECTION_ERRORS[kind], ""))
        per_kind.append(longest - len(render_page(PageSpec(longest_noun, (), export=True))))
    frame = len(render_page(PageSpec(longest_noun, (), export=True)))
    # each section adds its line(s) and at most its props (6 per field name plus separators)
    return frame + sum(sorted(per_kind, reverse=True)[:max_sections]) + 2 * max_sections
