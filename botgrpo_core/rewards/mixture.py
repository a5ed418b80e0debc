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
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from botgrpo_core.config.checks import check_shaping, validate_params
from botgrpo_core.config.models import RewardsConfig
from botgrpo_core.rewards.alignment import align_each, offsets_tensor
from botgrpo_core.rewards.runner import SignalError, _SignalRunner
from botgrpo_core.rewards.shaping import shape_spans, shape_token_rows, shuffle_span_values
from botgrpo_core.rewards.signal_metrics import (
    mixture_metrics,
    signal_columns,
)
from botgrpo_core.rewards.uncovered import covered_tokens
from botgrpo_core.signals import Sample, SampleError, TokenValues, Value

if TYPE_CHECKING:
    import torch

    from botgrpo_core.signals.manager import PluginManager


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
    #: per sample (local signals): overlapping spans summed past the bounds on some token, clamped back
    clamped: list[bool] = field(default_factory=list)
    #: per sample (global signals): the ``meta`` of a :class:`~botgrpo_core.signals.Value` result, else None
    meta: list[Mapping[str, Any] | None] = field(default_factory=list)
    #: ``(B, T)`` bool, local signals with ``uncovered: group_mean`` only: the tokens its results cover
    #: (:mod:`botgrpo_core.rewards.uncovered`); None otherwise
    covered: torch.Tensor | None = None

    @property
    def cache_hits(self) -> int:
        return sum(self.cached)

    def columns(self, lengths: torch.Tensor) -> torch.Tensor:
        """This signal's ``(B, len(SIGNAL_COLUMNS))`` rows of the batch's signal table."""
        cached = self.cached or [False] * len(self.results)
        return signal_columns(self.values, self.results, cached, lengths, self.clamped or None)


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


class RewardMixture:
    """The configured mixture of signals, ready to score batches.

    :param config: the ``rewards`` section of a run file.
    :param manager: plugin manager (default: the process-wide one).
    """

    def __init__(self, config: RewardsConfig, manager: PluginManager | None = None) -> None:
        from botgrpo_core.signals.files import register_file_signals
        from botgrpo_core.signals.manager import get_plugin_manager

        self.config = config
        manager = manager or get_plugin_manager()
        # a signal with a path: registered when the run file was checked, again here for this manager
        register_file_signals(config.signals, manager)
        self.runners: list[_SignalRunner] = []
        for i, signal in enumerate(config.signals):
            path = f"rewards.signals[{i}]"
            registered = manager.get_signal(signal.name)
            params = validate_params(registered, signal, path)
            check_shaping(signal, registered.spec.kind, path)
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
        # Signals that can start work in the background (an esbuild process, a remote judge) start it
        # first and are scored last, so their wait overlaps the others' scoring; the mix below stays in
        # config order either way.
        started = [runner.prefetch(samples) for runner in self.runners]
        order = [r for r, s in zip(self.runners, started) if not s] + [
            r for r, s in zip(self.runners, started) if s
        ]
        scored = {id(runner): _score_signal(runner, samples, mask, offsets, text_lengths) for runner in order}
        for runner in self.runners:
            signal = scored[id(runner)]
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
        meta = [r.meta if isinstance(r, Value) else None for r in results]
        results = [r.value if isinstance(r, Value) else r for r in results]  # floats, as without meta
        values = torch.tensor([0.0 if f else float(r) for r, f in zip(results, failed)], dtype=torch.float32)
    else:
        shaping = cfg.after_first_error  # botgrpo_core.rewards.shaping: the steps after the first error
        spans = [shape_spans(r, shaping) if isinstance(r, list) else [] for r in results]
        if cfg.shuffle_spans:  # a placement control (shaping.shuffle_span_values): same values, other spans
            spans = [shuffle_span_values(s, sample.completion) for s, sample in zip(spans, samples)]
        values, misaligned = align_each(spans, offsets, text_lengths, placement=cfg.placement)
        for i, exc in misaligned.items():  # that sample's failure, not the batch's
            if cfg.on_error == "raise":
                raise SignalError(
                    f"signal {spec.name!r}: the spans of sample {i} could not be aligned: {exc}"
                )
            results[i] = SampleError(
                f"{spec.name}: spans not aligned ({type(exc).__name__}: {exc})", "alignment"
            )
            failed[i], reasons["alignment"] = True, reasons["alignment"] + 1
        T = mask.shape[1]
        for i, r in enumerate(results):
            if isinstance(r, TokenValues):
                row = torch.tensor([float(v) for v in r.values], dtype=torch.float32)[:T]
                values[i, : row.numel()] += shape_token_rows(row[None], shaping)[0]
        values = values * mask
        # Overlapping spans add up; a token's value stays within the signal's declared bounds all the same.
        low, high = runner.bounds
        clamped = ((values < low) | (values > high)).any(dim=1).tolist()
        values = values.clamp(low, high)
        covered = None
        if cfg.uncovered_fill == "group_mean":  # botgrpo_core.rewards.uncovered: filled once groups are whole
            lengths = [len(r.values) if isinstance(r, TokenValues) else None for r in results]
            covered = covered_tokens(spans, lengths, offsets, text_lengths, cfg.placement) & mask
        return SignalOutcome(
            spec.name,
            spec.kind,
            cfg.weight,
            results,
            values,
            failed,
            reasons,
            cached,
            clamped,
            covered=covered,
        )
    return SignalOutcome(
        spec.name, spec.kind, cfg.weight, results, values, failed, reasons, cached, meta=meta
    )
