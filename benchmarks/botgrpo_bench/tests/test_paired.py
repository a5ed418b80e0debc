"""botgrpo_bench.paired against closed forms, textbook critical values, exact binomial tails and round 4's
committed math headline."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from botgrpo_bench.paired import paired, paired_table, sign_test_p, t_two_sided_p

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("t", [0.0, 0.3, 1.0, 2.5, 12.7062, -3.0])
def test_t_p_against_the_closed_forms_of_one_and_two_degrees_of_freedom(t: float) -> None:
    # df = 1 (Cauchy): P(|T| >= t) = 1 - 2 atan(|t|) / pi; df = 2: 1 - |t| / sqrt(2 + t^2)
    assert t_two_sided_p(t, 1) == pytest.approx(1 - 2 * math.atan(abs(t)) / math.pi, abs=1e-12)
    assert t_two_sided_p(t, 2) == pytest.approx(1 - abs(t) / math.sqrt(2 + t * t), abs=1e-12)


@pytest.mark.parametrize(("t", "df"), [(2.262157, 9), (2.364624, 7), (2.570582, 5), (12.706205, 1)])
def test_t_p_at_the_tables_five_percent_critical_values(t: float, df: int) -> None:
    assert t_two_sided_p(t, df) == pytest.approx(0.05, abs=2e-6)
    assert t_two_sided_p(math.inf, df) == 0.0


def test_sign_test_exact_tails() -> None:
    assert sign_test_p(8, 0) == pytest.approx(2 / 256)
    assert sign_test_p(1, 7) == pytest.approx(2 * 9 / 256)
    assert sign_test_p(4, 4) == 1.0
    assert sign_test_p(0, 0) == 1.0
    assert sign_test_p(3, 0) == pytest.approx(0.25)


def test_a_hand_computed_pairing_drops_unpaired_seeds_and_ties_in_the_sign_test() -> None:
    # d = 0.1, 0.2, -0.1 (seed 3 has no reference; seed 4 ties): n = 4 with the tie
    result = paired({0: 0.5, 1: 0.6, 2: 0.4, 3: 0.9, 4: 0.3}, {0: 0.4, 1: 0.4, 2: 0.5, 4: 0.3})
    assert result.seeds == (0, 1, 2, 4)
    d = [0.1, 0.2, -0.1, 0.0]
    mean = sum(d) / 4
    sd = math.sqrt(sum((x - mean) ** 2 for x in d) / 3)
    assert result.mean == pytest.approx(mean) and result.sd == pytest.approx(sd)
    assert result.t == pytest.approx(mean / (sd / 2))
    assert (result.positive, result.negative) == (2, 1) and result.p_sign == pytest.approx(1.0)
    table = paired_table(result, candidate="bot-grpo", reference="grpo")
    assert "| 2 | 0.400 | 0.500 | -0.100 |" in table and "3 df" in table
    with pytest.raises(ValueError, match="share no seed"):
        paired({0: 1.0}, {1: 1.0})
    one = paired({0: 0.5}, {0: 0.4})
    assert one.sd is None and one.t is None and one.p_t is None


def test_round_4s_math_headline_from_its_committed_records() -> None:
    """The issue's figures: paired differences of the held-out run mean -0.21, -0.13, +0.04, t = -1.4 on 2 df."""
    rows = [
        json.loads(x) for x in (ROOT / "docs/results/real-math-lr2e-4/runs.jsonl").read_text().splitlines()
    ]
    by = {m: {r["seed"]: r["curve_mean"] for r in rows if r["method"] == m} for m in ("bot-grpo", "grpo")}
    result = paired(by["bot-grpo"], by["grpo"])
    assert [round(x, 2) for x in result.differences] == [-0.21, -0.13, 0.04]
    assert round(result.t, 1) == -1.4 and (result.positive, result.negative) == (1, 2)
