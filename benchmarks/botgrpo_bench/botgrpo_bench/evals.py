"""Evaluations beyond the training log: Pass@k of a run's final policy, and the signal quality of a task's
local signals on its warm policy (against the task's own checker)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from botgrpo_core.config.models import RunConfig


# --- Pass@k ------------------------------------------------------------------------------------------------------
def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased Pass@k from ``n`` samples with ``c`` successes (Chen et al. 2021, eq. 1)."""
    if n - c < k:
        return 1.0
    return 1.0 - math.prod((n - c - i) / (n - i) for i in range(k))


def final_model_dir(run_dir: Path) -> Path:
    """The folder of a run's final policy: ``final_model/`` (``botgrpo train``), else its last checkpoint."""
    for candidate in (run_dir / "final_model", run_dir):
        if (candidate / "config.json").is_file():
            return candidate
    checkpoints = sorted(run_dir.glob("checkpoint-*"), key=lambda p: int(p.name.split("-")[-1]))
    if checkpoints and (checkpoints[-1] / "config.json").is_file():
        return checkpoints[-1]
    raise FileNotFoundError(f"{run_dir}: no saved model (final_model/ or checkpoint-*) to evaluate")


def successes(task: Any, rows: Sequence[dict[str, Any]], completions: Sequence[str]) -> list[bool]:
    """Task success per completion: the task's batched ``check`` (one compile request) when it has one."""
    if hasattr(task, "check"):
        return [c for c, _ in task.check(rows, completions)]
    return [task.success(r, c) for r, c in zip(rows, completions, strict=True)]


def pass_at_k_eval(config: RunConfig, run_dir: Path, *, k: int, prompts: int) -> dict[str, Any]:
    """Pass@1 and Pass@k of a run's final policy on ``prompts`` held-out prompts (``k`` samples each)."""
    from botgrpo_core.engine.model import load_model
    from botgrpo_core.engine.warm_start import sample_completions
    from botgrpo_core.tasks import get_task

    data = config.data
    task = get_task(data.task or "arithmetic", getattr(data, "task_params", None) or {})
    rows = task.eval_rows(prompts, seed=0)
    path = final_model_dir(Path(run_dir))
    model, tokenizer = load_model(config, str(path))  # loaded exactly as the run loaded its policy
    completions = sample_completions(
        model,
        tokenizer,
        [r["prompt"] for r in rows],
        max_new_tokens=config.training.max_new_tokens,
        seed=4321,
        num_samples=k,
        temperature=config.training.temperature,
    )
    ok = successes(task, [r for r in rows for _ in range(k)], completions)
    correct = [sum(ok[i * k : (i + 1) * k]) for i in range(len(rows))]
    return {
        "k": k,
        "prompts": len(rows),
        "pass@1": statistics.fmean(pass_at_k(k, c, 1) for c in correct),
        f"pass@{k}": statistics.fmean(pass_at_k(k, c, k) for c in correct),
        "model": str(path),
    }


# --- signal quality ----------------------------------------------------------------------------------------------
def signal_quality(
    task_name: str,
    task_params: dict[str, Any],
    signals: Sequence[dict[str, Any]],
    model_dir: Path,
    *,
    n: int = 100,
) -> dict[str, Any]:
    """How well the local signals point at what is wrong, on ``n`` samples of the warm policy.

    The reference is the task's own checker, independent of the signals: for arithmetic, each step
    line graded by the task (a refuted step should carry a negative span, a correct one should not);
    for React, compilation (a component that fails to compile should carry a negative span somewhere,
    one that compiles cleanly should carry none).
    """
    from botgrpo_core.tasks import get_task

    task = get_task(task_name, task_params)
    rows = task.eval_rows(n, seed=0)
    completions = _sample_warm_policy(task, rows, model_dir)
    negatives = negative_spans(signals, rows, completions)
    if hasattr(task, "step_lines"):
        return step_line_quality(task, rows, completions, negatives)
    return completion_quality(successes(task, rows, completions), negatives)


def _sample_warm_policy(task: Any, rows: Sequence[dict[str, Any]], model_dir: Path) -> list[str]:
    """One sampled completion per row from the tiny warm-start model in ``model_dir``."""
    from transformers import AutoModelForCausalLM

    from botgrpo_core.engine.tiny import load_tokenizer
    from botgrpo_core.engine.warm_start import sample_completions

    model = AutoModelForCausalLM.from_pretrained(model_dir)
    tokenizer = load_tokenizer(model_dir)  # warm starts are tiny models: their tokenizer exactly as built
    tokenizer.padding_side = "left"
    max_new = task.max_completion_chars + 5 if hasattr(task, "max_completion_chars") else 40
    return sample_completions(model, tokenizer, [r["prompt"] for r in rows], max_new_tokens=max_new, seed=99)


def negative_spans(
    signals: Sequence[dict[str, Any]], rows: Sequence[dict[str, Any]], completions: Sequence[str]
) -> list[list[tuple[int, int]]]:
    """Per completion, the ``(start, end)`` character spans the local ``signals`` give a negative value."""
    from botgrpo_core.signals import Sample, SampleError
    from botgrpo_core.signals.manager import get_plugin_manager

    samples = [
        Sample(prompt=r["prompt"], completion=c, row=r) for r, c in zip(rows, completions, strict=True)
    ]
    manager = get_plugin_manager()
    negatives: list[list[tuple[int, int]]] = [[] for _ in samples]
    for sig in signals:
        spec = manager.get_signal(sig["name"]).spec
        if spec.kind != "local":
            continue
        scorer = spec.make_scorer(spec.params_model.model_validate(sig.get("params", {})))
        for i, result in enumerate(scorer.score(samples)):
            if isinstance(result, SampleError) or not isinstance(result, list):
                continue
            negatives[i] += [(span.start, span.end) for span in result if span.value < 0]
        if hasattr(scorer, "close"):
            scorer.close()
    return negatives


def _overlaps(spans: Sequence[tuple[int, int]], a: int, b: int) -> bool:
    return any(s < b and e > a for s, e in spans)


def step_line_quality(
    task: Any,
    rows: Sequence[dict[str, Any]],
    completions: Sequence[str],
    negatives: Sequence[Sequence[tuple[int, int]]],
) -> dict[str, Any]:
    """Recall, precision and false-alarm rate of negative spans over the task's graded step lines."""
    tp = fp = fn = tn = 0
    for i, (row, completion) in enumerate(zip(rows, completions, strict=True)):
        for a, b, wrong in task.step_lines(row, completion):
            flagged = _overlaps(negatives[i], a, b)
            tp += wrong and flagged
            fn += wrong and not flagged
            fp += flagged and not wrong
            tn += not wrong and not flagged
    return {
        "unit": "step line",
        "lines": tp + fp + fn + tn,
        "wrong_lines": tp + fn,
        "recall": tp / max(tp + fn, 1),
        "precision": tp / max(tp + fp, 1),
        "false_alarm_rate": fp / max(fp + tn, 1),
    }


def completion_quality(ok: Sequence[bool], negatives: Sequence[Sequence[tuple[int, int]]]) -> dict[str, Any]:
    """Share of failed (and of successful) completions that carry a negative local span."""
    failed = [i for i, good in enumerate(ok) if not good]
    passed = [i for i, good in enumerate(ok) if good]
    return {
        "unit": "completion",
        "samples": len(ok),
        "failed": len(failed),
        "failed_with_negative_span": sum(bool(negatives[i]) for i in failed) / max(len(failed), 1),
        "compiling_with_negative_span": sum(bool(negatives[i]) for i in passed) / max(len(passed), 1),
    }
