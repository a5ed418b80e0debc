"""Run model-written React code in a disposable, isolated Node process (``js/render.js``).

Each sample gets a fresh process, so nothing one sample does can reach the next. The boundary:

- ``unshare --user --net --pid --fork``: an empty network namespace (no interface but a downed
  loopback: no network at all) and its own pid namespace, entered through ``setsid`` so Node leads
  its own session: a signal to its process group (``kill(0)``, ``process.ppid`` is 0) would otherwise
  reach the ``unshare`` wrapper outside the namespace; this way no other process can be signalled;
- Node's permission model (``--experimental-permission``): file reads only of the pinned
  ``node_modules`` (React, react-dom, linkedom) and the harness, no writes, no child processes, workers, addons or WASI;
  ``--disallow-code-generation-from-strings`` (no ``eval``/``Function``);
- ``RLIMIT_AS`` (``prlimit``) and ``--max-old-space-size`` for memory, SIGKILL of the process
  group at the deadline for time, and a cap on the bytes read from its output.

The harness answers one line prefixed with a random nonce the sample never sees, so text the sample
prints cannot pass for a result. Without ``unshare`` (user namespaces disabled) the runner refuses
to start: there is no fallback that runs untrusted code without the boundary.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import secrets
import selectors
import shutil
import signal
import subprocess
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path
from typing import Any

from botgrpo_core.signals import SampleError
from botgrpo_jsx.nodeenv import JS_DIR

RENDER_SCRIPT = JS_DIR / "render.js"
#: the behaviour checks of ``jsx.checks``, loaded by the harness before the sample runs
CHECKS_SCRIPT = JS_DIR / "checks.js"
#: A user namespace (root inside, the caller outside), an empty network namespace, a pid namespace.
#: The only files the sandbox may read are the harness and the pinned ``node_modules`` (React,
#: react-dom, linkedom and their dependencies: public code, and nothing there can be executed).
_UNSHARE = ("--user", "--map-root-user", "--net", "--pid", "--fork", "--kill-child")


def _boundary(node: str) -> list[str]:
    """``unshare`` with its flags, then ``setsid``: Node as pid 1 of its namespace, leading its own session."""
    return [str(shutil.which("unshare")), *_UNSHARE, str(shutil.which("setsid")), node]


class SandboxUnavailable(RuntimeError):
    """The isolation boundary cannot be set up on this machine (the message says why and what to do)."""


@lru_cache(maxsize=4)
def check_boundary(node: str) -> None:
    """Start one empty sandboxed process; raise :class:`SandboxUnavailable` if that fails."""
    if any(shutil.which(tool) is None for tool in ("unshare", "setsid", "prlimit")):
        raise SandboxUnavailable(
            "`unshare`/`setsid`/`prlimit` (util-linux) are not installed: apt-get install util-linux"
        )
    probe = [*_boundary(node), "--experimental-permission", "-e", "0"]
    try:
        proc = subprocess.run(probe, capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as exc:
        raise SandboxUnavailable(f"could not start the sandbox ({exc})") from exc
    if proc.returncode != 0:
        tail = proc.stderr.decode("utf-8", "replace")[-300:]
        raise SandboxUnavailable(
            f"`unshare {' '.join(_UNSHARE)}` failed ({tail.strip()}): user and network namespaces are "
            "needed to render untrusted code (e.g. sysctl kernel.unprivileged_userns_clone=1, or run the "
            "container with --privileged / a seccomp profile that allows unshare)"
        )


class Sandbox:
    """Renders requests, each in its own isolated Node process, ``parallel`` at a time.

    :param node: the ``node`` executable; :param modules: the pinned ``node_modules`` folder.
    :param timeout_s: wall-clock deadline per sample (the process group is SIGKILLed past it).
    :param memory_mb: address-space limit per process (V8's heap gets half of it).
    :param max_output: bytes read from a process's stdout at most (a flood is cut and fails).
    :param batch_timeout_s: deadline of one :meth:`run` as a whole (``None``: none): a render still
        running then is killed, one not started is not started; both are ``timeout`` errors.
    """

    def __init__(
        self,
        node: str,
        modules: Path,
        timeout_s: float = 5.0,
        memory_mb: int = 1024,
        parallel: int = 2,
        max_output: int = 1 << 20,
        batch_timeout_s: float | None = None,
    ) -> None:
        check_boundary(node)
        self.batch_timeout_s = batch_timeout_s
        self.node, self.modules = node, Path(modules)
        self.timeout_s, self.memory_mb = timeout_s, memory_mb
        self.parallel, self.max_output = max(1, parallel), max_output

    def command(self) -> list[str]:
        reads = [str(RENDER_SCRIPT), str(CHECKS_SCRIPT), str(self.modules)]
        limit = self.memory_mb * (1 << 20)
        return [
            # prlimit (not preexec_fn, which is unsafe with the threads that run samples in parallel)
            str(shutil.which("prlimit")),
            f"--as={limit}",
            "--core=0",
            "--",
            *_boundary(self.node),
            "--no-warnings",
            "--experimental-permission",
            *(f"--allow-fs-read={p}" for p in reads),
            "--disallow-code-generation-from-strings",
            f"--max-old-space-size={max(32, self.memory_mb // 2)}",
            "--stack-size=984",
            str(RENDER_SCRIPT),
        ]

    def run(self, requests: Sequence[dict[str, Any]]) -> list[dict[str, Any] | SampleError]:
        """One result per request, in order: the harness's reply, or a :class:`SampleError`."""
        if not requests:
            return []
        end = math.inf if self.batch_timeout_s is None else time.monotonic() + self.batch_timeout_s
        with ThreadPoolExecutor(max_workers=min(self.parallel, len(requests))) as pool:
            return list(pool.map(lambda request: self.run_one(request, end), requests))

    def run_one(self, request: dict[str, Any], batch_end: float = math.inf) -> dict[str, Any] | SampleError:
        """One render; ``batch_end`` (``time.monotonic()``) is the batch's deadline, if any.

        A request with ``checks`` (``jsx.checks``) gets the harness's reply with ``check_results``: one
        ``{check, ok, why?, ms}`` per check the harness reported, written as each ended; a render that ran
        past a deadline after some checks ended keeps those (``stopped`` says why) rather than an error.
        """
        if time.monotonic() >= batch_end:
            return SampleError(self._batch_over("before this render started"), reason="timeout")
        nonce = secrets.token_hex(16)
        payload = json.dumps(dict(request, nonce=nonce), ensure_ascii=True).encode()
        env = {
            "BOTGRPO_JSX_NODE_MODULES": str(self.modules),
            "NODE_ENV": "development",
            "PATH": "/usr/bin:/bin",
        }
        try:
            proc = subprocess.Popen(
                self.command(),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=env,
                cwd="/",
                start_new_session=True,
            )
        except OSError as exc:
            return SampleError(f"could not start the render sandbox: {exc}", reason="error")
        try:
            output, reason = self._exchange(proc, payload, batch_end)
        finally:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        lines = _nonce_lines(output, nonce)
        results = [r for r in lines if "check" in r]
        final = next((r for r in lines if "check" not in r), None)
        if reason is not None:
            if results and "checks" in request:  # the render ended well; a check ran past the deadline
                return {"ok": True, "warnings": [], "check_results": results, "stopped": str(reason)}
            return reason
        if final is None:
            final = {
                "ok": False,
                "error": {"message": _no_result(proc.returncode)},
                "warnings": [],
                "exit": True,
            }
            if results and "checks" in request:
                final = {"ok": True, "warnings": [], "stopped": _no_result(proc.returncode)}
        if "checks" in request:
            final["check_results"] = results
        return final

    def _batch_over(self, when: str) -> str:
        return f"the batch's renders passed batch_timeout_s={self.batch_timeout_s:g} {when} (jsx params)"

    def _exchange(
        self, proc: subprocess.Popen[bytes], payload: bytes, batch_end: float = math.inf
    ) -> tuple[bytes, SampleError | None]:
        """Write the request, read stdout until EOF, the deadline (the sample's or the batch's) or the cap."""
        assert proc.stdin is not None and proc.stdout is not None
        own = time.monotonic() + self.timeout_s
        deadline = min(own, batch_end)
        try:
            proc.stdin.write(payload)
            proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass
        out = bytearray()
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    why = f"the render took over {self.timeout_s:g} s"
                    if batch_end < own:
                        why = self._batch_over("while this render ran")
                    return bytes(out), SampleError(why, reason="timeout")
                if not sel.select(left):
                    continue
                chunk = os.read(proc.stdout.fileno(), 1 << 16)
                if not chunk:
                    return bytes(out), None
                out += chunk
                if len(out) > self.max_output:
                    return bytes(out[: self.max_output]), None  # a flood: the nonce line may be in it


def _nonce_lines(output: bytes, nonce: str) -> list[dict[str, Any]]:
    """The harness's replies in ``output``: the JSON objects on lines that start with ``nonce``."""
    out = []
    for line in output.splitlines():
        head, _, body = line.partition(b" ")
        if head != nonce.encode():
            continue
        try:
            reply = json.loads(body)
        except json.JSONDecodeError:
            break
        if isinstance(reply, dict):
            out.append(reply)
    return out


def _no_result(returncode: int | None) -> str:
    if returncode is not None and returncode < 0:
        name = signal.Signals(-returncode).name if -returncode in signal.Signals._value2member_map_ else ""
        return f"the renderer was killed ({name or returncode}): out of memory or a crash"
    return f"the component ended the renderer (exit code {returncode}) before it reported"
