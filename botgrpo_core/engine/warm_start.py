"""The benchmark's warm start: a short supervised phase on a task's flawed demonstrations, cached.

Every run of a benchmark grid starts from the same checkpoint, so the methods are compared from one
policy. The checkpoint is a tiny model built in code (:mod:`botgrpo_core.engine.tiny`) with a character
tokenizer over the task's alphabet, trained with teacher forcing on ``prompt + demonstration + EOS``
(loss on the completion only). The demonstrations carry the task's injected errors, so the warm
policy makes them too and RL has something to fix.

The folder is keyed by a hash of everything that shapes it (task, its params, model spec, training
settings, this module's format version), written to a temporary folder and renamed when complete:
an interrupted warm start never leaves a half checkpoint that a later run would trust.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from botgrpo_core.config.sections import TinyModelSpec

#: bump when the checkpoint format or the training recipe changes (invalidates cached folders)
FORMAT_VERSION = 1
META_FILE = "warm_start.json"


class WarmStartSpec(BaseModel):
    """Supervised warm start of one benchmark task (``tasks.<name>.warm_start`` in a bench file)."""

    model_config = ConfigDict(extra="forbid")

    steps: int = Field(1500, ge=1, description="optimizer steps of the supervised phase")
    batch_size: int = Field(32, ge=1, description="demonstrations per step")
    learning_rate: float = Field(
        3e-3, gt=0, description="AdamW peak learning rate (linear warm-up, cosine decay)"
    )
    demonstrations: int = Field(4000, ge=1, description="distinct training demonstrations generated")
    seed: int = Field(0, description="seed of the model init, the demonstrations and the batches")
    eval_size: int = Field(200, ge=0, description="held-out prompts on which the warm policy is scored")
    max_new_tokens: int | None = Field(
        None, gt=0, description="completion cap when scoring the warm policy (default: the task's run file)"
    )


def task_alphabet(task: Any) -> str:
    """The task's tokenizer alphabet: ``task.chars``, else the arithmetic alphabet."""
    from botgrpo_core.engine.tiny import ARITHMETIC_CHARS

    return str(getattr(task, "chars", ARITHMETIC_CHARS))


def cache_key(task_name: str, task_params: dict[str, Any], tiny: TinyModelSpec, spec: WarmStartSpec) -> str:
    """A short hash of everything that shapes the checkpoint (task params with their defaults filled in)."""
    from botgrpo_core.tasks import task_entry

    params = task_entry(task_name)[1](**task_params).model_dump(mode="json")
    blob = json.dumps(
        {
            "format": FORMAT_VERSION,
            "task": task_name,
            "task_params": params,
            "tiny": tiny.model_dump(),
            "warm_start": spec.model_dump(exclude={"eval_size", "max_new_tokens"}),
        },
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def ensure_warm_start(
    task_name: str,
    task_params: dict[str, Any],
    tiny: TinyModelSpec,
    spec: WarmStartSpec,
    cache_dir: Path,
    *,
    max_new_tokens: int = 40,
    log: Any = print,
) -> Path:
    """The cached checkpoint folder for this warm start, training it first when it is missing.

    :returns: a folder that ``from_pretrained`` loads (model + tokenizer) holding :data:`META_FILE`
        (settings, loss curve, the warm policy's sampled success on held-out prompts, wall time).
    """
    path = warm_start_dir(task_name, task_params, tiny, spec, cache_dir)
    if (path / META_FILE).is_file():
        problem = cache_problem(path, task_name)
        if problem is None:
            log(f"warm start [{task_name}]: cached at {path}")
            return path
        log(f"warm start [{task_name}]: cached {path} is unusable ({problem}); training it again")
        shutil.rmtree(path, ignore_errors=True)
    tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    log(f"warm start [{task_name}]: training {spec.steps} supervised steps -> {path}")
    meta = train_warm_start(task_name, task_params, tiny, spec, tmp, max_new_tokens=max_new_tokens, log=log)
    (tmp / META_FILE).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    if path.exists():  # another bench process finished the same warm start first: keep theirs
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        tmp.rename(path)
    held_out = ", ".join(f"{k} {v:.3f}" for k, v in meta["eval"].items()) or "no held-out check (eval_size 0)"
    log(f"warm start [{task_name}]: trained in {meta['wall_s']:.0f} s; {held_out}")
    return path


def warm_start_dir(
    task_name: str, task_params: dict[str, Any], tiny: TinyModelSpec, spec: WarmStartSpec, cache_dir: Path
) -> Path:
    """The cache folder of a warm start (its name is a hash of every setting that changes it)."""
    return Path(cache_dir) / f"warm-{task_name}-{cache_key(task_name, task_params, tiny, spec)}"


def cached_warm_start(path: Path, task_name: str) -> bool:
    """Whether ``path`` holds a finished warm start that loads as a run will load it."""
    return (path / META_FILE).is_file() and cache_problem(path, task_name) is None


def cache_problem(path: Path, task_name: str) -> str | None:
    """Why a cached checkpoint cannot be used as it loads in a run, or None when it can.

    A bench run names the folder as its ``model.name_or_path``, so it loads with ``AutoTokenizer``; a
    folder written by an older version (e.g. a Qwen2 one, which transformers 5 pairs with a BPE
    tokenizer that drops spaces) would silently change the tokenization, so the alphabet must
    round-trip exactly through the tokenizer as loaded.
    """
    from transformers import AutoTokenizer

    from botgrpo_core.engine.tiny import char_tokenizer
    from botgrpo_core.tasks import get_task

    try:
        loaded = AutoTokenizer.from_pretrained(path)
    except (OSError, ValueError) as exc:
        return f"its tokenizer does not load: {exc}"
    chars = task_alphabet(get_task(task_name))
    reference = char_tokenizer(chars)(chars, add_special_tokens=False)["input_ids"]
    if loaded(chars, add_special_tokens=False)["input_ids"] != reference:
        return f"{type(loaded).__name__} does not tokenize the task alphabet one token per character"
    if loaded.decode(reference) != chars:
        return "its tokenizer does not decode the alphabet back to itself"
    return None


def _encode(tokenizer: Any, prompts: Sequence[str], completions: Sequence[str]) -> tuple[Any, Any, Any]:
    """Right-padded ``(input_ids, attention_mask, labels)``; labels are -100 on the prompt and padding."""
    import torch

    p_ids = tokenizer(list(prompts), add_special_tokens=False)["input_ids"]
    c_ids = tokenizer(list(completions), add_special_tokens=False)["input_ids"]
    seqs = [p + c + [tokenizer.eos_token_id] for p, c in zip(p_ids, c_ids, strict=True)]
    width = max(map(len, seqs))
    ids = torch.full((len(seqs), width), tokenizer.pad_token_id, dtype=torch.long)
    labels = torch.full((len(seqs), width), -100, dtype=torch.long)
    mask = torch.zeros((len(seqs), width), dtype=torch.long)
    for i, (p, s) in enumerate(zip(p_ids, seqs, strict=True)):
        ids[i, : len(s)] = torch.tensor(s)
        mask[i, : len(s)] = 1
        labels[i, len(p) : len(s)] = torch.tensor(s[len(p) :])
    return ids, mask, labels


def _chat_text(messages: list[dict[str, str]], tokenizer: Any) -> str:
    """A conversational prompt as the model's text, rendered by TRL as its trainer renders it."""
    from trl.data_utils import maybe_apply_chat_template

    return maybe_apply_chat_template({"prompt": messages}, tokenizer)["prompt"]


def sample_completions(
    model: Any,
    tokenizer: Any,
    prompts: Sequence[str | list[dict[str, str]]],
    *,
    max_new_tokens: int,
    seed: int,
    num_samples: int = 1,
    temperature: float = 1.0,
    batch_size: int = 128,
) -> list[str]:
    """Sampled completions (``num_samples`` per prompt, prompt-major order) with a fixed torch seed.

    Plain ancestral sampling (no top-k / top-p), the same distribution the RL rollouts draw from. A prompt may be
    TRL's conversational format (a list of messages): it is rendered with the tokenizer's chat template by TRL's
    own ``maybe_apply_chat_template``, with the generation prompt, as the trainer renders it.
    """
    import torch

    model.eval()
    texts = [p if isinstance(p, str) else _chat_text(p, tokenizer) for p in prompts]
    flat = [p for p in texts for _ in range(num_samples)]
    out: list[str] = []
    with torch.random.fork_rng(devices=[]), torch.no_grad():
        torch.manual_seed(seed)
        for start in range(0, len(flat), batch_size):
            chunk = flat[start : start + batch_size]
            enc = tokenizer(chunk, return_tensors="pt", padding=True, add_special_tokens=False)
            gen = model.generate(
                **enc,
                do_sample=True,
                temperature=temperature,
                top_k=0,
                top_p=1.0,
                max_new_tokens=max_new_tokens,
                pad_token_id=tokenizer.pad_token_id,
                eos_token_id=tokenizer.eos_token_id,
            )
            out += tokenizer.batch_decode(gen[:, enc["input_ids"].shape[1] :], skip_special_tokens=True)
    return out


def train_warm_start(
    task_name: str,
    task_params: dict[str, Any],
    tiny: TinyModelSpec,
    spec: WarmStartSpec,
    out_dir: Path,
    *,
    max_new_tokens: int = 40,
    log: Any = None,
) -> dict[str, Any]:
    """Train the warm-start policy into ``out_dir``; returns its metadata (no caching here).

    :param log: called with a progress line about every tenth of the steps (None = quiet).
    """

    from botgrpo_core.engine.tiny import build_tiny_model, char_tokenizer, count_parameters, save_pretrained
    from botgrpo_core.tasks import get_task

    t0 = time.perf_counter()
    task = get_task(task_name, task_params)
    tokenizer = char_tokenizer(task_alphabet(task))
    model = build_tiny_model(tokenizer, tiny, seed=spec.seed)
    eval_rows = task.eval_rows(spec.eval_size, seed=0) if spec.eval_size else []
    rows = task.train_rows(spec.demonstrations, seed=spec.seed, exclude=eval_rows)
    demos = task.demonstrations(rows, seed=spec.seed)
    ids, mask, labels = _encode(tokenizer, [r["prompt"] for r in rows], demos)
    if ids.shape[1] > tiny.max_positions:
        raise ValueError(
            f"warm start [{task_name}]: prompt + demonstration reach {ids.shape[1]} tokens, above "
            f"model.tiny.max_positions={tiny.max_positions}; raise it in the task's run section"
        )
    losses = _supervised_steps(model, ids, mask, labels, spec, task_name, t0, log)
    train_s = time.perf_counter() - t0
    metrics: dict[str, float] = {}
    if eval_rows:
        completions = sample_completions(
            model,
            tokenizer,
            [r["prompt"] for r in eval_rows],
            max_new_tokens=spec.max_new_tokens or max_new_tokens,
            seed=1234,
        )
        metrics = task.evaluate(eval_rows, completions)
    out_dir.mkdir(parents=True, exist_ok=True)
    save_pretrained(model, tokenizer, out_dir)
    return {
        "task": task_name,
        "task_params": task_params,
        "tiny": tiny.model_dump(),
        "warm_start": spec.model_dump(),
        "parameters": count_parameters(model),
        "demonstration_success": _demo_success(task, rows[: min(len(rows), 500)], demos),
        "loss": losses,
        "eval": metrics,
        "eval_note": f"sampled at temperature 1.0 (seed 1234) on {len(eval_rows)} held-out prompts",
        "train_s": train_s,
        "wall_s": time.perf_counter() - t0,
        "format": FORMAT_VERSION,
    }


def _supervised_steps(
    model: Any,
    ids: Any,
    mask: Any,
    labels: Any,
    spec: WarmStartSpec,
    task_name: str,
    t0: float,
    log: Any,
) -> list[tuple[int, float]]:
    """AdamW on the demonstrations (linear warm-up, cosine decay to 10%, grad clip 1): ``spec.steps`` steps
    of ``spec.batch_size`` rows drawn with ``spec.seed``; returns ``(step, mean loss)`` every 100 steps."""
    import math

    import torch

    optimizer = torch.optim.AdamW(model.parameters(), lr=spec.learning_rate, weight_decay=0.01)
    warmup = max(1, spec.steps // 20)

    def lr_at(step: int) -> float:  # linear warm-up then cosine decay to 10%
        if step < warmup:
            return (step + 1) / warmup
        progress = (step - warmup) / max(1, spec.steps - warmup)
        return 0.1 + 0.45 * (1 + math.cos(math.pi * progress))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_at)
    gen = torch.Generator().manual_seed(spec.seed)
    losses: list[tuple[int, float]] = []
    model.train()
    running = 0.0
    for step in range(spec.steps):
        batch = torch.randint(0, ids.shape[0], (spec.batch_size,), generator=gen)
        width = int(mask[batch].sum(1).max())  # trim the batch's padding columns
        out = model(
            input_ids=ids[batch, :width], attention_mask=mask[batch, :width], labels=labels[batch, :width]
        )
        optimizer.zero_grad(set_to_none=True)
        out.loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        running += float(out.loss.detach())
        if (step + 1) % 100 == 0 or step + 1 == spec.steps:
            losses.append((step + 1, running / (100 if (step + 1) % 100 == 0 else (step + 1) % 100)))
            running = 0.0
            if log is not None and (step + 1) % max(100, spec.steps // 10 // 100 * 100) == 0:
                elapsed = time.perf_counter() - t0
                log(
                    f"warm start [{task_name}]: step {step + 1}/{spec.steps}, loss {losses[-1][1]:.4f}, {elapsed:.0f} s"
                )
    return losses


def _demo_success(task: Any, rows: Sequence[dict[str, Any]], demos: Sequence[str]) -> dict[str, float]:
    """The task's metrics on the demonstrations themselves (how flawed the teacher is)."""
    return task.evaluate(list(rows), list(demos[: len(rows)]))
