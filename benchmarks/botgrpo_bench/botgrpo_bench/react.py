"""Small React components from a templated grammar of specs: the front-end benchmark task.

A spec names a component kind, a noun and one or two fields; the prompt states it in one line and
the completion is the component (bare code, no fence)::

    S: list Todo title
    function TodoList({items}) {
      return <ul>{items.map(x => <li key={x.id}>{x.title}</li>)}</ul>;
    }

Kinds cover the patterns the ``jsx.*`` signals know: ``list`` (``.map`` with keys), ``cond``
(conditional rendering), ``state`` (a ``useState`` hook and an event handler), ``props`` (nested tags
with ``className``) and ``frag`` (a fragment). A spec may ask for a default export (``S: export ...``).
Completions are 60-145 characters over a fixed alphabet (:data:`REACT_CHARS`), small enough for the
char-level tiny model (``botgrpo_core.engine.tiny``) to learn in a minute or two on one core.

Demonstrations for the supervised warm start carry *realistic* errors with probability
``error_rate``: one error drawn from the spec kind's list (an unclosed ``<li>``, a ``.map`` without
``key``, ``class=`` for ``className``, a hook in a ``?:`` branch, a missing ``)`` or ``</>``, a missing
closing brace, a forgotten ``export``). About two thirds of them break compilation; the rest compile
but break a React rule, so the compile rate and the rule-clean rate both have room to improve.

The length axis: ``sections: [a, b]`` (default ``[1, 1]``, the single components above) asks for
*pages* of ``a``-``b`` sections instead, each a kind of its own carrying its own error with
``error_rate`` (:mod:`botgrpo_bench.react_pages`): the whole page compiles far less often while each
section stays as learnable. ``grammar: spec`` asks for *view* pages instead (:mod:`botgrpo_bench.react_spec`):
each section names its own tags and field in the prompt and every injected error is one only the prompt
tells apart (a closing tag of another name, a field of another prop); success there is "compiles and
implements the spec" (:mod:`botgrpo_bench.react_verdict`), so an empty page never counts.

Held-out specs: a stable hash of the spec (not a random split) puts ``holdout_fraction`` of all
specs in the evaluation set; :meth:`ReactTask.train_rows` never returns one of them.

Evaluation runs the ``jsx`` plugin's own checks (``jsx.compiles``: esbuild when Node is installed,
else tree-sitter validity; ``jsx.rules`` and ``jsx.syntax``), imported lazily, so this module stays
free of torch and tree-sitter at import time.
"""

from __future__ import annotations

import hashlib
import random
import string
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from botgrpo_bench.react_pages import PageSpec, max_page_chars, page_demonstration, render_page, sample_page
from botgrpo_bench.react_spec import (
    PREFIX,
    ViewSpec,
    max_view_chars,
    render_view,
    sample_view,
    view_demonstration,
)

#: The tokenizer alphabet of the task: every character a prompt or a completion can contain.
REACT_CHARS = string.ascii_letters + string.digits + " \n{}()<>[]=/;,.:\"'+-!?&|_"

NOUNS = ("Todo", "User", "Post", "Item", "Note", "Card", "Task", "Song", "Book", "Tag", "Team", "Photo")
FIELDS = ("title", "name", "text", "label", "body", "date", "city", "price")
KINDS = ("list", "cond", "state", "props", "frag")
#: most sections of a view page (``grammar: spec``)
MAX_VIEW_SECTIONS = 8
Kind = Literal["list", "cond", "state", "props", "frag"]

#: Error types each kind's demonstrations can carry; ``*`` marks the ones that break compilation.
ERRORS: dict[str, tuple[str, ...]] = {
    "list": ("missing_key", "*unclosed_li", "*missing_paren", "*missing_brace"),
    "cond": ("*unclosed_p", "*mismatched_close", "*missing_brace", "missing_export"),
    "state": ("hook_in_condition", "*missing_paren", "*missing_brace", "missing_export"),
    "props": ("class_attribute", "*unclosed_h2", "*missing_brace", "missing_export"),
    "frag": ("*unclosed_fragment", "*unclosed_b", "*missing_brace", "missing_export"),
}


class ReactParams(BaseModel):
    """Parameters of the React task (``data.task_params`` in a run file)."""

    model_config = ConfigDict(extra="forbid")

    error_rate: float = Field(
        0.5, ge=0.0, le=1.0, description="probability that a demonstration carries one injected error"
    )
    kinds: tuple[Kind, ...] = Field(KINDS, min_length=1, description="component kinds in the grammar")
    export_rate: float = Field(
        0.3, ge=0.0, le=1.0, description="share of specs that ask for a default export"
    )
    holdout_fraction: float = Field(
        0.25, gt=0.0, lt=1.0, description="share of specs kept for evaluation (chosen by a stable hash)"
    )
    sections: tuple[int, int] = Field(
        (1, 1),
        description="[min, max] sections per component: [1, 1] = single components; otherwise pages of "
        "that many sections of distinct kinds, each section with its own error chance (error_rate)",
    )
    grammar: Literal["kinds", "spec"] = Field(
        "kinds",
        description="kinds: components and pages of the kinds above (their errors are fixed token patterns); "
        "spec: view pages of `sections` sections whose tags, props and list fields the prompt names, "
        "success = compiles and implements the spec (botgrpo_bench.react_spec)",
    )

    @model_validator(mode="after")
    def _sections_fit(self) -> ReactParams:
        low, high = self.sections
        if self.grammar == "spec":
            if not 1 <= low <= high <= MAX_VIEW_SECTIONS:
                raise ValueError(
                    f"sections: {[low, high]} must satisfy 1 <= min <= max <= {MAX_VIEW_SECTIONS} with "
                    "grammar: spec; e.g. sections: [4, 4]"
                )
            return self
        if not 1 <= low <= high <= len(self.kinds):
            raise ValueError(
                f"sections: {[low, high]} must satisfy 1 <= min <= max <= {len(self.kinds)} (the number "
                "of kinds: each section of a page is a kind of its own); e.g. sections: [4, 4]"
            )
        return self

    @property
    def pages(self) -> bool:
        """Whether rows are pages (``grammar: spec``, or ``sections`` other than ``[1, 1]``)."""
        return self.grammar == "spec" or self.sections != (1, 1)


@dataclass(frozen=True)
class Spec:
    """One component request: ``kind``, a ``noun``, ``fields`` (1 or 2) or a ``start`` value, ``export``."""

    kind: str
    noun: str
    fields: tuple[str, ...] = ()
    start: int = 0
    export: bool = False

    @property
    def key(self) -> str:
        """The spec without the export flag (held-out splits ignore it, so no near-duplicate leaks)."""
        args = " ".join(self.fields) if self.kind != "state" else str(self.start)
        return f"{self.kind} {self.noun} {args}"

    @property
    def prompt(self) -> str:
        return f"S: {'export ' if self.export else ''}{self.key}\n"

    @property
    def component(self) -> str:
        return f"{self.noun}List" if self.kind == "list" else self.noun


def _is_held_out(key: str, fraction: float) -> bool:
    digest = hashlib.sha256(f"react-holdout:{key}".encode()).digest()
    return int.from_bytes(digest[:4], "big") < fraction * 2**32


def solution(spec: Spec) -> str:
    """The correct component for ``spec``."""
    return _render(spec, None)


def _render(spec: Spec, error: str | None) -> str:
    """The component for ``spec`` with ``error`` (an :data:`ERRORS` name without ``*``) injected."""
    head = "export default function" if spec.export and error != "missing_export" else "function"
    name = spec.component
    if spec.kind == "list":
        (f,) = spec.fields
        key = "" if error == "missing_key" else " key={x.id}"
        close = "" if error == "unclosed_li" else "</li>"
        paren = "" if error == "missing_paren" else ")"
        params = "{items}"
        body = f"  return <ul>{{items.map(x => <li{key}>{{x.{f}}}{close}{paren}}}</ul>;"
    elif spec.kind == "cond":
        (f,) = spec.fields
        params = f"{{show, {f}}}"
        close = {"unclosed_p": "", "mismatched_close": "</div>"}.get(error or "", "</p>")
        body = f"  return show ? <p>{{{f}}}{close} : null;"
    elif spec.kind == "state":
        if error == "hook_in_condition":
            params = "{on}"
            hook = f"on ? useState({spec.start}) : [{spec.start}]"
        else:
            params = ""
            hook = f"useState({spec.start})"
        paren = "" if error == "missing_paren" else ")"
        body = (
            f"  const [n, setN] = {hook};\n"
            f"  return <button onClick={{() => setN(n + 1{paren}}}>{{n}}</button>;"
        )
    elif spec.kind == "props":
        f, g = spec.fields
        params = f"{{{f}, {g}}}"
        attr = "class" if error == "class_attribute" else "className"
        close = "" if error == "unclosed_h2" else "</h2>"
        body = f'  return <div {attr}="{spec.noun.lower()}"><h2>{{{f}}}{close}<p>{{{g}}}</p></div>;'
    elif spec.kind == "frag":
        f, g = spec.fields
        params = f"{{{f}, {g}}}"
        frag_close = "" if error == "unclosed_fragment" else "</>"
        b_close = "" if error == "unclosed_b" else "</b>"
        body = f"  return <><b>{{{f}}}{b_close}<i>{{{g}}}</i>{frag_close};"
    else:  # pragma: no cover - Spec.kind is validated by the generator
        raise ValueError(f"unknown React spec kind {spec.kind!r}")
    end = "" if error == "missing_brace" else "\n}"
    return f"{head} {name}({params}) {{\n{body}{end}"


class ReactTask:
    """Generator, held-out split, demonstrations and evaluation for small React components."""

    name = "react"
    #: the task's tokenizer alphabet (``botgrpo_core.engine.tiny.char_tokenizer(task.chars)``)
    chars = REACT_CHARS
    #: row fields besides the prompt: the spec and the export requirement ``jsx.rules`` reads.
    row_fields = ("spec", "require_export")

    def __init__(self, params: ReactParams | None = None) -> None:
        self.params = params or ReactParams()

    @property
    def max_completion_chars(self) -> int:
        """Longest completion the grammar produces, in characters (= tokens for the char tokenizer)."""
        if self.params.grammar == "spec":
            return max_view_chars(NOUNS, self.params.sections[1])
        if self.params.pages:
            return max_page_chars(self.params.kinds, self.params.sections[1])
        return 145

    # ---- specs -----------------------------------------------------------------------------------
    @cached_property
    def _specs(self) -> tuple[list[str], list[str]]:
        """``(train keys, held-out keys)``: every spec key of the grammar, split by a stable hash."""
        keys: list[str] = []
        for kind in self.params.kinds:
            for noun in NOUNS:
                if kind in ("list", "cond"):
                    keys += [f"{kind} {noun} {f}" for f in FIELDS]
                elif kind == "state":
                    keys += [f"{kind} {noun} {k}" for k in range(10)]
                else:
                    keys += [f"{kind} {noun} {f} {g}" for f in FIELDS for g in FIELDS if f != g]
        held = [k for k in keys if _is_held_out(k, self.params.holdout_fraction)]
        train = [k for k in keys if not _is_held_out(k, self.params.holdout_fraction)]
        return train, held

    @staticmethod
    def parse_key(key: str, export: bool = False) -> Spec | PageSpec | ViewSpec:
        if key.startswith("page "):
            return PageSpec.parse(key, export)
        if key.startswith(f"{PREFIX} "):
            return ViewSpec.parse(key, export)
        kind, noun, *args = key.split(" ")
        if kind == "state":
            return Spec(kind, noun, (), int(args[0]), export)
        return Spec(kind, noun, tuple(args), 0, export)

    def _spec(self, key: str, rng: random.Random) -> Spec:
        return self.parse_key(key, rng.random() < self.params.export_rate)

    def _page(self, rng: random.Random) -> PageSpec | ViewSpec:
        if self.params.grammar == "spec":
            return sample_view(
                rng, sections=self.params.sections, nouns=NOUNS, export_rate=self.params.export_rate
            )
        return sample_page(
            rng,
            kinds=self.params.kinds,
            sections=self.params.sections,
            nouns=NOUNS,
            fields=FIELDS,
            export_rate=self.params.export_rate,
        )

    def _pages(
        self, n: int, rng: random.Random, *, held_out: bool, banned: set[str]
    ) -> list[PageSpec | ViewSpec]:
        """``n`` pages on one side of the held-out split (distinct while that is easy), none in ``banned``."""
        out: list[PageSpec] = []
        seen: set[str] = set()
        tries = 0
        while len(out) < n:
            page = self._page(rng)
            tries += 1
            if _is_held_out(page.key, self.params.holdout_fraction) != held_out or page.key in banned:
                continue
            if page.key in seen and tries < 20 * n:  # distinct unless the grammar runs short
                continue
            seen.add(page.key)
            out.append(page)
        return out

    def row(self, spec: Spec | PageSpec | ViewSpec) -> dict[str, Any]:
        return {
            "prompt": spec.prompt,
            "spec": spec.key,
            # a string either way (datasets/Arrow columns need one type); "" = no export asked (jsx.rules)
            "require_export": "default" if spec.export else "",
        }

    @staticmethod
    def parse_row(row: dict[str, Any]) -> Spec | PageSpec | ViewSpec:
        return ReactTask.parse_key(row["spec"], bool(row.get("require_export")))

    def eval_rows(self, n: int, seed: int = 0) -> list[dict[str, Any]]:
        """``n`` held-out specs (fixed by ``seed``); all distinct while ``n`` <= the held-out count."""
        rng = random.Random(f"react-eval-{seed}")
        if self.params.pages:
            return [self.row(p) for p in self._pages(n, rng, held_out=True, banned=set())]
        held = self._specs[1]
        order = rng.sample(held, len(held))
        keys = [order[i % len(order)] for i in range(n)]
        return [self.row(self._spec(k, rng)) for k in keys]

    def train_rows(
        self, n: int, seed: int = 0, exclude: Sequence[dict[str, Any]] = ()
    ) -> list[dict[str, Any]]:
        """``n`` training specs (repeats allowed); never a held-out spec nor one in ``exclude``."""
        banned = {r["spec"] for r in exclude}
        if self.params.pages:
            rng = random.Random(f"react-train-{seed}")
            pages: list[PageSpec | ViewSpec] = []
            while len(pages) < n:  # repeats allowed, as for single components
                page = self._page(rng)
                if not _is_held_out(page.key, self.params.holdout_fraction) and page.key not in banned:
                    pages.append(page)
            return [self.row(p) for p in pages]
        pool = [k for k in self._specs[0] if k not in banned]
        if not pool:
            raise ValueError("react task: every training spec is excluded; lower holdout_fraction")
        rng = random.Random(f"react-train-{seed}")
        return [self.row(self._spec(rng.choice(pool), rng)) for _ in range(n)]

    @property
    def num_specs(self) -> tuple[int, int]:
        """``(training specs, held-out specs)`` (without the export flag) of the single components."""
        return len(self._specs[0]), len(self._specs[1])

    # ---- demonstrations --------------------------------------------------------------------------
    def demonstration(self, spec: Spec | PageSpec | ViewSpec, rng: random.Random) -> str:
        """A completion that carries one error of the spec's kind with probability ``error_rate`` (a page:
        each section independently)."""
        if isinstance(spec, ViewSpec):
            return view_demonstration(spec, rng, self.params.error_rate)
        if isinstance(spec, PageSpec):
            return page_demonstration(spec, rng, self.params.error_rate)
        if rng.random() >= self.params.error_rate:
            return solution(spec)
        choices = [e.lstrip("*") for e in ERRORS[spec.kind]]
        if not spec.export:
            choices = [e for e in choices if e != "missing_export"]
        return _render(spec, rng.choice(choices))

    def demonstrations(self, rows: Sequence[dict[str, Any]], seed: int = 0) -> list[str]:
        rng = random.Random(f"react-demo-{seed}")
        return [self.demonstration(self.parse_row(r), rng) for r in rows]

    @staticmethod
    def solution(spec: Spec | PageSpec | ViewSpec) -> str:
        """The correct completion."""
        if isinstance(spec, ViewSpec):
            return render_view(spec)
        return render_page(spec) if isinstance(spec, PageSpec) else solution(spec)

    # ---- evaluation ------------------------------------------------------------------------------
    @cached_property
    def _checkers(self) -> tuple[Any, Any, Any]:
        # The jsx plugin's own scorers, in this process (workers=0): evaluation must not start pools.
        from botgrpo_jsx.params import CompilesParams, RulesParams, SyntaxParams
        from botgrpo_jsx.scorers import CompilesScorer, RulesScorer, SyntaxScorer

        return (
            CompilesScorer(CompilesParams(workers=0)),
            RulesScorer(RulesParams(workers=0)),
            SyntaxScorer(SyntaxParams(workers=0)),
        )

    def check(self, rows: Sequence[dict[str, Any]], completions: Sequence[str]) -> list[tuple[bool, bool]]:
        """``(compiles, rule_clean)`` per completion; rule-clean = no syntax error and no rule violation."""
        from botgrpo_core.signals import Sample, SampleError

        if len(rows) != len(completions):
            raise ValueError("evaluate: rows and completions differ in length")
        # botgrpo train passes the rows without their prompt; the rules read the row's require_export.
        samples = [
            Sample(prompt=r.get("prompt", ""), completion=c, row=dict(r))
            for r, c in zip(rows, completions, strict=True)
        ]
        compiles, rules, syntax = self._checkers
        ok = compiles.score(samples)
        violations = rules.score(samples)
        errors = syntax.score(samples)
        out = []
        for c, v, e in zip(ok, violations, errors, strict=True):
            compiled = not isinstance(c, SampleError) and c == 1.0
            clean = compiled and v == [] and e == []
            out.append((compiled, clean))
        return out

    def evaluate(self, rows: Sequence[dict[str, Any]], completions: Sequence[str]) -> dict[str, float]:
        """``compile_rate`` (jsx.compiles) and ``rule_clean_rate`` (compiles, no syntax/rule span); with
        ``grammar: spec`` also ``spec_rate`` (compiles and implements the spec: the task's success) and
        ``trivial_rate`` (empty or trivial pages, :func:`botgrpo_bench.react_verdict.is_trivial`)."""
        results = self.check(rows, completions)
        n = max(len(results), 1)
        out = {
            "compile_rate": sum(c for c, _ in results) / n,
            "rule_clean_rate": sum(r for _, r in results) / n,
        }
        if self.params.grammar == "spec":
            from botgrpo_bench.react_verdict import code_facts, is_trivial, succeeds, view_spec_of

            specs = [view_spec_of(r) for r in rows]
            facts = [code_facts(c) for c in completions]
            out["spec_rate"] = (
                sum(succeeds(c, s, f) for (c, _), s, f in zip(results, specs, facts, strict=True)) / n
            )
            out["trivial_rate"] = sum(is_trivial(s, f) for s, f in zip(specs, facts, strict=True)) / n
        return out

    def success(self, row: dict[str, Any], completion: str) -> bool:
        """Task success of one rollout: the component compiles (``grammar: spec``: and implements the spec).

        The trainer asks once per rollout, and rollouts of a group repeat each other more and more as
        training converges, so results are remembered per completion text (compilation does not
        depend on the row).
        """
        cached = self._compiled.get(completion)
        if cached is None:
            cached = self.success_batch([row], [completion])[0]
        if cached and self.params.grammar == "spec":
            from botgrpo_bench.react_verdict import code_facts, succeeds, view_spec_of

            return succeeds(True, view_spec_of(row), code_facts(completion))
        return cached

    def success_batch(self, rows: Sequence[dict[str, Any]], completions: Sequence[str]) -> list[bool]:
        """:meth:`success` for many rollouts in one compile request."""
        from botgrpo_core.signals import Sample, SampleError

        todo = sorted({c for c in completions if c not in self._compiled})
        if todo:
            results = self._checkers[0].score([Sample(prompt="", completion=c) for c in todo])
            if len(self._compiled) > 50_000:  # bound the memory of a long run
                self._compiled.clear()
            for c, r in zip(todo, results, strict=True):
                self._compiled[c] = not isinstance(r, SampleError) and r == 1.0
        return [self._compiled[c] for c in completions]

    @cached_property
    def _compiled(self) -> dict[str, bool]:
        return {}
