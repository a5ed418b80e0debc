"""The run file: one YAML describes model, data, algorithm, reward mixture, training and engine.

Typed with pydantic, ``extra="forbid"`` everywhere: an unknown key is an error that names its path
and the nearest valid key. Loading needs no torch: ``botgrpo validate`` is instant.

Signal params are checked against each plugin's params model at load time (importing only the
plugins the file uses), and the outcome-dominance condition of the mixture is checked too.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from botgrpo_core.config.sections import (
    DataConfig,
    EngineConfig,
    ModelConfig,
    RunFileModel,
    TrainingConfig,
)
from botgrpo_core.loss import Aggregation, RatioLevel

OnErrorPolicy = Literal["zero", "nan", "raise"]
#: Step shaping of a local signal (botgrpo_core.rewards.shaping): what spans after the first negative one get.
AfterFirstError = Literal["keep", "zero", "negative"]
#: What a local signal gives a token none of its spans covers (botgrpo_core.rewards.uncovered).
Uncovered = Literal["zero", "group_mean"]

#: The core's worker pool where a signal leaves ``workers``/``timeout_s``/``memory_mb`` null.
CORE_POOL_DEFAULTS: dict[str, float] = {"workers": 0, "timeout_s": 10.0, "memory_mb": 1024}


class SignalConfig(RunFileModel):
    """One signal of the reward mixture."""

    name: str = Field(..., description="registered signal name, '<plugin>.<signal>' (see `botgrpo plugins`)")
    weight: float = Field(1.0, description="a_j (global) or b_k (local) in the mixture")
    params: dict[str, Any] = Field(default_factory=dict, description="the signal's own params (plugin docs)")
    on_error: OnErrorPolicy = Field(
        "zero",
        description="a failed sample: 'zero' value, 'nan' drops the rollout from the statistics, 'raise'",
    )
    # One place for a signal's worker settings. null = the default of whoever runs the workers: the core's
    # pool (CORE_POOL_DEFAULTS), or, for a signal that runs its own processes (SignalSpec.own_pool, e.g.
    # sympy.*), the plugin's params default; for those the core fills the values set here into the params.
    timeout_s: float | None = Field(
        None,
        gt=0,
        le=86400,
        description="per-sample time limit in worker processes (null: 10 s in the core's pool; for a signal "
        "with its own processes, e.g. sympy.*, the plugin's default)",
    )
    memory_mb: int | None = Field(
        None,
        gt=0,
        le=2**20,
        description="per-worker memory headroom in MB (null: 1024 in the core's pool; for a signal with its "
        "own processes, the plugin's default)",
    )
    workers: int | None = Field(
        None,
        ge=0,
        le=1024,
        description="worker processes for this signal (0 = in the trainer's process; null: 0, or for a "
        "signal with its own processes the plugin's default, e.g. sympy.*: 2, jsx.*: auto, up to 2)",
    )
    batch_timeout_s: float | None = Field(
        None,
        gt=0,
        le=86400,
        description="deadline of one batch's samples as a whole in the core's worker pool (workers > 0; null: "
        "none): samples still running then are killed, the rest not started, all time out; a signal with "
        "its own processes has its own (e.g. jsx.renders params.batch_timeout_s)",
    )
    placement: Literal["span", "last"] = Field(
        "span", description="local signals: value on every token of a span, or only on its last token"
    )
    after_first_error: AfterFirstError = Field(
        "keep",
        description="local signals: spans after a completion's first negative span keep their value ('keep'), "
        "get 0 ('zero': the paper's error propagation, best in its math runs) or get that first negative "
        "value ('negative'); see docs/concepts.md",
    )
    uncovered: Uncovered | None = Field(
        None,
        description="local signals: what a token no span covers gets: the group's length-weighted mean of this "
        "signal over the tokens it covers ('group_mean'; null, the default, means group_mean), so that silence "
        "neither helps nor hurts a token in the bag of tokens, or 0 ('zero': with a signal whose mean turns "
        "negative, unscored tokens out-rank honest ones and a policy learns to write them); see "
        "docs/concepts.md",
    )

    shuffle_spans: bool = Field(
        False,
        description="local signals, a control for studies: the values of a completion's spans are permuted "
        "among its spans (a fixed permutation per completion text), so each completion keeps the same amount "
        "of credit and blame but at random places: does the placement of credit matter, or only its amount? "
        "Per-token values are not moved. Never for a real run",
    )

    @property
    def uncovered_fill(self) -> Uncovered:
        """What a local signal's uncovered tokens get: ``uncovered``, or ``group_mean`` where it is null."""
        return self.uncovered or "group_mean"

    cache: bool = Field(
        True, description="reuse results for identical (prompt, completion, row) within a run"
    )
    cache_size: int = Field(
        20_000,
        ge=1,
        le=10_000_000,
        description="most results the cache keeps (least recently used go first); each holds the prompt, "
        "completion and result, so about 2-10 KB",
    )

    path: str | None = Field(
        None,
        description="a signal from a Python file: 'path/to/file.py:function' (relative to the current folder), "
        "function(samples) -> one result per sample; needs kind and bounds; no params. The file's code runs "
        "when it is imported, by validate too; its folder is on sys.path; its SHA-256 is recorded and "
        "--resume refuses a changed file (docs/writing-plugins.md)",
    )
    kind: Literal["global", "local"] | None = Field(
        None, description="with path: 'global' (one value per rollout) or 'local' (spans or token values)"
    )
    bounds: tuple[float, float] | None = Field(
        None, description="with path: [low, high] of every value (outcome dominance, result checks)"
    )

    @model_validator(mode="after")
    def _file_signal(self) -> SignalConfig:
        if self.path is None:
            if self.kind is not None or self.bounds is not None:
                raise ValueError(
                    "kind and bounds are declared by the signal's plugin; set them only with path (a signal "
                    "from a Python file), or remove them"
                )
            return self
        if self.kind is None or self.bounds is None:
            raise ValueError(
                f"a signal from a file (path: {self.path}) needs kind (global or local) and bounds ([low, high])"
            )
        if not self.bounds[0] <= self.bounds[1]:
            raise ValueError(f"bounds must be [low, high] with low <= high, got {list(self.bounds)}")
        if self.params:
            raise ValueError("a signal from a file takes no params; read its settings in the function")
        return self

    @field_validator("name")
    @classmethod
    def _namespaced(cls, name: str) -> str:
        if "." not in name.strip(".") or " " in name:
            raise ValueError(f"signal names look like '<plugin>.<signal>' (e.g. 'core.regex'), got {name!r}")
        return name

    def core_pool(self) -> tuple[int, float, int]:
        """``(workers, timeout_s, memory_mb)`` of the core's pool for this signal, null read as the default."""

        def pick(key: str) -> float:
            value = getattr(self, key)
            return CORE_POOL_DEFAULTS[key] if value is None else value

        return int(pick("workers")), float(pick("timeout_s")), int(pick("memory_mb"))


class SignalFailurePolicy(RunFileModel):
    """What a run does when a signal fails on most rollouts, step after step (``engine/signal_health.py``)."""

    action: Literal["stop", "warn"] = Field(
        "stop",
        description="'stop' the run with an error naming the signal and its last error, or 'warn' and train on",
    )
    threshold: float = Field(
        0.5,
        gt=0,
        le=1,
        description="a step fails for a signal when its error_frac is at or above this share (1: only when it "
        "fails on every rollout; every value in (0, 1] can act)",
    )
    steps: int = Field(
        5, ge=1, le=1_000_000, description="training steps in a row over the threshold before the action"
    )


class RewardsConfig(RunFileModel):
    """``r[i,t] = alpha * sum_j a_j R_j[i] + beta * sum_k b_k S_k[i,t]``."""

    alpha: float = Field(1.0, ge=0, description="weight of the global (outcome) signals")
    beta: float = Field(
        0.5, ge=0, description="weight of the local (token-level) signals; 0 = plain GRPO rewards"
    )
    strict: bool = Field(False, description="make the outcome-dominance check an error instead of a warning")
    outcome_gap: float | None = Field(
        None,
        gt=0,
        description="smallest difference between distinct outcomes (default: from the global bounds)",
    )
    signals: list[SignalConfig] = Field(..., min_length=1, description="the signals of the mixture")
    on_signal_failure: SignalFailurePolicy = Field(
        default_factory=SignalFailurePolicy,
        description="a signal failing on most rollouts for several steps (a dead server, workers that cannot "
        "start) stops the run, or warns; never a silent run that learns from on_error values",
    )

    @model_validator(mode="after")
    def _unique(self) -> RewardsConfig:
        seen: set[str] = set()
        for i, s in enumerate(self.signals):
            if s.name in seen:
                raise ValueError(
                    f"signals[{i}]: {s.name!r} is listed twice; merge the entries (one name, one weight)"
                )
            seen.add(s.name)
        return self


class AlgorithmConfig(RunFileModel):
    """A named preset (see docs/algorithms.md) and optional overrides of its settings."""

    preset: str = Field(
        "bot-grpo", description="bot-grpo, grpo, dapo, gspo, dr-grpo, pure, process, token-pool"
    )
    estimator: str | None = Field(None, description="override the preset's advantage estimator")
    estimator_options: dict[str, Any] = Field(default_factory=dict, description="options for the estimator")
    # ge=0 documents the ranges in docs/configuration.md; the rules themselves (eps_low < 1 too) are
    # botgrpo_core.loss.loss_settings_problem, applied by config.checks.check_algorithm
    ratio_level: RatioLevel | None = Field(None, description="override: importance ratio level")
    aggregation: Aggregation | None = Field(None, description="override: loss aggregation")
    eps_low: float | None = Field(None, ge=0, description="override: lower clip range")
    eps_high: float | None = Field(None, ge=0, description="override: upper clip range (DAPO clip-higher)")
    kl_coef: float | None = Field(
        None, ge=0, description="override: k3 KL coefficient to the reference model"
    )
    dynamic_sampling: bool | None = Field(
        None, description="override: drop zero-spread groups and refill (DAPO)"
    )


class RunConfig(RunFileModel):
    """A whole run file."""

    model: ModelConfig = Field(default_factory=ModelConfig)
    data: DataConfig = Field(default_factory=DataConfig)
    algorithm: AlgorithmConfig = Field(default_factory=AlgorithmConfig)
    rewards: RewardsConfig
    training: TrainingConfig = Field(default_factory=TrainingConfig)
    engine: EngineConfig = Field(default_factory=EngineConfig)
