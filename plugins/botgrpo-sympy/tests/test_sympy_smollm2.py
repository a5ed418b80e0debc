"""sympy.steps on SmolLM2-135M-Instruct's own solutions to GSM8K train problems (issue 36 item 5).

The shapes the real text showed (each test fails on the checker before the fix), and the figures on the labelled
lines of ``data/smollm2_gsm8k_train_labels.jsonl`` (labelled without the checker: scripts/make_smollm2_labels.py).
"""

from __future__ import annotations

import json
import random
import sys
from collections import Counter
from fractions import Fraction
from pathlib import Path

import pytest

from botgrpo_sympy.params import StepsParams
from botgrpo_sympy.steps import check_steps

DATA = Path(__file__).resolve().parent.parent / "data"
DEFAULT = StepsParams()


def _per_line(completion: str, params: StepsParams = DEFAULT, truncated: bool = False) -> dict[int, int]:
    """Line index -> -1 if a span starting in it is -1, else +1 if one is +1, else 0 (lines with a span)."""
    out: dict[int, set[float]] = {}
    for start, _, value, _ in check_steps(params, "Q", completion, truncated=truncated):
        out.setdefault(completion.count("\n", 0, start), set()).add(value)
    return {k: -1 if -1.0 in v else 1 if 1.0 in v else 0 for k, v in out.items()}


# --- a "Step k:" block's verdict stays on the lines holding its claims -------------------------------------------
def test_step_header_line_gets_no_verdict_of_the_claim_below() -> None:
    values = _per_line("Step 1: Find the total number of apples.\nThere are 3 * 4 = 13 apples.")
    assert values.get(0, 0) == 0  # was -1: the block's span started at its header
    assert values[1] == -1


def test_lines_without_claims_between_and_after_claims_get_no_verdict() -> None:
    text = "Step 1: Count.\n2 + 2 = 4\nNow the next part.\n3 * 3 = 10\n#### 12 * 2.\nThat is all."
    values = _per_line(text)
    assert values[1] == 1 and values[3] == -1
    assert values.get(2, 0) == 0  # was +1: the 2 + 2 = 4 span ran to the next claim
    assert values.get(4, 0) == 0 and values.get(5, 0) == 0  # was -1: the 3 * 3 = 10 span ran to the end


def test_one_line_steps_are_unchanged() -> None:
    assert _per_line("2 + 2 = 4\n3 * 3 = 10", StepsParams(step_split="lines")) == {0: 1, 1: -1}
    assert _per_line("Step 1: 2 + 2 = 4\nStep 2: 3 * 3 = 10") == {0: 1, 1: -1}


# --- list markers inside a block, a spaced sign after a word ------------------------------------------------------
def test_bullet_inside_a_step_block_is_no_minus_sign() -> None:
    values = _per_line("Step 2: Multiply the boxes.\n- 3 * 4 = 12 is step 2.\n- 5 + 6 = 12")
    assert values[1] == 1  # was -1: "-12 != 12"
    assert values[2] == -1


@pytest.mark.parametrize(
    "line",
    [
        "Therefore, there are 21 CDs - 3 = 17.",  # the left operand is the words (and a label) before the sign
        "Total left = Total who left - Number who joined the beach - 1 = 50 + 50 = 100 people",
        "So the bakers keep all the cookies + 4 = 20 cookies.",
    ],
)
def test_spaced_sign_after_a_word_is_not_refuted(line: str) -> None:
    assert (
        -1 not in _per_line(line, StepsParams(step_split="lines")).values()
    )  # was -1 ("-3 != 17", "-1 != 100")


def test_spaced_sign_after_a_word_keeps_the_links_after_it() -> None:
    line = "Total left = Total who left - Number who joined - 1 = 50 + 50 = 100 people"
    assert _per_line(line, StepsParams(step_split="lines")) == {0: 1}  # 50 + 50 = 100 still verified
    wrong = "Total left = Total who left - Number who joined - 1 = 50 + 50 = 110 people"
    assert _per_line(wrong, StepsParams(step_split="lines")) == {0: -1}


@pytest.mark.parametrize(
    ("line", "expected"),
    [("-3 + 5 = 2", 1), ("-3 + 5 = 8", -1), ("The result is -3 + 5 = 8.", -1), ("So 7 - 3 = 5.", -1)],
)
def test_tight_signs_and_numbers_before_a_sign_are_still_read(line: str, expected: int) -> None:
    assert _per_line(line, StepsParams(step_split="lines"))[0] == expected


# --- the labelled set ---------------------------------------------------------------------------------------------
def _load() -> tuple[list[dict], list[dict]]:
    rows = [json.loads(x) for x in (DATA / "smollm2_gsm8k_train_solutions.jsonl").read_text().splitlines()]
    labels = [json.loads(x) for x in (DATA / "smollm2_gsm8k_train_labels.jsonl").read_text().splitlines()]
    return rows, labels


def test_labelled_set_covers_every_nonempty_line() -> None:
    rows, labels = _load()
    keys = {
        (f"{r['id']}#{r['sample']}", k)
        for r in rows
        for k, x in enumerate(r["completion"].split("\n"))
        if x.strip()
    }
    assert {(x["solution"], x["line"]) for x in labels} == keys
    assert {x["label"] for x in labels} == {-1, 0, 1} and {x["by"] for x in labels} == {"reference", "hand"}
    assert len(rows) >= 300


def _form(meta: dict) -> bool:
    """A -1 on the form of the text (a step said again, an answer with no work above: issue 56), not on a
    claim's truth."""
    return "form" in meta or any("form" in c for c in meta.get("claims", []))


def test_figures_on_smollm2_solutions() -> None:
    """Default params, Sample.truncated passed: precision of -1 >= 97%, +1 on a false line <= 2%. The -1s on
    the form of the text (issue 56's repeated_steps and refute_bare_answer) are no truth verdict: counted apart."""
    rows, labels = _load()
    verdicts, form = {}, 0
    for r in rows:
        prompt = "\n".join(m["content"] for m in r["prompt"])
        spans = check_steps(DEFAULT, prompt, r["completion"], truncated=r["truncated"])
        per_line: dict[int, set[float]] = {}
        for start, _, value, meta in spans:
            if value == -1.0 and _form(meta):
                form += 1
                continue
            per_line.setdefault(r["completion"].count("\n", 0, start), set()).add(value)
        verdicts[f"{r['id']}#{r['sample']}"] = {
            k: -1 if -1.0 in v else 1 if 1.0 in v else 0 for k, v in per_line.items()
        }
    assert 0 < form < len(labels) // 4, (
        form
    )  # SmolLM2 repeats lines and gives bare answers; counted, not truth
    c = Counter((x["label"], verdicts[x["solution"]].get(x["line"], 0)) for x in labels)
    refuted = sum(v for (_, p), v in c.items() if p == -1)
    false = sum(v for (lab, _), v in c.items() if lab == -1)
    assert c[(-1, -1)] / refuted >= 0.97, c  # was 734/791 = 92.8% before the fixes above
    assert c[(-1, 1)] / false <= 0.02, c
    assert c[(1, -1)] == 0, c


# --- the reference that proposed most labels, against Python's own fractions --------------------------------------
def test_reference_agrees_with_fractions_on_random_claims() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
    from smollm2_reference import propose

    rng = random.Random(7)
    for _ in range(300):
        a, b, c = (rng.randint(1, 400) for _ in range(3))
        op = rng.choice("+-*/")
        value = {"+": Fraction(a) + b, "-": Fraction(a) - b, "*": Fraction(a) * b, "/": Fraction(a, b)}[
            op
        ] + c
        shown = value if rng.random() < 0.5 else value + rng.choice([1, -1, 7])
        if shown.denominator != 1:
            continue
        proposal = propose(f"So {a} {op} {b} + {c} = {shown.numerator} apples.")
        assert proposal.sure and proposal.label == (1 if shown == value else -1), (a, op, b, c, shown)
