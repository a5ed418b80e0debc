"""``botgrpo sample``: what a run's model writes for the run's own prompts, as rows ``botgrpo score`` reads.

    botgrpo sample RUN.yaml --output answers.jsonl --split eval --limit 4 --samples 2
    botgrpo score RUN.yaml --input answers.jsonl --html heatmap.html

The model is the run file's ``model.name_or_path`` (a named model such as ``smollm2-135m-instruct``, a ``.gguf``
file, a model folder such as a finished full fine-tune's ``final_model/``; ``--set model.name_or_path=...``
points elsewhere; a LoRA adapter folder is not loaded yet), the prompts are its ``data`` rows (the held-out rows
with ``--split eval``), the sampling is ``training.temperature`` and ``training.max_new_tokens`` (``--greedy``:
the most likely token each step). Generation is Hugging Face ``generate`` in this process (``engine.use_vllm``
is for training's rollouts), seeded: the same command writes the same rows.

Each output row is the data row (its ``prompt`` and the fields the signals read) plus ``completion`` (text),
``truncated`` (the length cap cut it: no end-of-sequence token), ``sample`` (0..n-1) and ``model``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any


def run_sample(args: argparse.Namespace) -> int:
    """Sample ``args.samples`` completions per prompt and write them to ``args.output``; the exit status."""
    from botgrpo_core.config.errors import ConfigError
    from botgrpo_core.config.loading import load_config

    try:
        config = load_config(args.run_file, args.set or [])
    except ConfigError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    if args.samples < 1 or args.limit < 0:
        print("error: --samples must be >= 1 and --limit >= 0", file=sys.stderr)
        return 2
    if config.model.name_or_path == "tiny":
        print(
            "error: model.name_or_path: 'tiny' is an untrained model built at training time; sample a trained "
            "one (--set model.name_or_path=RUN_DIR/final_model) or a pretrained one (e.g. smollm2-135m-instruct)",
            file=sys.stderr,
        )
        return 2
    from botgrpo_core.engine.data import load_data
    from botgrpo_core.engine.model import prepare_model_dir
    from botgrpo_core.engine.setup import TrainingSetupError

    try:
        run_data = load_data(config)
        rows = run_data.eval if args.split == "eval" else run_data.train
        if not rows:
            raise TrainingSetupError(
                f"the run has no {args.split} rows"
                + (" (data.eval_size is 0; set it, or use --split train)" if args.split == "eval" else "")
            )
        rows = rows[: args.limit] if args.limit else rows
        source = prepare_model_dir(config, run_data, log=lambda m: print(m, file=sys.stderr))
    except TrainingSetupError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    written = sample_rows(
        config,
        source,
        rows,
        samples=args.samples,
        seed=args.seed,
        greedy=args.greedy,
        output=Path(args.output),
    )
    return 0 if written else 1


def sample_rows(
    config: Any,
    source: str,
    rows: list[dict[str, Any]],
    *,
    samples: int,
    seed: int | None,
    greedy: bool,
    output: Path,
) -> int:
    """Generate ``samples`` completions for each of ``rows`` with the model at ``source``; write them; the count."""
    import torch

    from botgrpo_core.engine.evaluation import generate
    from botgrpo_core.engine.model import load_model

    training = config.training
    torch.set_num_threads(training.num_threads)
    field = config.data.prompt_field
    prompts = [row[field] for row in rows for _ in range(samples)]
    name = config.model.name_or_path
    print(
        f"sampling {len(prompts)} completions ({len(rows)} prompts x {samples}) of {name}: HF generate, "
        f"{'greedy' if greedy else f'temperature {training.temperature:g}'}, <= {training.max_new_tokens} tokens",
        file=sys.stderr,
    )
    began = time.perf_counter()
    model, tokenizer = load_model(config, source)
    ids, texts = generate(
        model,
        tokenizer,
        prompts,
        max_new_tokens=training.max_new_tokens,
        greedy=greedy,
        seed=training.seed if seed is None else seed,
        temperature=training.temperature,
    )
    output.parent.mkdir(parents=True, exist_ok=True)
    cut = 0
    with output.open("w", encoding="utf-8") as f:
        for k, (row_ids, text) in enumerate(zip(ids, texts, strict=True)):
            truncated = tokenizer.eos_token_id not in row_ids
            cut += truncated
            row = {
                **rows[k // samples],
                "prompt": prompts[k],  # the field score reads, whatever data.prompt_field is
                "completion": text,
                "truncated": truncated,
                "sample": k % samples,
                "model": name,
            }
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(
        f"wrote {len(texts)} rows to {output} ({cut} cut by the length cap) in {time.perf_counter() - began:.0f} s",
        file=sys.stderr,
    )
    return len(texts)
