"""Measure the jsx signals on the corpus and its mutations; print the README table.

    python scripts/evaluate.py [--strict] [--sites 2] [--seed 0]

- false-positive rate on the valid corpus: share of components where ``jsx.compiles`` is 0, or
  ``jsx.syntax`` / ``jsx.rules`` report any span (target 0 for compiles and syntax);
- detection rate per mutation kind: compiles = 0; syntax has a span; rules has a span of the rule
  the mutation should trigger (``jsx_testing.mutations.EXPECTED_RULE``);
- span coverage: among detected mutations, how often a reported span touches the mutated location;
- mean flagged share: characters under a negative span / code length (how precise the spans are);
- blame on broken code (the mutants that break the syntax): whether the *first* most negative
  ``jsx.syntax`` span lies at the cause (touches the deleted token's position or, for a dropped
  closing tag, the orphaned opening tag), or on its line; whether the first ``unclosed_tag`` span of
  ``jsx.rules`` does; and the rules' spurious spans (any rule other than the expected one).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import defaultdict
from pathlib import Path

from botgrpo_core.signals import Sample, SampleError
from botgrpo_jsx.params import CompilesParams, RulesParams, SyntaxParams
from botgrpo_jsx.plugin import make_compiles, make_rules, make_syntax

# the mutations are test support (tests/jsx_testing), not part of the shipped package
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from jsx_testing.mutations import BREAKS_SYNTAX, EXPECTED_RULE, KINDS, covers, mutate

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "data" / "components"


def _fence(path: Path) -> str:
    return "tsx" if path.suffix == ".tsx" else "jsx"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--strict", action="store_true", help="also measure jsx.compiles strict=true (TypeScript)"
    )
    ap.add_argument("--sites", type=int, default=2, help="mutation sites per kind per component")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    files = sorted(CORPUS.iterdir())
    rng = random.Random(args.seed)
    valid = [Sample("Write a React component.", f"```{_fence(f)}\n{f.read_text()}```\n") for f in files]
    muts, samples = [], []
    for f in files:
        code = f.read_text()
        for kind in KINDS:
            for m in mutate(code, kind, rng, args.sites):
                prefix = f"```{_fence(f)}\n"
                shifted = tuple((a + len(prefix), b + len(prefix)) for a, b in m.locations)
                muts.append((kind, shifted))
                samples.append(Sample("Write a React component.", prefix + m.code + "```\n"))
    scorers = {
        "compiles": make_compiles(CompilesParams()),
        "syntax": make_syntax(SyntaxParams()),
        "rules": make_rules(RulesParams()),
    }
    if args.strict:
        scorers["strict"] = make_compiles(CompilesParams(strict=True))
    results, timing = {}, {}
    for name, scorer in scorers.items():
        t = time.perf_counter()
        results[name] = (scorer.score(valid), scorer.score(samples))
        timing[name] = time.perf_counter() - t
    n = len(valid)
    errors = sum(isinstance(r, SampleError) for v, m in results.values() for r in list(v) + list(m))
    print(f"corpus: {n} valid components; {len(samples)} mutants; sample errors: {errors}")
    print("\n### False positives on the valid corpus\n")
    print("| signal | flagged | rate |\n| --- | --- | --- |")
    for name, (v, _) in results.items():
        bad = sum((r != 1.0) if name in ("compiles", "strict") else bool(r) for r in v)
        print(f"| jsx.{name}{' (strict)' if name == 'strict' else ''} | {bad}/{n} | {bad / n:.1%} |")
    stats = defaultdict(lambda: defaultdict(list))
    for i, (kind, locations) in enumerate(muts):
        text = samples[i].completion
        stats[kind]["n"].append(1)
        for name, (_, m) in results.items():
            r = m[i]
            if name in ("compiles", "strict"):
                stats[kind][name].append(r == 0.0)
                continue
            if isinstance(r, SampleError):
                stats[kind][name].append(False)
                continue
            rule = EXPECTED_RULE[kind]
            spans = [s for s in r if s.value < 0]
            if name == "rules":
                spans = [s for s in spans if rule is not None and rule in str(s.meta)]
            hit = bool(spans)
            stats[kind][name].append(hit)
            if hit:
                stats[kind][f"{name}_cov"].append(any(covers(s.start, s.end, locations) for s in spans))
                flagged = sum(s.end - s.start for s in spans)
                stats[kind][f"{name}_share"].append(flagged / max(1, len(text)))

    def pct(xs: list) -> str:
        return f"{sum(xs) / len(xs):.0%}" if xs else "-"

    cols = ["compiles", "syntax", "rules"] + (["strict"] if args.strict else [])
    print("\n### Detection per mutation kind (rules: the expected rule only)\n")
    head = " | ".join(f"{c} detects" for c in cols)
    print(f"| kind | mutants | {head} | syntax span covers | rules span covers | syntax flagged share |")
    print("| --- " * (len(cols) + 5) + "|")
    for kind in KINDS:
        s = stats[kind]
        det = " | ".join(pct(s[c]) for c in cols)
        expected = "(must fail)" if BREAKS_SYNTAX[kind] else "(valid syntax)"
        print(
            f"| {kind} {expected} | {len(s['n'])} | {det} | {pct(s['syntax_cov'])} | {pct(s['rules_cov'])} "
            f"| {pct(s['syntax_share'])} |"
        )
    print_blame(muts, samples, results)
    print(
        "\nseconds per signal (valid + mutants):",
        {k: round(v, 1) for k, v in timing.items()},
        file=sys.stderr,
    )


def _first_most_negative(spans: list) -> object | None:
    negative = [s for s in spans if s.value < 0]
    if not negative:
        return None
    low = min(s.value for s in negative)
    return min((s for s in negative if s.value == low), key=lambda s: (s.start, s.end))


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index)


def print_blame(muts: list, samples: list[Sample], results: dict) -> None:
    """The blame table: where the first span lands on code that does not parse."""
    stats = defaultdict(lambda: defaultdict(list))
    for i, (kind, locations) in enumerate(muts):
        if not BREAKS_SYNTAX[kind]:
            continue
        text = samples[i].completion
        s = stats[kind]
        syntax, rules = results["syntax"][1][i], results["rules"][1][i]
        first = _first_most_negative(syntax) if isinstance(syntax, list) else None
        s["at_cause"].append(first is not None and covers(first.start, first.end, locations))
        lines = {_line_of(text, a) for a, _ in locations}
        s["same_line"].append(
            first is not None
            and (covers(first.start, first.end, locations) or _line_of(text, first.start) in lines)
        )
        if not isinstance(rules, list):
            continue
        tags = [r for r in rules if "unclosed_tag" in str(r.meta)]
        if EXPECTED_RULE[kind] == "unclosed_tag":
            s["rules_at_cause"].append(bool(tags) and covers(tags[0].start, tags[0].end, locations))
        spurious = [r for r in rules if EXPECTED_RULE[kind] is None or EXPECTED_RULE[kind] not in str(r.meta)]
        s["spurious_any"].append(bool(spurious))
        s["spurious"].append(len(spurious))

    def pct(xs: list) -> str:
        return f"{sum(xs) / len(xs):.0%}" if xs else "-"

    print("\n### Blame on broken code (first most negative span)\n")
    print(
        "| kind | mutants | syntax at cause | syntax on the cause's line | rules' first unclosed_tag at cause "
        "| mutants with spurious rules spans | spurious rules spans |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for kind in KINDS:
        if not BREAKS_SYNTAX[kind]:
            continue
        s = stats[kind]
        print(
            f"| {kind} | {len(s['at_cause'])} | {pct(s['at_cause'])} | {pct(s['same_line'])} "
            f"| {pct(s['rules_at_cause'])} | {sum(s['spurious_any'])} | {sum(s['spurious'])} |"
        )


if __name__ == "__main__":
    main()
