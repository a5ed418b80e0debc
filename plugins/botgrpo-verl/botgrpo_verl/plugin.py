"""The ``verl.plugins`` entry point: ``import verl`` imports this module, which registers botgrpo with verl
(estimators, reward manager) and adapts verl 0.9.1's agent loop to carry dense token rewards.

verl loads its plugins inside a ``try`` and logs a failure at debug level only, so a broken plugin would
silently register nothing. This module therefore reports every failure itself, on stderr, naming the
plugin and the cause: its own (the estimators or the reward manager not registered) and that of any
botgrpo plugin whose estimators it could not load.
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

DISTRIBUTION = "botgrpo-verl"

#: verl name -> the function registered under it (one function per name, so registering twice is harmless).
_REGISTERED: dict[str, Callable[..., Any]] = {}


def warn(message: str) -> None:
    """One line on stderr, prefixed with this plugin's name (verl's loader would swallow an exception)."""
    sys.stderr.write(f"warning: {DISTRIBUTION}: {message}\n")
    sys.stderr.flush()


def register_estimators(manager: Any = None) -> list[str]:
    """Register every botgrpo estimator with verl as ``botgrpo_<name>``; returns the verl names.

    Estimators of installed botgrpo plugins (``botgrpo_register_estimators``) are included; a botgrpo
    plugin that fails to load, or whose estimators clash, is reported on stderr and the others still
    register.
    """
    from verl.trainer.ppo.core_algos import register_adv_est

    from botgrpo_core import available_estimators, get_plugin_manager
    from botgrpo_verl.estimators import make_verl_estimator, verl_name

    manager = manager or get_plugin_manager()
    try:
        manager.register_estimators()
    except Exception as exc:  # a clash between plugins: the built-ins still register
        warn(f"botgrpo plugin estimators not registered ({type(exc).__name__}: {exc})")
    for failure in manager.failures.values():
        warn(
            f"botgrpo plugin {failure.entry_point!r} ({failure.distribution} {failure.version}) failed to "
            f"load, its estimators are missing: {failure.error}"
        )
    names = []
    for estimator in available_estimators():
        name = verl_name(estimator)
        fn = _REGISTERED.setdefault(name, make_verl_estimator(estimator))
        register_adv_est(name)(fn)
        names.append(name)
    return names


def register_reward_manager() -> None:
    """Register the reward manager ``botgrpo`` (``reward.reward_manager.name=botgrpo``)."""
    import botgrpo_verl.reward_manager  # noqa: F401  (registers on import)


def install_dense_agent_loop() -> None:
    """Let the ``botgrpo`` manager's dense token rewards through verl's agent loop (its default reward path)
    where this verl's code is recognised; a warning on stderr otherwise (:mod:`botgrpo_verl.agent_loop`)."""
    from botgrpo_verl.agent_loop import install

    install()


def register_cpu_platform() -> None:
    """Register verl's ``cpu`` platform (chosen only by ``VERL_PLATFORM=cpu``; :mod:`botgrpo_verl.cpu_platform`)."""
    import botgrpo_verl.cpu_platform  # noqa: F401  (registers on import)


def _register() -> None:
    for step in (
        register_cpu_platform,
        register_estimators,
        register_reward_manager,
        install_dense_agent_loop,
    ):
        try:
            step()
        except Exception as exc:
            warn(
                f"failed to load ({step.__name__}): {type(exc).__name__}: {exc}; "
                f"verl will not know the botgrpo names.\n{traceback.format_exc()}"
            )


def _overrides(argv: Sequence[str]) -> dict[str, str]:
    """Hydra's ``key=value`` overrides (``+key``, ``++key`` too; quotes around the value removed)."""
    out = {}
    for arg in argv:
        key, eq, value = arg.partition("=")
        if eq and key and not key.startswith("-"):
            value = value.strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                value = value[1:-1]
            out[key.lstrip("+~")] = value
    return out


def launch_problems(argv: Sequence[str]) -> list[str]:
    """What verl's trainer would refuse minutes into a launch (Ray, its workers and vLLM up), found from the
    command line's Hydra overrides at once: an ``algorithm.adv_estimator=botgrpo_*`` that is not registered (the
    botgrpo names listed), a ``reward.reward_kwargs.botgrpo_rewards`` file that is missing or does not check as a
    run file's ``rewards:`` section does, a ``botgrpo_scalar_fallback`` that is not true or false."""
    import difflib

    overrides = _overrides(argv)
    problems = []
    estimator = overrides.get("algorithm.adv_estimator", "")
    if estimator.startswith("botgrpo_") and estimator not in _REGISTERED:
        names = sorted(_REGISTERED)
        near = difflib.get_close_matches(estimator, names, n=1)
        problems.append(
            f"algorithm.adv_estimator={estimator} is not a botgrpo estimator"
            + (f" (did you mean {near[0]}?)" if near else "")
            + f"; botgrpo's are: {', '.join(names)}"
        )
    from botgrpo_verl.reward_manager import REWARDS_KEY, SCALAR_FALLBACK_KEY

    fallback = overrides.get(f"reward.reward_kwargs.{SCALAR_FALLBACK_KEY}")
    if fallback is not None and fallback.lower() not in ("true", "false"):
        problems.append(f"reward.reward_kwargs.{SCALAR_FALLBACK_KEY} must be true or false, got {fallback!r}")
    path = overrides.get(f"reward.reward_kwargs.{REWARDS_KEY}")
    if path is not None:
        problem = _rewards_problem(path)
        if problem:
            problems.append(f"reward.reward_kwargs.{REWARDS_KEY}={path}: {problem}")
    return problems


def _rewards_problem(path: str) -> str | None:
    """Why the rewards file would not load in the reward manager (as ``botgrpo validate`` checks it), or None."""
    from pathlib import Path

    from botgrpo_core import ConfigError, RewardMixture
    from botgrpo_verl.reward_manager import _refuse_group_fills

    if not Path(path).is_file():
        return "no such file; point it at a botgrpo run file or its rewards section"
    try:
        mixture = RewardMixture.from_yaml(path)
    except (ConfigError, ValueError, OSError) as exc:
        return str(exc).strip()
    try:
        _refuse_group_fills(mixture)
    except ValueError as exc:
        return str(exc)
    finally:
        getattr(mixture, "close", lambda: None)()
    return None


def _launched_trainer() -> bool:
    """Whether this process is verl's trainer being started (``python -m verl.trainer.main_ppo ...`` or its file),
    not a Ray worker or a script: the process whose command line holds the Hydra overrides."""
    argv = list(getattr(sys, "orig_argv", sys.argv))
    if "-m" in argv[:-1] and argv[argv.index("-m") + 1].startswith("verl.trainer.main_"):
        return True
    return bool(sys.argv) and Path(sys.argv[0]).name.startswith("main_ppo")


def check_launch() -> None:
    """In verl's trainer process, before Ray or any worker starts: :func:`launch_problems`; each one line on
    stderr, then exit 2 (SystemExit passes verl's plugin loader, which catches only Exception)."""
    if not _launched_trainer():
        return
    problems = launch_problems(sys.argv[1:])
    if problems:
        for problem in problems:
            sys.stderr.write(f"error: {DISTRIBUTION}: {problem}\n")
        sys.stderr.flush()
        raise SystemExit(2)


try:
    _register()
except BaseException as exc:  # pragma: no cover - e.g. an import of verl itself failing mid-way
    warn(f"failed to load: {type(exc).__name__}: {exc}")
    raise
check_launch()
