"""One process of the distributed test (run by torchrun): its half of the fixed batch -> a file."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")


def main(output_dir: str) -> None:
    torch.set_num_threads(1)
    from train_fixtures import DIST_COMPLETIONS, ArithPlugin, build_trainer, dist_config, dist_results

    from botgrpo_core.config.loading import parse_config
    from botgrpo_core.signals.manager import get_plugin_manager
    from botgrpo_core.tasks import get_task

    get_plugin_manager().register(ArithPlugin(), name="test_arith", distribution="botgrpo-tests")
    config = parse_config(dist_config(Path(output_dir)), source="<dist>")
    trainer, tokenizer, _ = build_trainer(config)
    rank, world = trainer.accelerator.process_index, trainer.accelerator.num_processes
    assert world == 2, f"expected 2 processes, got {world}"
    rows = get_task("arithmetic").train_rows(3, seed=7)
    per = len(DIST_COMPLETIONS) // world
    result = dist_results(trainer, tokenizer, rows, rank * per, (rank + 1) * per)
    torch.save(result, Path(output_dir) / f"rank{rank}.pt")
    trainer.accelerator.end_training()  # destroys the process group: gloo's threads can abort at exit


def train(output_dir: str) -> None:
    """A whole (short) run_training under the 2-process launch."""
    torch.set_num_threads(1)
    from train_fixtures import ArithPlugin, run_dict

    from botgrpo_core.config.loading import parse_config
    from botgrpo_core.engine.run import run_training
    from botgrpo_core.signals.manager import get_plugin_manager

    get_plugin_manager().register(ArithPlugin(), name="test_arith", distribution="botgrpo-tests")
    signals = [{"name": "test_arith.digits"}, {"name": "test_arith.steps", "uncovered": "group_mean"}]
    data = run_dict(
        Path(output_dir),
        rewards={"signals": signals},  # the fill gathers coverage moments in training too
        training={"steps": 2, "prompts_per_step": 2, "group_size": 4},
    )
    summary = run_training(parse_config(data, source="<dist>"), progress=False, log=lambda m: None)
    assert summary["steps"] == 2
    assert not torch.distributed.is_initialized()  # the run destroyed the process group it created
    # Everything the test reads is written; leave without the interpreter's teardown, where gloo's threads
    # can still abort the process ("terminate called without an active exception", exit -6, a CI flake).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    {"advantages": main, "train": train}[sys.argv[1]](sys.argv[2])
