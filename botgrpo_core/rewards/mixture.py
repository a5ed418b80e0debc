"""Score a batch with every configured signal and mix the results into token rewards.

``r[i,t] = alpha * sum_j a_j R_j[i] + beta * sum_k b_k S_k[i,t]`` over completion tokens, where a
global signal ``R_j`` gives one value per rollout (spread over all its tokens) and a local signal
``S_k`` gives character spans aligned onto tokens (:mod:`botgrpo_core.rewards.alignment`).

A sample that fails (raises, times out, runs out of memory, returns NaN or a malformed result)
gets its signal's ``on_error`` policy: ``zero`` (value 0 / no spans), ``nan`` (the rollout is dropped
from the advantage statistics: its token rewards are NaN, for ``nan_policy="mask"``), or ``raise``.
Failures are counted per signal and reason; one bad sample never stops the batch.

Each signal's per-rollout metric rows and their reduction live in
:mod:`botgrpo_core.rewards.signal_metrics` (the same function reduces them over all processes in training).
"""

from __future__ import annotations

import dataclasses
import json
import math
import numbers
import os
import warnings
from collections import Counter, OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from botgrpo_core.config.checks import validate_params
from botgrpo_core.config.models import RewardsConfig, SignalConfig
from botgrpo_core.rewards.alignment import (
    CheckedSpans,
    align_spans,
    misfit_spans,
    offsets_tensor,
    span_problem,
    span_table,
)
from botgrpo_core.rewards.pool import WorkerPool
from botgrpo_core.rewards.signal_metrics import (
    mixture_metrics,
    scorer_metrics,
    signal_columns,
)
from botgrpo_core.signals import Sample, SampleError, Scorer, Span, TokenValues

if TYPE_CHECKING:
    import torch
    from pydantic import BaseModel

    from botgrpo_core.signals.manager import PluginManager, RegisteredSignal


class SignalError(RuntimeError):
    """A signal failed on a sample and its ``on_error`` policy is ``raise``."""


@dataclass
class SignalOutcome:
    """What one signal gave a batch."""

    name: str
    kind: str
    weight: float
    #: per sample: float (global), list of Span or TokenValues (local), or SampleError
    results: list[Any]
    #: ``(B,)`` for global signals, ``(B, T)`` aligned values for local ones (0 where failed)
    values: torch.Tensor
    failed: list[bool]
    reasons: Counter = field(default_factory=Counter)
    #: per sample: served by the result cache (scored earlier, or a repeat within the batch)
    cached: list[bool] = field(default_factory=list)

    @property
    def cache_hits(self) -> int:
        return sum(self.cached)

    def columns(self, lengths: torch.Tensor) -> torch.Tensor:
        """This signal's ``(B, len(SIGNAL_COLUMNS))`` rows of the batch's signal table."""
        return signal_columns(self.values, self.results, self.cached or [False] * len(self.results), lengths)


@dataclass
class MixtureOutput:
    """Token rewards for a batch, and how they were made."""

    token_rewards: torch.Tensor  # (B, T) float32; 0 on padding, NaN on valid tokens of dropped rollouts
    mask: torch.Tensor  # (B, T) bool completion mask
    valid: torch.Tensor  # (B,) bool: False = dropped by an on_error 'nan' policy
    outcome: torch.Tensor  # (B,) sum_j a_j R_j (before alpha)
    local: torch.Tensor  # (B, T) sum_k b_k S_k (before beta)
    signals: dict[str, SignalOutcome]
    #: this batch's ``mixture_metrics`` and the scorers' own metrics (``signals/<name>/<key>``)
    metrics: dict[str, float]
    #: ``(B, len(SIGNAL_COLUMNS) * K)`` float64: each signal's :meth:`SignalOutcome.columns`, in config order
    signal_table: torch.Tensor
    #: ``signals/<name>/<key>`` from the scorers' ``metrics()`` (this process's counters)
    scorer_metrics: dict[str, float]

    def with_global_reward(self, values: torch.Tensor, alpha: float) -> MixtureOutput:
        """This batch with one more global reward per rollout: ``outcome + values`` and
        ``token_rewards + alpha * values`` on every valid token (NaN values count as 0).

        :param values: ``(B,)`` float, e.g. the weighted sum of a trainer's TRL reward functions.
        """
        import torch

        extra = torch.nan_to_num(values.to(self.outcome.dtype), nan=0.0)  # (B,)
        token_rewards = self.token_rewards + alpha * extra[:, None] * self.mask  # (B, T); NaN rows stay NaN
        return dataclasses.replace(self, token_rewards=token_rewards, outcome=self.outcome + extra)


# --- worker-process side: the scorer is built once per worker --------------------------------------------------
_WORKER_SCORER: Scorer | None = None


def _init_worker_scorer(make_scorer: Any, params: Any) -> None:
    global _WORKER_SCORER
    _WORKER_SCORER = make_scorer(params)


def _score_in_worker(sample: Sample) -> Any:
    assert _WORKER_SCORER is not None, "worker started without a scorer"
    results = list(_WORKER_SCORER.score([sample]))
    if len(results) != 1:
        raise ValueError(f"score() returned {len(results)} results for 1 sample")
    return results[0]


class _SignalRunner:
    """One configured signal: its scorer (in-process or in a worker pool), params, cache and checks."""

    def __init__(
        self, config: SignalConfig, registered: RegisteredSignal, params: BaseModel, path: str
    ) -> None:
        self.config = config
        self.registered = registered
        self.spec = registered.spec
        self.params = params
        self.path = path
        self.bounds = self.spec.resolve_bounds(params)
        self._scorer: Scorer | None = None
        self._pool: WorkerPool | None = None
        self._cache: OrderedDict[tuple[str, str, str], Any] = OrderedDict()
        self._cache_size = 100_000
        self._params_key = params.model_dump_json()
        self._metrics_warned = False

    # scorer construction is lazy: heavy plugins load their models on first use
    def _score_raw(self, samples: list[Sample]) -> list[Any]:
        if self.config.workers > 0:
            if self._pool is None:
                self._pool = WorkerPool(
                    _score_in_worker,
                    workers=self.config.workers,
                    timeout_s=self.config.timeout_s,
                    memory_mb=self.config.memory_mb,
                    initializer=_init_worker_scorer,
                    initargs=(self.spec.make_scorer, self.params),
                )
            return self._pool.map(samples)
        if self._scorer is None:
            self._scorer = self.spec.make_scorer(self.params)
        try:
            results = list(self._scorer.score(samples))
        except Exception:
            # isolate the failing samples: score one by one
            return [self._score_one(s) for s in samples]
        if len(results) != len(samples):
            message = (
                f"signal {self.spec.name!r} (plugin {self.registered.distribution}) returned {len(results)} "
                f"results for {len(samples)} samples; score() must return one result per sample"
            )
            return [SampleError(message, reason="invalid") for _ in samples]
        return results

    def _score_one(self, sample: Sample) -> Any:
        assert self._scorer is not None
        try:
            results = list(self._scorer.score([sample]))
        except Exception as exc:
            return SampleError(f"{type(exc).__name__}: {exc}", reason="error")
        if len(results) != 1:
            return SampleError(f"score() returned {len(results)} results for 1 sample", reason="invalid")
        return results[0]

    def _key(self, sample: Sample) -> tuple[str, str, str]:
        row = json.dumps(dict(sample.row), sort_keys=True, default=str)
        return (sample.prompt, sample.completion, row)

    def score(self, samples: Sequence[Sample]) -> tuple[list[Any], list[bool]]:
        """Normalised results (a value, spans, TokenValues or SampleError) and, per sample, cache hit or not.

        With caching on, identical samples are scored once, whether seen in an earlier batch or
        repeated within this one (GRPO groups often repeat short completions).
        """
        results: list[Any] = [None] * len(samples)
        cached = [False] * len(samples)
        if not self.config.cache:
            raw = self._score_raw(list(samples))
            return [self._check(r, s) for r, s in zip(raw, samples)], cached
        first_of: dict[tuple[str, str, str], int] = {}  # key -> index of its first sample in this batch
        copies: list[tuple[int, int]] = []  # (sample index, index it copies)
        for i, sample in enumerate(samples):
            key = self._key(sample)
            if key in self._cache:
                self._cache.move_to_end(key)
                results[i] = self._cache[key]
                cached[i] = True
            elif key in first_of:
                copies.append((i, first_of[key]))
                cached[i] = True
            else:
                first_of[key] = i
        if first_of:
            todo = list(first_of.values())
            raw = self._score_raw([samples[i] for i in todo])
            for key, i, result in zip(first_of, todo, raw):
                checked = self._check(result, samples[i])
                results[i] = checked
                if not isinstance(checked, SampleError):
                    self._cache[key] = checked
                    if len(self._cache) > self._cache_size:
                        self._cache.popitem(last=False)
        for i, source in copies:
            results[i] = results[source]
        return results, cached

    def _check(self, result: Any, sample: Sample) -> Any:
        """Validate a result against the signal's kind and bounds; a bad one becomes a SampleError."""
        if isinstance(result, SampleError):
            return result
        if isinstance(result, BaseException):
            return SampleError(f"{type(result).__name__}: {result}", reason="error")
        low, high = self.bounds
        tolerance = 1e-6 * max(1.0, abs(low), abs(high))
        name = self.spec.name
        if self.spec.kind == "global":
            if isinstance(result, bool) or not isinstance(result, numbers.Real):
                if hasattr(result, "item") and getattr(result, "numel", lambda: 1)() == 1:
                    result = result.item()
                else:
                    return SampleError(
                        f"{name}: a global signal must return a number, got {type(result).__name__}",
                        "invalid",
                    )
            value = float(result)
            if math.isnan(value):
                return SampleError(f"{name}: returned NaN", reason="nan")
            if not (low - tolerance <= value <= high + tolerance):
                return SampleError(
                    f"{name}: value {value} is outside the declared bounds {self.bounds}", "invalid"
                )
            return value
        if isinstance(result, TokenValues):
            values = list(result.values)
            if len(values) != len(sample.offsets):
                return SampleError(
                    f"{name}: {len(values)} token values for {len(sample.offsets)} tokens", reason="invalid"
                )
            for v in values:
                if not (low - tolerance <= float(v) <= high + tolerance):  # NaN fails this too
                    return SampleError(
                        f"{name}: token value {v} outside the declared bounds {self.bounds}", "invalid"
                    )
            return result
        if isinstance(result, (list, tuple)):
            spans = list(result)
            if not all(isinstance(span, Span) for span in spans):
                other = next(span for span in spans if not isinstance(span, Span))
                return SampleError(
                    f"{name}: a local signal returns Span objects, got {type(other).__name__}", "invalid"
                )
            n = len(sample.completion)
            try:
                table = span_table(spans)  # (S, 3): start, end, value, checked with array ops
            except (TypeError, ValueError):  # a field that is not a number
                span = next((sp for sp in spans if span_problem(sp, n)), spans[0])
            else:
                value = table[:, 2]
                bad = misfit_spans(table, n) | ~((low - tolerance <= value) & (value <= high + tolerance))
                if not bad.any():
                    return CheckedSpans(spans, table)
                span = spans[int(np.argmax(bad))]
            problem = (
                span_problem(span, n) or f"span value {span.value} outside the declared bounds {self.bounds}"
            )
            return SampleError(f"{name}: {problem}", reason="nan" if "non-finite" in problem else "invalid")
        return SampleError(f"{name}: unsupported result type {type(result).__name__}", reason="invalid")

    def scorer_metrics(self) -> dict[str, float]:
        """The scorer's own ``metrics()`` as ``signals/<name>/<key>`` (in-process scorers; see
        :func:`~botgrpo_core.rewards.signal_metrics.scorer_metrics`). One that raises costs its metrics
        only, with one warning: a scorer's bookkeeping must not break the batch."""
        report = getattr(self._scorer, "metrics", None)
        if not callable(report):
            return {}
        try:
            return scorer_metrics(self.spec.name, dict(report()))
        except Exception as exc:
            if not self._metrics_warned:
                self._metrics_warned = True
                warnings.warn(
                    f"signal {self.spec.name!r} (plugin {self.registered.distribution}): metrics() raised "
                    f"{type(exc).__name__}: {exc}; its metrics are left out of the logs",
                    RuntimeWarning,
                    stacklevel=2,
                )
            return {}

    def close(self) -> None:
        """Stop the worker pool and let the scorer release what it holds (``close()`` is optional)."""
        if self._pool is not None:
            self._pool.close()
            self._pool = None
        closer = getattr(self._scorer, "close", None)
        if callable(closer):
            closer()
        self._scorer = None


class RewardMixture:
    """The configured mixture of signals, ready to score batches.

    :param config: the ``rewards`` section of a run file.
    :param manager: plugin manager (default: the process-wide one).
    """

    def __init__(self, config: RewardsConfig, manager: PluginManager | None = None) -> None:
        from botgrpo_core.signals.manager import get_plugin_manager

        self.config = config
        manager = manager or get_plugin_manager()
        self.runners: list[_SignalRunner] = []
        for i, signal in enumerate(config.signals):
            path = f"rewards.signals[{i}]"
            registered = manager.get_signal(signal.name)
            params = validate_params(registered, signal, path)
            self.runners.append(_SignalRunner(signal, registered, params, path))

    @classmethod
    def from_dict(
        cls, rewards: Mapping[str, Any], *, manager: PluginManager | None = None, source: str = "<rewards>"
    ) -> RewardMixture:
        """A mixture from a ``rewards`` mapping (alpha, beta, signals), checked as a run file's section is.

        :raises ConfigError: naming the ``rewards.*`` key and the fix (unknown signal, bad params...).
        """
        from pydantic import ValidationError

        from botgrpo_core.config.checks import check_rewards
        from botgrpo_core.config.errors import ConfigError, format_validation_error

        try:
            config = RewardsConfig.model_validate(dict(rewards))
        except ValidationError as exc:
            raise ConfigError(
                format_validation_error(exc, source, model=RewardsConfig, what="rewards section")
            ) from None
        check_rewards(config, source, manager)
        return cls(config, manager)

    @classmethod
    def from_yaml(
        cls, path: str | os.PathLike[str], *, manager: PluginManager | None = None
    ) -> RewardMixture:
        """A mixture from a YAML file: a whole run file (its ``rewards`` section) or the section alone."""
        from botgrpo_core.config.loading import read_yaml

        data = read_yaml(path)
        section = data["rewards"] if isinstance(data.get("rewards"), Mapping) else data
        return cls.from_dict(section, manager=manager, source=str(path))

    @classmethod
    def without_signals(cls, alpha: float = 1.0) -> RewardMixture:
        """A mixture with no signals: every token reward is 0 until global rewards are added
        (:meth:`MixtureOutput.with_global_reward`), e.g. a trainer's TRL reward functions alone."""
        return cls(
            RewardsConfig.model_construct(alpha=alpha, beta=0.0, strict=False, outcome_gap=None, signals=[])
        )

    def signal_kinds(self) -> dict[str, str]:
        """``{signal name: "global" | "local"}`` in config order (the layout of ``MixtureOutput.signal_table``)."""
        return {r.spec.name: r.spec.kind for r in self.runners}

    def required_fields(self) -> dict[str, tuple[str, ...]]:
        """Row fields each signal reads: ``{signal name: fields}``."""
        return {r.spec.name: r.spec.resolve_required_fields(r.params) for r in self.runners}

    def score_batch(self, samples: Sequence[Sample], mask: torch.Tensor | None = None) -> MixtureOutput:
        """Score ``samples`` and mix.

        :param samples: ``B`` samples with ``offsets`` for their completion tokens.
        :param mask: optional ``(B, T)`` completion mask; by default token ``t`` of sample ``i`` is
            valid for ``t < len(samples[i].offsets)`` and ``T`` is the longest.
        """
        import torch

        B = len(samples)
        lengths = torch.tensor([len(s.offsets) for s in samples], dtype=torch.long)
        T = int(mask.shape[1]) if mask is not None else int(lengths.max()) if B else 0
        if mask is None:
            mask = torch.arange(T).unsqueeze(0) < lengths.unsqueeze(1)  # (B, T)
        mask = mask.bool()
        offsets = offsets_tensor([s.offsets for s in samples], T)  # (B, T, 2)
        text_lengths = [len(s.completion) for s in samples]

        outcome = torch.zeros(B, dtype=torch.float32)
        local = torch.zeros(B, T, dtype=torch.float32)
        valid = torch.ones(B, dtype=torch.bool)
        outcomes: dict[str, SignalOutcome] = {}
        own_metrics: dict[str, float] = {}  # the scorers' own metrics()
        for runner in self.runners:
            signal = _score_signal(runner, samples, mask, offsets, text_lengths)
            if runner.config.on_error == "nan":
                valid &= ~torch.tensor(signal.failed, dtype=torch.bool)
            if signal.kind == "global":
                outcome += signal.weight * signal.values
            else:
                local += signal.weight * signal.values
            outcomes[signal.name] = signal
            own_metrics.update(runner.scorer_metrics())

        alpha, beta = self.config.alpha, self.config.beta
        token_rewards = (alpha * outcome.unsqueeze(1) + beta * local) * mask  # (B, T)
        dropped = (~valid).unsqueeze(1) & mask
        token_rewards = token_rewards.masked_fill(dropped, float("nan"))
        columns = [signal.columns(mask.sum(1)) for signal in outcomes.values()]
        signal_table = torch.cat(columns, dim=1) if columns else torch.zeros(B, 0, dtype=torch.float64)
        metrics = mixture_metrics(valid, outcome, signal_table, self.signal_kinds())
        metrics.update(own_metrics)
        return MixtureOutput(
            token_rewards, mask, valid, outcome, local, outcomes, metrics, signal_table, own_metrics
        )

    def close(self) -> None:
        """Stop the signals' worker processes."""
        for runner in self.runners:
            runner.close()

    def __enter__(self) -> RewardMixture:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _score_signal(
    runner: _SignalRunner,
    samples: Sequence[Sample],
    mask: torch.Tensor,
    offsets: torch.Tensor,
    text_lengths: list[int],
) -> SignalOutcome:
    """One signal on a batch: its checked results and values, ``(B,)`` global or ``(B, T)`` aligned local."""
    import torch

    cfg, spec = runner.config, runner.spec
    results, cached = runner.score(samples)
    failed = [isinstance(r, SampleError) for r in results]
    reasons: Counter = Counter(r.reason for r in results if isinstance(r, SampleError))
    if cfg.on_error == "raise" and any(failed):
        i = failed.index(True)
        raise SignalError(
            f"signal {spec.name!r} (plugin {runner.registered.distribution}) failed on sample {i} "
            f"({results[i].reason}): {results[i]}. To skip such samples set {runner.path}.on_error "
            "to 'zero' or 'nan'."
        )
    if spec.kind == "global":
        values = torch.tensor([0.0 if f else float(r) for r, f in zip(results, failed)], dtype=torch.float32)
    else:
        spans = [r if isinstance(r, list) else [] for r in results]
        values = align_spans(spans, offsets, text_lengths, placement=cfg.placement)
        T = mask.shape[1]
        for i, r in enumerate(results):
            if isinstance(r, TokenValues):
                row = torch.tensor([float(v) for v in r.values], dtype=torch.float32)[:T]
                values[i, : row.numel()] += row
        values = values * mask
    return SignalOutcome(spec.name, spec.kind, cfg.weight, results, values, failed, reasons, cached)
