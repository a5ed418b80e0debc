"""Property tests (hypothesis) of the bag-of-tokens advantages.

Rewards are drawn on a grid (multiples of 1/4) so a group either has no spread or a clear one: the
properties are exact in real arithmetic and must hold to float32 rounding.
"""

from __future__ import annotations

import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from botgrpo_core.estimators.compute import compute_advantages

torch.set_num_threads(1)

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TOL = 2e-5


@st.composite
def batches(draw: st.DrawFn, *, min_len: int = 0, max_len: int = 6) -> tuple[list[list[float]], list[int]]:
    """Ragged token rewards of 1-3 groups with 2-5 rollouts each, and each rollout's group label."""
    rows: list[list[float]] = []
    labels: list[int] = []
    for g in range(draw(st.integers(1, 3))):
        for _ in range(draw(st.integers(2, 5))):
            length = draw(st.integers(min_len, max_len))
            rows.append([v / 4 for v in draw(st.lists(st.integers(-8, 8), min_size=length, max_size=length))])
            labels.append(g)
    return rows, labels


def pad(rows: list[list[float]], width: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    width = width or max(1, max(len(r) for r in rows))
    rewards = torch.full((len(rows), width), float("nan"))
    mask = torch.zeros(len(rows), width, dtype=torch.bool)
    for i, row in enumerate(rows):
        rewards[i, : len(row)] = torch.tensor(row)
        mask[i, : len(row)] = True
    return rewards, mask


def advantages(name: str, rows: list[list[float]], labels: list[int], **options: object) -> list[list[float]]:
    rewards, mask = pad(rows)
    out = compute_advantages(name, rewards, mask, group_ids=torch.tensor(labels), **options)
    return [out[i, : len(row)].tolist() for i, row in enumerate(rows)]


def close(a: list[list[float]], b: list[list[float]], tol: float = TOL) -> bool:
    return all(
        abs(x - y) <= tol * (1 + abs(y))
        for ra, rb in zip(a, b, strict=True)
        for x, y in zip(ra, rb, strict=True)
    )


@SETTINGS
@given(batches(), st.data())
def test_length_invariance(batch: tuple[list[list[float]], list[int]], data: st.DataObject) -> None:
    """Repeating a rollout's token rewards k times changes no advantage value."""
    rows, labels = batch
    i = data.draw(st.integers(0, len(rows) - 1))
    k = data.draw(st.integers(2, 4))
    tiled = [row * k if j == i else row for j, row in enumerate(rows)]
    base = advantages("bot", rows, labels)
    after = advantages("bot", tiled, labels)
    expected = [row * k if j == i else row for j, row in enumerate(base)]
    assert close(after, expected)


def test_token_pool_is_not_length_invariant() -> None:
    """The ablation: without 1/L a repeated rollout gains weight and moves every advantage."""
    rows, labels = [[1.0, 1.0], [0.0]], [0, 0]
    tiled_rows = [rows[0] * 4, rows[1]]
    # token pool: mean 2/3 -> 8/9, Bessel std 2/3 -> 4/9, so the short rollout's -1 becomes -2
    assert abs(advantages("token_pool", rows, labels, eps=0.0)[1][0] - -1.0) < 1e-6
    assert abs(advantages("token_pool", tiled_rows, labels, eps=0.0)[1][0] - -2.0) < 1e-6
    # BoT: unchanged by the tiling
    assert advantages("bot", tiled_rows, labels)[1] == advantages("bot", rows, labels)[1]


@SETTINGS
@given(batches(), st.sampled_from(["bot", "token_pool", "grpo", "dr_grpo", "process", "pure"]), st.randoms())
def test_permuting_rollouts_permutes_advantages(
    batch: tuple[list[list[float]], list[int]], name: str, rng: object
) -> None:
    rows, labels = batch
    order = list(range(len(rows)))
    rng.shuffle(order)  # type: ignore[attr-defined]
    base = advantages(name, rows, labels)
    permuted = advantages(name, [rows[j] for j in order], [labels[j] for j in order])
    assert close(permuted, [base[j] for j in order])


@SETTINGS
@given(
    batches(),
    st.floats(0.05, 20.0),
    st.floats(-10.0, 10.0),
    st.sampled_from(["bessel", "population"]),
)
def test_affine_rewards_leave_bot_unchanged(
    batch: tuple[list[list[float]], list[int]], a: float, c: float, std: str
) -> None:
    """r -> a * r + c (a > 0) leaves BoT advantages unchanged (eps = 0 so the scale cancels exactly)."""
    rows, labels = batch
    moved = [[a * v + c for v in row] for row in rows]
    base = advantages("bot", rows, labels, eps=0.0, std=std)
    after = advantages("bot", moved, labels, eps=0.0, std=std)
    # float32 rounding of a*r + c relative to the spread: |c| / a sets the scale of the error
    assert close(after, base, tol=1e-5 * (1 + abs(c) / a))


@SETTINGS
@given(
    st.lists(st.lists(st.integers(0, 4), min_size=2, max_size=5), min_size=1, max_size=3),
    st.lists(st.integers(1, 7), min_size=15, max_size=15),
    st.floats(0.1, 3.0),
    st.sampled_from([1e-6, 1e-4, 0.0]),
)
def test_beta_zero_gives_grpo_on_every_token(
    groups: list[list[int]], lengths: list[int], alpha: float, eps: float
) -> None:
    """With only a global term, r[i, t] = alpha * R_i, BoT equals GRPO (Bessel std) on every valid token."""
    outcomes = [v / 4 for group in groups for v in group]
    labels = [g for g, group in enumerate(groups) for _ in group]
    rows = [[alpha * r] * lengths[i] for i, r in enumerate(outcomes)]
    bot = advantages("bot", rows, labels, eps=eps)
    grpo = advantages("grpo", rows, labels, eps=eps)
    assert close(bot, grpo)
    # and GRPO itself is the outcome formula (R - mean) / (std_unbiased + eps) with std from torch.std
    for g in range(len(groups)):
        idx = [i for i, lab in enumerate(labels) if lab == g]
        r = torch.tensor([alpha * outcomes[i] for i in idx], dtype=torch.float64)
        spread = len({outcomes[i] for i in idx}) > 1
        want = (r - r.mean()) / (r.std() + eps) if spread else torch.zeros_like(r)
        for j, i in enumerate(idx):
            assert all(abs(v - want[j].item()) <= TOL * (1 + abs(want[j].item())) for v in grpo[i])


@SETTINGS
@given(batches(min_len=1), st.sampled_from(["bessel", "population"]))
def test_weighted_mean_zero_and_unit_variance(batch: tuple[list[list[float]], list[int]], std: str) -> None:
    """Per group with spread, with weights 1/L_i: sum w A = 0 and sum w A^2 / sum w = 1 (population std),
    (n - 1) / n under Bessel's correction."""
    rows, labels = batch
    adv = advantages("bot", rows, labels, eps=0.0, std=std)
    for g in set(labels):
        idx = [i for i, lab in enumerate(labels) if lab == g]
        values = {v for i in idx for v in rows[i]}
        n = len(idx)
        mean = sum(sum(adv[i]) / len(adv[i]) for i in idx) / n
        second = sum(sum(v * v for v in adv[i]) / len(adv[i]) for i in idx) / n
        if len(values) == 1:  # no spread: all zero
            assert all(v == 0.0 for i in idx for v in adv[i])
            continue
        assert abs(mean) <= 1e-5
        target = 1.0 if std == "population" else (n - 1) / n
        assert abs(second - target) <= 1e-4
