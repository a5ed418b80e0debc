"""Client of the long-lived Node worker (``js/worker.js``) that runs esbuild and TypeScript.

One Node process serves every request of a scorer, speaking JSON lines over pipes; requests are
pipelined (a window of ``window`` in flight, esbuild compiles them concurrently). Each request has a
deadline: when one passes it, the whole process group (node and esbuild's service child) is
SIGKILLed and restarted, that request is answered with a ``timeout`` :class:`SampleError`, and the
others that were in flight are sent again once. When the process dies (including when esbuild's
service child dies: the worker then exits, see ``worker.js``), it is restarted and the requests in
flight are sent again, one at a time; one that kills it twice is answered with a ``crash``. Pipes are non-blocking and multiplexed with
``selectors``, so a worker stuck in a synchronous type check can never block the trainer on a write.

A call can also have a deadline as a whole (``end``, the caller's batch deadline): the requests without
a reply by then, in flight or not yet sent, are answered with the caller's ``late`` error, and a process
still working on some is killed (its pipes may hold half a request); the next call starts a new one.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import tempfile
import threading
import time
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from botgrpo_core.signals import SampleError
from botgrpo_jsx.nodeenv import WORKER_SCRIPT


class NodeWorkerError(RuntimeError):
    """The Node worker could not be started."""


class NodeWorker:
    """A persistent ``node worker.js`` process.

    :param node: path of the ``node`` executable.
    :param modules: the pinned ``node_modules`` folder.
    :param timeout_s: per-request deadline; over it the process is killed and restarted.
    :param max_old_space_mb: V8 heap limit of the process (``--max-old-space-size``).
    :param window: requests in flight at once (``1`` for synchronous work such as type checks, so
        that a request's deadline is not spent waiting behind others).
    :param warm_up: a request sent to every new process before any other, under ``warm_up_s``
        (TypeScript's first check loads the lib files: ~10 s, later checks ~0.3 s).
    """

    def __init__(
        self,
        node: str,
        modules: Path,
        timeout_s: float = 5.0,
        max_old_space_mb: int = 1024,
        window: int = 32,
        warm_up: dict[str, Any] | None = None,
        warm_up_s: float = 120.0,
    ) -> None:
        self.node = node
        self.modules = Path(modules)
        self.timeout_s = timeout_s
        self.max_old_space_mb = max_old_space_mb
        self.window = max(1, window)
        self.warm_up = warm_up
        self.warm_up_s = warm_up_s
        self.restarts = 0
        #: processes killed because a call's deadline (``end``) passed with requests in flight
        self.deadline_kills = 0
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr: Any = None
        self._next_id = 0
        self._lock = threading.Lock()

    # -- process lifecycle ------------------------------------------------------------------
    def _start(self, end: float | None = None) -> subprocess.Popen[bytes] | None:
        """A new process, warmed up; ``None`` when the call's deadline ``end`` cut the warm-up."""
        if self._stderr is not None:
            self._stderr.close()
        # Node's stderr goes to a file (never a pipe we might not drain); its tail explains crashes.
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the process
        env = dict(os.environ, BOTGRPO_JSX_NODE_MODULES=str(self.modules))
        try:
            proc = subprocess.Popen(
                [self.node, f"--max-old-space-size={self.max_old_space_mb}", str(WORKER_SCRIPT)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                env=env,
                start_new_session=True,  # its own process group: a kill also reaches esbuild's service
            )
        except OSError as exc:
            raise NodeWorkerError(f"could not start {self.node}: {exc}") from exc
        assert proc.stdin is not None and proc.stdout is not None
        self._proc = proc
        if self.warm_up is not None and not self._warm(proc, end):
            return None
        for pipe in (proc.stdin, proc.stdout):
            os.set_blocking(pipe.fileno(), False)
            _widen(pipe.fileno())
        return proc

    def _warm(self, proc: subprocess.Popen[bytes], end: float | None = None) -> bool:
        """Run the warm-up request on a fresh process (blocking, bounded by ``warm_up_s`` and by the
        call's deadline ``end``); ``False`` (the process killed) when ``end`` cut it."""
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps(dict(self.warm_up or {}, id=-1)).encode() + b"\n")
        proc.stdin.flush()
        limit = time.monotonic() + self.warm_up_s
        deadline = limit if end is None else min(limit, end)
        died = False
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            while time.monotonic() < deadline:
                if sel.select(max(0.0, deadline - time.monotonic())):
                    if proc.stdout.readline():
                        return True
                    died = True  # EOF: the process died
                    break
        self._kill()
        if not died and deadline < limit:
            return False  # the caller's deadline, not the warm-up's own limit
        raise NodeWorkerError(f"the Node worker failed its warm-up request: {self.stderr_tail()[-500:]}")

    def stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        try:
            self._stderr.seek(0)
            return self._stderr.read()[-2000:].decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""

    def _kill(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        for stream in (proc.stdin, proc.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        with contextlib.suppress(subprocess.TimeoutExpired):  # SIGKILL is not ignorable
            proc.wait(timeout=5)

    def ensure_started(self) -> None:
        """Start the process (and warm it up) now unless it is running: a first start, or a new one after
        a kill, so that a caller can start its batch's clock after it."""
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                self._kill()  # a dead one's pipes, and what is left of its process group
                self._start()

    def close(self) -> None:
        """Stop the process (idempotent)."""
        with self._lock:
            self._kill()
            if self._stderr is not None:
                self._stderr.close()
                self._stderr = None

    def __enter__(self) -> NodeWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()

    # -- requests -----------------------------------------------------------------------------
    def request(
        self,
        requests: Sequence[dict[str, Any]],
        timeout_s: float | None = None,
        window: int | None = None,
        end: float | None = None,
        late: SampleError | None = None,
    ) -> list[Any]:
        """Send requests and return one reply dict (or :class:`SampleError`) per request, in order.

        :param end: this call's deadline as a whole (a :func:`time.monotonic` value; ``None``: none).
            The requests without a reply by then are answered with ``late``, the caller's error (it
            knows its ``batch_timeout_s``: build it with
            :func:`~botgrpo_core.rewards.pool.batch_deadline_error`); a process still working on some
            is killed, and the next call starts a new one. A call made past ``end`` sends nothing.
        :raises ValueError: ``end`` without ``late``.
        """
        if end is not None and late is None:
            raise ValueError("NodeWorker.request: a call with `end` needs `late`, the error of what it cuts")
        with self._lock:
            timeout = self.timeout_s if timeout_s is None else timeout_s
            return self._run(
                list(requests), timeout, self.window if window is None else max(1, window), end, late
            )

    def _run(
        self,
        requests: list[dict[str, Any]],
        timeout: float,
        window: int,
        end: float | None,
        late: SampleError | None,  # not None when ``end`` is set (see :meth:`request`)
    ) -> list[Any]:
        if end is not None and requests and time.monotonic() >= end:
            return [late] * len(requests)
        results: list[Any] = [None] * len(requests)
        attempts = [0] * len(requests)
        pending = deque(range(len(requests)))
        encoded = [None] * len(requests)
        inflight: dict[int, tuple[int, float]] = {}  # request id -> (index, deadline)
        out = bytearray()
        inbuf = bytearray()
        proc: subprocess.Popen[bytes] | None = (
            self._proc if self._proc is not None and self._proc.poll() is None else self._start(end)
        )

        def restart(reason: str, overdue: set[int]) -> None:
            nonlocal proc, out, inbuf
            tail = self.stderr_tail()
            self._kill()
            self.restarts += 1
            for rid, (index, _) in sorted(inflight.items(), key=lambda kv: kv[1][0], reverse=True):
                attempts[index] += 1
                if rid in overdue:
                    results[index] = SampleError(f"the Node worker took over {timeout:g} s", reason="timeout")
                elif attempts[index] >= 2:
                    msg = f"the Node worker died twice on this input ({reason}): {tail[-300:]}"
                    results[index] = SampleError(msg, reason="crash")
                else:
                    pending.appendleft(index)
            inflight.clear()
            out, inbuf = bytearray(), bytearray()
            proc = self._start(end)  # None: the deadline cut its warm-up (the loop then stops)

        while pending or inflight:
            if proc is None or (end is not None and time.monotonic() >= end):
                # The call's deadline: what has no reply is late; a process with work in flight (or half
                # a request in its pipe) is killed, so the next call gets a fresh one, not stale replies.
                if inflight or out:
                    self._kill()
                    self.deadline_kills += 1
                for index in [i for i, _ in inflight.values()] + list(pending):
                    results[index] = late
                return results
            # After a death, the requests that were in flight go again one at a time, so that the
            # one that kills the process is the only one answered with a crash.
            retrying = any(attempts[i] for i, _ in inflight.values()) or bool(
                pending and attempts[pending[0]]
            )
            limit = 1 if retrying else window
            while pending and len(inflight) < limit and len(out) < (1 << 20):
                index = pending.popleft()
                rid = self._next_id
                self._next_id += 1
                if encoded[index] is None:
                    encoded[index] = json.dumps(requests[index], ensure_ascii=True).encode()
                out += b'{"id":%d,' % rid + encoded[index][1:] + b"\n"
                inflight[rid] = (index, time.monotonic() + timeout)
            assert proc.stdin is not None and proc.stdout is not None
            with selectors.DefaultSelector() as sel:
                sel.register(proc.stdout, selectors.EVENT_READ)
                if out:
                    sel.register(proc.stdin, selectors.EVENT_WRITE)
                deadlines = [d for _, d in inflight.values()] + ([end] if end is not None else [])
                wait = max(0.0, min(deadlines) - time.monotonic()) if inflight else 0.0
                events = sel.select(wait)
            died = False
            for _key, mask in events:
                if mask & selectors.EVENT_WRITE:
                    try:
                        written = os.write(proc.stdin.fileno(), out)
                        del out[:written]
                    except BlockingIOError:
                        pass
                    except (BrokenPipeError, OSError):
                        died = True
                if mask & selectors.EVENT_READ:
                    try:
                        chunk = os.read(proc.stdout.fileno(), 1 << 16)
                    except BlockingIOError:
                        chunk = None
                    if chunk == b"":
                        died = True
                    elif chunk:
                        inbuf += chunk
            while (newline := inbuf.find(b"\n")) >= 0:
                line = bytes(inbuf[:newline])
                del inbuf[: newline + 1]
                try:
                    reply = json.loads(line)
                except json.JSONDecodeError:
                    continue
                entry = inflight.pop(reply.get("id"), None) if isinstance(reply, dict) else None
                if entry is None:
                    continue
                index = entry[0]
                if "error" in reply:
                    results[index] = SampleError(
                        f"Node worker error: {str(reply['error'])[:500]}", reason="error"
                    )
                else:
                    results[index] = reply
            if died:
                restart(f"exit code {proc.poll()}", set())
                continue
            now = time.monotonic()
            overdue = {rid for rid, (_, deadline) in inflight.items() if now >= deadline}
            if overdue:
                restart("timeout", overdue)
        return results


#: Pipe buffer asked for on Linux (its default is 64 KiB; ``/proc/sys/fs/pipe-max-size`` is 1 MiB by
#: default). A batch's requests (~1.4 MB for 512 snippets of 2.6 KB) then go in one or two writes: a
#: caller on a thread (the jsx.compiles prefetch) gets the GIL back once per write, ~5 ms each while
#: the main thread scores, so 64 KiB writes left ~0.2 s of a 512-sample batch unsent (measured).
PIPE_BYTES = 1 << 20


def _widen(fd: int) -> None:
    """Ask for a :data:`PIPE_BYTES` pipe buffer (Linux ``F_SETPIPE_SZ``); elsewhere, or past the
    system's limit, the default buffer stays: writes are then only smaller."""
    import fcntl

    setpipe = getattr(fcntl, "F_SETPIPE_SZ", None)
    if setpipe is None:
        return
    with contextlib.suppress(OSError):
        fcntl.fcntl(fd, setpipe, PIPE_BYTES)
