"""``BOTGRPO_VERL_RECORD=<folder>``: what botgrpo's parts of a verl run handed to verl, saved for checking.

With the variable set, every call of the ``botgrpo`` reward manager saves the responses it scored (prompt text,
response token ids, row, token rewards) and every call of a botgrpo estimator saves what verl's trainer gave it
and got back (``token_level_rewards``, ``response_mask``, the uids, the advantages verl stores for the actor
update), one ``torch.save`` file per call. The fit test (tests/test_verl_fit.py) compares them with botgrpo's own
computation for the same rollouts. Unset (the default), nothing is written.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

#: The environment variable naming the folder.
ENV = "BOTGRPO_VERL_RECORD"


def record(kind: str, payload: dict[str, Any]) -> Path | None:
    """Save ``payload`` as ``<folder>/<kind>-<pid>-<ns>.pt`` when :data:`ENV` is set; returns the path."""
    folder = os.environ.get(ENV)
    if not folder:
        return None
    import torch

    path = Path(folder)
    path.mkdir(parents=True, exist_ok=True)
    target = path / f"{kind}-{os.getpid()}-{time.time_ns()}.pt"
    torch.save(payload, target)
    return target
