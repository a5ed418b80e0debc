"""A signal from a Python file named in the run file: ``path: rewards/no_todo.py:score``.

A one-off signal without a package or the Python API (verl's ``custom_reward_function.path``). The
function takes the batch and returns one result per sample, as a plugin scorer's ``score`` does::

    def score(samples: list[Sample]) -> list[float | Value | list[Span] | TokenValues | SampleError]

The run file gives what a plugin would declare: ``kind`` (global or local) and ``bounds``. The signal is then
registered like any plugin's (``<namespace>.<signal>``, refused when a plugin already has the name) and runs
in the same runner: the result checks against its bounds, the result cache, ``on_error``, and with
``workers`` > 0 the core's worker pool with ``timeout_s`` and ``memory_mb``. A worker loads the file itself
(:class:`FileScorer` pickles as the path and the function's name), so the function needs no importable
module. Relative paths are read from the current folder, as ``data.path`` is; the file's own folder is
appended to ``sys.path`` (a sibling module imports).

The file is the user's own code, imported like a plugin (``botgrpo validate`` imports it too, so its
top-level code runs there); model output reaches the function as data only. What it prints goes to stderr;
``sys.exit`` at import is an error naming the key. ``train`` records each file's SHA-256 in
``signal_files.json`` and ``--resume`` refuses a file that changed since (:func:`check_digests`).
"""

from __future__ import annotations

import contextlib
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
    if path.is_dir():
        raise FileSignalError(f"{str(path)!r} is a folder, not a Python file; name the .py file in it")
    if not path.is_file():
        where = "" if path.is_absolute() else f" (relative to {Path.cwd()}, where the run starts)"
        raise FileSignalError(f"{str(path)!r} does not exist{where}; fix the path or create the file")
    folder = str(Path(key).parent)
    if folder not in sys.path:  # its sibling modules import, as they would for `python file.py`
        sys.path.append(folder)
    name = "botgrpo_file_signal_" + hashlib.sha1(key.encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(name, key)
    if spec is None or spec.loader is None:
        raise FileSignalError(f"{str(path)!r} cannot be loaded as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        with contextlib.redirect_stdout(sys.stderr):  # its prints are not the command's output
            spec.loader.exec_module(module)
    except SystemExit as exc:  # sys.exit() at import would end `botgrpo validate` / `train` silently
        del sys.modules[name]
        raise FileSignalError(
            f"importing {str(path)!r} called sys.exit({exc.code!r}); a signal file must not exit at import: "
            "remove the call (or put it under `if __name__ == '__main__':`)"
        ) from None
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
        with contextlib.redirect_stdout(sys.stderr):  # a print() never lands in `score --json`'s output
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


DIGESTS_FILE = "signal_files.json"


def file_digests(signals: Sequence[Any]) -> dict[str, dict[str, str]]:
    """``{"rewards.signals[i].path": {"path": resolved path, "sha256": ...}}`` of every file signal."""
    out = {}
    for i, signal in enumerate(signals):
        if getattr(signal, "path", None) is None:
            continue
        file = split_path(signal.path)[0].resolve()
        out[f"rewards.signals[{i}].path"] = {
            "path": str(file),
            "sha256": hashlib.sha256(file.read_bytes()).hexdigest(),
        }
    return out


def check_digests(recorded: dict[str, Any], current: dict[str, dict[str, str]]) -> str | None:
    """Why a resumed run must not go on with ``current`` signal files (None when each file is the one the
    run recorded): the code that scored the run so far would change silently mid-run."""
    for key in sorted(set(recorded) | set(current)):
        was, now = recorded.get(key), current.get(key)
        if was == now:
            continue
        if was is None or now is None:
            what = "is new" if was is None else "is gone"
            return (
                f"{key}: the signal file {what} since the run started ({DIGESTS_FILE}); resume with the "
                "run file it started with, or start again with --overwrite"
            )
        return (
            f"{key}: {now['path']} changed since the run started (sha256 {str(was.get('sha256'))[:12]}... "
            f"recorded in {DIGESTS_FILE}, now {now['sha256'][:12]}...): --resume refuses to go on with other "
            "signal code. Restore the file, or start again with --overwrite (or another "
            "training.output_dir)"
        )
    return None


def resume_problem(output_dir: Path, signals: Sequence[Any], log: Callable[[str], None]) -> str | None:
    """``--resume`` into ``output_dir``: why it must not go on (a signal file changed, :func:`check_digests`),
    or None. A run from before ``signal_files.json`` was written is resumed with a warning."""
    import json

    record = Path(output_dir) / DIGESTS_FILE
    current = file_digests(signals)
    if not record.is_file():
        if current:
            log(f"warning: {record} is missing (a run from before it was written): signal files not checked")
        return None
    try:
        recorded = json.loads(record.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return f"{record}: unreadable ({exc}); start again with --overwrite"
    return check_digests(recorded if isinstance(recorded, dict) else {}, current)
