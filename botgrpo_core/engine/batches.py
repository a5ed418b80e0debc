"""Tensor helpers on TRL's generation batches: padding, row selection and concatenation."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import torch
from trl.trainer.utils import pad

if TYPE_CHECKING:
    pass


# ---- tensor helpers ------------------------------------------------------------------------------
def _masked_mean(values: torch.Tensor, keep: torch.Tensor) -> float:
    keep = keep & ~torch.isnan(values)
    return float(values[keep].mean()) if bool(keep.any()) else math.nan


def _pad_right(x: torch.Tensor, width: int, value: float | bool) -> torch.Tensor:
    if x.shape[1] >= width:
        return x[:, :width]
    return torch.nn.functional.pad(x, (0, width - x.shape[1]), value=value)


_LEFT_PADDED = ("prompt_ids", "prompt_mask")
_PAD_VALUES = {"prompt_mask": 0, "completion_mask": 0, "tool_mask": 1}


def _select(batch: dict[str, Any], rows: torch.Tensor) -> dict[str, Any]:
    """The rows ``rows`` (bool (B,)) of every per-rollout tensor of a TRL batch."""
    B = rows.shape[0]
    out: dict[str, Any] = {}
    for key, value in batch.items():
        if key in ("num_items_in_batch", "_keep_group"):
            continue
        if isinstance(value, torch.Tensor) and value.dim() >= 1 and value.shape[0] == B:
            out[key] = value[rows]
        else:
            raise ValueError(
                f"dynamic sampling cannot split the batch field {key!r} (multimodal inputs?); set "
                "algorithm.dynamic_sampling: false"
            )
    return out


def _concat(parts: list[dict[str, Any]], rows: int, pad_token_id: int) -> dict[str, Any]:
    """Concatenate TRL batches (re-padding prompts left, completions right) and keep the first ``rows``."""
    parts = [p for p in parts if p["completion_ids"].shape[0] > 0]
    out: dict[str, Any] = {}
    for key in parts[0]:
        values = [p[key] for p in parts]
        if values[0].dim() == 1:
            out[key] = torch.cat(values)[:rows]
            continue
        side = "left" if key in _LEFT_PADDED else "right"
        fill = pad_token_id if key.endswith("_ids") else _PAD_VALUES.get(key, 0)
        flat = [row for v in values for row in v]
        out[key] = pad(flat, padding_value=fill, padding_side=side)[:rows]
    return out
