"""Measure jsx.renders / jsx.render_errors: corpus false failures, crash detection, span placement.

    python scripts/evaluate_renders.py [--parallel 2]

- corpus: every component of ``tests/data/components`` rendered with synthesised props (or the
  row props of ``tests/data/render_props.json``); a failure of a file that exports a component is a
  false failure (entry points and plain modules export none: listed apart);
- crashes: ``tests/data/render_cases.py`` (one compiling-but-crashing component per failure kind,
  rendered with ``props: {}``): detected = jsx.renders 0; placed = the first jsx.render_errors span
  lies on the line marked ``// CRASH``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from botgrpo_core.signals import Sample
from botgrpo_jsx.params import RendersParams
from botgrpo_jsx.plugin import make_render_errors, make_renders

HERE = Path(__file__).resolve().parent.parent / "tests" / "data"
sys.path.insert(0, str(HERE))
from render_cases import CASES, expected_line  # noqa: E402


def _fence(path: Path) -> str:
    return "tsx" if path.suffix == ".tsx" else "jsx"


def corpus_samples() -> tuple[list[Path], list[Sample]]:
    files = sorted((HERE / "components").iterdir())
    props = json.loads((HERE / "render_props.json").read_text())
    samples = []
    for f in files:
        row = {"props": props[f.name]} if f.name in props else {}
        samples.append(Sample("Write a React component.", f"```{_fence(f)}\n{f.read_text()}```\n", row=row))
    return files, samples


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parallel", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=5.0)
    args = ap.parse_args()
    params = RendersParams(parallel=args.parallel, timeout_s=args.timeout)
    renders, errors = make_renders(params), make_render_errors(params)
    files, samples = corpus_samples()
    t = time.perf_counter()
    verdicts = renders.score(samples)
    corpus_s = time.perf_counter() - t
    details = renders.renderer.render(samples)
    no_component = [
        f.name
        for f, d in zip(files, details, strict=True)
        if isinstance(d.get("reply"), dict) and _no_component(d["reply"])
    ]
    failed = [f.name for f, v in zip(files, verdicts, strict=True) if v != 1.0 and f.name not in no_component]
    n = len(files) - len(no_component)
    print(f"corpus: {len(files)} files, {n} export a component; false failures {len(failed)}/{n}: {failed}")
    print(f"  no component exported ({len(no_component)}): {no_component}; {corpus_s:.1f} s")
    crash = [
        Sample("Write a React component.", f"```jsx\n{code}```\n", row={"props": {}}) for _, code in CASES
    ]
    t = time.perf_counter()
    crash_verdicts, crash_spans = renders.score(crash), errors.score(crash)
    crash_s = time.perf_counter() - t
    print("\n| kind | detected | span on the crash line |\n| --- | --- | --- |")
    detected = placed = lined = 0
    for (kind, code), verdict, spans, sample in zip(CASES, crash_verdicts, crash_spans, crash, strict=True):
        line = expected_line(code)
        hit = verdict == 0.0
        detected += hit
        where = "-"
        if line is not None:
            lined += 1
            first = spans[0] if isinstance(spans, list) and spans else None
            on_line = first is not None and sample.completion.count("\n", 0, first.start) == line
            placed += on_line
            where = "yes" if on_line else "no"
        print(f"| {kind} | {'yes' if hit else 'no'} | {where} |")
    print(f"\ndetected {detected}/{len(CASES)}; span on the crash line {placed}/{lined}; {crash_s:.1f} s")


def _no_component(reply: dict) -> bool:
    error = reply.get("error") or {}
    message = str(error.get("message", ""))
    return reply.get("ok") is not True and (
        message == "the code exports no component" or "document is not defined" in message
    )


if __name__ == "__main__":
    main()
