"""``botgrpo sample``: what a run's model writes for the run's own prompts, as rows ``botgrpo score`` reads.

    botgrpo sample RUN.yaml --output answers.jsonl --split eval --limit 4 --samples 2
    botgrpo score RUN.yaml --input answers.jsonl --html heatmap.html

The model is the run file's ``model.name_or_path`` (a named model such as ``smollm2-135m-instruct``, a ``.gguf``
file, a model folder such as a finished full fine-tune's ``final_model/``; ``--set model.name_or_path=...``
points elsewhere; a LoRA run's ``final_model/``, an adapter, is merged into its base), the prompts are its ``data``
rows (the held-out rows with ``--split eval``) as training sees them (``data.chat`` and ``data.system_prompt``
applied), the sampling is ``training.temperature`` and ``training.max_new_tokens`` (``--greedy``: the most likely
token each step). Generation is Hugging Face ``generate`` in this process on ``engine.device`` (``engine.use_vllm``
is for training's rollouts), seeded: the same command writes the same rows.

Everything that can be checked is checked before the model is loaded: the output (not an input of the run, a
file in a writable folder), the rows (a prompt a tokenizer encodes), ``--seed``; then, with the tokenizer, each
prompt's length against the model's context and ``training.max_prompt_tokens``. Rows are generated in chunks
with a progress line each and written to a temporary file renamed over the output at the end: an interrupted or
failed command (Ctrl-C, a full disk) leaves an earlier output as it was.

Each output row is the data row (its ``prompt`` and the fields the signals read) plus ``completion`` (text),
``truncated`` (the length cap cut it: no end-of-sequence token), ``sample`` (0..n-1) and ``model``. Its ``prompt``
is the prompt as training feeds it (chat messages when ``data.chat``), so ``score`` renders it alike.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

#: completions generated (and written) at a time: one progress line each
CHUNK = 200


def run_sample(args: argparse.Namespace) -> int:
    """Sample ``args.samples`` completions per prompt and write them to ``args.output``; the exit status."""
    from botgrpo_core.cli.sample_output import output_problem
    from botgrpo_core.config.errors import ConfigError
    from botgrpo_core.config.loading import load_config
    from botgrpo_core.config.sections import MAX_SEED

    try:
        config = load_config(args.run_file, args.set or [])
    except ConfigError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    if args.samples < 1 or args.limit < 0:
        print("error: --samples must be >= 1 and --limit >= 0", file=sys.stderr)
        return 2
    if args.seed is not None and not 0 <= args.seed <= MAX_SEED:
        print(f"error: --seed must be in [0, {MAX_SEED}] (got {args.seed})", file=sys.stderr)
        return 2
    if config.model.name_or_path == "tiny":
        print(
            "error: model.name_or_path: 'tiny' is an untrained model built at training time; sample a trained "
            "one (--set model.name_or_path=RUN_DIR/final_model) or a pretrained one (e.g. smollm2-135m-instruct)",
            file=sys.stderr,
        )
        return 2
    inputs = [("the run file", Path(args.run_file)), ("data.path", config.data.path)]
    inputs += [("data.eval_path", config.data.eval_path)]
    inputs += [
        (f"rewards.signals[{i}].path", _signal_file(s.path)) for i, s in enumerate(config.rewards.signals)
    ]
    inputs += [(key, Path(value)) for key, value in _model_paths(config) if Path(value).expanduser().exists()]
    problem = output_problem(Path(args.output), inputs)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    from botgrpo_core.engine.data import check_prompts, load_data
    from botgrpo_core.engine.model import adapter_source, prepare_model_dir
    from botgrpo_core.engine.setup import TrainingSetupError

    log = lambda m: print(m, file=sys.stderr)  # noqa: E731
    try:
        run_data = load_data(config)
        rows = run_data.eval if args.split == "eval" else run_data.train
        if not rows:
            why = run_data.eval_note or "data.eval_size is 0; set it"
            raise TrainingSetupError(
                f"the run has no {args.split} rows"
                + (f" ({why}; or use --split train)" if args.split == "eval" else "")
            )
        rows = rows[: args.limit] if args.limit else rows
        where = f"{'held-out ' if args.split == 'eval' else ''}data ({run_data.source})"
        check_prompts(rows, config.data.prompt_field, where)
        adapter = adapter_source(config.model.name_or_path, log)
        source = adapter.base if adapter else prepare_model_dir(config, run_data, log=log)
        device = _device(config)
    except TrainingSetupError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        written = sample_rows(
            config,
            source,
            rows,
            samples=args.samples,
            seed=args.seed,
            greedy=args.greedy,
            output=Path(args.output),
            adapter=adapter,
            device=device,
            where=where,
        )
    except TrainingSetupError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(
            f"interrupted: nothing written to {args.output} (an earlier file there is unchanged)",
            file=sys.stderr,
        )
        return 130
    except OSError as exc:
        print(
            f"error: writing {args.output} failed ({exc.strerror or exc}); nothing written there (an earlier file "
            "is unchanged); free space or write elsewhere",
            file=sys.stderr,
        )
        return 1
    return 0 if written else 1


def _model_paths(config: Any) -> list[tuple[str, str]]:
    """The model's and the tokenizer's names (local paths among them: a folder, a ``.gguf`` file), as ``(key, path)``."""
    model = config.model
    pairs = (("model.name_or_path", model.name_or_path), ("model.tokenizer", model.tokenizer))
    return [(key, value) for key, value in pairs if value]


def _signal_file(path: str | None) -> Path | None:
    """The file of a signal given as ``path/to/file.py:function``."""
    return Path(path.rpartition(":")[0] or path) if path else None


def _device(config: Any) -> str:
    """The torch device ``engine.device`` names (auto: CUDA when there is one)."""
    import torch

    from botgrpo_core.engine.setup import TrainingSetupError

    wanted = config.engine.device
    if wanted == "cuda" and not torch.cuda.is_available():
        raise TrainingSetupError("engine.device is 'cuda' but no CUDA device is visible; use 'auto' or 'cpu'")
    return "cuda" if wanted == "cuda" or (wanted == "auto" and torch.cuda.is_available()) else "cpu"


def check_lengths(config: Any, model: Any, tokenizer: Any, prompts: list[Any], where: str) -> None:
    """Each prompt plus ``training.max_new_tokens`` fits the model's context, and no prompt is longer than
    ``training.max_prompt_tokens``; the error names the row and the fix."""
    from botgrpo_core.engine.data import prompt_lengths
    from botgrpo_core.engine.setup import TrainingSetupError

    context = getattr(model.config, "max_position_embeddings", None)
    limit = config.training.max_prompt_tokens
    max_new = config.training.max_new_tokens
    for i, n in enumerate(prompt_lengths(tokenizer, prompts)):
        if limit is not None and n > limit:
            raise TrainingSetupError(
                f"training.max_prompt_tokens is {limit}, but {where} row {i}'s prompt is {n} tokens; raise the "
                "limit, or shorten or drop the row"
            )
        if isinstance(context, int) and n + max_new > context:
            raise TrainingSetupError(
                f"{where} row {i}: its prompt is {n} tokens, and with training.max_new_tokens {max_new} that "
                f"passes the model's context of {context} positions; shorten or drop the row, or lower "
                "training.max_new_tokens (--set training.max_new_tokens=N)"
            )


def sample_rows(
    config: Any,
    source: str,
    rows: list[dict[str, Any]],
    *,
    samples: int,
    seed: int | None,
    greedy: bool,
    output: Path,
    adapter: Any = None,
    device: str = "cpu",
    where: str = "data",
) -> int:
    """Generate ``samples`` completions for each of ``rows`` with the model at ``source`` (with ``adapter``
    merged in, when given) on ``device``; write them to ``output`` (whole, by rename); the count."""
    import torch

    from botgrpo_core.cli.sample_output import AtomicOutput
    from botgrpo_core.engine.data import to_trainer_rows
    from botgrpo_core.engine.evaluation import generate
    from botgrpo_core.engine.model import load_model

    training = config.training
    if device == "cpu":
        torch.set_num_threads(training.num_threads)
    prompts = [row["prompt"] for row in to_trainer_rows(rows, config)]  # data.chat and system_prompt applied
    total = len(rows) * samples
    name = config.model.name_or_path
    print(
        f"sampling {total} completions ({len(rows)} prompts x {samples}) of {name} on {device}: HF generate, "
        f"{'greedy' if greedy else f'temperature {training.temperature:g}'}, <= {training.max_new_tokens} tokens",
        file=sys.stderr,
    )
    began = time.perf_counter()
    model, tokenizer = load_model(config, source, adapter)
    check_lengths(config, model, tokenizer, prompts, where)
    model.to(device)
    base_seed = training.seed if seed is None else seed
    cut = 0
    with AtomicOutput(output) as f:
        for chunk, start in enumerate(range(0, total, CHUNK)):
            ks = range(start, min(start + CHUNK, total))
            ids, texts = generate(
                model,
                tokenizer,
                [prompts[k // samples] for k in ks],
                max_new_tokens=training.max_new_tokens,
                greedy=greedy,
                seed=base_seed + chunk,  # chunk 0 is seeded as one call of all rows was
                temperature=training.temperature,
                batch_size=CHUNK,
            )
            for k, row_ids, text in zip(ks, ids, texts, strict=True):
                truncated = tokenizer.eos_token_id not in row_ids
                cut += truncated
                row = {
                    **rows[k // samples],
                    "prompt": prompts[k // samples],  # the field score reads, as training feeds it
                    "completion": text,
                    "truncated": truncated,
                    "sample": k % samples,
                    "model": name,
                }
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
            if total > CHUNK:
                print(f"sampled {ks.stop}/{total} ({time.perf_counter() - began:.0f} s)", file=sys.stderr)
    print(
        f"wrote {total} rows to {output} ({cut} cut by the length cap) in {time.perf_counter() - began:.0f} s",
        file=sys.stderr,
    )
    return total
