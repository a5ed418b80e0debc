"""Where ``botgrpo sample`` writes: checked before anything is generated, written whole or not at all.

- :func:`output_problem`: the output is refused when it resolves to one of the run's inputs (the run file, the
  data files, a signal file: ``--output`` naming ``data.path`` once replaced the data with samples) or lies in a
  folder the command reads (the model's, a saved dataset's), when it is a
  folder or another non-regular file (``/dev/full``), when a parent is a file, or when its folder cannot be
  written (a read-only mount, no permission). The check creates and removes a file beside the output.
- :class:`AtomicOutput`: rows go to a temporary file beside the output, renamed over it only when all are written;
  a failure (a full disk, Ctrl-C) removes the temporary file and leaves an earlier output as it was.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType
from typing import IO


def output_problem(output: Path, inputs: Iterable[tuple[str, Path | None]]) -> str | None:
    """Why rows cannot be written to ``output`` (one line naming the fix), or None.

    :param inputs: ``(what, path)`` of every file the command reads (``data.path``, ...); None entries are skipped.
    """
    target = output.expanduser()
    resolved = target.resolve()
    for what, path in inputs:
        if path is None:
            continue
        source = Path(path).expanduser()
        same = resolved == source.resolve()
        if not same and target.exists() and source.exists():
            with contextlib.suppress(OSError):
                same = os.path.samefile(target, source)
        if same:
            return f"--output {str(output)!r} is {what} ({source}), which the command reads; write elsewhere"
        if source.is_dir() and resolved.is_relative_to(source.resolve()):
            return f"--output {str(output)!r} is inside {what} ({source}), a folder the command reads; write elsewhere"
    if target.is_dir():
        return f"--output {str(output)!r} is a folder; name a file (e.g. {target / 'samples.jsonl'})"
    if target.exists() and not target.is_file():
        return f"--output {str(output)!r} is not a regular file (a device or pipe); name a file"
    for parent in target.parents:
        if parent.exists():
            if not parent.is_dir():
                return f"--output {str(output)!r}: {parent} is a file, not a folder; name a path in a folder"
            break
    folder = target.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".{target.name}.probe{os.getpid()}"
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        os.close(fd)
        probe.unlink()
    except OSError as exc:
        return f"--output {str(output)!r}: cannot write in {folder} ({exc.strerror}); write elsewhere"
    return None


class AtomicOutput:
    """Context manager: a text file open at ``<output>.tmp<pid>`` that becomes ``output`` (by rename) when the block
    ends without an exception; else it is removed and ``output`` is left as it was."""

    def __init__(self, output: Path) -> None:
        self.output = output.expanduser()
        self.tmp = self.output.with_name(f".{self.output.name}.tmp{os.getpid()}")
        self.file: IO[str] | None = None

    def __enter__(self) -> IO[str]:
        self.output.parent.mkdir(parents=True, exist_ok=True)
        self.file = self.tmp.open("w", encoding="utf-8")
        return self.file

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        assert self.file is not None
        try:
            if kind is None:
                self.file.flush()
                os.fsync(self.file.fileno())
            self.file.close()
            if kind is None:
                os.replace(self.tmp, self.output)
        finally:
            if not self.file.closed:
                with contextlib.suppress(OSError):
                    self.file.close()
            self.tmp.unlink(missing_ok=True)
