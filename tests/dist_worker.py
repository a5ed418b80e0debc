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

    from botgrpo_core.config import parse_config
    from botgrpo_core.plugins import get_plugin_manager
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


if __name__ == "__main__":
    main(sys.argv[1])
