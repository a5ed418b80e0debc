"""Where jsx.syntax blames a deleted closing tag (issue 40): on the open tag, on the deletion point, both.

    python scripts/closing_tag_blame.py [--sites 3] [--seed 40] [--json out.json]

The corpus' 60 valid components (``tests/data/components``), each with up to ``--sites`` of its
elements' closing tags deleted, one per mutant (``tests/jsx_testing/mutations.py`` ``drop_closing_tag``,
sites shuffled by ``random.Random(seed)``: deterministic). For each mutant the *most negative* spans
(all spans at the minimum value) are compared with the element's opening tag and with the point where
its closing tag was (zero width; a span touching it counts, as in ``scripts/evaluate.py``).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

from botgrpo_core.signals import Sample
from botgrpo_jsx.params import SyntaxParams
from botgrpo_jsx.plugin import make_syntax

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from jsx_testing.mutations import covers, mutate  # noqa: E402

CORPUS = ROOT / "tests" / "data" / "components"


def mutants(sites: int, seed: int) -> list[tuple[str, str, tuple[int, int], tuple[int, int]]]:
    """(component file, completion, opening tag range, deletion point) per mutant, in completion indices."""
    rng = random.Random(seed)
    out = []
    for path in sorted(CORPUS.iterdir()):
        fence = "```tsx\n" if path.suffix == ".tsx" else "```jsx\n"
        for m in mutate(path.read_text(encoding="utf-8"), "drop_closing_tag", rng, sites):
            (o0, o1), (d0, d1) = ((a + len(fence), b + len(fence)) for a, b in m.locations)
            out.append((path.name, fence + m.code + "```\n", (o0, o1), (d0, d1)))
    return out


def measure(sites: int = 3, seed: int = 40) -> dict[str, object]:
    cases = mutants(sites, seed)
    results = make_syntax(SyntaxParams(workers=0)).score([Sample("", c) for _, c, _, _ in cases])
    opening = deletion = both = 0
    misses = []
    for (name, completion, tag, point), spans in zip(cases, results, strict=True):
        spans = spans if isinstance(spans, list) else []
        low = min((s.value for s in spans), default=0.0)
        worst = [s for s in spans if s.value == low and low < 0]
        on_tag = any(covers(s.start, s.end, (tag,)) for s in worst)
        on_point = any(covers(s.start, s.end, (point,)) for s in worst)
        opening += on_tag
        deletion += on_point
        both += on_tag and on_point
        if not (on_tag and on_point):
            misses.append(
                {
                    "component": name,
                    "tag": completion[tag[0] : tag[1]][:40],
                    "on_tag": on_tag,
                    "on_point": on_point,
                }
            )
    n = len(cases)
    return {
        "mutants": n,
        "components": len({c[0] for c in cases}),
        "on_opening_tag": opening,
        "on_deletion_point": deletion,
        "both": both,
        "misses": misses,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sites", type=int, default=3)
    ap.add_argument("--seed", type=int, default=40)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    figures = measure(args.sites, args.seed)
    print(json.dumps({k: v for k, v in figures.items() if k != "misses"}, indent=1))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
