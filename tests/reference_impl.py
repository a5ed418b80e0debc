"""Plain float64 reference implementations for the tests.

Written straight from the formulas in docs/algorithms.md with Python loops over groups, rollouts and
tokens, sharing no code with ``botgrpo_core``. Inputs are nested lists: ``rewards[i]`` is the list of
rollout ``i``'s *valid* token rewards (ragged), ``groups[i]`` its group label. Outputs are ragged lists
of advantages in the same layout.
"""

from __future__ import annotations

import math
from collections import defaultdict

Ragged = list[list[float]]


def _members(groups: list[int]) -> dict[int, list[int]]:
    out: dict[int, list[int]] = defaultdict(list)
    for i, g in enumerate(groups):
        out[g].append(i)
    return out


def _zeros_like(rewards: Ragged) -> Ragged:
    return [[0.0] * len(row) for row in rewards]


def bot_ref(
    rewards: Ragged,
    groups: list[int],
    *,
    std: str = "bessel",
    eps: float = 1e-6,
    token_weights: bool = False,
) -> Ragged:
    """BoT-GRPO: token weight 1/L_i (or 1 with ``token_weights``), pooled mean/var per group."""
    out = _zeros_like(rewards)
    for members in _members(groups).values():
        rows = [i for i in members if rewards[i]]
        n = len(rows)
        if n == 0:
            continue
        wsum = 0.0
        acc = 0.0
        for i in rows:
            w = 1.0 if token_weights else 1.0 / len(rewards[i])
            for v in rewards[i]:
                wsum += w
                acc += w * v
        mu = acc / wsum
        var = 0.0
        for i in rows:
            w = 1.0 if token_weights else 1.0 / len(rewards[i])
            for v in rewards[i]:
                var += w * (v - mu) ** 2
        var /= wsum
        if std == "bessel":
            if n < 2:
                continue
            var *= n / (n - 1)
        sd = math.sqrt(var)
        if sd == 0.0 or all(v == rewards[rows[0]][0] for i in rows for v in rewards[i]):
            continue
        for i in rows:
            out[i] = [(v - mu) / (sd + eps) for v in rewards[i]]
    return out


def grpo_outcome_ref(outcomes: list[float | None], groups: list[int], *, eps: float = 1e-4) -> list[float]:
    """GRPO (TRL 1.16): (R - mean) / (std_unbiased + eps) per group; ``None`` = empty rollout -> 0."""
    adv = [0.0] * len(outcomes)
    for members in _members(groups).values():
        rows = [i for i in members if outcomes[i] is not None]
        n = len(rows)
        if n < 2:
            continue
        vals = [float(outcomes[i]) for i in rows]  # type: ignore[arg-type]
        mean = sum(vals) / n
        sd = math.sqrt(sum((v - mean) ** 2 for v in vals) / (n - 1))
        if all(v == vals[0] for v in vals):
            continue
        for i in rows:
            adv[i] = (float(outcomes[i]) - mean) / (sd + eps)  # type: ignore[arg-type]
    return adv


def grpo_ref(rewards: Ragged, groups: list[int], *, eps: float = 1e-4) -> Ragged:
    """GRPO with outcome = token-mean reward, broadcast to every valid token."""
    outcomes = [sum(row) / len(row) if row else None for row in rewards]
    adv = grpo_outcome_ref(outcomes, groups, eps=eps)
    return [[adv[i]] * len(row) for i, row in enumerate(rewards)]


def dr_grpo_ref(rewards: Ragged, groups: list[int]) -> Ragged:
    """Dr. GRPO: R_i - mean of the group's outcomes, no std."""
    outcomes = [sum(row) / len(row) if row else None for row in rewards]
    adv = [0.0] * len(rewards)
    for members in _members(groups).values():
        rows = [i for i in members if outcomes[i] is not None]
        if not rows:
            continue
        mean = sum(outcomes[i] for i in rows) / len(rows)  # type: ignore[misc]
        for i in rows:
            adv[i] = outcomes[i] - mean  # type: ignore[operator]
    return [[adv[i]] * len(row) for i, row in enumerate(rewards)]


def default_step_ends(row: list[float]) -> list[bool]:
    """A step is a maximal run of equal consecutive rewards; its last token ends it."""
    return [t == len(row) - 1 or row[t + 1] != row[t] for t in range(len(row))]


def step_ends_with_holes(values: list[float], valid: list[bool]) -> list[bool]:
    """Step ends of a padded row, for its valid tokens only: a run also ends before a masked token."""
    ends = []
    for t, ok in enumerate(valid):
        if ok:
            last = t == len(valid) - 1 or not valid[t + 1] or values[t + 1] != values[t]
            ends.append(last)
    return ends


def process_ref(
    rewards: Ragged,
    groups: list[int],
    *,
    ends: list[list[bool]] | None = None,
    std: str = "bessel",
    eps: float = 1e-6,
) -> Ragged:
    """DeepSeekMath process supervision: pooled unweighted step normalisation, returns-to-go."""
    ends = ends if ends is not None else [default_step_ends(row) for row in rewards]
    out = _zeros_like(rewards)
    for members in _members(groups).values():
        steps = [rewards[i][t] for i in members for t in range(len(rewards[i])) if ends[i][t]]
        n = len(steps)
        if n == 0 or (std == "bessel" and n < 2) or all(v == steps[0] for v in steps):
            continue
        mean = sum(steps) / n
        var = sum((v - mean) ** 2 for v in steps) / n
        if std == "bessel":
            var *= n / (n - 1)
        sd = math.sqrt(var)
        for i in members:
            row = rewards[i]
            for t in range(len(row)):
                out[i][t] = sum((row[k] - mean) / (sd + eps) for k in range(t, len(row)) if ends[i][k])
    return out


def pure_ref(
    rewards: Ragged,
    groups: list[int],
    *,
    ends: list[list[bool]] | None = None,
    temperature: float = 0.1,
    baseline: str = "rloo",
) -> Ragged:
    """PURE: r*_k = softmax(-r/T)_k r_k within a rollout, returns-to-go, optional RLOO baseline."""
    ends = ends if ends is not None else [default_step_ends(row) for row in rewards]
    returns: Ragged = []
    for i, row in enumerate(rewards):
        steps = [t for t in range(len(row)) if ends[i][t]]
        if not steps:
            returns.append([0.0] * len(row))
            continue
        lo = min(row[t] for t in steps)
        z = sum(math.exp(-(row[t] - lo) / temperature) for t in steps)
        star = {t: math.exp(-(row[t] - lo) / temperature) / z * row[t] for t in steps}
        returns.append([sum(v for k, v in star.items() if k >= t) for t in range(len(row))])
    if baseline == "none":
        return returns
    out = _zeros_like(rewards)
    for members in _members(groups).values():
        rows = [i for i in members if any(ends[i])]
        if len(rows) < 2:
            continue
        for i in rows:
            others = [returns[j][0] for j in rows if j != i]
            base = sum(others) / len(others)
            out[i] = [v - base for v in returns[i]]
    return out
