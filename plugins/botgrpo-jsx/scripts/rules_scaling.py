"""How ``jsx.rules`` scales on large flat and deeply nested input (issue 17): time at two sizes.

    python scripts/rules_scaling.py [--size 45000] [--repeat 3]

Each generator builds code of about ``size`` and ``2 * size`` characters; the ratio of the best
times shows the growth (about 2 for linear, 4 for quadratic). Also prints the nodes the rule walk
visited per tree node (1.0: every node once). Runs in-process (``workers: 0``), parse included.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from botgrpo_jsx.analysis import parse_view, rule_spans
from botgrpo_jsx.extract import CodeView
from botgrpo_jsx.params import RulesParams
from botgrpo_jsx.walk import walk

GENERATORS: dict[str, Callable[[int], str]] = {
    "flat hooks in ifs": lambda n: (
        "function App() {\n"
        + "".join(f"  if (x) {{ useState({i}); }}\n" for i in range(n))
        + "  return <div/>;\n}\n"
    ),
    "flat elements": lambda n: (
        "const A = () => (<div>\n" + "".join(f"  <Foo{i} class='a' />\n" for i in range(n)) + "</div>);\n"
    ),
    "flat early returns": lambda n: (
        "function App() {\n"
        + "".join(f"  if (a{i}) return null;\n  const [s{i}] = useState({i});\n" for i in range(n))
        + "}\n"
    ),
    "nested elements": lambda n: "const A = () => " + "<div>" * n + "x" + "</div>" * n + ";\n",
    "nested unclosed": lambda n: "const A = () => " + "<div>" * n + "x;\n",
    "nested blocks": lambda n: "function App() {\n" + "if (x) {" * n + "useState(1);" + "}" * n + "}\n",
    "nested arrows": lambda n: "const A = " + "() => useX(" * n + "1" + ")" * n + ";\n",
    "nested maps": lambda n: "const A = () => " + "a.map(x => <li>{" * n + "1" + "}</li>)" * n + ";\n",
    "nested hook calls": lambda n: "x = " + "useA(" * n + ")" * n + ";",
}


def sized(make: Callable[[int], str], chars: int) -> str:
    """The smallest output of ``make`` with at least ``chars`` characters (bisection on n)."""
    hi = 1
    while len(make(hi)) < chars:
        hi *= 2
    lo = hi // 2
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (mid + 1, hi) if len(make(mid)) < chars else (lo, mid)
    return make(lo)


def best_time(code: str, params: RulesParams, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        result = rule_spans(code, "", {}, params)
        times.append(time.perf_counter() - t)
        assert isinstance(result, list), result
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=45_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    params = RulesParams(workers=0, max_chars=10 * args.size, parse_timeout_s=30.0)
    rule_spans("const A = () => <div/>;", "", {}, params)  # compile the queries once
    print(f"| input | {args.size // 1000} KB (s) | {2 * args.size // 1000} KB (s) | ratio | visits/node |")
    print("| --- | --- | --- | --- | --- |")
    for name, make in GENERATORS.items():
        small, large = sized(make, args.size), sized(make, 2 * args.size)
        t1, t2 = best_time(small, params, args.repeat), best_time(large, params, args.repeat)
        parsed = parse_view(CodeView(large, 0), params)
        assert not isinstance(parsed, Exception)
        facts = walk(parsed)
        per_node = (facts.visits + facts.skipped) / parsed.root.descendant_count
        print(f"| {name} | {t1:.3f} | {t2:.3f} | {t2 / t1:.2f} | {per_node:.2f} |")


if __name__ == "__main__":
    main()
