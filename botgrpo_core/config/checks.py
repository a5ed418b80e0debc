"""Semantic checks of a run file: algorithm vs ratio level, signal names and params, outcome dominance."""

from __future__ import annotations

import difflib
import warnings
from typing import Any

from pydantic import BaseModel, ValidationError

from botgrpo_core.config.errors import (
    MAX_LISTED,
    ConfigError,
    OutcomeDominanceWarning,
    _path,
    bounded_repr,
    format_validation_error,
    more_errors,
)
from botgrpo_core.config.models import RewardsConfig, RunConfig, SignalConfig
from botgrpo_core.config.sections import scalar_problems
from botgrpo_core.signals import OWN_POOL_KEYS


# --- semantic checks ---------------------------------------------------------------------------------------------------
def check_algorithm(config: RunConfig, source: str = "<config>") -> None:
    """Preset exists, the loss settings (preset or overrides) can work, and a token-level estimator is
    not paired with a sequence-level ratio."""
    from botgrpo_core.config.presets import PRESETS, PresetError, check_estimator_ratio
    from botgrpo_core.estimators.registry import BUILTIN_ESTIMATORS
    from botgrpo_core.loss import LOSS_SETTINGS, loss_settings_problem

    algo = config.algorithm
    if algo.preset not in PRESETS:
        close = difflib.get_close_matches(algo.preset, list(PRESETS), n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise ConfigError(
            f"{source}: algorithm.preset: unknown preset {algo.preset!r}.{hint} Choose one of: {', '.join(PRESETS)}"
        )
    preset = PRESETS[algo.preset]
    if algo.estimator is not None and algo.estimator not in BUILTIN_ESTIMATORS:
        from botgrpo_core.signals.manager import PluginError, get_plugin_manager

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
    loss = {k: getattr(preset, k) if getattr(algo, k) is None else getattr(algo, k) for k in LOSS_SETTINGS}
    problem = loss_settings_problem(**loss)
    if problem:  # it starts with the key: "eps_low=1.5 must lie in [0, 1) ..."
        raise ConfigError(f"{source}: algorithm.{problem}")
    try:
        check_estimator_ratio(
            algo.estimator or preset.estimator, loss["ratio_level"], where="algorithm.ratio_level"
        )
    except PresetError as exc:
        raise ConfigError(f"{source}: {exc}") from None


def signal_bounds(
    rewards: RewardsConfig, manager: Any = None
) -> list[tuple[SignalConfig, Any, tuple[float, float]]]:
    """``(signal config, registered signal, bounds)`` for every configured signal (params validated)."""
    from botgrpo_core.signals.files import FileSignalError, register_file_signals
    from botgrpo_core.signals.manager import get_plugin_manager

    manager = manager or get_plugin_manager()
    try:
        register_file_signals(rewards.signals, manager)  # signals with a path: a function in a Python file
    except FileSignalError as exc:
        raise ConfigError(str(exc)) from None
    out = []
    for i, signal in enumerate(rewards.signals):
        registered = manager.get_signal(signal.name)
        params = validate_params(registered, signal, f"rewards.signals[{i}]")
        bounds = registered.spec.resolve_bounds(params)
        check_shaping(signal, registered.spec.kind, f"rewards.signals[{i}]", bounds)
        out.append((signal, registered, bounds))
    return out


def check_shaping(
    signal: SignalConfig, kind: str, path: str, bounds: tuple[float, float] | None = None
) -> None:
    """Step shaping (``after_first_error``, botgrpo_core.rewards.shaping), the value of uncovered tokens
    (``uncovered``, botgrpo_core.rewards.uncovered) and ``placement`` apply to local signals only, and
    ``after_first_error`` acts only after a negative span, which a signal whose ``bounds`` start at 0 or
    above never gives.

    :raises ConfigError: a key that would do nothing, naming ``path.<key>`` and the fix.
    """
    if kind == "local":
        if signal.after_first_error != "keep" and bounds is not None and bounds[0] >= 0:
            raise ConfigError(
                f"{path}.after_first_error is {signal.after_first_error!r} but {signal.name!r} never gives a "
                f"negative value (bounds [{bounds[0]:g}, {bounds[1]:g}]), so there is no first error to act "
                "after: remove the key or set it to 'keep'."
            )
        return
    if signal.placement != "span":
        raise ConfigError(
            f"{path}.placement is {signal.placement!r} but {signal.name!r} is a {kind} signal "
            "(one value per rollout, no spans to place): remove the key or set it to 'span'."
        )
    if signal.after_first_error != "keep":
        raise ConfigError(
            f"{path}.after_first_error is {signal.after_first_error!r} but {signal.name!r} is a {kind} signal "
            "(one value per rollout, no steps to shape): remove the key or set it to 'keep'."
        )
    if signal.shuffle_spans:
        raise ConfigError(
            f"{path}.shuffle_spans is true but {signal.name!r} is a {kind} signal "
            "(one value per rollout, no spans to move): remove the key or set it to false."
        )
    if signal.uncovered not in (None, "zero"):
        raise ConfigError(
            f"{path}.uncovered is {signal.uncovered!r} but {signal.name!r} is a {kind} signal "
            "(one value per rollout, on every token: no token is uncovered): remove the key or set it to 'zero'."
        )


def validate_params(registered: Any, signal: SignalConfig, path: str) -> BaseModel:
    """Validate a signal's params against its plugin's model; errors name the key and the plugin.

    For a signal that runs its own worker processes (``SignalSpec.own_pool``) the signal-level
    ``workers``/``timeout_s``/``memory_mb`` are the one place for those settings: the values the run file
    sets are filled into the params (an error in one names the signal-level key), and the same keys inside
    ``params`` are refused with the fix. For any other signal they drive the core's pool.
    """
    spec = registered.spec
    who = f"signal {signal.name!r} (plugin {registered.distribution})"
    if spec.own_pool:
        _refuse_pool_params(signal, path, who)
    else:
        _refuse_pool_keys_twice(registered, signal, path)
    scalars = scalar_problems(spec.params_model, signal.params, f"{path}.params")
    if scalars:
        key, problem = scalars[0]
        raise ConfigError(
            f"{key}: {problem} (signal {signal.name!r}, plugin {registered.distribution}); fix the value"
        )
    filled = {
        k: getattr(signal, k) for k in OWN_POOL_KEYS if spec.own_pool and getattr(signal, k) is not None
    }
    try:
        return spec.params_model.model_validate({**signal.params, **filled})
    except ValidationError as exc:
        lines = [f"{path}.params: invalid params for {who}:"]
        fields = sorted(spec.params_model.model_fields)
        errors = exc.errors()
        for err in errors[:MAX_LISTED]:
            key = _path(tuple(err["loc"]))
            got = f"got {bounded_repr(err.get('input'))}"
            if err["type"] == "extra_forbidden":
                close = difflib.get_close_matches(str(err["loc"][-1]), fields, n=1)
                fix = f"did you mean {close[0]!r}?" if close else f"valid params: {', '.join(fields)}"
                lines.append(f"  - {path}.params.{key}: unknown param; {fix}")
            elif len(err["loc"]) == 1 and err["loc"][0] in filled:  # a signal-level value the core filled in
                lines.append(f"  - {path}.{key}: {err['msg']} ({got}; {signal.name} runs its own processes)")
            else:
                lines.append(f"  - {path}.params.{key}: {err['msg']} ({got})")
        raise ConfigError("\n".join(lines + more_errors(len(errors)))) from None


def _refuse_pool_params(signal: SignalConfig, path: str, who: str) -> None:
    """A signal with its own processes takes its worker settings at signal level only."""
    inside = [k for k in OWN_POOL_KEYS if k in signal.params]
    if inside:
        key = inside[0]
        raise ConfigError(
            f"{path}.params.{key}: {who} runs its own worker processes, whose workers, timeout_s and "
            f"memory_mb are set at signal level: move it to {path}.{key} (e.g. `{key}: {bounded_repr(signal.params[key])}` beside `name:`) "
            f"and remove {path}.params.{key}"
        )


def _refuse_pool_keys_twice(registered: Any, signal: SignalConfig, path: str) -> None:
    """A plugin that starts processes of its own without declaring ``own_pool`` (its params name the keys):
    a signal-level key that would do nothing the user meant is an error naming both.

    ``workers`` would start a second pool around the plugin's own, and ``timeout_s``/``memory_mb`` are
    ignored without signal-level workers (the plugin's param is the one that applies). A resolved
    ``config.yaml`` (every default spelled out, null) still loads.
    """
    declared = registered.spec.params_model.model_fields
    both = [
        k
        for k in OWN_POOL_KEYS
        if getattr(signal, k) is not None and k in declared and (k == "workers" or not signal.workers)
    ]
    if both:
        key = both[0]
        own = f"{path}.params.{key}"
        why = (
            f"it starts its own processes from {own}, so {path}.{key} would run them inside more processes"
            if key == "workers"
            else f"{path}.{key} applies only to signals the core runs in its pool (signal-level workers > 0), "
            "so here it does nothing"
        )
        raise ConfigError(
            f"{path}.{key}: signal {signal.name!r} (plugin {registered.distribution}) has its own {key} param; "
            f"{why}. Set {own} instead and remove {path}.{key}"
        )


def _value_gap(signal: SignalConfig, registered: Any, bounds: tuple[float, float]) -> float:
    """A global signal's smallest difference between two of its values (``SignalSpec.gap``; ``high - low``)."""
    # the trainer's check passes the signal's runner
    registered = getattr(registered, "registered", registered)
    if getattr(registered.spec, "gap", None) is None:
        return bounds[1] - bounds[0]
    return registered.spec.resolve_gap(validate_params(registered, signal, "rewards.signals"))


def outcome_dominance(
    rewards: RewardsConfig, bounds: list[tuple[SignalConfig, Any, tuple[float, float]]]
) -> dict[str, Any]:
    """The design's condition ``alpha * d > 2 * beta * sum_k |w_k| b_k``.

    ``d`` is the smallest gap between distinct outcomes (``rewards.outcome_gap``, or by default the
    smallest ``|a_j| * gap_j`` of the global signals, ``gap_j`` the signal's declared ``SignalSpec.gap`` or
    ``high_j - low_j``, i.e. binary outcomes at the bounds);
    ``b_k = max(|low_k|, |high_k|)``. When it holds, every token of a rollout with a better outcome
    gets a higher reward than every token of a worse one. With no global signal and no ``outcome_gap``
    the outcomes the mixture sees are all equal, so it holds (``outcome_gap`` None): outcomes from
    elsewhere (a trainer's TRL ``reward_funcs``) are checked where they are known
    (``botgrpo_core.engine.dominance``).
    """
    globals_ = [(s, reg, b) for s, reg, b in bounds if reg.spec.kind == "global"]
    locals_ = [(s, b) for s, reg, b in bounds if reg.spec.kind == "local"]
    steps = [abs(s.weight) * _value_gap(s, reg, b) for s, reg, b in globals_]
    gaps = [g for g in steps if g > 0]
    gap = rewards.outcome_gap if rewards.outcome_gap is not None else (min(gaps) if gaps else None)
    local_bound = sum(abs(s.weight) * max(abs(low), abs(high)) for s, (low, high) in locals_)
    lhs, rhs = rewards.alpha * (gap or 0.0), 2 * rewards.beta * local_bound
    holds = lhs > rhs or rhs == 0 or gap is None
    return {"holds": holds, "alpha_gap": lhs, "two_beta_local": rhs, "outcome_gap": gap}


def dominance_message(dominance: dict[str, Any], alpha: float, beta: float, where: str = "rewards") -> str:
    """Why outcome dominance fails and the settings that make it hold (``alpha`` above, or ``beta`` below, the
    values the condition needs, computed from ``dominance``'s terms)."""
    gap, lhs, rhs = dominance["outcome_gap"], dominance["alpha_gap"], dominance["two_beta_local"]
    fixes = [f"set {where}.beta below {beta * lhs / rhs:.4g}" if lhs > 0 else f"set {where}.beta: 0"]
    if gap:
        fixes.append(f"raise {where}.alpha above {rhs / gap:.4g}")
    return (
        f"{where}: outcome dominance does not hold: alpha * d = {lhs:.4g} (smallest outcome gap d = {gap or 0:.4g}) "
        f"is not above 2 * beta * sum_k |b_k| * bound_k = {rhs:.4g}, so local signals can rank a token of a "
        f"failed rollout above one of a successful rollout. To fix it: {', or '.join(fixes)} (or lower the "
        "local signals' weights)"
    )


def check_training(config: RunConfig, source: str = "<config>") -> None:
    """Settings that cannot act within the run: ``rewards.on_signal_failure.steps`` set above
    ``training.steps`` (the guard would never fire). The default (5) is left alone on shorter runs (demos,
    tests, a resolved ``config.yaml`` that spells it out)."""
    guard, steps = config.rewards.on_signal_failure, config.training.steps
    default = type(guard).model_fields["steps"].default
    if "steps" in guard.model_fields_set and guard.steps != default and guard.steps > steps:
        raise ConfigError(
            f"{source}: rewards.on_signal_failure.steps is {guard.steps} but the run trains "
            f"training.steps = {steps} steps, so the guard could never act: set it to at most {steps}"
        )


def check_data(config: RunConfig, source: str = "<config>") -> None:
    """``data.source: task``: the task exists (built in, or a plugin's) and ``data.task_params`` fit its model.

    Checked at validation, like the signals, so ``botgrpo validate`` catches a misspelt task name; a task
    that is not built in loads the plugins (torch-free) to find it.
    """
    from pydantic import ValidationError

    from botgrpo_core.tasks import task_entry

    data = config.data
    if data.source != "task" or not data.task:
        return
    try:
        _, params_model = task_entry(data.task)
    except ValueError as exc:
        raise ConfigError(f"{source}: {exc}") from None
    try:
        params_model.model_validate(data.task_params)
    except ValidationError as exc:
        what = f"data.task_params of task {data.task!r}"
        raise ConfigError(format_validation_error(exc, source, model=params_model, what=what)) from None


def check_rewards(rewards: RewardsConfig, source: str = "<config>", manager: Any = None) -> dict[str, Any]:
    """Resolve every signal, validate its params, and run the outcome-dominance check."""
    from botgrpo_core.signals.manager import PluginError

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
            f"{source}: "
            + dominance_message(dominance, rewards.alpha, rewards.beta)
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
