"""Build what examples/verl/tiny-cpu.sh trains on, in a folder: a tiny Llama made in code (2 layers, width 128,
head size 64, the byte-level BPE tokenizer trained in code; ~0.5M parameters, saved with its tokenizer) and 16
arithmetic prompts in verl's parquet layout (chat ``prompt``, ``data_source``, ``reward_model.ground_truth``,
``extra_info``). Offline, seconds.

    python examples/verl/tiny_cpu_assets.py FOLDER
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from botgrpo_core.config.sections import TinyModelSpec
from botgrpo_core.engine.tiny import build_tiny_model, byte_level_bpe_tokenizer, save_pretrained

#: head size 64: one vLLM's CPU attention supports (the core's default tiny model has 16)
SPEC = TinyModelSpec(hidden_size=128, num_heads=2, num_layers=2, max_positions=256)


def build(folder: Path) -> Path:
    """Write ``folder/model``, ``folder/train.parquet`` and ``folder/val.parquet``; returns ``folder``."""
    tokenizer = byte_level_bpe_tokenizer()
    tokenizer.chat_template = "{% for m in messages %}{{ m['content'] }}\n{% endfor %}"  # verl applies one
    save_pretrained(build_tiny_model(tokenizer, SPEC, seed=0), tokenizer, folder / "model")
    rows = [
        {
            "data_source": "botgrpo/arithmetic",
            "prompt": [{"role": "user", "content": f"Q: {a}*3? Answer in \\boxed{{}}."}],
            "ability": "math",
            "reward_model": {"style": "rule", "ground_truth": str(3 * a)},
            "extra_info": {"index": i},
        }
        for i, a in enumerate(range(2, 18))
    ]
    pd.DataFrame(rows).to_parquet(folder / "train.parquet")
    pd.DataFrame(rows[:4]).to_parquet(folder / "val.parquet")
    return folder


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python examples/verl/tiny_cpu_assets.py FOLDER")
    print(build(Path(sys.argv[1])))
