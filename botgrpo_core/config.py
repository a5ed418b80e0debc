"""The run file: one YAML describes model, data, algorithm, reward mixture, training and engine.

Typed with pydantic, ``extra="forbid"`` everywhere: an unknown key is an error that names its path
and the nearest valid key. Loading needs no torch: ``botgrpo validate`` is instant.

Signal params are checked against each plugin's params model at load time (importing only the
plugins the file uses), and the outcome-dominance condition of the mixture is checked too.
"""

from __future__ import annotations

import difflib
import os
import warnings
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from botgrpo_core.run_sections import DataConfig, EngineConfig, ModelConfig, TrainingConfig

OnErrorPolicy = Literal["zero", "nan", "raise"]


class ConfigError(ValueError):
    """A run file problem. The message names the key path, the bad value and the fix."""


class OutcomeDominanceWarning(UserWarning):
    """Local signals are strong enough to reorder rollouts with different outcomes."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class SignalConfig(_Strict):
    """One signal of the reward mixture."""

    name: str = Field(..., description="registered signal name, '<plugin>.<signal>' (see `botgrpo plugins`)")
    weight: float = Field(1.0, description="a_j (global) or b_k (local) in the mixture")
    params: dict[str, Any] = Field(default_factory=dict, description="the signal's own params (plugin docs)")
    on_error: OnErrorPolicy = Field(
        "zero",
        description="a failed sample: 'zero' value, 'nan' drops the rollout from the statistics, 'raise'",
    )
    timeout_s: float = Field(10.0, gt=0, description="per-sample time limit when run in worker processes")
    memory_mb: int | None = Field(
        1024, gt=0, description="per-worker memory headroom (worker processes only)"
    )
    workers: int = Field(
        0, ge=0, description="worker processes for this signal (0 = in the trainer's process)"
    )
    placement: Literal["span", "last"] = Field(
        "span", description="local signals: value on every token of a span, or only on its last token"
    )
    cache: bool = Field(
        True, description="reuse results for identical (prompt, completion, row) within a run"
    )

    @field_validator("name")
    @classmethod
    def _namespaced(cls, name: str) -> str:
        if "." not in name.strip(".") or " " in name:
            raise ValueError(f"signal names look like '<plugin>.<signal>' (e.g. 'core.regex'), got {name!r}")
        return name


class RewardsConfig(_Strict):
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


class AlgorithmConfig(_Strict):
    """A named preset (see docs/algorithms.md) and optional overrides of its settings."""

    preset: str = Field(
        "bot-grpo", description="bot-grpo, grpo, dapo, gspo, dr-grpo, pure, process, token-pool"
    )
    estimator: str | None = Field(None, description="override the preset's advantage estimator")
    estimator_options: dict[str, Any] = Field(default_factory=dict, description="options for the estimator")
    ratio_level: Literal["token", "sequence"] | None = Field(
        None, description="override: importance ratio level"
    )
    aggregation: Literal["sequence", "token", "constant"] | None = Field(
        None, description="override: loss aggregation"
    )
    eps_low: float | None = Field(None, ge=0, description="override: lower clip range")
    eps_high: float | None = Field(None, ge=0, description="override: upper clip range (DAPO clip-higher)")
    kl_coef: float | None = Field(
        None, ge=0, description="override: k3 KL coefficient to the reference model"
    )
    dynamic_sampling: bool | None = Field(
        None, description="override: drop zero-spread groups and refill (DAPO)"
    )


class RunConfig(_Strict):
    """A whole run file."""

    model: ModelConfig = Field(default_factory=ModelConfig)
    data: DataConfig = Field(default_factory=DataConfig)
    algorithm: AlgorithmConfig = Field(default_factory=AlgorithmConfig)
    rewards: RewardsConfig
    training: TrainingConfig = Field(default_factory=TrainingConfig)
    engine: EngineConfig = Field(default_factory=EngineConfig)


# --- error formatting --------------------------------------------------------------------------------------------
def _path(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def _model_at(loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The pydantic model that holds the key at ``loc`` (to suggest valid keys)."""
    model: Any = RunConfig
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        field = (
            model.model_fields.get(part) if isinstance(model, type) and issubclass(model, BaseModel) else None
        )
        if field is None:
            return None
        annotation = field.annotation
        args = getattr(annotation, "__args__", ())
        candidates = [annotation, *args]
        model = next((c for c in candidates if isinstance(c, type) and issubclass(c, BaseModel)), None)
        if model is None:
            return None
    return model if isinstance(model, type) and issubclass(model, BaseModel) else None


def format_validation_error(exc: ValidationError, source: str, root: tuple[Any, ...] = ()) -> str:
    lines = [f"{source}: invalid run file"]
    for err in exc.errors():
        loc = root + tuple(err["loc"])
        path = _path(loc)
        if err["type"] == "extra_forbidden":
            model = _model_at(tuple(err["loc"])) if not root else None
            valid = sorted(model.model_fields) if model else []
            close = difflib.get_close_matches(str(loc[-1]), valid, n=1)
            fix = f"did you mean {close[0]!r}?" if close else "remove it"
            if valid:
                fix += f" Valid keys here: {', '.join(valid)}."
            lines.append(f"  - {path}: unknown key; {fix}")
        elif err["type"] == "missing":
            lines.append(f"  - {path}: required key is missing; add it (see docs/configuration.md)")
        else:
            value = err.get("input")
            shown = repr(value) if not isinstance(value, dict) else "{...}"
            if len(shown) > 80:
                shown = shown[:77] + "..."
            lines.append(f"  - {path}: {err['msg']} (got {shown}); fix the value (see docs/configuration.md)")
    return "\n".join(lines)


# --- loading ---------------------------------------------------------------------------------------------------------
def _set_override(data: dict[str, Any], assignment: str) -> None:
    key, sep, raw = assignment.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"--set {assignment!r}: expected key.path=value, e.g. training.steps=50")
    try:
        value = yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        raise ConfigError(f"--set {assignment!r}: the value is not valid YAML ({exc})") from exc
    node: Any = data
    parts = key.strip().split(".")
    for part in parts[:-1]:
        if isinstance(node, list):
            node = node[int(part)]
            continue
        node = node.setdefault(part, {})
        if not isinstance(node, (dict, list)):
            raise ConfigError(f"--set {assignment!r}: {part!r} is not a section")
    if isinstance(node, list):
        node[int(parts[-1])] = value
    else:
        node[parts[-1]] = value


def read_yaml(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Parse a YAML mapping, turning syntax errors into a :class:`ConfigError` with line and column."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{source}: cannot read the run file ({exc.strerror}); check the path") from exc
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(
            f"{source}: YAML syntax error{where}: {problem}; fix the indentation/quoting there"
        ) from exc
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: the run file must be a mapping of sections (model, rewards, ...)")
    return data


def parse_config(data: dict[str, Any], *, source: str = "<config>", check_signals: bool = True) -> RunConfig:
    """Validate a run-file mapping; with ``check_signals`` also check signal names and params."""
    try:
        config = RunConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(exc, source)) from None
    check_algorithm(config, source)
    if check_signals:
        check_rewards(config.rewards, source)
    return config


def load_config(
    path: str | os.PathLike[str], overrides: list[str] | tuple[str, ...] = (), *, check_signals: bool = True
) -> RunConfig:
    """Read, override (``key.path=value``) and validate a run file."""
    data = read_yaml(path)
    for assignment in overrides:
        _set_override(data, assignment)
    return parse_config(data, source=str(path), check_signals=check_signals)


# --- semantic checks ---------------------------------------------------------------------------------------------------
def check_algorithm(config: RunConfig, source: str = "<config>") -> None:
    """Preset exists, and a token-level estimator is not paired with a sequence-level ratio."""
    from botgrpo_core.presets import BUILTIN_ESTIMATORS, PRESETS, PresetError, check_estimator_ratio

    algo = config.algorithm
    if algo.preset not in PRESETS:
        close = difflib.get_close_matches(algo.preset, list(PRESETS), n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise ConfigError(
            f"{source}: algorithm.preset: unknown preset {algo.preset!r}.{hint} Choose one of: {', '.join(PRESETS)}"
        )
    preset = PRESETS[algo.preset]
    if algo.estimator is not None and algo.estimator not in BUILTIN_ESTIMATORS:
        from botgrpo_core.plugins import PluginError, get_plugin_manager

        try:
            plugin_estimators = set(get_plugin_manager().estimator_functions())
        except PluginError as exc:
            raise ConfigError(f"{source}: algorithm.estimator: {exc}") from None
        if algo.estimator not in plugin_estimators:
            known = sorted(BUILTIN_ESTIMATORS | plugin_estimators)
            close = difflib.get_close_matches(algo.estimator, known, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise ConfigError(
                f"{source}: algorithm.estimator: unknown estimator {algo.estimator!r}.{hint} Known: "
                f"{', '.join(known)} (plugins add more through the botgrpo_register_estimators hook)"
            )
    try:
        check_estimator_ratio(
            algo.estimator or preset.estimator,
            algo.ratio_level or preset.ratio_level,
            where="algorithm.ratio_level",
        )
    except PresetError as exc:
        raise ConfigError(f"{source}: {exc}") from None


def signal_bounds(
    rewards: RewardsConfig, manager: Any = None
) -> list[tuple[SignalConfig, Any, tuple[float, float]]]:
    """``(signal config, registered signal, bounds)`` for every configured signal (params validated)."""
    from botgrpo_core.plugins import get_plugin_manager

    manager = manager or get_plugin_manager()
    out = []
    for i, signal in enumerate(rewards.signals):
        registered = manager.get_signal(signal.name)
        params = validate_params(registered, signal, f"rewards.signals[{i}]")
        out.append((signal, registered, registered.spec.resolve_bounds(params)))
    return out


def validate_params(registered: Any, signal: SignalConfig, path: str) -> BaseModel:
    """Validate a signal's params against its plugin's model; errors name the key and the plugin."""
    try:
        return registered.spec.params_model.model_validate(signal.params)
    except ValidationError as exc:
        lines = [
            f"{path}.params: invalid params for signal {signal.name!r} (plugin {registered.distribution}):"
        ]
        fields = sorted(registered.spec.params_model.model_fields)
        for err in exc.errors():
            key = _path(tuple(err["loc"]))
            if err["type"] == "extra_forbidden":
                close = difflib.get_close_matches(str(err["loc"][-1]), fields, n=1)
                fix = f"did you mean {close[0]!r}?" if close else f"valid params: {', '.join(fields)}"
                lines.append(f"  - {path}.params.{key}: unknown param; {fix}")
            else:
                lines.append(f"  - {path}.params.{key}: {err['msg']} (got {err.get('input')!r})")
        raise ConfigError("\n".join(lines)) from None


def outcome_dominance(
    rewards: RewardsConfig, bounds: list[tuple[SignalConfig, Any, tuple[float, float]]]
) -> dict[str, Any]:
    """The design's condition ``alpha * d > 2 * beta * sum_k |w_k| b_k``.

    ``d`` is the smallest gap between distinct outcomes (``rewards.outcome_gap``, or by default the
    smallest ``|a_j| * (high_j - low_j)`` of the global signals, i.e. binary outcomes at the bounds);
    ``b_k = max(|low_k|, |high_k|)``. When it holds, every token of a rollout with a better outcome
    gets a higher reward than every token of a worse one.
    """
    globals_ = [(s, b) for s, reg, b in bounds if reg.spec.kind == "global"]
    locals_ = [(s, b) for s, reg, b in bounds if reg.spec.kind == "local"]
    gaps = [abs(s.weight) * (high - low) for s, (low, high) in globals_ if abs(s.weight) * (high - low) > 0]
    gap = rewards.outcome_gap if rewards.outcome_gap is not None else (min(gaps) if gaps else 0.0)
    local_bound = sum(abs(s.weight) * max(abs(low), abs(high)) for s, (low, high) in locals_)
    lhs, rhs = rewards.alpha * gap, 2 * rewards.beta * local_bound
    return {"holds": lhs > rhs or rhs == 0, "alpha_gap": lhs, "two_beta_local": rhs, "outcome_gap": gap}


def check_rewards(rewards: RewardsConfig, source: str = "<config>", manager: Any = None) -> dict[str, Any]:
    """Resolve every signal, validate its params, and run the outcome-dominance check."""
    from botgrpo_core.plugins import PluginError

    try:
        bounds = signal_bounds(rewards, manager)
    except PluginError as exc:
        index = next((i for i, s in enumerate(rewards.signals) if repr(s.name) in str(exc)), None)
        where = f"rewards.signals[{index}].name" if index is not None else "rewards.signals"
        raise ConfigError(f"{source}: {where}: {exc}") from None
    except ConfigError as exc:
        raise ConfigError(f"{source}: {exc}") from None
    if rewards.beta > 0 and not any(reg.spec.kind == "local" for _, reg, _ in bounds):
        warnings.warn(
            f"{source}: rewards.beta is {rewards.beta} but no local signal is configured: the mixture is "
            "outcome-only (BoT-GRPO then equals GRPO). Add a local signal or set beta: 0.",
            UserWarning,
            stacklevel=2,
        )
    dominance = outcome_dominance(rewards, bounds)
    if not dominance["holds"]:
        message = (
            f"{source}: rewards: outcome dominance does not hold: alpha * d = {dominance['alpha_gap']:.4g} is not "
            f"above 2 * beta * sum_k |b_k| * bound_k = {dominance['two_beta_local']:.4g}, so local signals can rank a "
            "token of a failed rollout above one of a successful rollout. Lower rewards.beta or local weights, "
            "or raise rewards.alpha"
            + (
                ", or set rewards.strict: false to accept it with a warning."
                if rewards.strict
                else " (rewards.strict: true makes this an error)."
            )
        )
        if rewards.strict:
            raise ConfigError(message)
        warnings.warn(message, OutcomeDominanceWarning, stacklevel=2)
    return dominance
