"""DAPO dynamic sampling: zero-spread groups are dropped and the batch is refilled to full size."""

from __future__ import annotations

import torch
from train_fixtures import arith_plugin, build_trainer, group_inputs, parse, run_dict  # noqa: F401


def _groups(batch, G):
    A, m = batch["advantages"], batch["completion_mask"].bool()
    return [bool((A[g : g + G][m[g : g + G]] != 0).any()) for g in range(0, A.shape[0], G)]


def test_zero_spread_groups_are_replaced(tmp_path, arith_plugin):  # noqa: F811
    G, P = 4, 6
    config = parse(
        run_dict(
            tmp_path,
            algorithm={"preset": "dapo"},
            rewards={"beta": 0.0, "signals": [{"name": "test_arith.parity"}]},
            training={"prompts_per_step": P, "group_size": G, "dynamic_sampling_rounds": 6},
        )
    )
    trainer, _, rows = build_trainer(config, dynamic_sampling_rounds=6)
    trainer.model.train()
    odd = [r for r in rows if int(r["answer"]) % 2]
    even = [r for r in rows if int(r["answer"]) % 2 == 0]
    inputs = group_inputs(odd[:3] + even[:3], P, G)  # half the groups cannot have spread
    torch.manual_seed(0)
    batch = trainer._generate_and_score_completions(inputs)

    assert batch["completion_ids"].shape[0] == P * G  # full batch size kept
    for key in ("prompt_ids", "prompt_mask", "completion_mask", "advantages"):
        assert batch[key].shape[0] == P * G
    assert batch["advantages"].shape == batch["completion_ids"].shape
    rounds = trainer._metrics["train"]["dynamic_sampling/rounds"][-1]
    filler = trainer._metrics["train"]["dynamic_sampling/filler_rows"][-1]
    assert trainer._metrics["train"]["dynamic_sampling/kept_frac_first"][-1] <= 0.5
    assert rounds >= 1
    spread = _groups(batch, G)
    assert sum(not s for s in spread) * G == filler  # only filler groups lack spread
    # prompts stay left-padded and completions right-padded after the merge
    pm, cm = batch["prompt_mask"], batch["completion_mask"]
    assert bool((pm[:, -1] == 1).all()) and bool((cm.cumsum(1) == cm.sum(1, keepdim=True)).any(1).all())
    assert int(batch["num_items_in_batch"]) == int(cm.sum())
    trainer.current_gradient_accumulation_steps = 1  # set by HF's training loop
    loss = trainer.compute_loss(trainer.model, batch)  # TRL's loss accepts the merged batch
    assert torch.isfinite(loss)


def test_without_zero_spread_groups_nothing_is_regenerated(tmp_path, arith_plugin):  # noqa: F811
    config = parse(run_dict(tmp_path, algorithm={"preset": "dapo"}))
    trainer, _, rows = build_trainer(config)
    trainer.model.train()
    torch.manual_seed(0)
    batch = trainer._generate_and_score_completions(group_inputs(rows, 2, 4))
    assert trainer._metrics["train"]["dynamic_sampling/rounds"][-1] == 0
    assert all(_groups(batch, 4))
