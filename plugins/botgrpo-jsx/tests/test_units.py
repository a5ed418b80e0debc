"""Blame on pages with several errors, and jsx.units: every unit judged in context.

Pages are built like the React task's (``botgrpo_bench.react_pages``): a component whose root
``<div>`` holds one section per line, each section carrying at most one error of its kind, plus two
multi-line units (a handler statement and a ``<section>`` child). On pages with 1, 2, 3 and 5 broken
units, jsx.syntax, jsx.rules and jsx.units must put no negative span on an error-free unit and flag
every broken one (the shares are asserted exactly: 0 and 1 on these pages).
"""

from __future__ import annotations

import itertools
import random

import pytest

from botgrpo_core.signals import Sample, Span
from botgrpo_jsx.params import CompilesParams, RulesParams, SyntaxParams, UnitsParams
from botgrpo_jsx.plugin import SIGNALS, make_compiles, make_rules, make_syntax, make_units
from botgrpo_jsx.segment import segment

#: Each unit of the page: its correct text and its errors; ``*``: breaks compilation. Statements are
#: indented by 2, JSX children of the root by 4 (their inner lines deeper).
UNITS: dict[str, tuple[str, dict[str, str]]] = {
    "hook": (
        "const [n, setN] = useState(0);",
        {"hooks": "const [n, setN] = on ? useState(0) : [0];", "*paren": "const [n, setN] = useState(0;"},
    ),
    "handler": (
        "const reset = () => {\n    setN(0);\n  };",
        {
            "*paren": "const reset = () => {\n    setN(0;\n  };",
            "*brace": "const reset = () => {\n    setN(0);\n  ;",
        },
    ),
    "list": (
        "<ul>{items.map(x => <li key={x.id}>{x.title}</li>)}</ul>",
        {
            "missing_key": "<ul>{items.map(x => <li>{x.title}</li>)}</ul>",
            "*unclosed_li": "<ul>{items.map(x => <li key={x.id}>{x.title})}</ul>",
            "*paren": "<ul>{items.map(x => <li key={x.id}>{x.title}</li>}</ul>",
            "*brace": "<ul>{items.map(x => <li key={x.id}>{x.title}</li>)</ul>",
        },
    ),
    "cond": (
        "{show ? <p>{name}</p> : null}",
        {
            "*unclosed_p": "{show ? <p>{name} : null}",
            "*mismatch": "{show ? <p>{name}</div> : null}",
            "*brace": "{show ? <p>{name}</p> : null",
        },
    ),
    "button": (
        "<button onClick={() => setN(n + 1)}>{n}</button>",
        {
            "*paren": "<button onClick={() => setN(n + 1}>{n}</button>",
            "*unclosed": "<button onClick={() => setN(n + 1)}>{n}",
        },
    ),
    "props": (
        '<div className="card"><h2>{title}</h2><p>{body}</p></div>',
        {
            "class_attribute": '<div class="card"><h2>{title}</h2><p>{body}</p></div>',
            "*unclosed_h2": '<div className="card"><h2>{title}<p>{body}</p></div>',
        },
    ),
    "frag": (
        "<><b>{a}</b><i>{b}</i></>",
        {"*unclosed_fragment": "<><b>{a}</b><i>{b}</i>", "*unclosed_b": "<><b>{a}<i>{b}</i></>"},
    ),
    "section": (
        "<section>\n      <h3>{title}</h3>\n      <span>{body}</span>\n    </section>",
        {
            "*unclosed_h3": "<section>\n      <h3>{title}\n      <span>{body}</span>\n    </section>",
            "undefined": "<section>\n      <h3>{title}</h3>\n      <Spam>{body}</Spam>\n    </section>",
        },
    ),
}
STATEMENTS = ("hook", "handler")


def page(children: list[str], errors: dict[str, str]) -> tuple[str, dict[str, tuple[int, int]]]:
    """The page with ``errors[unit]`` injected; each unit's (start, end) in the text."""
    head = "export default function Page({items, show, name, title, body, a, b, on}) {\n"
    parts: list[tuple[str | None, str]] = [(None, head)]
    for name in STATEMENTS:
        parts.append((name, "  " + UNITS[name][1].get(errors.get(name, ""), UNITS[name][0]) + "\n"))
    parts.append((None, "  return <div>\n"))
    for name in children:
        parts.append((name, "    " + UNITS[name][1].get(errors.get(name, ""), UNITS[name][0]) + "\n"))
    parts.append((None, "  </div>;\n}\n"))
    text, where, pos = "", {}, 0
    for name, part in parts:
        if name is not None:
            start = pos + len(part) - len(part.lstrip())
            where[name] = (start, pos + len(part.rstrip()))
        text += part
        pos += len(part)
    return text, where


def pages(
    n_errors: int, count: int, seed: int
) -> list[tuple[str, dict[str, tuple[int, int]], dict[str, str]]]:
    rng = random.Random(seed)
    out = []
    jsx = [u for u in UNITS if u not in STATEMENTS]
    for _ in range(count):
        children = rng.sample(jsx, len(jsx))
        broken = rng.sample([*STATEMENTS, *children], n_errors)
        errors = {u: rng.choice(list(UNITS[u][1])) for u in broken}
        text, where = page(children, errors)
        out.append((text, where, errors))
    return out


def _touches(spans: list[Span], start: int, end: int) -> bool:
    return any(s.value < 0 and s.start < end and start < s.end for s in spans)


@pytest.mark.parametrize("n_errors", [1, 2, 3, 5])
def test_pages_with_several_errors_are_blamed_on_the_broken_units_only(n_errors: int) -> None:
    cases = pages(n_errors, 12, seed=n_errors)
    samples = [Sample("S: export page", text) for text, _, _ in cases]
    syntax = make_syntax(SyntaxParams(workers=0)).score(samples)
    rules = make_rules(RulesParams(workers=0)).score(samples)
    units = make_units(UnitsParams(workers=0)).score(samples)
    shares: dict[str, list[int]] = {k: [0, 0, 0, 0] for k in ("syntax", "rules", "syntax+rules", "units")}
    for (text, where, errors), s, r, u in zip(cases, syntax, rules, units, strict=True):
        assert isinstance(s, list) and isinstance(r, list) and isinstance(u, list), (s, r, u)
        for name, (start, end) in where.items():
            error = errors.get(name)
            flagged = {
                "syntax": _touches(s, start, end),
                "rules": _touches(r, start, end),
                "syntax+rules": _touches(s + r, start, end),
                "units": _touches(u, start, end),
            }
            for signal, hit in flagged.items():
                shares[signal][0 if error is None else 2] += hit
                shares[signal][1 if error is None else 3] += 1
            if error is None:
                # an error-free unit: no negative span anywhere on it, and jsx.units says +1 on all of it
                assert not any(flagged.values()), (name, text, s, r, u)
                assert any(x.value == 1.0 and x.start <= start and end <= x.end for x in u), (name, text, u)
                continue
            # a broken unit: jsx.units says -1 on all of its first line (a handler that lost its `}`
            # ends where the indentation says: its `;` line is a statement of its own); a syntax
            # error is jsx.syntax's (but tree-sitter parses `<p>x</div>`: jsx.rules names it), a
            # rule jsx.rules'
            newline = text.find("\n", start, end)
            first = end if newline < 0 else newline
            assert any(x.value == -1.0 and x.start <= start and first <= x.end for x in u), (
                name,
                error,
                text,
                u,
            )
            breaks = error.startswith("*") and error != "*mismatch"
            assert flagged["syntax"] == breaks, (name, error, text, s)
            assert flagged["rules"] or breaks, (name, error, text, r)
    clean = {k: v[0] / v[1] for k, v in shares.items()}
    broken = {k: v[2] / v[3] for k, v in shares.items()}
    assert clean == {"syntax": 0.0, "rules": 0.0, "syntax+rules": 0.0, "units": 0.0}
    assert broken["syntax+rules"] == broken["units"] == 1.0


def test_page_compiles_iff_no_unit_is_flagged(need_node: None) -> None:
    """jsx.units with ``rules: false`` flags a unit exactly when esbuild rejects the page (a syntax
    error, an unclosed or mismatched tag); with the rules, exactly when the page is not rule-clean."""
    cases = [c for n in (0, 1, 2, 3, 5) for c in pages(n, 8, seed=10 + n)]
    samples = [Sample("S: export page", text) for text, _, _ in cases]
    compiles = make_compiles(CompilesParams()).score(samples)
    esbuild_units = make_units(UnitsParams(workers=0, rules=False)).score(samples)
    all_units = make_units(UnitsParams(workers=0)).score(samples)
    for (text, _, errors), c, e, a in zip(cases, compiles, esbuild_units, all_units, strict=True):
        assert (c == 1.0) == (not any(s.value < 0 for s in e)), (errors, text, e)
        assert (c == 1.0 and not errors) == (not any(s.value < 0 for s in a)), (errors, text, a)


def test_units_of_a_component() -> None:
    """Statements of a top-level function, the children of its returned root, a `const X = () => (`
    root's children, other top-level statements whole; the lines a unit is cut from are its frame."""
    code = (
        "import React from 'react';\n\n"
        "export function Card({title, items}) {\n"
        "  const [open, setOpen] = React.useState(false);\n"
        "  useEffect(() => {\n    document.title = title;\n  }, [title]);\n"
        '  return (\n    <div className="card">\n      <h2>{title}</h2>\n'
        "      <ul>\n        {items.map(i => <li key={i}>{i}</li>)}\n      </ul>\n    </div>\n  );\n}\n\n"
        "const Small = () => (\n  <p>\n    <b>x</b>\n  </p>\n);\n"
    )
    units = segment(code)
    got = [(u.kind, code[u.start : u.end].split("\n")[0]) for u in units]
    assert got == [
        ("top-level", "import React from 'react';"),
        ("frame", "export function Card({title, items}) {"),
        ("statement", "const [open, setOpen] = React.useState(false);"),
        ("statement", "useEffect(() => {"),
        ("frame", "return ("),
        ("jsx child", "<h2>{title}</h2>"),
        ("jsx child", "<ul>"),
        ("frame", "const Small = () => ("),
        ("jsx child", "<b>x</b>"),
    ]
    frame = units[4]
    assert [code[a:b] for a, b in frame.ranges] == ["return (", '<div className="card">', "</div>", ");"]
    # every unit's range, and none overlaps another
    covered = sorted(r for u in units for r in u.ranges)
    assert all(b1 <= a2 for (_, b1), (a2, _) in itertools.pairwise(covered))


def test_units_spans_map_to_the_completion_and_keep_the_bounds() -> None:
    code = "function A({items}) {\n  return <div>\n    <ul>{items.map(x => <li>{x}</li>)}</ul>\n    <p>ok</p>\n  </div>;\n}\n"
    completion = "Here it is:\n```jsx\n" + code + "```\nDone."
    (spans,) = make_units(UnitsParams(workers=0, pass_value=0.5, fail_value=-0.25)).score(
        [Sample("", completion)]
    )
    offset = completion.index(code)
    values = {completion[s.start : s.end]: s.value for s in spans}
    assert values["<ul>{items.map(x => <li>{x}</li>)}</ul>"] == -0.25  # missing_key
    assert values["<p>ok</p>"] == 0.5
    assert all(offset <= s.start and s.end <= offset + len(code) for s in spans)
    spec = next(s for s in SIGNALS if s.name == "jsx.units")
    assert spec.kind == "local" and spec.bounds(UnitsParams()) == (-1.0, 1.0)
    with pytest.raises(ValueError):
        UnitsParams(fail_value=-2.0)
    # with the rules off, the missing key is not the verdict's business
    (spans,) = make_units(UnitsParams(workers=0, rules=False)).score([Sample("", completion)])
    assert all(s.value == 1.0 for s in spans)


def test_the_valid_corpus_has_no_unit_flagged(corpus: list) -> None:
    samples = [
        Sample("", f"```{'tsx' if f.suffix == '.tsx' else 'jsx'}\n{f.read_text()}```\n") for f in corpus
    ]
    results = make_units(UnitsParams(workers=0, require_export="never")).score(samples)
    for f, r in zip(corpus, results, strict=True):
        assert isinstance(r, list) and r and all(s.value == 1.0 for s in r), (f.name, r)
