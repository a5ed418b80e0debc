"""Install the plugin's pinned npm packages: ``python -m botgrpo_jsx.setup [--check]``.

Runs ``npm ci --ignore-scripts`` from the plugin's own ``package-lock.json`` into
:func:`botgrpo_jsx.nodeenv.install_dir`, then checks that esbuild compiles a snippet through the
worker. Idempotent: an already verified install is left alone without touching the network, so
the step is safe in ``make test`` and offline. Exit codes: 0 installed (or already), 1 failed,
2 Node.js/npm missing (the plugin still works: ``jsx.compiles`` then falls back to tree-sitter).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from botgrpo_jsx import nodeenv


def _verify(modules: Path) -> str | None:
    """Compile one snippet through the real worker; the error text, or ``None`` on success."""
    from botgrpo_jsx.node import NodeWorker

    node = nodeenv.find_node()
    assert node is not None
    try:
        with NodeWorker(node.node, modules, timeout_s=60.0) as worker:
            (reply,) = worker.request(
                [{"op": "compile", "code": "export const A = () => <div/>;", "loader": "tsx"}]
            )
    except Exception as exc:
        return repr(exc)
    if not isinstance(reply, dict) or reply.get("ok") is not True:
        return f"unexpected worker reply {reply!r}"
    return None


def install(force: bool = False, quiet: bool = False) -> int:
    """Install (or confirm) the pinned packages; returns the exit code described in the module doc."""
    say = (lambda *a: None) if quiet else (lambda *a: print("botgrpo-jsx setup:", *a, file=sys.stderr))
    node = nodeenv.find_node()
    if node is None:
        say(nodeenv.unavailable_reason())
        return 2
    target = nodeenv.install_dir()
    if not force and nodeenv.node_modules() is not None:
        say(f"already installed in {target}")
        return 0
    if node.npm is None:
        say(f"npm was not found next to {node.node}; install npm or `pip install botgrpo-jsx[node]`")
        return 2
    target.parent.mkdir(parents=True, exist_ok=True)
    # Install into a fresh temporary folder and rename it into place, so that a failed or
    # concurrent install never leaves a half-filled folder behind the marker.
    staging = Path(tempfile.mkdtemp(prefix="node-", dir=target.parent))
    try:
        shutil.copy(nodeenv.PACKAGE_FILE, staging / "package.json")
        shutil.copy(nodeenv.LOCK_FILE, staging / "package-lock.json")
        cmd = [node.npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"]
        say(f"installing pinned packages into {target} ({' '.join(cmd[1:])})")
        proc = subprocess.run(cmd, cwd=staging, capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            say(f"npm ci failed (exit {proc.returncode}):\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
            return 1
        error = _verify(staging / "node_modules")
        if error is not None:
            say(f"the installed esbuild does not work: {error}")
            return 1
        (staging / nodeenv.MARKER).write_text(nodeenv.lock_hash())
        if nodeenv.node_modules() is not None:  # a concurrent setup (another venv's) finished first: keep
            say(f"installed and verified in {target} (by a concurrent setup)")  # its folder, in use maybe
            return 0
        if target.exists():  # a torn folder without the marker
            shutil.rmtree(target)
        try:
            staging.rename(target)
        except OSError:  # a concurrent setup renamed its folder in between
            if nodeenv.node_modules() is None:
                raise
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    say(f"installed and verified in {target}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m botgrpo_jsx.setup", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report whether the packages are installed")
    parser.add_argument("--force", action="store_true", help="reinstall even if already installed")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    if args.check:
        reason = nodeenv.unavailable_reason()
        print(reason or f"ok: {nodeenv.node_modules()}")
        return 0 if reason is None else 1
    return install(force=args.force, quiet=args.quiet)


if __name__ == "__main__":
    sys.exit(main())
