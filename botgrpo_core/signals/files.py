"""A signal from a Python file named in the run file: ``path: rewards/no_todo.py:score``.

A one-off signal without a package or the Python API (verl's ``custom_reward_function.path``). The
function takes the batch and returns one result per sample, as a plugin scorer's ``score`` does::

    def score(samples: list[Sample]) -> list[float | Value | list[Span] | TokenValues | SampleError]

The run file gives what a plugin would declare: ``kind`` (global or local) and ``bounds``. The signal is then
registered like any plugin's (``<namespace>.<signal>``, refused when a plugin already has the name) and runs
in the same runner: the result checks against its bounds, the result cache, ``on_error``, and with
``workers`` > 0 the core's worker pool with ``timeout_s`` and ``memory_mb``. A worker loads the file itself
(:class:`FileScorer` pickles as the path and the function's name), so the function needs no importable
module. Relative paths are read from the current folder, as ``data.path`` is.

The file is the user's own code, imported like a plugin; model output reaches the function as data only.
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from botgrpo_core.signals import Sample, SampleResult, SignalKind, SignalSpec

#: modules loaded from files in this process, by resolved path (a worker loads each file once)
_LOADED: dict[str, types.ModuleType] = {}


class FileSignalError(ValueError):
    """A file signal that cannot load; the message names the problem and the fix (the caller adds the key)."""


def split_path(spec: str) -> tuple[Path, str]:
    """``"dir/file.py:function"`` -> ``(Path("dir/file.py"), "function")``."""
    file, colon, function = spec.rpartition(":")
    if not colon or not file or not function.isidentifier() or not file.endswith(".py"):
        raise FileSignalError(
            f"{spec!r} is not 'path/to/file.py:function'; name a Python file and, after ':', a function in it"
        )
    return Path(file), function


def _module(path: Path) -> types.ModuleType:
    """The module of ``path`` (loaded once per process under a name derived from the resolved path)."""
    key = str(path.resolve())
    if key in _LOADED:
        return _LOADED[key]
    if not path.is_file():
        where = "" if path.is_absolute() else f" (relative to {Path.cwd()}, where the run starts)"
        raise FileSignalError(f"{str(path)!r} does not exist{where}; fix the path or create the file")
    name = "botgrpo_file_signal_" + hashlib.sha1(key.encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(name, key)
    if spec is None or spec.loader is None:
        raise FileSignalError(f"{str(path)!r} cannot be loaded as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise FileSignalError(
            f"importing {str(path)!r} failed: {type(exc).__name__}: {exc}; fix the file"
        ) from exc
    _LOADED[key] = module
    return module


def load_function(path: Path, function: str) -> Callable[[Sequence[Sample]], Sequence[SampleResult]]:
    """The function ``function`` of the file ``path``; :class:`FileSignalError` when either is missing."""
    module = _module(path)
    fn = getattr(module, function, None)
    if fn is None:
        found = sorted(
            n
            for n, v in vars(module).items()
            if callable(v) and getattr(v, "__module__", None) == module.__name__
        )
        listed = ", ".join(found) if found else "none"
        raise FileSignalError(
            f"{str(path)!r} defines no {function!r} (its functions: {listed}); fix the name after ':'"
        )
    if not callable(fn):
        raise FileSignalError(f"{str(path)!r}: {function!r} is a {type(fn).__name__}, not a function")
    return fn


class _FunctionScorer:
    """A :class:`~botgrpo_core.signals.Scorer` around the file's function."""

    def __init__(self, fn: Callable[[Sequence[Sample]], Sequence[SampleResult]]) -> None:
        self.fn = fn

    def score(self, samples: Sequence[Sample]) -> Sequence[SampleResult]:
        return self.fn(list(samples))


@dataclass(frozen=True)
class FileScorer:
    """``make_scorer`` of a file signal: picklable as the file's absolute path and the function's name, so a
    worker process of the core's pool loads the file itself."""

    path: str
    function: str

    def __call__(self, params: BaseModel) -> _FunctionScorer:
        return _FunctionScorer(load_function(Path(self.path), self.function))


def file_signal_spec(name: str, path_spec: str, kind: SignalKind, bounds: tuple[float, float]) -> SignalSpec:
    """The :class:`SignalSpec` of a run file's file signal, its file imported and function found now (so
    ``botgrpo validate`` reports a missing file or function)."""
    path, function = split_path(path_spec)
    load_function(path, function)
    return SignalSpec(
        name,
        kind,
        (float(bounds[0]), float(bounds[1])),
        FileScorer(str(path.resolve()), function),
        description=f"from {path_spec}",
    )


def register_file_signals(signals: Sequence[Any], manager: Any) -> None:
    """Register every configured signal with a ``path`` on ``manager`` (again only when its file, function,
    kind or bounds changed); :class:`FileSignalError` prefixed with the signal's key on a problem."""
    from botgrpo_core.signals.manager import _InProcessSignals

    for i, signal in enumerate(signals):
        if getattr(signal, "path", None) is None:
            continue
        try:
            spec = file_signal_spec(signal.name, signal.path, signal.kind, signal.bounds)
        except FileSignalError as exc:
            raise FileSignalError(f"rewards.signals[{i}].path: {exc}") from None
        plugin = f"{signal.name} (file)"
        manager.load_namespace(spec.namespace)  # a plugin of that namespace may have the name
        registered = manager.signals().get(signal.name)
        if registered is not None and registered.plugin != plugin:
            raise FileSignalError(
                f"rewards.signals[{i}].name: {signal.name!r} is a signal of plugin {registered.plugin!r} "
                f"({registered.distribution}); give the signal from {signal.path!r} a name of its own"
            )
        if registered is not None and registered.plugin == plugin:
            if registered.spec == spec:
                continue
            manager.unregister(plugin)
        manager.register(_InProcessSignals((spec,)), name=plugin, distribution=signal.path)
