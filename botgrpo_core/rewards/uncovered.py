"""What a local signal gives a token none of its spans covers (``rewards.signals[i].uncovered``).

A local signal speaks about some tokens only: a step checker about its step lines, a compile rule about
the broken words. In the bag of tokens every token is scored against the group's token statistics, so
the value of silence matters:

- ``zero`` (default): an uncovered token gets ``S = 0``. When the signal's group mean is negative (most
  rollouts of a group carry blame), every uncovered token out-ranks a token carrying the group's average
  verdict by about ``-beta * mean(S) / std`` of the advantage, so a policy gains by writing tokens the
  signal does not judge (pages of blank space, padding). GRPO is immune: a rollout's tokens share one
  advantage.
- ``group_mean``: an uncovered token of rollout ``i`` in group ``g`` gets the group's length-weighted
  mean of the signal over the tokens it covers,

  ``m_g = sum_{i in g} (1/L_i) sum_t C[i,t] S[i,t]  /  sum_{i in g} (1/L_i) sum_t C[i,t]``

  with ``C`` the coverage (a token some span touches under the signal's ``placement``, or one of a
  ``TokenValues`` row) and ``L_i`` the rollout's valid tokens; ``m_g = 0`` where the group has no covered
  token. With the bag of tokens' ``1/L_i`` weights the filled signal's group mean is then exactly ``m_g``,
  so an uncovered token's advantage comes from the outcome alone: silence neither helps nor hurts, and
  adding a constant to every verdict of a group changes no advantage (tests/test_uncovered.py).

Rollouts dropped by ``on_error: nan`` and empty rollouts are left out of ``m_g``; a sample the signal
failed on (``on_error: zero``) has no spans, so all its tokens are uncovered and get ``m_g``. The signal's
``results``, aligned ``values`` and logged metrics stay as the signal gave them: the fill changes the
token rewards and the mixture's ``local`` part only.

The fill needs whole groups, so it runs after scoring: :func:`centre_uncovered` on one process (``botgrpo
score``, tests); a distributed trainer gathers :func:`coverage_moments` (``(B, 2K)``, as it gathers the
advantages' moments), reduces them with :func:`group_fills` and applies :func:`fill_uncovered` to its rows.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

from botgrpo_core.rewards.alignment import Placement, align_each

if TYPE_CHECKING:
    import torch

    from botgrpo_core.rewards.mixture import MixtureOutput
    from botgrpo_core.signals import Span


def covered_tokens(
    spans: Sequence[Sequence[Span]],
    token_value_lengths: Sequence[int | None],
    offsets: torch.Tensor,
    text_lengths: Sequence[int],
    placement: Placement,
) -> torch.Tensor:
    """``(B, T)`` bool: the tokens some span of the sample touches (under ``placement``, as the values
    were aligned), or, for a sample scored with ``TokenValues``, its first ``len(values)`` tokens.

    :param spans: per sample, the (shaped) spans; ``[]`` for a failed or ``TokenValues`` sample.
    :param token_value_lengths: per sample, ``len(values)`` of a ``TokenValues`` result, else ``None``.
    :param offsets: ``(B, T, 2)`` token character ranges; :param text_lengths: ``(B,)`` completion lengths.
    """
    ones = [[dataclasses.replace(s, value=1.0) for s in row] for row in spans]
    count, _ = align_each(ones, offsets, text_lengths, placement=placement)  # misaligned rows stay 0
    covered = count > 0  # (B, T)
    T = covered.shape[1]
    for i, n in enumerate(token_value_lengths):
        if n is not None:
            covered[i, : min(int(n), T)] = True
    return covered


def centred_signals(mix: MixtureOutput) -> list[str]:
    """The names of ``mix``'s signals with ``uncovered: group_mean``, in config order (the layout of
    :func:`coverage_moments`' columns and :func:`group_fills`' result)."""
    return [name for name, signal in mix.signals.items() if signal.covered is not None]


def coverage_moments(mix: MixtureOutput, mask: torch.Tensor) -> torch.Tensor:
    """Per rollout and centred signal ``k``: ``[sum_t C S_k / L, sum_t C / L]``, ``(B, 2K)`` float64.

    ``L`` and the sums run over ``mask``'s tokens (a trainer's completion mask, e.g. without tool tokens);
    dropped (``mix.valid`` False) and empty rollouts give 0 in both columns.

    :param mask: ``(B, T)`` bool, ``T`` = ``mix.mask.shape[1]``.
    """
    import torch

    mask = mask.to(mix.mask.device).bool() & mix.mask
    length = mask.sum(dim=1).double()  # (B,)
    keep = mix.valid & (length > 0)  # (B,)
    inverse = torch.where(keep, 1.0 / length.clamp(min=1.0), 0.0)  # (B,) float64
    columns: list[torch.Tensor] = []
    for name in centred_signals(mix):
        signal = mix.signals[name]
        covered = signal.covered & mask  # type: ignore[operator]
        columns.append((torch.where(covered, signal.values, 0.0).double().sum(dim=1) * inverse)[:, None])
        columns.append((covered.sum(dim=1).double() * inverse)[:, None])
    if not columns:
        return torch.zeros(mask.shape[0], 0, dtype=torch.float64)
    return torch.cat(columns, dim=1)


def group_fills(moments: torch.Tensor, group_index: torch.Tensor, num_groups: int) -> torch.Tensor:
    """``(N, K)`` float64: each rollout's group mean ``m_g`` of every centred signal over covered tokens.

    :param moments: ``(N, 2K)`` :func:`coverage_moments` of every rollout (gathered over processes).
    :param group_index: ``(N,)`` long group of each rollout in ``[0, num_groups)``.
    """
    import torch

    n, k = moments.shape[0], moments.shape[1] // 2
    gi = group_index.to(moments.device)
    sums = torch.zeros(num_groups, 2 * k, dtype=torch.float64, device=moments.device)
    sums.index_add_(0, gi, moments.double())  # (G, 2K)
    verdict, weight = sums[:, 0::2], sums[:, 1::2]  # (G, K) each
    mean = torch.where(weight > 0, verdict / weight.clamp(min=torch.finfo(torch.float64).tiny), 0.0)
    return mean[gi] if n else mean[:0]


def fill_uncovered(mix: MixtureOutput, mask: torch.Tensor, fills: torch.Tensor, beta: float) -> MixtureOutput:
    """``mix`` with every centred signal's uncovered tokens (within ``mask``) at their row's fill value.

    ``local += b_k (fill_k - S_k)`` and ``token_rewards += beta b_k (fill_k - S_k)`` on those tokens
    (dropped rollouts stay NaN); the signals' own values, results and metrics are unchanged.

    :param fills: ``(B, K)`` :func:`group_fills` rows of this batch; :param beta: ``rewards.beta``.
    """
    import torch

    names = centred_signals(mix)
    if not names:
        return mix
    mask = mask.to(mix.mask.device).bool() & mix.mask
    delta = torch.zeros_like(mix.local)  # (B, T) sum_k b_k (fill_k - S_k) on uncovered tokens
    for k, name in enumerate(names):
        signal = mix.signals[name]
        fill = fills[:, k].to(delta)[:, None]  # (B, 1)
        uncovered = mask & ~signal.covered  # type: ignore[operator]
        delta += signal.weight * torch.where(uncovered, fill - signal.values, 0.0)
    return dataclasses.replace(mix, local=mix.local + delta, token_rewards=mix.token_rewards + beta * delta)


def centre_uncovered(
    mix: MixtureOutput,
    group_index: torch.Tensor,
    num_groups: int,
    beta: float,
    mask: torch.Tensor | None = None,
) -> MixtureOutput:
    """The whole fill on one process: :func:`coverage_moments`, :func:`group_fills`, :func:`fill_uncovered`.

    :param group_index: ``(B,)`` long group of each rollout; :param mask: ``(B, T)`` (default ``mix.mask``).
    """
    if not centred_signals(mix):
        return mix
    mask = mix.mask if mask is None else mask
    fills = group_fills(coverage_moments(mix, mask), group_index, num_groups)
    return fill_uncovered(mix, mask, fills, beta)
