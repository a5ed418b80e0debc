"""Where the local jsx signals put their spans on the React task's demonstration pages: issue 23's audit.

    python scripts/audit_pages.py [--pages 400] [--seed 0] [--sections 4] [--error-rate 0.5] [--json OUT]

Pages are made exactly as ``botgrpo_bench`` makes the long level's warm-start demonstrations
(``ReactTask(sections=[4, 4], error_rate=0.5).demonstrations(train_rows(...))``; the errors each page
carries are drawn with the same random calls, and the page text is checked against the task's own),
so every section's injected error is known. A section owns its JSX line and, for ``state``, its hook
line. Per number of *breaking* errors on the page (``*`` in ``SECTION_ERRORS``: 0, 1, 2, >= 3), for
``jsx.syntax``, ``jsx.rules``, their union, and the negative spans of ``jsx.units``:

- ``chars``: share of the page's characters under a negative span;
- ``clean flagged``: share of error-free sections that a negative span touches (target 0);
- ``error flagged``: share of sections with an error (breaking or not) that one touches (target 1;
  jsx.syntax sees the breaking ones only), and ``breaking flagged``: of those with a breaking error;
- ``outside``: share of negative characters on no section's line (header, ``return``, closers).

Also: how often a ``missing_key`` section gets a ``missing_key`` span from jsx.rules, and for
jsx.units whether ``page compiles (esbuild) <=> no unit flagged`` holds (and the rule-clean variant:
compiles and no syntax or rule span <=> no unit flagged), and the throughput of jsx.units in-process.
Needs ``botgrpo_bench`` installed (the repository's ``make install`` does).
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from botgrpo_bench.react import ReactParams, ReactTask
from botgrpo_bench.react_pages import SECTION_ERRORS, PageSpec, render_page
from botgrpo_core.signals import Sample, SampleError, Span
from botgrpo_jsx.params import CompilesParams, RulesParams, SyntaxParams


def drawn_errors(spec: PageSpec, rng: random.Random, error_rate: float) -> dict[int, str]:
    """The errors ``react_pages.page_demonstration`` draws with ``rng`` (the same calls, in order)."""
    return {
        i: rng.choice(SECTION_ERRORS[s.kind]).lstrip("*")
        for i, s in enumerate(spec.sections)
        if rng.random() < error_rate
    }


def breaking(kind: str, error: str) -> bool:
    return f"*{error}" in SECTION_ERRORS[kind]


def demo_pages(n: int, seed: int, sections: int, error_rate: float) -> list[dict[str, Any]]:
    """``n`` demonstration pages with their spec, row and injected errors (as the bench makes them)."""
    task = ReactTask(ReactParams(error_rate=error_rate, sections=(sections, sections)))
    rows = task.train_rows(n, seed=seed)
    demos = task.demonstrations(rows, seed=seed)
    rng = random.Random(f"react-demo-{seed}")  # the stream ReactTask.demonstrations draws from
    pages = []
    for row, demo in zip(rows, demos, strict=True):
        spec = task.parse_row(row)
        errors = drawn_errors(spec, rng, error_rate)
        text = render_page(spec, errors)
        assert text == demo, "the bench's demonstrations changed: update drawn_errors"
        pages.append({"row": row, "spec": spec, "errors": errors, "text": text})
    return pages


def section_lines(spec: PageSpec) -> list[set[int]]:
    """The 0-based lines each section owns (its JSX line; a state section also its hook line)."""
    hooks = sum(s.kind == "state" for s in spec.sections)
    out = []
    for i, s in enumerate(spec.sections):
        lines = {2 + hooks + i}  # header, hook line(s), `return <div>`, then one line per section
        if s.kind == "state":
            lines.add(1)
        out.append(lines)
    return out


def _lines_of(text: str, span: Span) -> set[int]:
    first = text.count("\n", 0, span.start)
    return set(range(first, first + text.count("\n", span.start, max(span.end - 1, span.start)) + 1))


def negative(result: Any) -> list[Span]:
    return [s for s in result if s.value < 0] if isinstance(result, list) else []


def bucket(n: int) -> str:
    return str(n) if n < 3 else ">=3"


def audit(pages: list[dict[str, Any]], results: dict[str, list[Any]]) -> dict[str, Any]:
    """The figures per signal and number of breaking errors (see the module docstring)."""
    acc: dict[tuple[str, str], dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for k, page in enumerate(pages):
        spec, errors, text = page["spec"], page["errors"], page["text"]
        owned = section_lines(spec)
        all_owned = set().union(*owned)
        nbreak = sum(breaking(spec.sections[i].kind, e) for i, e in errors.items())
        signals = {name: negative(r[k]) for name, r in results.items()}
        signals["syntax+rules"] = signals.get("syntax", []) + signals.get("rules", [])
        for name, spans in signals.items():
            a = acc[(name, bucket(nbreak))]
            a["pages"] += 1
            covered = [False] * len(text)
            for s in spans:
                covered[s.start : s.end] = [True] * (min(s.end, len(text)) - s.start)
            a["chars"] += sum(covered)
            a["page_chars"] += len(text)
            line_of = [0] * len(text)
            row = 0
            for j, ch in enumerate(text):
                line_of[j] = row
                row += ch == "\n"
            a["outside"] += sum(c and line_of[j] not in all_owned for j, c in enumerate(covered))
            flagged_lines = set().union(*(_lines_of(text, s) for s in spans)) if spans else set()
            for i, lines in enumerate(owned):
                hit = bool(lines & flagged_lines)
                if i in errors:
                    a["broken"] += 1
                    a["broken_flagged"] += hit
                    if breaking(spec.sections[i].kind, errors[i]):
                        a["breaking"] += 1
                        a["breaking_flagged"] += hit
                else:
                    a["clean"] += 1
                    a["clean_flagged"] += hit
    table: dict[str, Any] = {}
    for (name, b), a in sorted(acc.items()):
        table.setdefault(name, {})[b] = {
            "pages": int(a["pages"]),
            "chars": a["chars"] / max(a["page_chars"], 1),
            "clean_flagged": a["clean_flagged"] / max(a["clean"], 1),
            "clean_sections": int(a["clean"]),
            "broken_flagged": a["broken_flagged"] / max(a["broken"], 1),
            "broken_sections": int(a["broken"]),
            "breaking_flagged": a["breaking_flagged"] / max(a["breaking"], 1),
            "breaking_sections": int(a["breaking"]),
            "outside": a["outside"] / max(a["chars"], 1),
        }
    return table


def missing_keys(pages: list[dict[str, Any]], rules: list[Any]) -> tuple[int, int]:
    """(missing_key sections that get a missing_key span on their line, missing_key sections)."""
    hit = total = 0
    for page, result in zip(pages, rules, strict=True):
        owned = section_lines(page["spec"])
        for i, e in page["errors"].items():
            if e != "missing_key":
                continue
            total += 1
            spans = [s for s in negative(result) if "missing_key" in str(s.meta)]
            hit += any(_lines_of(page["text"], s) & owned[i] for s in spans)
    return hit, total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=400)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sections", type=int, default=4)
    ap.add_argument("--error-rate", type=float, default=0.5)
    ap.add_argument("--no-units", action="store_true", help="skip jsx.units (a tree without it)")
    ap.add_argument("--json", type=Path, help="write every figure here")
    args = ap.parse_args()
    pages = demo_pages(args.pages, args.seed, args.sections, args.error_rate)
    samples = [Sample(p["row"]["prompt"], p["text"], row=dict(p["row"])) for p in pages]
    from botgrpo_jsx.plugin import make_compiles, make_rules, make_syntax

    compiles = make_compiles(CompilesParams(workers=0)).score(samples)
    results: dict[str, list[Any]] = {
        "syntax": make_syntax(SyntaxParams(workers=0)).score(samples),
        "rules": make_rules(RulesParams(workers=0)).score(samples),
    }
    timing: dict[str, float] = {}
    if not args.no_units:
        from botgrpo_jsx.params import UnitsParams
        from botgrpo_jsx.plugin import make_units
        from botgrpo_jsx.treesitter import parse

        units = make_units(UnitsParams(workers=0))
        results["units"] = units.score(samples)
        results["units(rules: false)"] = make_units(UnitsParams(workers=0, rules=False)).score(samples)
        # throughput: fresh parses (the cache the other signals share is emptied first)
        from botgrpo_jsx import analysis

        # throughput per CPU second (the shared machine's wall clock varies with its load), on fresh
        # parses: the parse cache the signals share is emptied first
        parse("const a = 1;", 1.0)
        analysis._recent.clear()
        t = time.process_time()
        units.score(samples)
        timing["units_per_cpu_s"] = len(samples) / (time.process_time() - t)
        analysis._recent.clear()
        t = time.process_time()
        make_syntax(SyntaxParams(workers=0)).score(samples)
        make_rules(RulesParams(workers=0)).score(samples)
        timing["syntax_and_rules_per_cpu_s"] = len(samples) / (time.process_time() - t)
        t = time.process_time()
        units.score(samples)
        timing["units_after_syntax_and_rules_per_cpu_s"] = len(samples) / (time.process_time() - t)
    errors = sum(isinstance(r, SampleError) for rs in results.values() for r in rs)
    table = audit(pages, results)
    compiled = [c == 1.0 for c in compiles]
    hit, total = missing_keys(pages, results["rules"])
    out: dict[str, Any] = {
        "pages": len(pages),
        "compile_rate": sum(compiled) / len(pages),
        "sample_errors": errors,
        "table": table,
        "missing_key": [hit, total],
        "timing": timing,
    }
    print(f"{len(pages)} pages, compile rate {out['compile_rate']:.2f}, sample errors {errors}")
    print(
        "\n| signal | breaking errors | pages | chars flagged | clean sections flagged | sections with an "
        "error flagged | sections with a breaking error flagged | negative chars outside sections |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, rows in table.items():
        for b in ("0", "1", "2", ">=3"):
            if b in rows:
                r = rows[b]
                print(
                    f"| {name} | {b} | {r['pages']} | {r['chars']:.0%} | {r['clean_flagged']:.0%} "
                    f"({r['clean_sections']}) | {r['broken_flagged']:.0%} ({r['broken_sections']}) "
                    f"| {r['breaking_flagged']:.0%} ({r['breaking_sections']}) | {r['outside']:.0%} |"
                )
    print(f"\nmissing_key sections with a missing_key span on their line: {hit}/{total}")
    if "units" in results:
        flagged = [bool(negative(r)) for r in results["units"]]
        flagged_esbuild = [bool(negative(r)) for r in results["units(rules: false)"]]
        # rule-clean as the task's evaluation counts it: compiles, no jsx.syntax or jsx.rules span
        clean = [
            c and not negative(s) and not negative(r)
            for c, s, r in zip(compiled, results["syntax"], results["rules"], strict=True)
        ]
        agree = sum(c == (not f) for c, f in zip(compiled, flagged_esbuild, strict=True))
        agree_clean = sum(c == (not f) for c, f in zip(clean, flagged, strict=True))
        out["units_property"] = {
            "compiles_iff_no_unit_flagged(rules: false)": [agree, len(pages)],
            "rule_clean_iff_no_unit_flagged": [agree_clean, len(pages)],
        }
        print(f"page compiles (esbuild) <=> no unit flagged (rules: false): {agree}/{len(pages)}")
        print(f"page compiles and rule-clean <=> no unit flagged (default): {agree_clean}/{len(pages)}")
        print("throughput (in-process, samples per CPU second):", {k: round(v) for k, v in timing.items()})
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
