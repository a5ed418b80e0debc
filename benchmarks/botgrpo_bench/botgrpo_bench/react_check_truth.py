"""The truth of the React checks (issue 58 item 3): correct pages pass, their twins fail, trivial pages score 0.

``data/react_check_truth.yaml`` holds, for some requests of the prompt set, a correct component written for
this project (``code``) and its wrong-but-compiling twin, made from it by exact replacements (``twin.replace``:
each ``[old, new]`` must occur once) and named by its family (``twin.family``: a missing button, a handler
that changes nothing, a list without its items, ...), and for some requests other correct pages (``also``)
written in another style after the checks were fixed, which count as correct pages too. The trivial pages (:func:`trivial_pages`) are the same
for every request: nothing, one element, the round-4 shortcut (one heading with the component's name, ~20
tokens), a heading in a div and twenty ``<p>0</p>`` in a div.

Run: ``python -m botgrpo_bench.react_check_truth [--ids react-001,react-002] [--no-trivial] [--json OUT]``;
it prints the three figures (goal 100% / 100% / 0), every miss with the failed checks' reasons, and the
per-page time of the checks. ``--demo OUT.jsonl`` writes instead the rows for ``botgrpo score``: a real
SmolLM2-135M-Instruct page (``plugins/botgrpo-jsx/data/smollm2_react_pages.jsonl``, react-10 sample 2: a
TemperatureConverter that compiles and renders an input but converts nothing) and the correct page of the
same request (react-007), with react-007's checks.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

_FILE = "react_check_truth.yaml"


@dataclass(frozen=True)
class TruthCase:
    """One request's correct page and its twin (the twin's family and the code with its replacements)."""

    id: str
    code: str
    twin_family: str
    twin_code: str
    #: other correct pages of the request, written in another style after the checks (a class component,
    #: other labels, a form without <form>): a check that rejects them is too narrow
    alternatives: tuple[str, ...] = ()


def fenced(code: str) -> str:
    """A completion holding ``code`` as the model is asked to give it."""
    return f"```jsx\n{code.strip()}\n```"


@cache
def truth_cases() -> tuple[TruthCase, ...]:
    """The cases of ``data/react_check_truth.yaml``, each twin made and checked to differ from its page."""
    import yaml

    text = resources.files("botgrpo_bench").joinpath("data", _FILE).read_text(encoding="utf-8")
    out = []
    for row_id, case in yaml.safe_load(text).items():
        code, twin = case["code"], case["twin"]
        twin_code = code
        for old, new in twin["replace"]:
            if twin_code.count(old) != 1:
                raise ValueError(
                    f"{_FILE} {row_id}: twin replacement {old!r} occurs {twin_code.count(old)} times"
                )
            twin_code = twin_code.replace(old, new)
        out.append(TruthCase(row_id, code, str(twin["family"]), twin_code, tuple(case.get("also", ()))))
    return tuple(out)


_NAME = re.compile(r"\b(?:called|named|component)\s+([A-Z][A-Za-z0-9]+)")


def component_name(request: str) -> str:
    """The component a request names ("... called Counter ..."), else ``App``."""
    match = _NAME.search(request)
    return match.group(1) if match else "App"


def trivial_pages(name: str) -> dict[str, str]:
    """The trivial pages for a component called ``name``: kind -> completion.

    ``null``, ``one_element`` and ``shortcut`` (round 4's collapsed pages: about 20 tokens, one element) are
    trivial by the task's count (:func:`botgrpo_bench.react_requests.is_trivial`); ``heading`` (a heading in a
    div) and ``padding`` (twenty ``<p>0</p>``, issue 56) have two elements or more and no logic.
    """
    padding = "".join("<p>0</p>" for _ in range(20))
    return {
        "null": fenced(f"export default function {name}() {{\n  return null;\n}}"),
        "one_element": fenced(f"export default function {name}() {{\n  return <div>{name}</div>;\n}}"),
        "shortcut": fenced(f"const {name} = () => <h1>{name}</h1>;\nexport default {name};"),
        "heading": fenced(f"const {name} = () => <div><h1>{name}</h1></div>;\nexport default {name};"),
        "padding": fenced(f"export default function {name}() {{\n  return <div>{padding}</div>;\n}}"),
    }


def _score(pages: Sequence[tuple[str, str, str, str]], parallel: int) -> list[dict[str, Any]]:
    """Score ``(id, kind, family, completion)`` pages against their request's suite."""
    from botgrpo_bench.react_checks import react_checks
    from botgrpo_core.signals import Sample, SampleError
    from botgrpo_jsx.checks import ChecksScorer
    from botgrpo_jsx.params import ChecksParams

    scorer = ChecksScorer(ChecksParams(workers=0, parallel=parallel, batch_timeout_s=3600.0))
    try:
        samples = [Sample(prompt="", completion=c, row={"checks": react_checks(i)}) for i, _, _, c in pages]
        t0 = time.monotonic()
        values = scorer.score(samples)
        wall = time.monotonic() - t0
    finally:
        scorer.close()
    out = []
    for (row_id, kind, family, _), v in zip(pages, values, strict=True):
        if isinstance(v, SampleError):
            out.append({"id": row_id, "kind": kind, "family": family, "value": None, "error": str(v)})
            continue
        meta = dict(v.meta or {})
        out.append({"id": row_id, "kind": kind, "family": family, "value": v.value, **meta})
    for r in out:
        r["batch_wall_s_per_page"] = wall / max(len(pages), 1)
    return out


def evaluate(
    ids: Sequence[str] | None = None,
    trivial: bool = True,
    parallel: int = 2,
    trivial_ids: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Score the truth cases of ``ids`` (default: all) and the trivial pages on the requests ``trivial_ids``
    (default: ``ids``, or every request); the figures and every page's result."""
    from botgrpo_bench.react_prompts import load_react_prompts

    requests = {r["id"]: r for r in load_react_prompts()}
    chosen = [c for c in truth_cases() if ids is None or c.id in ids]
    pages = []
    for case in chosen:
        pages.append((case.id, "correct", "", fenced(case.code)))
        pages.append((case.id, "twin", case.twin_family, fenced(case.twin_code)))
        for n, code in enumerate(case.alternatives):
            pages.append((case.id, "correct", f"also-{n + 1}", fenced(code)))
    if trivial:
        for row_id in sorted(trivial_ids or (requests if ids is None else ids)):
            for kind, page in trivial_pages(component_name(requests[row_id]["request"])).items():
                pages.append((row_id, "trivial", kind, page))
    results = _score(pages, parallel)
    correct = [r for r in results if r["kind"] == "correct" and not r["family"]]
    others = [r for r in results if r["kind"] == "correct" and r["family"]]
    twins = [r for r in results if r["kind"] == "twin"]
    trivials = [r for r in results if r["kind"] == "trivial"]
    heldout = {r["id"] for r in load_react_prompts("heldout")}
    ms = [r["checks_ms"] for r in results if isinstance(r.get("checks_ms"), int) and r["kind"] != "trivial"]
    return {
        "requests": len(chosen),
        "heldout_requests": sum(c.id in heldout for c in chosen),
        "correct_pass": sum(r["value"] == 1.0 for r in correct),
        "correct": len(correct),
        "alternatives_pass": sum(r["value"] == 1.0 for r in others),
        "alternatives": len(others),
        "twins_fail": sum(r["value"] is not None and r["value"] < 1.0 for r in twins),
        "twins": len(twins),
        "trivial_zero": sum(r["value"] == 0.0 for r in trivials),
        "trivial": len(trivials),
        "checks_ms_median": statistics.median(ms) if ms else None,
        "checks_ms_max": max(ms) if ms else None,
        "wall_s_per_page": results[0]["batch_wall_s_per_page"] if results else None,
        "results": results,
    }


#: the committed SmolLM2 page of the demo: (id, sample) in plugins/botgrpo-jsx/data/smollm2_react_pages.jsonl
DEMO_PAGE = ("react-10", 2)
DEMO_REQUEST = "react-007"


def demo_rows(pages_file: str) -> list[dict[str, Any]]:
    """The rows of ``--demo``: the SmolLM2 page and the correct page, one prompt, react-007's checks."""
    from botgrpo_bench.react_checks import react_checks
    from botgrpo_bench.react_prompts import load_react_prompts, user_message

    with open(pages_file, encoding="utf-8") as f:
        pages = [json.loads(line) for line in f if line.strip()]
    page = next(p for p in pages if (p["id"], p["sample"]) == DEMO_PAGE)
    request = next(r for r in load_react_prompts() if r["id"] == DEMO_REQUEST)
    case = next(c for c in truth_cases() if c.id == DEMO_REQUEST)
    prompt = [{"role": "user", "content": user_message(request)}]
    return [
        {
            "prompt": prompt,
            "completion": page["completion"],
            "checks": react_checks(DEMO_REQUEST),
            "source": "smollm2",
        },
        {
            "prompt": prompt,
            "completion": fenced(case.code),
            "checks": react_checks(DEMO_REQUEST),
            "source": "correct",
        },
    ]


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ids", default=None, help="comma-separated request ids (default: every truth case)")
    p.add_argument("--no-trivial", action="store_true", help="skip the trivial pages")
    p.add_argument("--parallel", type=int, default=2, help="sandboxed pages at once")
    p.add_argument("--json", default=None, help="write every page's result here")
    p.add_argument(
        "--demo", default=None, metavar="OUT.jsonl", help="write the botgrpo score demo rows and stop"
    )
    p.add_argument(
        "--pages",
        default="plugins/botgrpo-jsx/data/smollm2_react_pages.jsonl",
        help="the committed SmolLM2 pages (for --demo)",
    )
    args = p.parse_args(argv)
    if args.demo:
        with open(args.demo, "w", encoding="utf-8") as f:
            for row in demo_rows(args.pages):
                f.write(json.dumps(row) + "\n")
        return 0
    ids = args.ids.split(",") if args.ids else None
    report = evaluate(ids, trivial=not args.no_trivial, parallel=args.parallel)
    for r in report["results"]:
        wrong = (
            (r["kind"] == "correct" and r["value"] != 1.0)
            or (r["kind"] == "twin" and (r["value"] is None or r["value"] >= 1.0))
            or (r["kind"] == "trivial" and r["value"] != 0.0)
        )
        if wrong:
            print(
                f"MISS {r['id']} {r['kind']} {r['family']}: {r['value']} {r.get('passed')} {r.get('status')}"
            )
            print(f"     {r.get('failed') or r.get('error') or ''}"[:600])
    print(
        f"requests {report['requests']} ({report['heldout_requests']} held out): correct pages passing all "
        f"checks {report['correct_pass']}/{report['correct']}, twins failing one or more "
        f"{report['twins_fail']}/{report['twins']}, trivial pages at 0 {report['trivial_zero']}/{report['trivial']}; "
        f"other correct pages (another style) passing {report['alternatives_pass']}/{report['alternatives']}"
    )
    print(
        f"checks per page (correct and twins): median {report['checks_ms_median']} ms, max "
        f"{report['checks_ms_max']} ms in the sandbox; {report['wall_s_per_page']:.3f} s wall per page "
        f"(process start, compile, render, checks; {args.parallel} at once)"
    )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1)
    ok = (
        report["correct_pass"] == report["correct"]
        and report["twins_fail"] == report["twins"]
        and report["trivial_zero"] == report["trivial"]
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
