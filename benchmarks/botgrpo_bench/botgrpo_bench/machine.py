"""Which machine a run ran on: the provenance a figure needs when runs span sessions and hosts.

Float results on a CPU depend on the kernels torch picks for the processor (``AVX2`` against ``AVX512``,
say), so two runs of one seed agree bit for bit only on the same kind of machine. Each bench run records
:func:`machine_facts` in its result, and the report's rows carry them, so a re-run that drifts can be told
apart from one that ran on another host.
"""

from __future__ import annotations

import os
import platform
from typing import Any


def machine_facts() -> dict[str, Any]:
    """This machine's facts that bear on a run's numbers: CPU model and core count, the instruction set
    torch's CPU kernels use, torch's version and thread count, and the boot id.

    Returns:
        A JSON-serialisable dict with keys ``cpu``, ``cores``, ``torch``, ``cpu_capability``,
        ``torch_threads``, ``python``, ``boot_id``.
    """
    import torch

    from botgrpo_core.engine.provenance import boot_id, cpu_model

    return {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "torch": torch.__version__,
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "torch_threads": torch.get_num_threads(),
        "python": platform.python_version(),
        "boot_id": boot_id(),
    }


def machine_note() -> str:
    """One line describing this machine (for the results' provenance)."""
    f = machine_facts()
    return (
        f"{f['cores']} CPU cores ({f['cpu']}, torch kernels {f['cpu_capability']}), Python {f['python']}, "
        f"torch {f['torch']}, {platform.system()} {platform.release()}"
    )
