"""One bench run in its own process: ``python -m botgrpo_bench.job RUN_DIR/bench_job.json``.

Trains the job's run file (``botgrpo train``'s :func:`~botgrpo_core.engine.run.run_training`), then
optionally measures Pass@k, and writes ``bench_result.json`` next to the job file, failed or not.
"""

from __future__ import annotations

import json
import sys
import time
import traceback
import warnings
from pathlib import Path
from typing import Any

from botgrpo_bench.execute import RESULT_FILE


def main(job_file: str) -> int:
    """Train, then Pass@k when the job asks; returns 0 when the run succeeded."""
    spec = json.loads(Path(job_file).read_text(encoding="utf-8"))
    run_dir = Path(job_file).parent
    t0 = time.perf_counter()
    result: dict[str, Any] = {"label": spec["label"], "fingerprint": spec["fingerprint"]}
    try:
        import torch

        torch.set_num_threads(int(spec.get("threads", 1)))
        from botgrpo_bench.machine import machine_facts

        result["machine"] = machine_facts()
        from botgrpo_core.engine.provenance import what_ran

        result["ran"] = what_ran()  # commit, versions, host (the run's summary.json has it too)
        result["resumed"] = bool(spec.get("resume"))
        from botgrpo_core.config.loading import parse_config
        from botgrpo_core.engine.run import run_training

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            config = parse_config(spec["run"], source=spec["label"])
        # the bench owns its run folders: a re-run replaces a torn one, or continues one stopped midway
        resume = bool(spec.get("resume"))
        if resume:
            print(f"resuming {spec['label']} from its last checkpoint", flush=True)
        summary = run_training(config, resume=resume, overwrite=not resume)
        result["train_s"] = time.perf_counter() - t0
        result["summary"] = json.loads(json.dumps(summary, default=str))
        if spec.get("pass_k"):
            from botgrpo_bench.evals import pass_at_k_eval

            result["pass_k"] = pass_at_k_eval(
                config, run_dir, k=int(spec["pass_k"]), prompts=int(spec.get("pass_k_prompts", 100))
            )
        result["status"] = "ok"
    except Exception as exc:  # the bench reports a failed run and goes on with the others
        result["status"] = "failed"
        result["error"] = f"{type(exc).__name__}: {exc}"
        result["traceback"] = traceback.format_exc()
        print(result["traceback"], file=sys.stderr)
    result["wall_s"] = time.perf_counter() - t0
    (run_dir / RESULT_FILE).write_text(json.dumps(result, indent=2, default=str) + "\n", encoding="utf-8")
    return 0 if result["status"] == "ok" else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
