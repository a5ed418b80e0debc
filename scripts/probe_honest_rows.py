"""Honest rows for ``botgrpo probe`` from SmolLM2-135M-Instruct's own committed answers (no model is run).

    python scripts/probe_honest_rows.py      # writes benchmarks/probe/*.jsonl (one file per set below)

- ``math-easy-smollm2.jsonl``: the 256 answers of ``benchmarks/results/math_start_easy_one_shot.samples.jsonl``
  (64 held-out easy word problems x 4, one-shot prompt, temperature 0.7, <= 256 tokens; right and wrong, 14 cut by
  the cap), each with the task's prompt and ``answer`` field, ``truncated`` where the cap cut it.
- ``react-requests-smollm2.jsonl``: the 400 pages of ``benchmarks/results/react_requests_start.samples.jsonl``
  (50 held-out requests x 8, temperature 0.7, <= 1024 tokens), with the task's prompt and row fields.
- ``multi23-smollm2.jsonl``: the 256 answers of ``benchmarks/results/multistep_samples/multi23-heldout128x2.jsonl``
  (issue 57's multi-step level: 128 held-out problems of the ``multi23`` set x 2, its one-shot prompt with a worked
  example of three operations, temperature 0.7, <= 256 tokens), with the task's prompt and ``answer`` field.
- ``multi45-smollm2.jsonl``: the same for issue 57's second level, ``multi45`` (four or five operations, each
  row's one-shot prompt with a worked example of its own family and operation count).
- ``competition-written.jsonl``: no model wrote these: the sympy plugin's competition-style solutions (its corpus,
  dev split, written here), each clean one and its step twins (one line wrong), for the AIME recipes.

These are what a policy honestly writes at the start of a run, failures included: the probe asks whether a gamed
variant of each would be paid more.
"""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
OUT = ROOT / "benchmarks" / "probe"


def math_rows() -> list[dict]:
    from botgrpo_bench.word_problems import WordProblemsParams, WordProblemsTask

    task = WordProblemsTask(WordProblemsParams(problem_set="easy", prompt="one_shot"))
    rows = {r["id"]: r for r in task.eval_rows(64)}
    out = []
    for line in (RESULTS / "math_start_easy_one_shot.samples.jsonl").read_text().splitlines():
        s = json.loads(line)
        row = rows[s["id"]]
        out.append(
            {**row, "completion": s["completion"], "truncated": not s["finished"], "sample": s["sample"]}
        )
    return out


def multistep_rows(problem_set: str) -> list[dict]:
    """A multi-step set's held-out start answers (``<set>-heldout128x2.jsonl``) with the task's rows."""
    from botgrpo_bench.word_problems import WordProblemsParams, WordProblemsTask

    task = WordProblemsTask(WordProblemsParams(problem_set=problem_set, prompt="one_shot"))
    rows = {r["id"]: r for r in task.eval_rows(128)}
    samples = RESULTS / "multistep_samples" / f"{problem_set}-heldout128x2.jsonl"
    out = []
    for line in samples.read_text().splitlines():
        s = json.loads(line)
        row = rows[s["id"]]
        out.append(
            {**row, "completion": s["completion"], "truncated": not s["finished"], "sample": s["sample"]}
        )
    return out


def react_rows() -> list[dict]:
    from botgrpo_bench.react_requests import ReactRequestsTask

    task = ReactRequestsTask()
    rows = {r["id"]: r for r in task.eval_rows(50)}
    start = json.loads((RESULTS / "react_requests_start.json").read_text())
    cap = int(start.get("max_tokens", 1024))
    out = []
    for line in (RESULTS / "react_requests_start.samples.jsonl").read_text().splitlines():
        s = json.loads(line)
        row = rows[s["id"]]
        out.append(
            {**row, "completion": s["completion"], "truncated": s["tokens"] >= cap, "sample": s["sample"]}
        )
    return out


def competition_rows() -> list[dict]:
    """Competition-style solutions written for the sympy plugin's corpus (dev split): each clean solution and its
    step twins (one line made wrong, the rest as written: an honest wrong attempt), the reference from the clean
    solution's last box."""
    from botgrpo_core.signals.answers import last_boxed

    corpus = ROOT / "plugins" / "botgrpo-sympy" / "tests" / "data" / "prose_corpus.jsonl"
    rows = [json.loads(line) for line in corpus.read_text().splitlines()]
    rows = [r for r in rows if r["style"] == "competition" and r["split"] == "dev"]
    answers = {}
    for r in rows:
        if r["kind"] == "clean":
            text = r["lines"][-1]["text"]
            box = last_boxed(text)
            if box is not None:
                answers[r["id"]] = text[box.start : box.end]
    out = []
    for r in rows:
        ref = answers.get(r["id"] if r["kind"] == "clean" else r["twin_of"])
        if ref is None or r["kind"] not in ("clean", "step_twin"):
            continue
        completion = "\n".join(line["text"] for line in r["lines"])
        row = {"prompt": r["prompt"], "completion": completion, "answer": ref, "ground_truth": ref}
        out.append({**row, "id": r["id"], "kind": r["kind"]})  # ground_truth: verl's name for the reference
    return out


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    sets = (
        ("math-easy-smollm2", math_rows()),
        ("multi23-smollm2", multistep_rows("multi23")),
        ("multi45-smollm2", multistep_rows("multi45")),
        ("react-requests-smollm2", react_rows()),
        ("competition-written", competition_rows()),
    )
    for name, rows in sets:
        path = OUT / f"{name}.jsonl"
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        print(f"wrote {path} ({len(rows)} rows)")


if __name__ == "__main__":
    main()
