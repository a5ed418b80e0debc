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
from collections.abc import Callable
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


try:
    _register()
except BaseException as exc:  # pragma: no cover - e.g. an import of verl itself failing mid-way
    warn(f"failed to load: {type(exc).__name__}: {exc}")
    raise
