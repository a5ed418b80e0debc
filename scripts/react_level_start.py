"""The React level's start on its own measures (issue 58 item 4): the behaviour checks, before any run.

    .venv/bin/python scripts/react_level_start.py     # writes benchmarks/results/react_level_start.json

No model is run: the 400 pages SmolLM2-135M-Instruct wrote for the 50 held-out React requests x 8 before any
training (scripts/react_requests_start.py, vLLM CPU engine, temperature 0.7, up to 1024 tokens;
benchmarks/results/react_requests_start.samples.jsonl) are cut to each ``--caps`` length in tokens (the page a run
with ``training.max_new_tokens: CAP`` gets from the same draw: sampling does not look ahead; the pages are
re-tokenised from their text, so a cut can differ from the generated ids by a token) and scored by the
``react-requests`` task's own held-out evaluation with its behaviour checks on (``eval_checks``: jsx.checks in the
sandbox, the request's checks), and by the level's outcome, ``bench.react_cascade``. Per cap: compile, render,
trivial and substantive rates, check_rate (mean share of a page's checks passed), checks_all_rate, the cascade's
mean and the share of requests (groups of 8) whose cascade values have no spread.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "benchmarks/results/react_requests_start.samples.jsonl"
RESULT = ROOT / "benchmarks/results/react_level_start.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--caps", default="384")
    parser.add_argument("--out", type=Path, default=RESULT)
    args = parser.parse_args()

    from botgrpo_bench.react_cascade import CascadeParams, CascadeScorer
    from botgrpo_bench.react_checks import react_checks
    from botgrpo_bench.react_requests import ReactRequestsParams, ReactRequestsTask
    from botgrpo_core.engine.named_models import load_named_model
    from botgrpo_core.signals import Sample, SampleError

    _, tokenizer = load_named_model("smollm2-135m-instruct")
    task = ReactRequestsTask(ReactRequestsParams(eval_checks=True))
    rows = {r["id"]: r for r in task.eval_rows(50)}
    pages = [json.loads(line) for line in SAMPLES.read_text(encoding="utf-8").splitlines() if line.strip()]
    load_before, start = os.getloadavg(), time.perf_counter()
    by_cap = {}
    for cap in (int(c) for c in args.caps.split(",") if c):
        texts = []
        for page in pages:
            ids = tokenizer(page["completion"], add_special_tokens=False)["input_ids"]
            texts.append(page["completion"] if len(ids) <= cap else tokenizer.decode(ids[:cap]))
        page_rows = [rows[p["id"]] for p in pages]
        rates = task.evaluate(page_rows, texts)
        checked = [{**r, "checks": r.get("checks") or react_checks(str(r["id"]))} for r in page_rows]
        cascade = CascadeScorer(CascadeParams())
        try:
            results = cascade.score(
                [Sample(prompt="", completion=t, row=r) for t, r in zip(texts, checked, strict=True)]
            )
        finally:
            cascade.close()
        values = [0.0 if isinstance(v, SampleError) else float(getattr(v, "value", v)) for v in results]
        groups = defaultdict(list)
        for page, value in zip(pages, values, strict=True):
            groups[page["id"]].append(value)
        by_cap[str(cap)] = {
            **rates,
            "cascade_mean": statistics.fmean(values),
            "groups_without_cascade_spread": sum(len(set(g)) == 1 for g in groups.values()) / len(groups),
            # the generated length as recorded (a page that reached a cap of its length was cut there)
            "cut_share": sum(p["tokens"] >= cap for p in pages) / len(pages),
        }
        print(f"cap {cap}: {by_cap[str(cap)]}", flush=True)
    task.close()
    result = {
        "model": "smollm2-135m-instruct",
        "pages": str(SAMPLES.relative_to(ROOT)),
        "requests": len({p["id"] for p in pages}),
        "pages_per_request": len(pages) // max(1, len({p["id"] for p in pages})),
        "by_cap": by_cap,
        "seconds": round(time.perf_counter() - start, 1),
        "load_before": load_before,
        "load_after": os.getloadavg(),
        "cpus": os.cpu_count(),
    }
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
