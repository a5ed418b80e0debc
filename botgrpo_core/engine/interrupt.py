"""Stopping a run cleanly on SIGINT (Ctrl-C) or SIGTERM (a scheduler's kill).

The first signal during the training loop asks HF's loop to save a checkpoint at the end of the current
step and stop there (``TrainerControl.should_save`` / ``should_training_stop``, set in ``on_step_end``);
the processes of a multi-process run agree on it through one tiny gather per step, so they all stop at the
same step. A second signal, or one outside the loop (model loading, the initial evaluation), stops at once.
Either way :func:`~botgrpo_core.engine.run.run_training` closes the signal workers and raises
:class:`RunInterrupted`, whose message says whether ``--resume`` can continue the run. A full disk
(:func:`disk_full`) stops a run the same way, with its cause.
"""

from __future__ import annotations

import errno
import shutil
import signal
import threading
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class RunInterrupted(Exception):
    """Training stopped by a signal, or by a ``cause`` outside the run (a full disk); ``str()`` says what was
    saved, ``exit_code`` is ``128 + signum`` (1 for a cause)."""

    def __init__(self, signum: int, step: int, checkpoint: str | None, cause: str | None = None) -> None:
        self.signum, self.step, self.checkpoint = signum, step, checkpoint
        self.exit_code = 1 if cause else 128 + signum
        if checkpoint is not None:
            saved = f"{checkpoint} is complete, continue from it with --resume"
        else:
            saved = "no checkpoint was saved, start again with --overwrite"
        # "at step 0" after a step was trained but not saved would read as "nothing was trained"
        where = f" at step {step}" if checkpoint is not None else ""
        why = f"stopped: {cause}" if cause else f"stopped by {signal.Signals(signum).name}{where}"
        super().__init__(f"{why}; {saved}")


class StopOnSignal:
    """Context manager: SIGINT/SIGTERM handlers for one run (restored on exit; main thread only)."""

    def __init__(self, log: Callable[[str], None]) -> None:
        self.log = log
        self.signum: int | None = None  # the first signal received
        self.in_loop = False  # a signal now means "stop after this step"
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> StopOnSignal:
        if threading.current_thread() is threading.main_thread():
            for s in SIGNALS:
                self._previous[s] = signal.signal(s, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for s, handler in self._previous.items():
            signal.signal(s, handler)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.signum is None and self.in_loop:
            self.signum = signum
            self.log(
                f"{signal.Signals(signum).name}: stopping after this step and saving a checkpoint "
                "(send it again to stop now, without saving)"
            )
            return
        self.signum = self.signum or signum
        stop = KeyboardInterrupt()
        stop.botgrpo_signal = signum  # type: ignore[attr-defined]  # the user's stop: never a sample's error
        raise stop

    def callback(self, trainer: Callable[[], Any]) -> Any:
        """A ``TrainerCallback`` that turns a received signal into save-and-stop at the step's end."""
        from transformers import TrainerCallback

        stop = self

        class SaveAndStop(TrainerCallback):
            def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
                if stop.requested(trainer()):
                    control.should_save = True
                    control.should_training_stop = True

        return SaveAndStop()

    def requested(self, trainer: Any) -> bool:
        """Whether any process received a signal (a gather of one flag when there are several)."""
        asked = self.signum is not None
        accelerator = getattr(trainer, "accelerator", None)
        if accelerator is None or accelerator.num_processes == 1:
            return asked
        import torch

        flags = accelerator.gather(torch.tensor([float(asked)], device=accelerator.device))
        return bool(flags.max().item())


def disk_full(exc: BaseException, output_dir: Path) -> str | None:
    """The cause to give :class:`RunInterrupted` when ``exc`` (or an exception it came from) is a full disk
    or quota, else None: ``OSError`` ENOSPC/EDQUOT from Python's own writes; safetensors'
    ``SafetensorError`` says it in its message only, and torch's zip writer not at all (``basic_ios::clear:
    iostream error``), so an error with under :data:`FULL_BYTES` free on ``output_dir``'s disk counts too."""
    seen: set[int] = set()
    error: BaseException | None = exc
    chain = []
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        chain.append(error)
        error = error.__cause__ or error.__context__
    try:
        free: int | None = shutil.disk_usage(output_dir).free
    except OSError:
        free = None
    for error in chain:
        text = str(error)
        said = isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT)
        said = said or any(m in text for m in ("No space left on device", "Disk quota exceeded"))
        if said or (free is not None and free < FULL_BYTES and isinstance(error, (OSError, RuntimeError))):
            first = text.strip().splitlines()[0][:200] if text.strip() else ""
            left = f"; {free // 1024:,} KiB free" if free is not None else ""
            return (
                f"the disk holding training.output_dir {str(output_dir)!r} is full ({type(error).__name__}: "
                f"{first}{left}); free space there (a torn checkpoint is skipped on resume)"
            )
    return None


#: free bytes under which a write error is taken for a full disk
FULL_BYTES = 2**20
