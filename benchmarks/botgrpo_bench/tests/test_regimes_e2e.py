"""One real regime bench (benchmarks/bench_regimes.yaml) at a minimal size, so it cannot rot: two math
levels and the longest React level (view pages of six sections), the candidate/reference pair, the regime
records (regimes.jsonl), the speed-up plot, the React trivial-page plot and the regime section of the
summary.

Each run is a fresh process, so the size keeps it short: one training step, two held-out prompts.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from test_bench_e2e import TINY as QUICK_TINY  # the sibling test module (tests/ is on sys.path)

from botgrpo_bench.regimes import REQUIRED_KEYS, read_regimes_jsonl

ROOT = Path(__file__).resolve().parents[3]
BENCH = ROOT / "benchmarks" / "bench_regimes.yaml"
TASKS = ("math-short", "math-long", "react-long")
# the quick bench test's per-task minimal size (one home), without Pass@k (the regime bench measures none)
TINY = {k: v for k, v in QUICK_TINY.items() if "{t}" in k and "pass_k" not in k}


def test_regime_bench_runs_end_to_end(tmp_path: Path) -> None:
    sets = [
        f"cache_dir={tmp_path / 'cache'}",
        f"include=[{','.join(TASKS)}]",
        "seeds=[0]",
        "methods=[bot-grpo,grpo]",
        "signal_quality_samples=0",
    ]
    sets += [f"{key.format(t=t)}={value}" for t in TASKS for key, value in TINY.items()]
    out = tmp_path / "results"
    cmd = [sys.executable, "-m", "botgrpo_core.cli.main", "bench", str(BENCH), "--output", str(out)]
    for s in sets:
        cmd += ["--set", s]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=600, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]

    records = read_regimes_jsonl(out / "regimes.jsonl")
    assert {(r["task"], r["level"], r["method"]) for r in records} == {
        (t.split("-")[0], t.split("-")[1], m) for t in TASKS for m in ("bot-grpo", "grpo")
    }
    for r in records:
        assert set(REQUIRED_KEYS) <= set(r)
        assert r["steps"] == 1 and r["seed"] == 0
        assert [step for step, _ in r["curve"]] == [0, 1]
        assert all(0.0 <= value <= 1.0 for _, value in r["curve"])
    summary = (out / "summary.md").read_text()
    assert summary.index("Regime") < summary.index("## Task `math-short`")
    assert (out / "regimes_speedup.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the closing side-by-side table on the terminal, one block per level
    for t in TASKS:
        assert f"\n{t}: " in proc.stdout
    # the React level really is view pages of six sections, and the share of trivial pages is plotted
    job = json.loads((out / "runs" / "react-long" / "bot-grpo" / "seed0" / "bench_job.json").read_text())
    assert job["run"]["data"]["task_params"]["sections"] == [6, 6]
    assert job["run"]["data"]["task_params"]["grammar"] == "spec"
    assert (out / "trivial_react-long.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
