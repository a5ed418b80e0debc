"""``botgrpo probe`` on every example and recipe of the repository, each with its own settings (issue 56).

    .venv/bin/python scripts/probe_examples.py              # all; writes benchmarks/probe/results/examples.json
    .venv/bin/python scripts/probe_examples.py quickstart   # the ones whose name contains a word

Honest rows per example (benchmarks/probe/, ``scripts/probe_honest_rows.py``): the arithmetic task's own
demonstrations for the quickstart, SmolLM2's answers to the easy word problems for the SmolLM2 example, the
sympy corpus's competition solutions and their one-line-wrong twins for the AIME recipes, SmolLM2's React pages for
the React recipe. Two things this machine cannot give a recipe, said in the table: its model's tokenizer
(``--tokenizer smollm2-135m-instruct`` stands in: only the length cap's position depends on it) and the LLM judge
its mixture names (``judge.*`` cannot reach its server here and scores 0 on every row: ``on_error: zero``, as in an
outage of the judge). Each sympy signal runs one checker process here (the recipes' 4-8 per GPU process would not
start on a 2-core machine; no value depends on it).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROBE = ROOT / "benchmarks" / "probe"
SMOLLM2 = "smollm2-135m-instruct"

#: name -> (run file, honest rows or None for the task's references, --rows, --tokenizer or None)
EXAMPLES: dict[str, tuple[str, str | None, int, str | None]] = {
    "quickstart": ("examples/quickstart.yaml", None, 64, None),
    "smollm2-math-cpu": ("examples/smollm2-math-cpu.yaml", "math-easy-smollm2.jsonl", 0, None),
    "math-qwen2.5-3b": ("examples/recipes/math-qwen2.5-3b.yaml", "competition-written.jsonl", 64, SMOLLM2),
    "math-qwen2.5-3b-8gpu": (
        "examples/recipes/math-qwen2.5-3b-8gpu.yaml",
        "competition-written.jsonl",
        64,
        SMOLLM2,
    ),
    "math-phi4-mini-reasoning": (
        "examples/recipes/math-phi4-mini-reasoning.yaml",
        "competition-written.jsonl",
        64,
        SMOLLM2,
    ),
    "math-smollm3-3b": ("examples/recipes/math-smollm3-3b.yaml", "competition-written.jsonl", 64, SMOLLM2),
    "react-qwen2.5-3b": (
        "examples/recipes/react-qwen2.5-3b.yaml",
        "react-requests-smollm2.jsonl",
        48,
        SMOLLM2,
    ),
    "verl-tiny-cpu": ("examples/verl/tiny-cpu-rewards.yaml", "competition-written.jsonl", 64, "tiny-bpe"),
    "verl-math": ("examples/verl/math-rewards.yaml", "competition-written.jsonl", 64, SMOLLM2),
}


def probe(name: str) -> dict:
    run_file, honest, rows, tokenizer = EXAMPLES[name]
    out = PROBE / "results" / f"example-{name}.json"
    cmd = [str(ROOT / ".venv" / "bin" / "botgrpo"), "probe", run_file, "--output", str(out)]
    cmd += ["--input", str(PROBE / honest)] if honest else []
    cmd += ["--rows", str(rows)] if rows else []
    cmd += ["--tokenizer", tokenizer] if tokenizer else []
    # one checker process per sympy signal: a recipe's 4-8 per GPU process would not start on this 2-core machine
    # (worker counts change no value)
    text = (ROOT / run_file).read_text()
    for signal in ("sympy.answer", "sympy.steps"):
        if f"name: {signal}" in text:
            cmd += ["--set", f"rewards.signals[{signal}].workers=1"]
    start = time.time()
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    record = json.loads(out.read_text()) if out.exists() and done.returncode in (0, 1) else {}
    return {
        "example": name,
        "run_file": run_file,
        "honest": honest or "the task's reference rows",
        "tokenizer": tokenizer or "the run's",
        "exit": done.returncode,
        "seconds": round(time.time() - start, 1),
        "failed": [
            v["variant"] for v in record.get("variants", []) if v["rows"] and v["share"] > record["threshold"]
        ],
        "table": done.stdout.strip().splitlines(),
        "error": done.stderr.strip().splitlines()[-3:] if done.returncode not in (0, 1) else [],
    }


def main() -> None:
    words = sys.argv[1:]
    names = [n for n in EXAMPLES if not words or any(w in n for w in words)]
    results = []
    for name in names:
        result = probe(name)
        results.append(result)
        verdict = {0: "passes", 1: "FAILS: " + ", ".join(result["failed"])}.get(result["exit"], "error")
        print(f"{name:<26} {verdict}  ({result['seconds']} s)", flush=True)
        for line in result["error"]:
            print("   ", line)
    if not words:
        path = PROBE / "results" / "examples.json"
        path.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
