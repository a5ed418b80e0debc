"""Where jsx.syntax blames a deleted closing tag (issue 40): on the open tag, on the deletion point, both.

    python scripts/closing_tag_blame.py [--sites 3] [--seed 40] [--json out.json]
    python scripts/closing_tag_blame.py --pages 120 [--seed 40]   # botgrpo_bench's React pages instead

The corpus' 60 valid components (``tests/data/components``), each with up to ``--sites`` of its
elements' closing tags deleted, one per mutant (``tests/jsx_testing/mutations.py`` ``drop_closing_tag``,
sites shuffled by ``random.Random(seed)``: deterministic). For each mutant the *most negative* spans
(all spans at the minimum value) are compared with the element's opening tag and with the point where
its closing tag was (zero width; a span touching it counts, as in ``scripts/evaluate.py``).

``--pages N``: N pages of ``botgrpo_bench.react_pages`` (2-5 sections of distinct kinds, drawn by
``random.Random(seed)``), one mutant per section that can lose a closing tag (``unclosed_li``, ``_p``,
``_button``, ``_h2``, ``_b``, ``_fragment``), the page rendered with that one error: the deletion point
is where the correct page's closing tag was (removing it there gives the broken page), the open tag the
last ``<name`` before that point.
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


_TAGS = {
    "unclosed_li": "li",
    "unclosed_p": "p",
    "unclosed_button": "button",
    "unclosed_h2": "h2",
    "unclosed_b": "b",
    "unclosed_fragment": "",
}


def page_mutants(pages: int, seed: int) -> list[tuple[str, str, tuple[int, int], tuple[int, int]]]:
    """(page key, completion, opening tag range, deletion point) per unclosed-tag mutant of bench pages."""
    import re

    from botgrpo_bench.react_pages import SECTION_ERRORS, render_page, sample_page

    rng = random.Random(seed)
    nouns = ("Team", "Recipe", "Order", "Profile", "Ticket", "Album", "Course", "Invoice")
    fields = ("title", "name", "city", "price", "label", "note", "owner", "status")
    out = []
    for _ in range(pages):
        spec = sample_page(
            rng, kinds=tuple(SECTION_ERRORS), sections=(2, 5), nouns=nouns, fields=fields, export_rate=0.5
        )
        good = render_page(spec)
        for i, section in enumerate(spec.sections):
            for error in (e.lstrip("*") for e in SECTION_ERRORS[section.kind]):
                if error not in _TAGS:
                    continue
                bad = render_page(spec, {i: error})
                closer = f"</{_TAGS[error]}>"
                point = next(
                    k
                    for k in range(len(good))
                    if good.startswith(closer, k) and good[:k] + good[k + len(closer) :] == bad
                )
                opener = re.compile(rf"<{_TAGS[error]}(?=[\s>])" if _TAGS[error] else r"<>")
                tag = [m.span() for m in opener.finditer(bad, 0, point)][-1]
                fence = "```jsx\n"
                shift = len(fence)
                out.append(
                    (
                        f"{spec.key} [{error}]",
                        fence + bad + "\n```\n",
                        (tag[0] + shift, tag[1] + shift),
                        (point + shift, point + shift),
                    )
                )
    return out


def measure(sites: int = 3, seed: int = 40, pages: int = 0) -> dict[str, object]:
    cases = page_mutants(pages, seed) if pages else mutants(sites, seed)
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
    ap.add_argument("--pages", type=int, default=0, help="use this many botgrpo_bench React pages instead")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    figures = measure(args.sites, args.seed, args.pages)
    print(json.dumps({k: v for k, v in figures.items() if k != "misses"}, indent=1))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
