"""DAPO's dynamic sampling (Yu et al. 2025, arXiv 2503.14476, section 3.2), which TRL lacks: a mixin of
:class:`~botgrpo_core.engine.trainer.BoTGRPOTrainer`.

Groups whose advantages are all zero carry no gradient; they are dropped and the batch is refilled by generating
for more prompts, at most ``dynamic_sampling_rounds`` extra rounds a step, every process in step (a round runs
while any process is short). Out of rounds, the dropped groups fill the batch back to its shape.
"""

from __future__ import annotations

import random
from typing import Any

import torch

from botgrpo_core.engine.batches import _concat, _select


class DynamicSampling:
    """``_dynamic_sampling`` for a ``GRPOTrainer`` subclass that also defines ``_score_round`` (one scored
    generation round) and ``dynamic_sampling_rounds``."""

    def _dynamic_sampling(self, first: dict[str, Any], batch_rows: int) -> dict[str, Any]:
        """Keep groups with a learning signal; refill the batch by generating for more prompts."""
        G = self.num_generations
        parts = [_select(first, first["_keep_group"])]
        dropped = [_select(first, ~first["_keep_group"])]
        kept_first = int(first["_keep_group"].sum())
        rounds = 0
        while rounds < self.dynamic_sampling_rounds:
            have = sum(p["completion_ids"].shape[0] for p in parts)
            need = torch.tensor([max(batch_rows - have, 0)], device=self.accelerator.device)
            if int(self.accelerator.gather(need).max()) == 0:  # every process is full
                break
            rounds += 1
            extra = self._score_round(self._extra_inputs(batch_rows // G, rounds), "train")
            parts.append(_select(extra, extra["_keep_group"]))
            dropped.append(_select(extra, ~extra["_keep_group"]))
        have = sum(p["completion_ids"].shape[0] for p in parts)
        filler = max(batch_rows - have, 0)
        if filler:  # out of rounds: top up with zero-advantage groups (they add no gradient, keep shapes)
            parts += dropped
        merged = _concat(parts, batch_rows, self.processing_class.pad_token_id)
        loss_mask = merged["completion_mask"] * merged.get("tool_mask", 1)
        merged["num_items_in_batch"] = self.accelerator.gather(loss_mask.sum()).sum()
        self._metrics["train"]["dynamic_sampling/rounds"].append(float(rounds))
        self._metrics["train"]["dynamic_sampling/kept_frac_first"].append(kept_first / max(batch_rows, 1))
        self._metrics["train"]["dynamic_sampling/filler_rows"].append(float(filler))
        return merged

    def _extra_inputs(self, num_prompts: int, round_index: int) -> list[dict[str, Any]]:
        """More prompts for a refill round, each repeated G times (deterministic in seed, step, round, rank)."""
        rng = random.Random(
            f"{self.args.seed}-{self.state.global_step}-{round_index}-{self.accelerator.process_index}"
        )
        dataset = self.train_dataset
        rows = [dataset[rng.randrange(len(dataset))] for _ in range(num_prompts)]
        return [dict(row) for row in rows for _ in range(self.num_generations)]
