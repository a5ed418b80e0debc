"""botgrpo's estimators through verl's own trainer path (``ray_trainer.compute_advantage`` on a real ``DataProto``).

Each estimator and option runs on random ragged batches whose groups are given only by verl's ``uid``
strings, in shuffled order; the reference is botgrpo's ``compute_advantages`` on the same rollouts laid out
as contiguous groups (``group_size``), mapped back: so the uid -> group mapping, the mask, the options and
the dropped-rollout handling are all checked, and the math is botgrpo's in both.
"""

from __future__ import annotations

import pytest

pytest.importorskip(
    "verl", reason="botgrpo-verl's tests run in the verl venv (.venv-verl, made by `make test`)"
)

import numpy as np
import torch
from botgrpo_verl import plugin
from botgrpo_verl.estimators import verl_name
from omegaconf import OmegaConf
from verl import DataProto
from verl.trainer.config import AlgoConfig
from verl.trainer.ppo import core_algos
from verl.trainer.ppo.ray_trainer import compute_advantage

import botgrpo_core
from botgrpo_core import available_estimators, compute_advantages
from botgrpo_core.estimators.compute import without_dropped_rollouts
from botgrpo_core.estimators.registry import estimator_is_outcome_level
from botgrpo_core.signals.manager import PluginManager

BUILTINS = ("bot", "token_pool", "grpo", "dr_grpo", "process", "pure")

#: every estimator with its default options and each option changed (docs/algorithms.md)
CASES = [
    ("bot", {}),
    ("bot", {"std": "population"}),
    ("bot", {"scope": "batch"}),
    ("bot", {"eps": 1e-3}),
    ("token_pool", {}),
    ("token_pool", {"std": "population", "scope": "batch"}),
    ("grpo", {}),
    ("grpo", {"std": "population", "eps": 1e-2}),
    ("dr_grpo", {}),
    ("process", {}),
    ("process", {"std": "population", "eps": 1e-3}),
    ("pure", {}),
    ("pure", {"baseline": "none"}),
    ("pure", {"temperature": 0.5}),
]


def ragged_batch(seed: int, groups: int = 4, group_size: int = 4, width: int = 13):
    """``(rewards (B, T), mask (B, T) int, uids (B,) str, order (B,))``: rollout ``k`` of the verl batch is
    rollout ``order[k]`` of the contiguous layout (group ``order[k] // group_size``)."""
    g = torch.Generator().manual_seed(seed)
    b = groups * group_size
    lengths = torch.randint(1, width + 1, (b,), generator=g)
    lengths[torch.randint(0, b, (1,), generator=g)] = 0  # an empty rollout
    mask = (torch.arange(width)[None, :] < lengths[:, None]).int()
    # piecewise-constant runs (steps for process/pure) plus an outcome per rollout
    steps = torch.randint(0, 4, (b, width), generator=g).cumsum(1) // 3
    rewards = torch.rand(b, 1, generator=g).round() + 0.25 * torch.sin(steps.float() * 1.7 + seed)
    rewards = torch.where(mask.bool(), rewards, torch.randn(b, width, generator=g) * 7)  # padding is junk
    order = torch.randperm(b, generator=g)
    uids = np.array([f"prompt-{seed}-{int(i) // group_size}" for i in order], dtype=object)
    return rewards[order], mask[order], uids, order


def verl_advantages(name: str, rewards, mask, uids, options) -> torch.Tensor:
    data = DataProto.from_dict(
        tensors={"token_level_rewards": rewards.clone(), "response_mask": mask.clone()},
        non_tensors={"uid": uids},
    )
    config = (
        OmegaConf.create({"adv_estimator": verl_name(name), "botgrpo_options": options})
        if options
        else AlgoConfig()
    )
    out = compute_advantage(data, adv_estimator=verl_name(name), config=config)
    assert torch.equal(out.batch["advantages"], out.batch["returns"])
    return out.batch["advantages"]


def contiguous_reference(name: str, rewards, mask, order, group_size: int, options) -> torch.Tensor:
    inverse = torch.argsort(order)
    r, m, opts = without_dropped_rollouts(name, rewards[inverse], mask[inverse].bool(), options)
    return compute_advantages(name, r, m, group_size=group_size, **opts)[order]


def test_import_verl_registers_every_estimator_through_the_entry_point() -> None:
    names = {verl_name(n) for n in available_estimators()}
    assert {verl_name(n) for n in BUILTINS} <= names
    for name in names:
        assert core_algos.get_adv_estimator_fn(name).__module__ == "botgrpo_verl.estimators"
    assert not names & {e.value for e in core_algos.AdvantageEstimator}, "a name clashes with verl's own"


@pytest.mark.parametrize(("name", "options"), CASES, ids=[f"{n}-{o}" for n, o in CASES])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_verl_compute_advantage_equals_botgrpo(name: str, options: dict, seed: int) -> None:
    rewards, mask, uids, order = ragged_batch(seed)
    got = verl_advantages(name, rewards, mask, uids, options)
    want = contiguous_reference(name, rewards, mask, order, 4, options)
    assert got.dtype == torch.float32 and got.shape == rewards.shape
    assert bool((got[mask == 0] == 0).all()), "padding must get advantage 0"
    if estimator_is_outcome_level(name):
        assert torch.equal(got, want)
    else:
        assert float((got - want).abs().max()) <= 1e-6
    assert bool((got != 0).any()), "the batch has spread: some advantage must be nonzero"


@pytest.mark.parametrize("name", ["bot", "grpo", "process", "pure"])
def test_dropped_rollouts_are_handled_as_botgrpo_does(name: str) -> None:
    """A NaN row (a signal's ``on_error: nan``) is left out of its group as in botgrpo's trainer."""
    rewards, mask, uids, order = ragged_batch(5)
    row = int(mask.sum(1).argmax())
    rewards[row, 0] = float("nan")
    got = verl_advantages(name, rewards, mask, uids, {})
    want = contiguous_reference(name, rewards, mask, order, 4, {})
    assert bool(torch.isfinite(got).all())
    assert bool((got[row] == 0).all())
    assert float((got - want).abs().max()) <= 1e-6


def test_bad_option_names_the_estimator_and_its_options() -> None:
    rewards, mask, uids, _ = ragged_batch(3)
    with pytest.raises(ValueError, match=r"estimator 'bot' got unknown option\(s\) 'stdd'.*accepts: .*std"):
        verl_advantages("bot", rewards, mask, uids, {"stdd": "population"})


def test_missing_uid_says_what_is_needed() -> None:
    fn = core_algos.get_adv_estimator_fn(verl_name("bot"))
    with pytest.raises(ValueError, match=r"needs verl's group ids \(non_tensor_batch\['uid'\]\)"):
        fn(token_level_rewards=torch.zeros(2, 3), response_mask=torch.ones(2, 3), config=AlgoConfig())


def centered(token_rewards, mask, group_index, num_groups):
    """A plugin estimator: token rewards minus the group's mean token reward (every token counts once)."""
    m = mask.float()
    sums = torch.zeros(num_groups).index_add(0, group_index, (token_rewards * m).sum(1))
    counts = torch.zeros(num_groups).index_add(0, group_index, m.sum(1))
    return (token_rewards - (sums / counts.clamp(min=1))[group_index][:, None]) * m


class CenteredPlugin:
    @botgrpo_core.hookimpl
    def botgrpo_register_estimators(self, register) -> None:
        register("verl_test_centered", centered)


def test_estimators_of_botgrpo_plugins_register_and_match() -> None:
    manager = PluginManager(entry_points=[])
    manager.register(CenteredPlugin(), name="verl_test", distribution="verl-test-plugin", version="0")
    names = plugin.register_estimators(manager)
    assert verl_name("verl_test_centered") in names
    assert set(names) >= {verl_name(n) for n in BUILTINS}
    rewards, mask, uids, order = ragged_batch(7)
    got = verl_advantages("verl_test_centered", rewards, mask, uids, {})
    want = contiguous_reference("verl_test_centered", rewards, mask, order, 4, {})
    assert float((got - want).abs().max()) <= 1e-6
    # independent: each rollout's valid tokens minus its group's token mean
    inverse = torch.argsort(order)
    r, m = rewards[inverse], mask[inverse].float()
    for gi in range(4):
        rows = slice(4 * gi, 4 * gi + 4)
        mean = float((r[rows] * m[rows]).sum() / m[rows].sum())
        expect = (r[rows] - mean) * m[rows]
        assert torch.allclose(got[order.argsort()][rows], expect, atol=1e-6)
