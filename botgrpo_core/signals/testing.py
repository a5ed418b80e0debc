"""Helpers for plugin authors' tests.

- :func:`registered_plugin`: a context manager that registers a plugin object or module with a
  plugin manager and removes it afterwards.
- :func:`make_samples`: builds a batch of :class:`~botgrpo_core.signals.Sample` from texts, with
  character-level token offsets (or a real tokenizer's).
- :func:`check_signal_contract`: runs a signal on a batch and checks what the core relies on:
  one result per sample, the right kind of result, values within the declared bounds, spans inside
  the completion, determinism, picklable scorer factory and params, ``extra="forbid"`` params.
"""

from __future__ import annotations

import contextlib
import math
import pickle
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from botgrpo_core.rewards.alignment import span_problem
from botgrpo_core.signals import Sample, SampleError, SignalSpec, Span, TokenValues, Value
from botgrpo_core.signals.manager import PluginManager, get_plugin_manager


@contextlib.contextmanager
def registered_plugin(
    plugin: Any,
    name: str | None = None,
    *,
    manager: PluginManager | None = None,
    distribution: str = "test-plugin",
) -> Iterator[PluginManager]:
    """Register ``plugin`` for the duration of a ``with`` block.

    :param plugin: a module or object with ``@botgrpo_core.hookimpl`` functions.
    :param name: plugin name (default: the module's or class's name).
    :param manager: the manager to use (default: the process-wide one, which the CLI and trainer use).
    :yields: the manager.
    """
    manager = manager or get_plugin_manager()
    name = name or getattr(plugin, "__name__", None) or type(plugin).__name__
    manager.register(plugin, name=name, distribution=distribution, version="test")
    try:
        yield manager
    finally:
        manager.unregister(name)


def make_samples(
    completions: Sequence[str],
    *,
    prompt: str | Sequence[str] = "",
    rows: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None,
    tokenizer: Any = None,
) -> list[Sample]:
    """A fake batch: one sample per completion.

    Without a tokenizer each character is a token (``offsets[t] == (t, t + 1)``); with one, the
    completion is encoded and decoded as a trainer does (:func:`botgrpo_core.rewards.samples.decode_samples`).
    """
    import numpy as np

    from botgrpo_core.rewards.offsets import TokenOffsets
    from botgrpo_core.rewards.samples import decode_samples

    prompts = [prompt] * len(completions) if isinstance(prompt, str) else list(prompt)
    if rows is None or isinstance(rows, Mapping):
        row_list = [dict(rows or {}) for _ in completions]
    else:
        row_list = [dict(r) for r in rows]
    samples = []
    for text, p, row in zip(completions, prompts, row_list):
        if tokenizer is None:
            ids: tuple[int, ...] = tuple(ord(c) for c in text)
            starts = np.arange(len(text), dtype=np.int64)
            offsets = TokenOffsets(np.stack([starts, starts + 1], axis=1))  # the type trainers pass
        else:
            encoded = tokenizer.encode(text, add_special_tokens=False)
            samples += decode_samples(tokenizer, [p], [encoded], [row])
            continue
        samples.append(Sample(prompt=p, completion=text, token_ids=ids, offsets=offsets, row=row))
    return samples


class ContractViolation(AssertionError):
    """A signal breaks the contract the core relies on."""


def check_signal_contract(
    spec: SignalSpec,
    samples: Sequence[Sample],
    params: BaseModel | Mapping[str, Any] | None = None,
    *,
    allow_errors: bool = False,
) -> list[Any]:
    """Check ``spec`` on ``samples``; raise :class:`ContractViolation` with the reason, else return results.

    :param params: a params model instance or a mapping validated by ``spec.params_model``.
    :param allow_errors: accept ``SampleError`` results (for batches built to fail).
    """
    if params is None or isinstance(params, Mapping):
        params = spec.params_model.model_validate(dict(params or {}))
    problems = _static_problems(spec, params)
    try:
        low, high = spec.resolve_bounds(params)
    except Exception as exc:
        raise ContractViolation(f"{spec.name}: bounds: {exc}") from exc
    first = list(spec.make_scorer(params).score(list(samples)))
    second = list(spec.make_scorer(params).score(list(samples)))
    if len(first) != len(samples):
        raise ContractViolation(
            f"{spec.name}: score() returned {len(first)} results for {len(samples)} samples"
        )
    for i, (result, sample) in enumerate(zip(first, samples)):
        where = f"{spec.name}: sample {i}"
        if isinstance(result, SampleError):
            if not allow_errors:
                problems.append(f"{where}: SampleError {result} ({result.reason})")
            continue
        problems += [f"{where}: {p}" for p in _result_problems(spec.kind, result, sample, (low, high))]
        other = second[i]
        if not isinstance(other, SampleError) and _comparable(result) != _comparable(other):
            problems.append(f"{where}: not deterministic ({result!r} then {other!r})")
    if problems:
        raise ContractViolation("\n".join(problems))
    return first


def _static_problems(spec: SignalSpec, params: BaseModel) -> list[str]:
    """What is wrong with the spec itself: a lax params model, unpicklable scorer factory or params."""
    problems = []
    if spec.params_model.model_config.get("extra") != "forbid":
        problems.append(f"{spec.params_model.__name__} should set model_config extra='forbid'")
    for what, obj in (("make_scorer", spec.make_scorer), ("params", params)):
        try:
            pickle.dumps(obj)
        except Exception as exc:
            problems.append(f"{what} must be picklable (worker processes rebuild the scorer): {exc}")
    return problems


def _result_problems(kind: str, result: Any, sample: Sample, bounds: tuple[float, float]) -> list[str]:
    """What is wrong with one sample's (non-error) result: its type, its spans or its values' bounds."""
    low, high = bounds
    tolerance = 1e-6 * max(1.0, abs(low), abs(high))

    def in_bounds(v: float) -> bool:
        return math.isfinite(v) and low - tolerance <= v <= high + tolerance

    if kind == "global":
        result = result.value if isinstance(result, Value) else result
        if isinstance(result, bool) or not isinstance(result, (int, float)):
            return [f"global result must be a float, got {type(result).__name__}"]
        return [] if in_bounds(float(result)) else [f"value {result} outside bounds {bounds}"]
    if isinstance(result, TokenValues):
        problems = [f"token value {v} outside bounds" for v in result.values if not in_bounds(float(v))]
        if len(result.values) != len(sample.offsets):
            problems.insert(0, f"{len(result.values)} token values for {len(sample.offsets)} tokens")
        return problems
    if not isinstance(result, (list, tuple)):
        return [f"local result must be a list of Span or TokenValues, got {type(result).__name__}"]
    problems = []
    for span in result:
        if not isinstance(span, Span):
            problems.append(f"expected Span, got {type(span).__name__}")
        elif problem := span_problem(span, len(sample.completion)):
            problems.append(problem)
        elif not in_bounds(span.value):
            problems.append(f"span value {span.value} outside bounds {bounds}")
    return problems


def _comparable(result: Any) -> Any:
    if isinstance(result, TokenValues):
        return tuple(result.values)
    if isinstance(result, (list, tuple)):
        return tuple((s.start, s.end, s.value) if isinstance(s, Span) else s for s in result)
    return result
