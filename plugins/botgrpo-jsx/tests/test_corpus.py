"""The signals on the real-component corpus: no false positives, and mutants are caught.

The full measurement (all mutants, coverage, the README table) is ``scripts/evaluate.py``; this is
the fast regression guard.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from jsx_testing.mutations import EXPECTED_RULE, KINDS, covers, mutate

from botgrpo_core.signals import Sample
from botgrpo_jsx.params import CompilesParams, RulesParams, SyntaxParams
from botgrpo_jsx.plugin import make_compiles, make_rules, make_syntax


def _sample(path: Path, code: str | None = None) -> Sample:
    fence = "tsx" if path.suffix == ".tsx" else "jsx"
    return Sample("Write a React component.", f"```{fence}\n{path.read_text() if code is None else code}```")


def test_corpus_is_large_and_licensed(corpus: list[Path]) -> None:
    assert len(corpus) >= 40
    sources = (corpus[0].parent.parent / "SOURCES.md").read_text()
    for path in corpus:
        assert path.read_text().startswith("// Source: npm "), path.name
        assert f"`{path.name}`" in sources


def test_no_false_positives_on_valid_components(corpus: list[Path]) -> None:
    samples = [_sample(p) for p in corpus]
    assert make_syntax(SyntaxParams(workers=0)).score(samples) == [[] for _ in samples]
    assert make_rules(RulesParams(workers=0)).score(samples) == [[] for _ in samples]
    assert make_compiles(CompilesParams(backend="tree-sitter", workers=0)).score(samples) == [1.0] * len(
        samples
    )


def test_no_false_positives_with_esbuild(corpus: list[Path], need_node: None) -> None:
    samples = [_sample(p) for p in corpus]
    assert make_compiles(CompilesParams(backend="esbuild")).score(samples) == [1.0] * len(samples)


@pytest.mark.parametrize("kind", KINDS)
def test_mutants_are_detected_where_they_are(corpus: list[Path], kind: str) -> None:
    rng = random.Random(1)
    cases = []
    for path in corpus:
        for m in mutate(path.read_text(), kind, rng, max_sites=1):
            cases.append((path, m))
        if len(cases) >= 6:
            break
    assert cases, f"no site for {kind} in the corpus"
    samples = [_sample(p, m.code) for p, m in cases]
    shift = len("```tsx\n")
    rule = EXPECTED_RULE[kind]
    if rule is None:
        results = make_syntax(SyntaxParams(workers=0)).score(samples)
        assert all(results), f"{kind}: a mutant without a syntax error span"
        assert make_compiles(CompilesParams(backend="tree-sitter", workers=0)).score(samples) == [0.0] * len(
            cases
        )
    else:
        results = make_rules(RulesParams(workers=0)).score(samples)
        results = [[s for s in r if rule in str(s.meta)] for r in results]
        # remove_key misses elements that spread props (a spread may carry the key): allow those.
        detected = [r for r in results if r]
        assert len(detected) >= (len(results) - 2 if kind == "remove_key" else len(results))
    for (_, m), r in zip(cases, results, strict=True):
        if r:
            locations = tuple((a + shift, b + shift) for a, b in m.locations)
            assert kind in ("delete_brace", "delete_paren") or any(
                covers(s.start, s.end, locations) for s in r
            )
