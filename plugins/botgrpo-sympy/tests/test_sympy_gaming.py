"""Issue 56: the ``sympy.steps`` defaults that keep padding from paying (real checker, in process; one mixture
test through the worker pool and the ``bot`` advantages). Values by hand."""

from __future__ import annotations

import time

import pytest

from botgrpo_sympy.params import StepsParams
from botgrpo_sympy.steps import check_steps

LINES = StepsParams(step_split="lines")
APPLES = "Tom has 17 apples and puts them in 5 baskets. How many apples are left over?"


def _values(prompt: str, completion: str, params: StepsParams = LINES, **kw: object) -> list[int]:
    return [int(v) for *_, v, _ in check_steps(params, prompt, completion, **kw)]


# --- 1. a repeated claim earns its +1 once -------------------------------------------------------------------------
ZERO = StepsParams(step_split="lines", repeated_steps="zero")  # a line said again is checked: credit once


def test_a_repeated_claim_earns_credit_once_whatever_its_spacing() -> None:
    completion = "17 - 15 = 2\n17-15=2\n17 − 15 = 2\n$17 - 15 = 2$\nThe answer is 2.\nThe answer is 2."
    assert _values(APPLES, completion, ZERO) == [1, 0, 0, 0, 1, 0]
    spans = check_steps(ZERO, APPLES, completion)
    assert spans[1][3]["claims"][0]["uncredited"] == "repeat"
    # the default (repeated_steps: refute): a line said again word for word (spacing aside) is -1, so that
    # repeating never dilutes a completion's blame; the same claim written otherwise keeps credit-once
    assert _values(APPLES, completion) == [1, -1, 0, 0, 1, -1]


def test_the_demo_fast_path_and_answer_lines_are_credited_once() -> None:
    assert _values("Q: 17+5-8=", "17+5=22\n17+5=22\n22-8=14\nA: 14\nA: 14", ZERO) == [1, 0, 1, 1, 0]
    # an answer line copying a repeated verified result still copies a verified result
    assert _values("Q: 17+5-8=", "17+5=22\n22-8=14\n22-8=14\nA: 14", ZERO) == [1, 1, 0, 1]
    assert _values("Q: 17+5-8=", "17+5=22\n17+5=22\n22-8=14\nA: 14\nA: 14") == [
        1,
        -1,
        1,
        1,
        0,
    ]  # "A:14": short


def test_a_refuted_answer_said_again_is_refuted_again() -> None:
    assert _values(APPLES, "The answer is 10.\nThe answer is 10.") == [
        -1,
        -1,
    ]  # a bare answer, then its repeat
    assert _values(APPLES, "The answer is 10.\nThe answer is 10.", ZERO) == [-1, 0]


def test_a_repeated_false_claim_stays_refuted() -> None:
    assert _values(APPLES, "17 - 5 = 11\n17 - 5 = 11\n17-5 = 11") == [-1, -1, -1]


# --- 2. trivial claims earn nothing ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        ("7 = 7\nx = x\n2 = 2\n$12 = 12$", [0, 0, 0, 0]),  # tautologies
        ("1 + 1 = 2\n2 + 2 = 4\n3 * 3 = 9", [0, 0, 0]),  # no number of the problem
        ("17 - 15 = 2\n2 + 2 = 4", [1, 1]),  # 2 is a result of the completion's own: related
        ("17 / 5 = 3.4\n1 + 1 = 2\n3.4 * 5 = 17", [1, 0, 1]),
        ("1 + 1 = 3\n7 = 8", [-1, -1]),  # refutations are unaffected
        ("$724_{10} = 2053_7$", [1]),  # a conversion between bases is no tautology
        ("3x = 15\nx = 5", [0, 1]),  # a result (no operation, but not true by itself)
    ],
)
def test_trivial_claims_earn_no_credit(completion: str, expected: list[int]) -> None:
    assert _values(APPLES, completion) == expected


def test_credit_trivial_gives_the_old_credit_back() -> None:
    params = StepsParams(step_split="lines", credit_trivial=True)
    assert _values(APPLES, "7 = 7\n1 + 1 = 2\nx = x", params) == [1, 1, 1]


def test_numbers_of_the_prompt_relate_in_their_written_forms() -> None:
    prompt = "A shop sells 1,200 pens at 25% off. How many are sold at full price if 300 are sold off?"
    assert _values(prompt, "1200 - 300 = 900\n0.25 * 4 = 1\n6 + 7 = 13") == [1, 1, 0]


def test_a_prompt_with_no_number_relates_every_number() -> None:
    assert _values("Simplify the expression.", "6 * 7 = 42") == [1]


# --- 3. bounded credit ---------------------------------------------------------------------------------------------
def test_a_completions_positive_credit_is_bounded() -> None:
    completion = "\n".join(f"17 + {k} = {17 + k}" for k in range(40))
    got = _values(APPLES, completion)
    assert got == [1] * 20 + [0] * 20  # max_credited_spans: 20 by default
    assert _values(APPLES, completion, StepsParams(step_split="lines", max_credited_spans=None)) == [1] * 40
    wrong = completion + "\n17 + 1 = 19"
    assert _values(APPLES, wrong)[-1] == -1  # the bound never touches a refutation
    with pytest.raises(ValueError, match="max_credited_spans"):
        StepsParams(max_credited_spans=-1)


# --- 4. a cut run-on is checked whatever joins its clauses ------------------------------------------------------
@pytest.mark.parametrize("joiner", [", ", "; ", " and ", " so ", ". ", " "])
def test_a_cut_run_on_is_checked_whatever_joins_it(joiner: str) -> None:
    completion = "9 + 12 = 11" + joiner + joiner.join(["the answer is 11"] * 6) + joiner + "the ans"
    spans = check_steps(
        StepsParams(), APPLES, completion, truncated=True
    )  # the default: truncated_cut sentence
    assert spans[0][2] == -1.0 and completion[spans[0][0] : spans[0][1]].startswith("9 + 12 = 11")
    assert [v for *_, v, _ in spans[1:]] == [0.0]  # the rest is the unfinished end
    assert completion[spans[1][0] : spans[1][1]].endswith("the ans")


def test_the_claim_the_cap_cut_is_no_claim() -> None:
    assert StepsParams().truncated_cut == "sentence"
    # "36 + 14 = 5" where the cap cut "50", after a finished claim joined by ", "
    assert _values(APPLES, "17 + 5 = 22, 36 + 14 = 5", truncated=True) == [1, 0]
    assert _values(APPLES, "17 + 5 = 22, 36 + 14 = 5.", truncated=True) == [1, 0]  # "5." may be "5.5" cut


# --- 5. a refutation found before the checker's deadline stands ----------------------------------------------------
HEAVY = "\n".join(f"$\\sin^{{2}}(x^{k}+{k}) + \\cos^{{2}}(x^{k}+{k}) = 1$" for k in range(3, 40))


def test_a_refutation_before_the_deadline_stands() -> None:
    spans = check_steps(LINES, APPLES, "17 - 5 = 11\n" + HEAVY, deadline=time.monotonic() + 0.3)
    assert spans[0][2] == -1.0
    assert spans[-1][2] == 0.0 and "deadline" in spans[-1][3]["status"]
    assert spans[-1][1] == len("17 - 5 = 11\n" + HEAVY)  # the rest: one 0 span to the end


# --- 6. a blank completion never out-ranks an honest wrong attempt --------------------------------------------------
def test_a_blank_completion_gets_blank_value() -> None:
    assert [(s, e, v) for s, e, v, _ in check_steps(LINES, APPLES, " \n\t ")] == [(0, 4, -1.0)]
    assert [v for *_, v, _ in check_steps(StepsParams(blank_value=0.0), APPLES, "  ")] == [0.0]
    assert check_steps(LINES, APPLES, "") == []  # no token, no span


# --- through the worker pool and the core mixture: the math level's settings, the bot advantages ------------------
def test_gamed_rollouts_in_one_group_through_the_mixture() -> None:
    """One group of wrong answers (and a right one) scored by the real ``sympy.steps`` worker through the core
    mixture (one character a token), ``bot`` advantages: the refutation before the checker's deadline
    (``timeout_s`` 1 s) stands in the worker, the cut run-on keeps its -1, and white space ranks below the honest
    wrong attempt (before issue 56: a ``SampleError``, no span, and above it)."""
    import dataclasses

    from botgrpo_core.config.models import RewardsConfig
    from botgrpo_core.estimators.compute import compute_advantages
    from botgrpo_core.rewards.mixture import RewardMixture
    from botgrpo_core.signals.manager import PluginManager
    from botgrpo_core.signals.testing import make_samples

    completions = {
        "right": ("5 * 3 = 15\n17 - 15 = 2\nThe answer is 2.", False),
        "slip": ("5 * 3 = 15\n17 - 15 = 3\nThe answer is 3.", False),
        "heavy": ("17 - 15 = 3\n" + HEAVY + "\nThe answer is 3.", False),
        "run-on": (", ".join(["17 - 15 = 3"] + ["the answer is 3"] * 20) + ", the ans", True),
        "blank": (" \n \n  ", False),
    }
    config = RewardsConfig(  # the local signal alone (one worker start): every answer but one is wrong anyway
        alpha=0.0,
        beta=1.0,
        signals=[{"name": "sympy.steps", "workers": 1, "timeout_s": 1.0, "params": {"step_split": "lines"}}],
    )
    samples = make_samples([c for c, _ in completions.values()], prompt=APPLES, rows={"answer": "2"})
    samples = [dataclasses.replace(s, truncated=cut) for s, (_, cut) in zip(samples, completions.values())]
    with RewardMixture(config, PluginManager(allowlist=["sympy"])) as mixture:
        out = mixture.score_batch(samples)
    steps = dict(zip(completions, out.signals["sympy.steps"].results))
    assert steps["heavy"][0].value == -1.0  # not a SampleError: the -1 stands
    late = [s for s in steps["heavy"] if "deadline" in str(s.meta)]  # a claim or the rest: past the deadline
    assert (
        late and all(s.value == 0.0 for s in late) and steps["heavy"][-1].end == len(completions["heavy"][0])
    )
    assert [s.value for s in steps["run-on"]] == [-1.0, 0.0]
    adv = compute_advantages("bot", out.token_rewards, out.mask, group_size=len(samples), eps=1e-6)
    mean = {k: float(adv[i, : int(out.mask[i].sum())].mean()) for i, k in enumerate(completions)}
    assert mean["blank"] < mean["slip"] < mean["right"]
