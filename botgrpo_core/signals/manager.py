"""Plugin discovery and the signal registry.

Entry points of the group ``botgrpo`` are listed once (one ``importlib.metadata`` pass) and imported
lazily: a config that uses ``sympy.steps`` imports only the entry point named ``sympy``.
``BOTGRPO_LOAD_PLUGINS`` (comma-separated entry-point or distribution names; empty = none) limits
which installed plugins may load at all. A plugin that fails to import is recorded with its
distribution and traceback; it is fatal only when a config asks for one of its signals.
"""

from __future__ import annotations

import difflib
import os
import traceback
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

import pluggy

from botgrpo_core.signals import SignalSpec
from botgrpo_core.signals.hookspecs import ENTRY_POINT_GROUP, PROJECT_NAME, TokenRewardSpec, hookimpl

ALLOWLIST_ENV = "BOTGRPO_LOAD_PLUGINS"
BUILTIN_DISTRIBUTION = "botgrpo-core"


class PluginError(Exception):
    """Base class for plugin problems; messages say which plugin and how to fix it."""


class DuplicateSignalError(PluginError):
    """Two distributions registered the same signal name."""


class UnknownSignalError(PluginError, KeyError):
    """A config names a signal that no loaded plugin registers."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0])


class PluginLoadError(PluginError):
    """A plugin whose signals are needed failed to import or register."""


@dataclass(frozen=True)
class PluginInfo:
    """One loaded plugin as ``botgrpo plugins`` lists it."""

    name: str
    distribution: str
    version: str
    hooks: tuple[str, ...]
    signals: tuple[str, ...] = ()


@dataclass(frozen=True)
class RegisteredSignal:
    spec: SignalSpec
    plugin: str
    distribution: str
    version: str


@dataclass
class LoadFailure:
    entry_point: str
    distribution: str
    version: str
    error: str
    traceback: str


@dataclass
class _EntryPoint:
    name: str
    value: str
    distribution: str
    version: str
    ep: Any = field(repr=False)


def _parse_allowlist(raw: str | None) -> set[str] | None:
    if raw is None:
        return None
    return {part.strip() for part in raw.split(",") if part.strip()}


class PluginManager:
    """Loads botgrpo plugins and keeps the signal registry.

    :param allowlist: entry-point or distribution names allowed to load; ``None`` reads
        ``BOTGRPO_LOAD_PLUGINS`` (unset = all installed plugins may load).
    :param entry_points: for tests: an explicit list instead of the installed ones.
    """

    def __init__(self, *, allowlist: Iterable[str] | None = None, entry_points: Iterable[Any] | None = None):
        self._pm = pluggy.PluginManager(PROJECT_NAME)
        self._pm.add_hookspecs(TokenRewardSpec)
        self._allowlist = (
            set(allowlist) if allowlist is not None else _parse_allowlist(os.environ.get(ALLOWLIST_ENV))
        )
        self._entry_points: list[_EntryPoint] | None = None
        self._explicit_entry_points = list(entry_points) if entry_points is not None else None
        self._loaded: set[str] = set()
        self._signals: dict[str, RegisteredSignal] = {}
        self._plugins: dict[str, PluginInfo] = {}
        self.failures: dict[str, LoadFailure] = {}
        from botgrpo_core import __version__
        from botgrpo_core.signals import builtins as builtin_signals

        self.register(builtin_signals, name="core", distribution=BUILTIN_DISTRIBUTION, version=__version__)

    # -- discovery ----------------------------------------------------------------------------------
    def _discover(self) -> list[_EntryPoint]:
        if self._entry_points is None:
            raw = (
                self._explicit_entry_points
                if self._explicit_entry_points is not None
                else metadata.entry_points(group=ENTRY_POINT_GROUP)
            )
            found = []
            for ep in raw:
                dist = getattr(ep, "dist", None)
                found.append(
                    _EntryPoint(
                        name=ep.name,
                        value=ep.value,
                        distribution=dist.name if dist is not None else ep.name,
                        version=dist.version if dist is not None else "unknown",
                        ep=ep,
                    )
                )
            self._entry_points = found
        return self._entry_points

    def _allowed(self, ep: _EntryPoint) -> bool:
        return self._allowlist is None or ep.name in self._allowlist or ep.distribution in self._allowlist

    def installed(self) -> list[tuple[str, str, str, bool]]:
        """``(entry point, distribution, version, allowed)`` of every installed plugin, without importing."""
        return [(e.name, e.distribution, e.version, self._allowed(e)) for e in self._discover()]

    # -- loading -------------------------------------------------------------------------------------
    def _load_entry_point(self, ep: _EntryPoint) -> None:
        key = f"{ep.distribution}:{ep.name}"
        if key in self._loaded or key in self.failures:
            return
        try:
            plugin = ep.ep.load()
            if isinstance(plugin, type):  # an entry point may name a plugin class: use an instance
                plugin = plugin()
            self.register(plugin, name=ep.name, distribution=ep.distribution, version=ep.version)
        except PluginError:
            raise
        except Exception as exc:
            self.failures[key] = LoadFailure(
                entry_point=ep.name,
                distribution=ep.distribution,
                version=ep.version,
                error=f"{type(exc).__name__}: {exc}",
                traceback=traceback.format_exc(),
            )
            return
        self._loaded.add(key)

    def load_namespace(self, namespace: str) -> None:
        """Import the allowed entry points named ``namespace`` (the signal prefix)."""
        for ep in self._discover():
            if ep.name == namespace and self._allowed(ep):
                self._load_entry_point(ep)

    def load_all(self) -> None:
        """Import every allowed entry point (``botgrpo plugins`` does this)."""
        for ep in self._discover():
            if self._allowed(ep):
                self._load_entry_point(ep)

    # -- registration ----------------------------------------------------------------------------------
    def register(self, plugin: Any, *, name: str, distribution: str | None = None, version: str = "") -> None:
        """Register a plugin object or module in-process (entry points go through this too)."""
        distribution = distribution or name
        if self._pm.has_plugin(name):
            raise PluginError(f"a plugin named {name!r} is already registered; unregister it first")
        self._pm.register(plugin, name=name)
        hooks = tuple(sorted(h.name for h in self._pm.get_hookcallers(plugin) or ()))
        added: list[SignalSpec] = []
        caller = self._pm.subset_hook_caller(
            "botgrpo_register_signals",
            remove_plugins=[p for p in self._pm.get_plugins() if p is not plugin],
        )
        caller(register=added.append)
        for spec in added:
            if not isinstance(spec, SignalSpec):
                self._pm.unregister(plugin)
                raise PluginError(
                    f"plugin {name!r} ({distribution}) registered {spec!r}, which is not a SignalSpec"
                )
            previous = self._signals.get(spec.name)
            if previous is not None:
                self._pm.unregister(plugin)
                raise DuplicateSignalError(
                    f"signal {spec.name!r} is registered by both {previous.distribution!r} "
                    f"(plugin {previous.plugin!r}) and {distribution!r} (plugin {name!r}); uninstall one "
                    f"of them, or limit loading with {ALLOWLIST_ENV}"
                )
        for spec in added:
            self._signals[spec.name] = RegisteredSignal(spec, name, distribution, version)
        self._plugins[name] = PluginInfo(name, distribution, version, hooks, tuple(s.name for s in added))

    def unregister(self, name: str) -> None:
        """Remove an in-process plugin and its signals."""
        plugin = self._pm.get_plugin(name)
        if plugin is None:
            raise PluginError(f"no plugin named {name!r} is registered")
        self._pm.unregister(plugin)
        self._signals = {k: v for k, v in self._signals.items() if v.plugin != name}
        self._plugins.pop(name, None)

    # -- queries ----------------------------------------------------------------------------------------
    @property
    def hook(self) -> Any:
        """pluggy's hook relay (call hooks with keyword arguments)."""
        return self._pm.hook

    def plugins(self) -> list[PluginInfo]:
        return sorted(self._plugins.values(), key=lambda p: p.name)

    def signals(self) -> dict[str, RegisteredSignal]:
        return dict(self._signals)

    def get_signal(self, name: str) -> RegisteredSignal:
        """The registered signal ``name``, importing its plugin on first use.

        :raises UnknownSignalError: with the installed signals and the nearest name.
        :raises PluginLoadError: when the plugin that should provide it failed to import.
        """
        if name not in self._signals:
            namespace = name.partition(".")[0]
            self.load_namespace(namespace)
        if name in self._signals:
            return self._signals[name]
        failed = [f for f in self.failures.values() if f.entry_point == name.partition(".")[0]]
        if failed:
            f = failed[0]
            raise PluginLoadError(
                f"signal {name!r} comes from plugin {f.entry_point!r} (distribution {f.distribution} "
                f"{f.version}), which failed to load: {f.error}. Reinstall or fix that package.\n{f.traceback}"
            )
        self.load_all()  # the full list makes the suggestion useful
        misnamed = self._signals.get(name)
        if misnamed is not None:  # loading by namespace cannot find it: fail here, not at the next run
            namespace = name.partition(".")[0]
            raise UnknownSignalError(
                f"signal {name!r} is registered by plugin {misnamed.plugin!r} (distribution "
                f"{misnamed.distribution} {misnamed.version}), which is published under the entry-point name "
                f"{misnamed.plugin!r}, not {namespace!r}: the core finds a signal's plugin by the part of its "
                f"name before the dot. Fix the plugin: publish it as {namespace!r} (pyproject.toml: "
                f'[project.entry-points.{ENTRY_POINT_GROUP}] {namespace} = "...") or name its signals '
                f"'{misnamed.plugin}.<signal>'; then reinstall it."
            )
        known = sorted(self._signals)
        close = difflib.get_close_matches(name, known, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        blocked = [
            e.name for e in self._discover() if not self._allowed(e) and e.name == name.partition(".")[0]
        ]
        if blocked:
            hint += f" Plugin {blocked[0]!r} is installed but not in {ALLOWLIST_ENV}."
        raise UnknownSignalError(
            f"unknown signal {name!r}.{hint} Installed signals: {', '.join(known) or '(none)'}. "
            "Install the plugin that provides it (e.g. pip install botgrpo-<namespace>)."
        )

    def each_plugin(self, hook: str) -> Iterator[tuple[str, str, Any]]:
        """``(plugin name, distribution, caller of hook for that plugin alone)`` of every allowed plugin
        (all loaded first): results are told apart by plugin, so a clash can name both."""
        self.load_all()
        plugins = self._pm.get_plugins()
        for plugin in plugins:
            name = self._pm.get_name(plugin) or repr(plugin)
            info = self._plugins.get(name)
            others = [p for p in plugins if p is not plugin]
            yield name, info.distribution if info else name, self._pm.subset_hook_caller(hook, others)

    def estimator_functions(self) -> dict[str, tuple[Any, str]]:
        """``{name: (fn, plugin)}`` of every estimator the loaded plugins register (no torch needed).

        :raises PluginError: two plugins register the same name.
        """
        found: dict[str, tuple[Any, str]] = {}
        for plugin_name, _, caller in self.each_plugin("botgrpo_register_estimators"):

            def _collect(name: str, fn: Any, _plugin: str = plugin_name) -> None:
                if name in found and found[name][0] is not fn:
                    raise PluginError(
                        f"estimator {name!r} is registered by both plugin {found[name][1]!r} and {_plugin!r}; "
                        f"uninstall one of them, or limit loading with {ALLOWLIST_ENV}"
                    )
                found[name] = (fn, _plugin)

            caller(register=_collect)
        return found

    def register_estimators(self) -> None:
        """Add plugin estimators to the advantage registry (imports torch). Repeat calls are harmless.

        :raises PluginError: a plugin estimator clashes with a built-in or another registered one.
        """
        from botgrpo_core.estimators.registry import available_estimators, get_estimator, register_estimator

        for name, (fn, plugin) in self.estimator_functions().items():
            if name in available_estimators():
                if get_estimator(name) is fn:
                    continue  # already registered by an earlier call
                raise PluginError(
                    f"plugin {plugin!r} registers estimator {name!r}, but that name is taken by another "
                    "estimator (a built-in or another plugin's); rename it in the plugin"
                )
            register_estimator(name, fn)


_default: PluginManager | None = None


def get_plugin_manager() -> PluginManager:
    """The process-wide plugin manager (created on first use)."""
    global _default
    if _default is None:
        _default = PluginManager()
    return _default


def reset_plugin_manager() -> None:
    """Forget the process-wide manager (tests; after changing ``BOTGRPO_LOAD_PLUGINS``)."""
    global _default
    _default = None


class _InProcessSignals:
    """A plugin made of signals defined in the user's own code (see :func:`register_signal`)."""

    def __init__(self, specs: tuple[SignalSpec, ...]) -> None:
        self.specs = specs

    @hookimpl
    def botgrpo_register_signals(self, register: Any) -> None:
        for spec in self.specs:
            register(spec)


def register_signal(*specs: SignalSpec, manager: PluginManager | None = None) -> None:
    """Register signals defined in a script or notebook: no package, no entry point.

    A run file or :meth:`RewardMixture.from_dict <botgrpo_core.rewards.mixture.RewardMixture.from_dict>`
    then names them like any plugin's signal. Each is registered as its own plugin ``"<name> (in-process)"``
    of distribution ``__main__`` (``botgrpo plugins`` shows it); a name another plugin already registers is
    an error naming both. With ``workers: 0`` (the default) they run in the trainer's process; worker
    processes need ``make_scorer`` importable by reference (a module-level function of an importable module).

    :param specs: the signals.
    :param manager: the plugin manager (default: the process-wide one that trainers and the CLI use).
    """
    manager = manager or get_plugin_manager()
    for spec in specs:
        if not isinstance(spec, SignalSpec):
            raise TypeError(f"register_signal takes SignalSpec objects, got {type(spec).__name__}")
        manager.register(
            _InProcessSignals((spec,)), name=f"{spec.name} (in-process)", distribution="__main__"
        )
