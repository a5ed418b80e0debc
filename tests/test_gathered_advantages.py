"""The trainer's advantage path equals ``compute_advantages`` for every built-in estimator and option.

``gathered_advantages`` is the one function ``BoTGRPOTrainer.token_advantages`` calls: each process
passes the gathered ``(N, 3)`` moments and its own ``(B, T)`` rows. It is run here with one process and
with the batch split over simulated processes (groups spanning two of them, each with its own padded
width), on token rewards that vary within rollouts (local signals on), with empty and dropped (NaN)
rollouts and garbage in the padding; then through the real trainer on a batch scored by real signals,
and in a 2-step training run with ``scope: batch`` (which used to crash the first step).
"""

from __future__ import annotations

import json
import math

import pytest
import torch
from train_fixtures import (  # noqa: F401  (arith_plugin is a fixture)
    DIST_GROUP,
    arith_plugin,
    build_trainer,
    dist_batch,
    dist_config,
    parse,
    run_dict,
)

from botgrpo_core.estimators.compute import compute_advantages, without_dropped_rollouts
from botgrpo_core.estimators.gathered import gathered_advantages, group_keep
from botgrpo_core.estimators.moments import rollout_moments

torch.set_num_threads(1)

GROUP = 4
#: (estimator, options): every built-in and every option of the moments/outcome ones.
CASES = [
    ("bot", {}),
    ("bot", {"scope": "batch"}),
    ("bot", {"std": "population"}),
    ("bot", {"std": "population", "scope": "batch", "eps": 0.5}),
    ("bot", {"eps": 0.0}),
    ("bot", {"nan_policy": "raise"}),
    ("token_pool", {}),
    ("token_pool", {"scope": "batch"}),
    ("token_pool", {"std": "population", "eps": 0.1}),
    ("grpo", {}),
    ("grpo", {"std": "population"}),
    ("grpo", {"eps": 0.0}),
    ("grpo", {"nan_policy": "raise"}),
    ("dr_grpo", {}),
    ("process", {}),
    ("process", {"std": "population", "eps": 0.01}),
    ("pure", {}),
    ("pure", {"baseline": "none", "temperature": 0.5}),
]
CASE_IDS = [f"{name}{options or ''}" for name, options in CASES]


def token_batch(
    seed: int, batch: int = 12, tokens: int = 10, dropped: bool = True
) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-padded (B, T) rewards alpha * R + beta * S (S varies per token, with runs of equal values
    as aligned spans give), one empty rollout, NaN on a dropped rollout, garbage in the padding."""
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(1, tokens + 1, (batch,), generator=g)
    lengths[3] = 0  # an empty rollout
    lengths[0] = tokens
    mask = torch.arange(tokens)[None, :] < lengths[:, None]
    outcome = torch.randint(0, 2, (batch, 1), generator=g).float()
    steps = torch.randint(-2, 3, (batch, tokens // 2), generator=g).float().repeat_interleave(2, dim=1)
    rewards = outcome + 0.25 * steps[:, :tokens]
    rewards[~mask] = torch.tensor([float("nan"), float("inf"), -1e30])[torch.arange(int((~mask).sum())) % 3]
    if dropped:
        rewards[6, : lengths[6]] = float("nan")  # on_error: nan
    return rewards, mask


def reference(name: str, options: dict, rewards: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """What ``botgrpo score`` and the single-process definition give on the whole batch."""
    r, m, opts = without_dropped_rollouts(name, rewards, mask, options)
    return compute_advantages(name, r, m, group_size=GROUP, **opts)


def simulated(
    name: str, options: dict, rewards: torch.Tensor, mask: torch.Tensor, processes: int
) -> list[torch.Tensor]:
    """Each simulated process's result: its rows cut to its own padded width, the moments gathered."""
    n = rewards.shape[0]
    per = n // processes
    parts = []
    for p in range(processes):
        rows = slice(p * per, (p + 1) * per)
        width = max(int(mask[rows].sum(1).max()), 1)  # this process's longest completion
        parts.append((rewards[rows, :width], mask[rows, :width]))
    moments = torch.cat([rollout_moments(r, m, nan_policy="mask") for r, m in parts])  # the (N, 3) gather

    def gather_tokens() -> tuple[torch.Tensor, torch.Tensor]:
        return rewards, mask  # already padded to the common width

    return [
        gathered_advantages(
            name, options, moments, r, m, start=p * per, group_size=GROUP, gather_tokens=gather_tokens
        )
        for p, (r, m) in enumerate(parts)
    ]


@pytest.mark.parametrize(("name", "options"), CASES, ids=CASE_IDS)
@pytest.mark.parametrize("processes", [1, 2, 3])  # 2: 6 rows each, so the group of rows 4-7 spans both
def test_gathered_path_equals_compute_advantages(name: str, options: dict, processes: int) -> None:
    for seed in range(3):
        rewards, mask = token_batch(seed, dropped=options.get("nan_policy") != "raise")
        assert (rewards[mask].unique().numel() > 2) and any(  # token-level variation within rollouts
            rewards[i][mask[i]].unique().numel() > 1 for i in range(rewards.shape[0])
        )
        full = reference(name, options, rewards, mask)
        assert full.abs().max() > 0.1  # not vacuous
        per = rewards.shape[0] // processes
        for p, got in enumerate(simulated(name, options, rewards, mask, processes)):
            assert got.dtype == torch.float32
            expected = full[p * per : (p + 1) * per, : got.shape[1]]
            torch.testing.assert_close(got, expected, rtol=1e-6, atol=1e-6)
            assert (full[p * per : (p + 1) * per, got.shape[1] :] == 0).all()  # cut columns were padding


@pytest.mark.parametrize("processes", [1, 2])
def test_nan_policy_raise_names_the_gathered_row(processes: int) -> None:
    rewards, mask = token_batch(1)  # row 6 dropped (NaN)
    with pytest.raises(ValueError, match=r"estimator 'bot': rollout_moments: .*rollout\(s\) 6 \(1 in all\)"):
        reference("bot", {"nan_policy": "raise"}, rewards, mask)
    if processes == 1:
        with pytest.raises(
            ValueError, match=r"estimator 'bot': rollout_moments: .*rollout\(s\) 6 \(1 in all\)"
        ):
            simulated("bot", {"nan_policy": "raise"}, rewards, mask, 1)
    else:  # the process holding row 6 raises (torchrun then stops the others)
        with pytest.raises(ValueError, match=r"rollout\(s\) 6 \(1 in all\)"):
            simulated("grpo", {"nan_policy": "raise"}, rewards, mask, 2)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"scope": "world"}, "estimator 'bot': option scope='world' is not one of group, batch"),
        ({"std": "unbiased"}, "option std='unbiased'"),
        ({"eps": -1.0}, "option eps must be a number >= 0"),
        ({"nan_policy": "zero"}, "nan_policy='zero'"),
        ({"temperature": 0.1}, r"unknown option\(s\) 'temperature'; it accepts: std, eps, scope, nan_policy"),
    ],
)
def test_bad_options_fail_as_in_compute_advantages(options: dict, message: str) -> None:
    rewards, mask = token_batch(0, dropped=False)
    with pytest.raises(ValueError, match=message):
        reference("bot", options, rewards, mask)
    with pytest.raises(ValueError, match=message):
        simulated("bot", options, rewards, mask, 2)


def test_tokens_are_gathered_only_when_the_statistics_need_them() -> None:
    rewards, mask = token_batch(0)
    moments = rollout_moments(rewards, mask, nan_policy="mask")
    calls = []

    def gather_tokens() -> tuple[torch.Tensor, torch.Tensor]:
        calls.append(1)
        return rewards, mask

    for name in ("bot", "token_pool", "grpo", "dr_grpo", "process", "pure"):
        calls.clear()
        gathered_advantages(
            name, {}, moments, rewards, mask, start=0, group_size=GROUP, gather_tokens=gather_tokens
        )
        assert len(calls) == (name in ("process", "pure")), name


@pytest.mark.parametrize("name", ["bot", "grpo"])
def test_float64_rewards_give_float32_as_compute_advantages(name: str) -> None:
    rewards, mask = token_batch(2, dropped=False)
    rewards = torch.where(mask, rewards, 0.0).double()
    for got, expected in zip(
        simulated(name, {}, rewards, mask, 2), reference(name, {}, rewards, mask).chunk(2), strict=True
    ):
        assert got.dtype == torch.float32
        torch.testing.assert_close(got, expected[:, : got.shape[1]], rtol=1e-6, atol=1e-6)


def test_group_keep_uses_prompt_groups() -> None:
    nonzero = torch.tensor([False, False, True, False, False, False, False, False, True, True])
    keep = group_keep(nonzero, 4)  # groups rows 0-3, 4-7, 8-9 (a short last block)
    assert keep.tolist() == [True] * 4 + [False] * 4 + [True] * 2


# ---- through the real trainer ---------------------------------------------------------------------


def _scored_batch(trainer, tokenizer):  # type: ignore[no-untyped-def]
    from botgrpo_core.rewards.samples import decode_samples
    from botgrpo_core.tasks import get_task

    rows = get_task("arithmetic").train_rows(3, seed=7)
    prompts, ids, fields = dist_batch(tokenizer, rows)
    samples = decode_samples(tokenizer, prompts, ids, fields)
    mix = trainer.mixture.score_batch(samples)
    return mix, trainer._success(mix, samples)


def test_trainer_token_advantages_equal_compute_advantages(tmp_path, arith_plugin):  # noqa: F811
    """``BoTGRPOTrainer.token_advantages`` on a batch scored by a global and a local signal."""
    from botgrpo_core.config.presets import PRESETS

    trainer, tokenizer, _ = build_trainer(parse(dist_config(tmp_path)))
    mix, success = _scored_batch(trainer, tokenizer)
    r, m = mix.token_rewards, mix.mask
    assert any(r[i][m[i]].unique().numel() > 1 for i in range(r.shape[0]))  # local signals vary in a rollout
    G = DIST_GROUP
    for name, options in CASES:
        trainer.preset = PRESETS["bot-grpo"].replace(estimator=name, estimator_options=options)
        adv, table, keep = trainer.token_advantages(r, m, mix, success)
        rr, mm, opts = without_dropped_rollouts(name, r, m, options)
        expected = compute_advantages(name, rr, mm, group_size=G, **opts)
        torch.testing.assert_close(adv, expected, rtol=1e-6, atol=1e-6, msg=f"{name} {options}")
        assert adv.abs().max() > 0.1, (name, options)
        torch.testing.assert_close(table[:, :3], rollout_moments(r, m, nan_policy="mask"))
        groups = (expected != 0).any(dim=1).view(-1, G).any(dim=1)  # prompt groups with a learning signal
        assert keep.tolist() == groups.repeat_interleave(G).tolist()


def test_scope_batch_trains(tmp_path, arith_plugin):  # noqa: F811
    """``algorithm.estimator_options: {scope: batch}`` trains 2 steps (it crashed the first step)."""
    from botgrpo_core.engine.run import run_training

    config = parse(
        run_dict(tmp_path, algorithm={"preset": "bot-grpo", "estimator_options": {"scope": "batch"}})
    )
    summary = run_training(config, progress=False, log=lambda message: None)
    assert summary["steps"] == 2
    train = [
        r
        for r in map(json.loads, (tmp_path / "metrics.jsonl").read_text().splitlines())
        if r["kind"] == "train"
    ]
    assert [r["step"] for r in train] == [1, 2]
    assert all(math.isfinite(r["loss"]) and r["advantages/std"] > 0 for r in train)


def test_trainer_fill_equals_the_one_process_fill(tmp_path, arith_plugin):  # noqa: F811
    """``uncovered: group_mean`` (test_arith.steps in dist_config): the trainer's gathered fill equals
    :func:`~botgrpo_core.rewards.uncovered.centre_uncovered` on the whole batch (tests/test_uncovered.py)."""
    from botgrpo_core.rewards.uncovered import centre_uncovered

    trainer, tokenizer, _ = build_trainer(parse(dist_config(tmp_path)))
    mix, _ = _scored_batch(trainer, tokenizer)
    groups = torch.arange(mix.mask.shape[0]) // DIST_GROUP
    expected = centre_uncovered(mix, groups, int(groups.max()) + 1, trainer.mixture.config.beta)
    got = trainer._centre_uncovered(mix, mix.mask, "train")
    torch.testing.assert_close(got.token_rewards, expected.token_rewards, equal_nan=True)
    assert not torch.allclose(got.token_rewards, mix.token_rewards)  # steps leaves the answer line uncovered
    # the logged figures: covered share and fill value, means over the batch's rollouts
    signal = mix.signals["test_arith.steps"]
    lengths = mix.mask.sum(1).double()
    share = torch.where(lengths > 0, (signal.covered & mix.mask).sum(1) / lengths.clamp(min=1), 0.0)
    uncovered = mix.mask & ~signal.covered
    assert uncovered.any(dim=1).all()  # every rollout has a token the steps leave out (the answer, EOS)
    weight = trainer.mixture.config.signals[1].weight  # the only local signal: local = weight * fill there
    row_fill = torch.stack([got.local[i][uncovered[i]][0] / weight for i in range(len(lengths))])
    metrics = trainer._fill_metrics
    assert metrics["signals/test_arith.steps/covered_frac"] == pytest.approx(float(share.mean()))
    assert 0 < metrics["signals/test_arith.steps/covered_frac"] < 1
    assert metrics["signals/test_arith.steps/uncovered_fill"] == pytest.approx(
        float(row_fill.mean()), abs=1e-6
    )
