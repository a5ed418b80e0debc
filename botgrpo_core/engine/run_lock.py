"""One run per output folder: ``train.lock``, held by the process that trains there.

The lock is an ``flock`` on ``<output_dir>/train.lock`` for the whole run (released by the kernel when the
process ends, however it ends), and the file says who holds it: pid, host, start time, command. A second
``botgrpo train`` into the same folder (plain, ``--resume`` or ``--overwrite``) finds it held and is refused
with that owner named, before it has touched anything. A file left by a run on this host that died (its flock
gone with it) is a stale lock: it is taken over, with a warning naming the dead owner. One left by a run on
another host is refused (whether that process lives cannot be checked from here): the message says to delete
the file once that run is known to have ended.

In a multi-process launch only the main process (``RANK`` 0) takes it; the launcher ends the others when
it is refused.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import stat
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from botgrpo_core.engine.setup import TrainingSetupError

LOCK_FILE = "train.lock"


class OutputDirLock:
    """Context manager: hold ``<output_dir>/train.lock`` (creating ``output_dir``) or raise
    :class:`TrainingSetupError` naming the process that holds it."""

    def __init__(
        self,
        output_dir: Path,
        warn: Callable[[str], None],
        *,
        lock_file: str = LOCK_FILE,
        key: str = "training.output_dir",
        holder: str = "botgrpo train",
        rule: str = "One run trains in a folder at a time",
    ) -> None:
        """:param lock_file: the lock's file name in ``output_dir``; ``key``: what names the folder in messages
        (the run file's key, or an option); ``holder``: what holds such a lock; ``rule``: the sentence that says
        why a second one is refused (``botgrpo bench`` takes ``bench.lock`` on its results folder with its own)."""
        self.output_dir = Path(output_dir)
        self.path = self.output_dir / lock_file
        self.warn = warn
        self.key, self.holder, self.rule = key, holder, rule
        self._fd: int | None = None
        self._created_dir = False

    def __enter__(self) -> OutputDirLock:
        self._created_dir = not self.output_dir.exists()
        self.output_dir.mkdir(parents=True, exist_ok=True)
        while True:
            fd = self._open()
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                owner = _read_owner(fd)
                os.close(fd)
                self._drop_created_dir()
                raise TrainingSetupError(self._held_message(owner)) from None
            # The holder before us may have unlinked the file between our open and our flock: then we hold
            # a lock on a name that no longer exists, and must take the new file's lock instead.
            try:
                same = os.path.samestat(os.fstat(fd), os.lstat(self.path))
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        previous = _read_owner(fd)
        if previous.get("host", socket.gethostname()) != socket.gethostname():
            # Not held, but by a process on another host: its death cannot be checked from here (and a
            # file system without working locks across hosts would let both runs in). The user decides.
            os.close(fd)
            raise TrainingSetupError(
                f"{self.key} {str(self.output_dir)!r} was locked by {_describe(previous, self.holder)}, another "
                f"host, and {self.path.name} is still there; nothing was changed. If that run has ended (its host "
                f"went down), delete {self.path} and start again; else wait for it or use another folder"
            )
        if previous:
            self.warn(
                f"warning: {self.path}: taking over a stale lock of {_describe(previous, self.holder)}, which ended "
                "without releasing it (killed?); check its outputs: --resume continues from the last "
                "complete checkpoint"
            )
        record = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started": time.strftime("%Y-%m-%d %H:%M:%S %z"),
            "command": " ".join(sys.argv),
        }
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(record) + "\n").encode("utf-8"), 0)
        os.fsync(fd)
        self._fd = fd
        return self

    def _open(self) -> int:
        """Open (or create) the lock file itself, never what a link there points to: a ``train.lock`` that
        is a symlink (its target would be truncated, a dangling one created), a folder or another special
        file is refused, naming the path and the fix, and nothing is changed."""
        flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0)
        try:
            fd = os.open(self.path, flags, 0o644)
        except OSError as exc:
            kind = (
                "a symbolic link"
                if os.path.islink(self.path)
                else ("a folder" if self.path.is_dir() else f"unusable ({exc.strerror})")
            )
            self._drop_created_dir()
            raise TrainingSetupError(self._not_a_lock(kind)) from None
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            self._drop_created_dir()
            raise TrainingSetupError(self._not_a_lock("not a regular file"))
        os.set_blocking(fd, True)
        return fd

    def _not_a_lock(self, kind: str) -> str:
        return (
            f"{self.key} {str(self.output_dir)!r}: {self.path} is {kind}, not the lock "
            f"botgrpo writes; nothing was changed. Remove it (rm {self.path}; botgrpo recreates it as a plain "
            f"file) or set {self.key} to another folder"
        )

    def __exit__(self, *exc: object) -> None:
        if self._fd is None:
            return
        try:
            self.path.unlink(missing_ok=True)  # while still held: no one can take the old file's lock
        finally:
            os.close(self._fd)  # releases the flock
            self._fd = None
        self._drop_created_dir()

    def _drop_created_dir(self) -> None:
        """Remove ``output_dir`` when this run created it and left nothing in it (a refused start)."""
        if self._created_dir:
            with contextlib.suppress(OSError):  # not empty: the run wrote something, which stays
                self.output_dir.rmdir()

    def _held_message(self, owner: dict[str, Any]) -> str:
        who = _describe(owner, self.holder) if owner else "another process (it has not written its name yet)"
        return (
            f"{self.key} {str(self.output_dir)!r} is in use by {who}; nothing was changed. {self.rule}: wait for "
            "it to finish, stop it"
            + (f" (kill {owner['pid']})" if owner.get("pid") else "")
            + f", or set {self.key} to another folder"
        )


def _read_owner(fd: int) -> dict[str, Any]:
    """The owner record in the lock file (empty when there is none or it is unreadable)."""
    try:
        data = os.pread(fd, 4096, 0)
        owner = json.loads(data.decode("utf-8")) if data.strip() else {}
    except (OSError, ValueError):
        return {}
    return owner if isinstance(owner, dict) else {}


def _describe(owner: dict[str, Any], holder: str = "botgrpo train") -> str:
    """``botgrpo train`` pid 123 on host h (started ..., command ...)."""
    text = f"{holder} pid {owner.get('pid', '?')} on host {owner.get('host', '?')}"
    details = [f"started {owner['started']}" if owner.get("started") else "", str(owner.get("command") or "")]
    details = [d for d in details if d]
    return text + (f" ({'; '.join(details)})" if details else "")
