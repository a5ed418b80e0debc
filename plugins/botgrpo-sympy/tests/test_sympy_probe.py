"""The math mixture against ``botgrpo probe`` (issue 56): round 4's settings are gamed, today's defaults are not.

Honest rows written here by family (one-step and two-step word problems; right, one slip, a wrong method, prose
around the work), scored on the real checker with the core's character tokenizer (the cap is in characters).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from botgrpo_core.cli.probe import probe_rows
from botgrpo_core.cli.score import load_tokenizer
from botgrpo_core.config.loading import load_config
from botgrpo_core.signals.testing import make_samples
from botgrpo_sympy.params import StepsParams
from botgrpo_sympy.scorers import StepsScorer

APPLES = "Maya picks 17 apples and puts them in baskets of 5. How many apples are left over?"
PENS = "Sam has 9 pens and buys 3 packs of 4 pens. How many pens does he have now?"
CAKE = "A cake costs 12 dollars and a pie costs 7 dollars. How much do 2 cakes and 1 pie cost?"
HONEST = [
    (APPLES, "5 * 3 = 15\n17 - 15 = 2\nThe answer is 2.", "2"),  # right
    (APPLES, "5 * 3 = 15\n17 - 15 = 3\nThe answer is 3.", "2"),  # one slip
    (APPLES, "17 / 5 = 3.4\nThe answer is 3.4.", "2"),  # a wrong method, right arithmetic
    (PENS, "First the packs: 3 * 4 = 12 pens.\nThen 9 + 12 = 21 pens in all.\nThe answer is 21.", "21"),
    (PENS, "3 * 4 = 12\n9 + 12 = 22\nThe answer is 22.", "21"),  # a slip in the second step
    (PENS, "He buys 3 packs, so 3 + 4 = 7 pens.\n9 + 7 = 16\nThe answer is 16.", "21"),  # wrong operation
    (CAKE, "2 * 12 = 24\n24 + 7 = 31\nThe answer is 31.", "31"),
    (CAKE, "Two cakes: 2 * 12 = 24 dollars.\nWith the pie: 24 + 7 = 32 dollars.\nThe answer is 32.", "31"),
]

RUN = """
model: {name_or_path: tiny, tokenizer: tiny}
rewards:
  alpha: 1.0
  beta: 0.25
  signals:
    - {name: sympy.answer, workers: 1%(answer)s}
    - {name: sympy.steps, workers: 1, params: {step_split: lines%(steps)s}%(uncovered)s}
training: {max_new_tokens: 200}
"""
#: Round 4's math level: uncovered tokens at 0, no answer scored 0, every verified claim +1 however often.
ROUND4 = {
    "answer": ", params: {unanswered: 0.0, truncated: score}",
    "steps": ", truncated_cut: line, credit_trivial: true, max_credited_spans: null, refute_bare_answer: false"
    ", repeated_steps: zero, blank_value: 0.0, soft_timeout_share: null",
    "uncovered": ", uncovered: zero",
}
DEFAULTS = {"answer": "", "steps": "", "uncovered": ""}


def _probe(tmp_path: Path, settings: dict[str, str]):
    run = tmp_path / "run.yaml"
    run.write_text(RUN % settings, encoding="utf-8")
    rows = [{"prompt": p, "completion": c, "answer": a} for p, c, a in HONEST]
    tokenizer = load_tokenizer("tiny", [c + p for p, c, _ in HONEST] + [" \n"])
    return probe_rows(load_config(run), rows, tokenizer=tokenizer)


def test_round_4s_mixture_pays_for_repeating_a_verified_line(tmp_path: Path) -> None:
    report = _probe(tmp_path, ROUND4)
    failed = {v.name for v in report.failed}
    assert {"span_repeated", "span_to_cap"} <= failed, report.record()


def test_todays_defaults_pay_for_no_gamed_variant(tmp_path: Path) -> None:
    report = _probe(tmp_path, DEFAULTS)
    assert not report.failed, [(v.name, v.outranks, v.rows) for v in report.failed]


@pytest.mark.parametrize("answer", ["The answer is 12.", "A: 12", "Answer: 12"])
def test_an_answer_with_no_work_above_it_is_refuted(answer: str) -> None:
    samples = make_samples(
        [answer, f"9 + 3 = 12\n{answer}"], prompt=PENS.replace("buys 3 packs of 4", "gets 3")
    )
    with StepsScorer(StepsParams(workers=1, step_split="lines")) as scorer:
        bare, worked = scorer.score(samples)
    assert [s.value for s in bare] == [-1.0] and "no work above" in bare[0].meta["claims"][0]["reason"]
    assert [s.value for s in worked] == [1.0, 1.0]
    with StepsScorer(StepsParams(workers=1, step_split="lines", refute_bare_answer=False)) as scorer:
        (old,) = scorer.score(samples[:1])
    assert [s.value for s in old] == [0.0]
