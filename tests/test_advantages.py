"""Advantage estimators against the float64 loop references, hand-computed cases and edge cases."""

from __future__ import annotations

import math

import pytest
import reference_impl as ref
import torch

from botgrpo_core.estimators import compute, moments, pooled, registry
from botgrpo_core.estimators.compute import compute_advantages
from botgrpo_core.estimators.moments import affine_advantages, group_stats_from_moments, rollout_moments
from botgrpo_core.estimators.registry import available_estimators, get_estimator, register_estimator

torch.set_num_threads(1)

BUILTINS = ["bot", "token_pool", "grpo", "dr_grpo", "process", "pure"]


# ---- helpers ---------------------------------------------------------------------------------------


def random_batch(
    seed: int, batch: int = 12, tokens: int = 9, layout: str = "right", discrete: bool = False
) -> tuple[torch.Tensor, torch.Tensor]:
    """Ragged rewards (B, T) float32 with garbage (NaN/inf) on padding, and a bool mask."""
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(0, tokens + 1, (batch,), generator=g)
    lengths[0] = tokens
    pos = torch.arange(tokens)[None, :]
    if layout == "right":
        mask = pos < lengths[:, None]
    elif layout == "left":
        mask = pos >= tokens - lengths[:, None]
    else:  # holes anywhere
        mask = torch.rand(batch, tokens, generator=g) < 0.7
    if discrete:  # few distinct values: runs of equal rewards (steps) and ties
        rewards = torch.randint(-2, 3, (batch, tokens), generator=g).float() * 0.5
    else:
        rewards = torch.randn(batch, tokens, generator=g)
    garbage = torch.tensor([float("nan"), float("inf"), -1e30])
    rewards[~mask] = garbage[torch.randint(0, 3, (int((~mask).sum()),), generator=g)]
    return rewards, mask


def ragged(values: torch.Tensor, mask: torch.Tensor) -> list[list[float]]:
    return [values[i][mask[i]].double().tolist() for i in range(values.shape[0])]


def assert_matches(
    got: torch.Tensor, mask: torch.Tensor, expected: list[list[float]], tol: float = 2e-5
) -> None:
    assert got.dtype == torch.float32
    assert torch.isfinite(got).all()
    assert (got[~mask] == 0).all(), "padding must be exactly 0"
    for i, row in enumerate(ragged(got, mask)):
        assert len(row) == len(expected[i])
        for a, b in zip(row, expected[i], strict=True):
            assert a == pytest.approx(b, abs=tol, rel=tol), f"rollout {i}: {row} vs {expected[i]}"


# (estimator, options) -> reference(rows, groups, ends); ``ends`` only matters for step estimators
REFERENCES = {
    ("bot", ()): lambda rows, groups, ends: ref.bot_ref(rows, groups),
    ("bot", (("std", "population"),)): lambda rows, groups, ends: ref.bot_ref(rows, groups, std="population"),
    ("bot", (("eps", 0.5),)): lambda rows, groups, ends: ref.bot_ref(rows, groups, eps=0.5),
    ("token_pool", ()): lambda rows, groups, ends: ref.bot_ref(rows, groups, token_weights=True),
    ("token_pool", (("std", "population"),)): lambda rows, groups, ends: ref.bot_ref(
        rows, groups, token_weights=True, std="population"
    ),
    ("grpo", ()): lambda rows, groups, ends: ref.grpo_ref(rows, groups),
    ("grpo", (("eps", 0.0),)): lambda rows, groups, ends: ref.grpo_ref(rows, groups, eps=0.0),
    ("dr_grpo", ()): lambda rows, groups, ends: ref.dr_grpo_ref(rows, groups),
    ("process", ()): lambda rows, groups, ends: ref.process_ref(rows, groups, ends=ends),
    ("process", (("std", "population"),)): lambda rows, groups, ends: ref.process_ref(
        rows, groups, ends=ends, std="population"
    ),
    ("pure", ()): lambda rows, groups, ends: ref.pure_ref(rows, groups, ends=ends),
    ("pure", (("baseline", "none"), ("temperature", 0.5))): lambda rows, groups, ends: ref.pure_ref(
        rows, groups, ends=ends, baseline="none", temperature=0.5
    ),
}


def reference(key: tuple, rewards: torch.Tensor, mask: torch.Tensor, groups: list[int]) -> list[list[float]]:
    """The float64 reference result; step ends follow the documented rule (a masked token ends a run)."""
    ends = [ref.step_ends_with_holes(rewards[i].tolist(), mask[i].tolist()) for i in range(rewards.shape[0])]
    return REFERENCES[key](ragged(rewards, mask), groups, ends)


# ---- against the float64 reference -----------------------------------------------------------------


@pytest.mark.parametrize(("key"), list(REFERENCES), ids=lambda k: f"{k[0]}{dict(k[1]) or ''}")
@pytest.mark.parametrize("layout", ["right", "left", "holes"])
@pytest.mark.parametrize("discrete", [False, True])
def test_matches_float64_reference(key: tuple, layout: str, discrete: bool) -> None:
    name, options = key
    for seed in range(4):
        rewards, mask = random_batch(seed, layout=layout, discrete=discrete)
        groups = [i // 3 for i in range(rewards.shape[0])]
        got = compute_advantages(name, rewards, mask, group_size=3, **dict(options))
        assert_matches(got, mask, reference(key, rewards, mask, groups))


@pytest.mark.parametrize("name", BUILTINS)
def test_group_ids_any_labels_match_reference(name: str) -> None:
    rewards, mask = random_batch(7, batch=10, layout="holes", discrete=name in ("process", "pure"))
    labels = torch.tensor([42, -3, 42, 7, -3, 7, 1000, 42, 1000, -3])
    groups = labels.tolist()
    got = compute_advantages(name, rewards, mask, group_ids=labels)
    assert_matches(got, mask, reference((name, ()), rewards, mask, groups))


def test_batch_scope_is_one_group() -> None:
    rewards, mask = random_batch(3)
    got = compute_advantages("bot", rewards, mask, group_size=3, scope="batch")
    expected = ref.bot_ref(ragged(rewards, mask), [0] * rewards.shape[0])
    assert_matches(got, mask, expected)


def test_grpo_matches_trl_formula() -> None:
    """TRL 1.16 GRPOTrainer: (R - mean) / (nanstd(R) + 1e-4), nanstd Bessel-corrected (torch.std)."""
    outcomes = torch.tensor([[1.0, 0.0, 0.0, 1.0], [0.3, 0.9, 0.2, 0.2]])
    mean = outcomes.mean(dim=1, keepdim=True)
    trl = (outcomes - mean) / (outcomes.std(dim=1, keepdim=True) + 1e-4)  # TRL's eps placement
    mask = torch.ones(8, 5, dtype=torch.bool)
    mask[1, 3:] = False  # length does not matter: constant rewards per row
    rewards = outcomes.reshape(-1, 1).expand(8, 5).clone()
    got = compute_advantages("grpo", rewards, mask, group_size=4)
    assert torch.allclose(got[mask], trl.reshape(-1, 1).expand(8, 5)[mask], atol=1e-6)


# ---- hand-computed small cases ---------------------------------------------------------------------


def _two_rollouts() -> tuple[torch.Tensor, torch.Tensor]:
    # rollout a: [1, 1]; rollout b: [0, 0, 0, 2]
    rewards = torch.tensor([[1.0, 1.0, 9.0, 9.0], [0.0, 0.0, 0.0, 2.0]])
    mask = torch.tensor([[True, True, False, False], [True, True, True, True]])
    return rewards, mask


def test_bot_hand_computed() -> None:
    # weights 1/2 (a) and 1/4 (b): mu = (1 + 0.5) / 2 = 0.75
    # within-row variances 0 and 1 - 0.25 = 0.75; between (0.25^2 + 0.25^2) / 2 = 0.0625
    # var = (0 + 0.75) / 2 + 0.0625 = 0.4375, Bessel (n = 2) -> 0.875
    rewards, mask = _two_rollouts()
    got = compute_advantages("bot", rewards, mask, group_size=2, eps=0.0)
    sd = math.sqrt(0.875)
    expected = torch.tensor([[0.25 / sd, 0.25 / sd, 0, 0], [-0.75 / sd, -0.75 / sd, -0.75 / sd, 1.25 / sd]])
    assert torch.allclose(got, expected, atol=1e-6)
    pop = compute_advantages("bot", rewards, mask, group_size=2, eps=0.0, std="population")
    assert torch.allclose(pop, expected * sd / math.sqrt(0.4375), atol=1e-6)


def test_token_pool_hand_computed() -> None:
    # tokens 1, 1, 0, 0, 0, 2 each weight 1: mean 2/3, E[r^2] = 1, var = 1 - 4/9 = 5/9, Bessel x2 -> 10/9
    rewards, mask = _two_rollouts()
    got = compute_advantages("token_pool", rewards, mask, group_size=2, eps=0.0)
    sd = math.sqrt(10 / 9)
    mu = 2 / 3
    expected = torch.tensor(
        [[(1 - mu) / sd, (1 - mu) / sd, 0, 0], [-mu / sd, -mu / sd, -mu / sd, (2 - mu) / sd]]
    )
    assert torch.allclose(got, expected, atol=1e-6)


def test_grpo_and_dr_grpo_hand_computed() -> None:
    # outcomes (token means) 1 and 0.5: mean 0.75, unbiased std sqrt(2 * 0.0625) = 0.353553
    rewards, mask = _two_rollouts()
    got = compute_advantages("grpo", rewards, mask, group_size=2)
    a = 0.25 / (math.sqrt(0.125) + 1e-4)
    assert torch.allclose(got, torch.tensor([[a, a, 0, 0], [-a, -a, -a, -a]]), atol=1e-6)
    dr = compute_advantages("dr_grpo", rewards, mask, group_size=2)
    assert torch.allclose(dr, torch.tensor([[0.25, 0.25, 0, 0], [-0.25] * 4]), atol=1e-7)


def test_process_hand_computed() -> None:
    # rollout a: steps [t0..t1] reward 1, [t2] reward 0; rollout b: one step [t0..t2] reward 1
    # pooled step rewards {1, 0, 1}: mean 2/3, population var 2/9, Bessel (3 steps) -> 1/3
    rewards = torch.tensor([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]])
    mask = torch.ones(2, 3, dtype=torch.bool)
    sd = math.sqrt(1 / 3)
    z1, z0 = (1 - 2 / 3) / sd, (0 - 2 / 3) / sd
    got = compute_advantages("process", rewards, mask, group_size=2, eps=0.0)
    expected = torch.tensor([[z1 + z0, z1 + z0, z0], [z1, z1, z1]])
    assert torch.allclose(got, expected, atol=1e-6)
    # the same steps marked explicitly (b's tokens as one step, a's first step ending at t1)
    step_mask = torch.tensor([[False, True, True], [False, False, True]])
    explicit = compute_advantages("process", rewards, mask, group_size=2, eps=0.0, step_mask=step_mask)
    assert torch.allclose(explicit, expected, atol=1e-6)
    # two adjacent equal-reward steps: explicit ends keep them apart (3 steps in b), the default merges
    step_mask = torch.tensor([[False, True, True], [True, True, True]])
    split = compute_advantages("process", rewards, mask, group_size=2, eps=0.0, step_mask=step_mask)
    steps = [1.0, 0.0, 1.0, 1.0, 1.0]  # pooled
    mu = sum(steps) / 5
    sd5 = math.sqrt(sum((v - mu) ** 2 for v in steps) / 4)
    y1, y0 = (1 - mu) / sd5, (0 - mu) / sd5
    assert torch.allclose(split, torch.tensor([[y1 + y0, y1 + y0, y0], [3 * y1, 2 * y1, y1]]), atol=1e-6)


def test_pure_hand_computed() -> None:
    # rollout a: steps 0.5 then -0.5; rollout b: one step 1.0; T = 0.1
    rewards = torch.tensor([[0.5, -0.5], [1.0, 1.0]])
    mask = torch.ones(2, 2, dtype=torch.bool)
    w_hi = math.exp(-5) / (math.exp(-5) + math.exp(5))  # softmax(-r/T) weight of the 0.5 step
    star = [w_hi * 0.5, (1 - w_hi) * -0.5]  # r*_k
    ret_a = [star[0] + star[1], star[1]]  # returns-to-go, ~min(0.5, -0.5) at the start
    raw = compute_advantages("pure", rewards, mask, group_size=2, baseline="none")
    assert torch.allclose(raw, torch.tensor([ret_a, [1.0, 1.0]]), atol=1e-6)
    assert ret_a[0] == pytest.approx(-0.5, abs=1e-4)  # min-form: dominated by the worst step
    rloo = compute_advantages("pure", rewards, mask, group_size=2)
    expected = torch.tensor([[ret_a[0] - 1.0, ret_a[1] - 1.0], [1.0 - ret_a[0], 1.0 - ret_a[0]]])
    assert torch.allclose(rloo, expected, atol=1e-6)


# ---- exact zeros, empty rollouts, NaN ---------------------------------------------------------------


@pytest.mark.parametrize("name", ["bot", "token_pool", "grpo", "dr_grpo", "process"])
@pytest.mark.parametrize("value", [0.1, -3.7, 1e-3, 12345.678])
def test_zero_spread_gives_exactly_zero(name: str, value: float) -> None:
    # one value on every valid token of the group, ragged lengths (float32 sums of 0.1 are inexact)
    lengths = torch.tensor([1, 7, 33, 100, 3, 64])
    mask = torch.arange(100)[None, :] < lengths[:, None]
    rewards = torch.full((6, 100), value)
    rewards[~mask] = float("nan")
    got = compute_advantages(name, rewards, mask, group_size=6)
    assert torch.equal(got, torch.zeros_like(got))


def test_zero_spread_group_beside_spread_group() -> None:
    rewards = torch.tensor([[0.7, 0.7, 0.7], [0.7, 0.7, 0.0], [1.0, 0.0, 0.5], [0.2, 0.9, 0.4]])
    mask = torch.tensor([[True, True, True], [True, True, False], [True] * 3, [True] * 3])
    got = compute_advantages("bot", rewards, mask, group_size=2)
    assert torch.equal(got[:2], torch.zeros(2, 3))
    assert (got[2:].abs() > 0).any()


def test_tied_outcomes_leave_the_local_signal_at_full_scale_whatever_beta() -> None:
    """docs/concepts.md: when every outcome of a group ties, ``alpha * R`` drops out and ``beta`` cancels; the
    advantages are the local signal's own standardised values (float64 reference by hand)."""
    steps = torch.tensor(
        [[1.0, 1.0, -1.0, 0.0], [1.0, 1.0, 1.0, 1.0], [-1.0, -1.0, 0.0, 0.0], [0.0, 1.0, 1.0, -1.0]]
    )
    mask = torch.ones(4, 4, dtype=torch.bool)
    results = {}
    for beta in (0.05, 0.25, 1.0):
        rewards = 1.0 * 0.0 + beta * steps  # alpha * R + beta * S, R = 0 for all four (four wrong answers)
        results[beta] = compute_advantages("bot", rewards, mask, group_size=4)
    s = steps.double()
    mean = s.mean()  # equal lengths: the 1/L weights are uniform
    std = ((s - mean) ** 2).mean().mul(4 / 3).sqrt()  # Bessel over the group's 4 rollouts
    want = ((s - mean) / (std + moments.DEFAULT_EPS)).float()
    for got in results.values():
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
    assert float(want.abs().max()) > 1.0  # full scale (a standardised value), not beta-sized


@pytest.mark.parametrize("name", BUILTINS)
def test_empty_rollouts_get_zero_and_no_nan(name: str) -> None:
    rewards = torch.tensor([[1.0, 2.0, 0.5], [9.0, 9.0, 9.0], [0.0, 1.0, 1.0], [5.0, 5.0, 5.0]])
    mask = torch.tensor([[True, True, True], [False] * 3, [True, True, False], [False] * 3])
    got = compute_advantages(name, rewards, mask, group_size=2)
    assert torch.isfinite(got).all()
    assert torch.equal(got[1], torch.zeros(3)) and torch.equal(got[3], torch.zeros(3))
    # an all-empty batch
    none = compute_advantages(name, rewards, torch.zeros_like(mask), group_size=2)
    assert torch.equal(none, torch.zeros_like(none))


@pytest.mark.parametrize("name", ["bot", "token_pool", "grpo", "process"])
def test_single_nonempty_rollout_under_bessel_is_zero(name: str) -> None:
    rewards = torch.tensor([[1.0, 0.0, 3.0], [4.0, 4.0, 4.0]])
    mask = torch.tensor([[True, True, True], [False] * 3])
    got = compute_advantages(name, rewards, mask, group_size=2)
    if name == "process":  # three steps in the one rollout: Bessel over steps is defined
        assert (got[0] != 0).any()
    else:
        assert torch.equal(got, torch.zeros_like(got))


@pytest.mark.parametrize("name", BUILTINS)
@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_non_finite_reward_raises_with_rollout_indices(name: str, bad: float) -> None:
    rewards, mask = random_batch(1, discrete=True)
    rewards[4, 0] = bad  # row 4 has a valid first token (length >= 1 below)
    mask[4, 0] = True
    rewards[9, 2] = bad
    mask[9, 2] = True
    with pytest.raises(ValueError, match=r"rollout\(s\) 4, 9 .*nan_policy='mask'"):
        compute_advantages(name, rewards, mask, group_size=3)


@pytest.mark.parametrize("name", BUILTINS)
def test_nan_policy_mask_drops_the_rollout(name: str) -> None:
    rewards, mask = random_batch(2, discrete=True)
    mask[4, :3] = True
    poisoned = rewards.clone()
    poisoned[4, 1] = float("nan")
    got = compute_advantages(name, poisoned, mask, group_size=3, nan_policy="mask")
    assert torch.equal(got[4], torch.zeros_like(got[4]))
    # the rest equals the computation with rollout 4 emptied (left out of the statistics)
    emptied = mask.clone()
    emptied[4] = False
    expected = compute_advantages(name, rewards, emptied, group_size=3)
    assert torch.allclose(got, expected, atol=1e-6)


def test_padding_garbage_is_ignored() -> None:
    rewards, mask = random_batch(5)
    clean = torch.where(mask, rewards, torch.zeros(()))
    for name in BUILTINS:
        a = compute_advantages(name, rewards, mask, group_size=3)
        b = compute_advantages(name, clean, mask, group_size=3)
        assert torch.equal(a, b), name


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64])
def test_input_dtypes_give_float32(dtype: torch.dtype) -> None:
    rewards, mask = random_batch(0)
    rewards = torch.where(mask, rewards, torch.zeros(()))
    got = compute_advantages("bot", rewards.to(dtype), mask, group_size=3)
    expected = ref.bot_ref(ragged(rewards.to(dtype).double(), mask), [i // 3 for i in range(12)])
    assert_matches(got, mask, expected, tol=1e-4)


def test_integer_and_float_masks() -> None:
    rewards, mask = random_batch(3)
    base = compute_advantages("bot", rewards, mask, group_size=3)
    assert torch.equal(compute_advantages("bot", rewards, mask.long(), group_size=3), base)
    assert torch.equal(compute_advantages("bot", rewards, mask.float(), group_size=3), base)


# ---- moments: the distributed path ------------------------------------------------------------------


def test_rollout_moments_values() -> None:
    rewards, mask = _two_rollouts()
    mom = rollout_moments(rewards, mask)
    assert mom.dtype == torch.float64
    assert torch.allclose(mom, torch.tensor([[1.0, 1.0, 2.0], [0.5, 1.0, 4.0]], dtype=torch.float64))
    empty = rollout_moments(rewards, torch.zeros_like(mask))
    assert torch.equal(empty, torch.zeros(2, 3, dtype=torch.float64))


@pytest.mark.parametrize("std", ["bessel", "population"])
@pytest.mark.parametrize("weighting", ["rollout", "token"])
def test_group_stats_from_moments_match_direct_computation(std: str, weighting: str) -> None:
    rewards, mask = random_batch(11, batch=15, layout="holes")
    gi = torch.arange(15) // 5
    mean, sd, count = group_stats_from_moments(
        rollout_moments(rewards, mask), gi, 3, std=std, weighting=weighting
    )
    for g in range(3):
        rows = [i for i in range(15) if gi[i] == g and mask[i].any()]
        vals, wts = [], []
        for i in rows:
            row = rewards[i][mask[i]].double()
            vals += row.tolist()
            wts += [1.0 if weighting == "token" else 1.0 / len(row)] * len(row)
        v, w = torch.tensor(vals, dtype=torch.float64), torch.tensor(wts, dtype=torch.float64)
        mu = (w * v).sum() / w.sum()
        var = (w * (v - mu) ** 2).sum() / w.sum()
        if std == "bessel":
            var = var * len(rows) / (len(rows) - 1)
        assert count[g] == len(rows)
        assert mean[g].item() == pytest.approx(mu.item(), abs=1e-6)
        assert sd[g].item() == pytest.approx(var.sqrt().item(), abs=1e-6)


def test_sharded_moments_equal_the_full_batch() -> None:
    """What a distributed trainer does: each process computes (B_k, 3) moments, gathers, then
    computes its own rows' advantages from coefficients of the global statistics (any row order)."""
    rewards, mask = random_batch(4, batch=24, tokens=11, layout="holes")
    gi = torch.arange(24) % 6  # groups interleaved across shards
    full = compute_advantages("bot", rewards, mask, group_ids=gi)
    perm = torch.randperm(24, generator=torch.Generator().manual_seed(0))
    shards = [perm[:7], perm[7:15], perm[15:]]
    gathered = torch.cat([rollout_moments(rewards[s], mask[s]) for s in shards])  # (B, 3) all_gather
    gathered_gi = torch.cat([gi[s] for s in shards])
    scale, shift = pooled.bot_coefficients(gathered, gathered_gi, 6, std="bessel", eps=1e-6, scope="group")
    start = 0
    for s in shards:
        rows = slice(start, start + len(s))
        local = affine_advantages(rewards[s], mask[s], scale[rows], shift[rows])
        assert torch.allclose(local, full[s], atol=1e-6)
        start += len(s)


@pytest.mark.parametrize("name", ["bot", "token_pool", "grpo", "dr_grpo"])
def test_moments_estimators_are_moments_coefficients_affine(name: str) -> None:
    """The built-in is exactly: moments, its registered coefficients, the affine map (the gathered path)."""
    rewards, mask = random_batch(8, layout="left")
    gi = torch.arange(12) // 4
    moments = rollout_moments(rewards, mask)
    info = registry.estimator_info(name)
    options = compute.resolve_options(name, info.fn, {})
    del options["nan_policy"]
    scale, shift = info.coefficients_fn(moments, gi, 3, **options)
    direct = affine_advantages(rewards, mask, scale, shift)
    assert torch.equal(direct, compute_advantages(name, rewards, mask, group_size=4))
    if name in ("grpo", "dr_grpo"):  # one advantage per rollout
        assert scale is None
    mean, sd, _ = group_stats_from_moments(moments, gi, 3)
    if name == "bot":  # A = (r - mu_g) / (std_g + eps)
        expected = torch.where(mask, (rewards - mean[gi, None]) / (sd[gi, None] + 1e-6), 0.0).float()
        torch.testing.assert_close(direct, expected, rtol=1e-5, atol=1e-6)


def test_moments_nan_policy() -> None:
    rewards, mask = _two_rollouts()
    rewards[1, 2] = float("nan")
    with pytest.raises(ValueError, match=r"rollout\(s\) 1 "):
        rollout_moments(rewards, mask)
    mom = rollout_moments(rewards, mask, nan_policy="mask")
    assert torch.equal(mom[1], torch.zeros(3, dtype=torch.float64))
    assert torch.equal(mom[0], torch.tensor([1.0, 1.0, 2.0], dtype=torch.float64))


# ---- registry and errors ----------------------------------------------------------------------------


def test_builtins_are_registered() -> None:
    assert set(BUILTINS) <= set(available_estimators())
    assert available_estimators() == sorted(available_estimators())
    assert get_estimator("bot") is pooled.bot
    assert registry.estimator_is_outcome_level("grpo") and not registry.estimator_is_outcome_level("bot")


def test_unknown_estimator_lists_names_and_nearest() -> None:
    with pytest.raises(KeyError, match=r"'bott'.*Did you mean 'bot'.*Available: .*dr_grpo"):
        get_estimator("bott")
    with pytest.raises(KeyError, match="Did you mean 'dr_grpo'"):
        compute_advantages("dr-grpo", torch.zeros(2, 2), torch.ones(2, 2, dtype=torch.bool), group_size=2)


def _median_baseline(token_rewards, mask, group_index, num_groups, *, shift: float = 0.0):  # type: ignore[no-untyped-def]
    """A third-party estimator: reward minus the group's median token reward (padding left dirty)."""
    flat = torch.where(mask, token_rewards, float("nan"))
    med = torch.stack([flat[group_index == g].nanmedian() for g in range(num_groups)])
    return token_rewards - med[group_index][:, None] + shift + 100.0 * (~mask)


def test_register_third_party_estimator() -> None:
    name = "test_median_baseline"
    register_estimator(name, _median_baseline)
    try:
        with pytest.raises(ValueError, match="already registered"):
            register_estimator(name, _median_baseline)
        register_estimator(name, _median_baseline, overwrite=True)
        rewards = torch.tensor([[1.0, 2.0, 3.0], [5.0, 7.0, 0.0]])
        mask = torch.tensor([[True, True, True], [True, True, False]])
        got = compute_advantages(name, rewards, mask, group_size=2, shift=1.0)
        # group tokens 1, 2, 3, 5, 7: median 3; padding forced to 0 whatever the plugin returned
        assert torch.equal(got, torch.tensor([[-1.0, 0.0, 1.0], [3.0, 5.0, 0.0]]))
        with pytest.raises(ValueError, match=r"unknown option\(s\) 'scale'; it accepts: shift"):
            compute_advantages(name, rewards, mask, group_size=2, scale=2.0)
    finally:
        registry._REGISTRY.pop(name, None)


def test_dropped_rollouts_reach_every_estimator_as_the_trainer_sends_them() -> None:
    """on_error: nan rows (NaN rewards) are masked for estimators without nan_policy, flagged for the rest."""
    rewards = torch.tensor(
        [[1.0, 2.0, 3.0], [float("nan"), float("nan"), 0.0], [5.0, 7.0, 0.0], [4.0, 4.0, 4.0]]
    )
    mask = torch.tensor([[True, True, True], [True, True, False], [True, True, False], [True, True, True]])
    name = "test_median_no_nan_policy"
    register_estimator(name, _median_baseline)
    try:
        r, m, opts = compute.without_dropped_rollouts(name, rewards, mask, {"shift": 1.0})
        assert opts == {"shift": 1.0} and not torch.isnan(r).any()
        assert m[1].tolist() == [False, False, False] and torch.equal(m[[0, 2, 3]], mask[[0, 2, 3]])
        got = compute_advantages(name, r, m, group_size=2, **opts)
        assert got[1].tolist() == [0.0, 0.0, 0.0]  # the dropped rollout: no advantage, not in the median
        assert got[0].tolist() == [0.0, 1.0, 2.0]  # r - median 2 (tokens 1, 2, 3) + shift 1
    finally:
        registry._REGISTRY.pop(name, None)
    r, m, opts = compute.without_dropped_rollouts("bot", rewards, mask, {})
    assert opts == {"nan_policy": "mask"} and r is rewards and m is mask  # bot leaves them out itself
    assert (
        compute.without_dropped_rollouts("bot", rewards, mask, {"nan_policy": "raise"})[2]["nan_policy"]
        == "raise"
    )


def test_plugin_output_is_checked() -> None:
    name = "test_bad_shape"
    register_estimator(name, lambda r, m, gi, g: r[:, :1])
    try:
        with pytest.raises(ValueError, match=r"returned \(2, 1\), expected a \(B, T\) = \(2, 3\)"):
            compute_advantages(name, torch.zeros(2, 3), torch.ones(2, 3), group_size=1)
    finally:
        registry._REGISTRY.pop(name, None)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"group_size": 5}, "not a multiple of group_size=5"),
        ({}, "exactly one of group_size"),
        ({"group_size": 2, "group_ids": torch.zeros(6)}, "exactly one of group_size"),
        ({"group_ids": torch.zeros(5, dtype=torch.long)}, r"\(B,\) = \(6,\)"),
        ({"group_ids": torch.zeros(6)}, "must hold integers"),
        ({"group_size": 2, "std": "unbiased"}, "option std='unbiased' is not one of bessel, population"),
        ({"group_size": 2, "scope": "world"}, "option scope='world'"),
        ({"group_size": 2, "eps": -1.0}, "option eps must be a number >= 0"),
        ({"group_size": 2, "nan_policy": "zero"}, "nan_policy='zero'"),
        ({"group_size": 2, "temperature": 0.1}, r"unknown option\(s\) 'temperature'"),
    ],
)
def test_bad_arguments_explain_the_fix(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        compute_advantages("bot", torch.zeros(6, 4), torch.ones(6, 4, dtype=torch.bool), **kwargs)


def test_bad_shapes() -> None:
    with pytest.raises(ValueError, match=r"mask shape \(2, 3\) != token_rewards shape \(2, 4\)"):
        compute_advantages("bot", torch.zeros(2, 4), torch.ones(2, 3), group_size=1)
    with pytest.raises(ValueError, match="must be \\(B, T\\)"):
        compute_advantages("bot", torch.zeros(4), torch.ones(4), group_size=1)
    with pytest.raises(ValueError, match="floating point"):
        compute_advantages("bot", torch.zeros(2, 4, dtype=torch.long), torch.ones(2, 4), group_size=1)
    with pytest.raises(ValueError, match="option temperature must be a number > 0"):
        compute_advantages("pure", torch.zeros(2, 4), torch.ones(2, 4), group_size=2, temperature=0)
    with pytest.raises(ValueError, match=r"step_mask shape"):
        compute_advantages(
            "process", torch.zeros(2, 4), torch.ones(2, 4), group_size=2, step_mask=torch.ones(2, 3)
        )


@pytest.mark.parametrize("tokens", [1, 7, 16, 17, 255, 256, 1000, 4099])
def test_row_counts_match_a_plain_count(tokens: int) -> None:
    """The uint8 chunked count (no int32 copy of the mask) equals sum(mask) for any T, full rows too."""
    g = torch.Generator().manual_seed(tokens)
    mask = torch.rand(9, tokens, generator=g) < 0.6
    mask[0] = True
    mask[1] = False
    assert moments._row_counts(mask).tolist() == [int(row.sum()) for row in mask]
    strided = mask[:, ::2]  # not contiguous: the plain path
    assert moments._row_counts(strided).tolist() == [int(row.sum()) for row in strided]
