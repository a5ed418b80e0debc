"""A paired comparison across seeds: the primary statistic of the real-model studies (issue 57, issue 58).

For seeds ``s = 1..n`` run by both methods, ``d_s = candidate_s - reference_s``:

- the mean difference ``mean(d)`` and its sample standard deviation ``sd(d)`` (n - 1 in the denominator);
- the paired t statistic ``t = mean(d) / (sd(d) / sqrt(n))`` on ``n - 1`` degrees of freedom and its two-sided
  p-value ``P(|T| >= |t|) = I_{df / (df + t^2)}(df / 2, 1 / 2)`` (Student's t through the regularised
  incomplete beta function; Student 1908, Abramowitz & Stegun 26.7.1);
- the sign test: of the seeds with ``d_s != 0`` (ties dropped), ``k`` positive out of ``m``, and its exact
  two-sided binomial p-value ``min(1, 2 * P(X <= min(k, m - k)))`` with ``X ~ Binomial(m, 1/2)``.

``mpmath`` (sympy's dependency, already installed with the sympy plugin) gives the incomplete beta; nothing here
samples.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Paired:
    """The paired comparison of two methods over their common seeds."""

    seeds: tuple[int, ...]
    candidate: tuple[float, ...]
    reference: tuple[float, ...]
    mean: float  # mean of candidate - reference
    sd: float | None  # sample sd of the differences (None with one seed)
    t: float | None  # paired t (None with one seed or sd 0)
    p_t: float | None  # two-sided p of t on n - 1 degrees of freedom
    positive: int  # seeds where the candidate is higher
    negative: int  # seeds where it is lower (ties are in neither)
    p_sign: float  # exact two-sided sign-test p (1.0 when every seed ties)

    @property
    def differences(self) -> tuple[float, ...]:
        return tuple(c - r for c, r in zip(self.candidate, self.reference, strict=True))


def t_two_sided_p(t: float, df: int) -> float:
    """Two-sided p-value of Student's t with ``df`` degrees of freedom: ``I_{df/(df+t^2)}(df/2, 1/2)``."""
    import mpmath

    if df < 1:
        raise ValueError(f"degrees of freedom must be >= 1, got {df}")
    if math.isinf(t):
        return 0.0
    x = df / (df + t * t)
    return float(mpmath.betainc(df / 2, 0.5, 0, x, regularized=True))


def sign_test_p(positive: int, negative: int) -> float:
    """Exact two-sided sign-test p-value for ``positive`` and ``negative`` non-tied pairs."""
    m = positive + negative
    if m == 0:
        return 1.0
    tail = sum(math.comb(m, i) for i in range(min(positive, negative) + 1)) / 2**m
    return min(1.0, 2 * tail)


def paired(candidate: Mapping[int, float], reference: Mapping[int, float]) -> Paired:
    """Compare ``candidate[seed]`` with ``reference[seed]`` over the seeds both have (module doc).

    :raises ValueError: when the two share no seed.
    """
    seeds = tuple(sorted(set(candidate) & set(reference)))
    if not seeds:
        raise ValueError("the two methods share no seed: nothing to pair")
    c = tuple(float(candidate[s]) for s in seeds)
    r = tuple(float(reference[s]) for s in seeds)
    d = [a - b for a, b in zip(c, r, strict=True)]
    n = len(d)
    mean = sum(d) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1)) if n > 1 else None
    if sd is None or sd == 0.0:
        t = p_t = None
    else:
        t = mean / (sd / math.sqrt(n))
        p_t = t_two_sided_p(t, n - 1)
    positive, negative = sum(x > 0 for x in d), sum(x < 0 for x in d)
    return Paired(seeds, c, r, mean, sd, t, p_t, positive, negative, sign_test_p(positive, negative))


def paired_table(result: Paired, *, candidate: str, reference: str, digits: int = 3) -> str:
    """The per-seed table and the statistic, as markdown."""
    f = f"{{:.{digits}f}}"
    rows = [f"| seed | {candidate} | {reference} | difference |", "|---|---|---|---|"]
    for s, a, b in zip(result.seeds, result.candidate, result.reference, strict=True):
        rows.append(f"| {s} | {f.format(a)} | {f.format(b)} | {f.format(a - b)} |")
    t = "n/a" if result.t is None else f"{result.t:.2f} (p = {result.p_t:.3f}, {len(result.seeds) - 1} df)"
    sd = "n/a" if result.sd is None else f.format(result.sd)
    rows.append("")
    rows.append(
        f"Mean difference {f.format(result.mean)} (sd {sd}) over {len(result.seeds)} "
        f"seed{'s' if len(result.seeds) > 1 else ''}; paired t {t}; "
        f"sign test {result.positive} higher, {result.negative} lower (p = {result.p_sign:.3f})."
    )
    return "\n".join(rows)
