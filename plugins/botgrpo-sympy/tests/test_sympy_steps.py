"""Step checking on whole completions (in-process; the pool is exercised in test_sympy_signals)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from botgrpo_sympy.claimstate import span_of
from botgrpo_sympy.params import StepsParams
from botgrpo_sympy.segments import Piece, extract_answer, split_steps
from botgrpo_sympy.steps import StepChecker, check_steps

PARAMS = StepsParams()


def values(prompt: str, completion: str, params: StepsParams = PARAMS) -> list[tuple[str, float]]:
    return [(completion[s:e], v) for s, e, v, _ in check_steps(params, prompt, completion)]


def test_demo_format_each_line_is_a_step() -> None:
    completion = "17+5=22\n22-8=14\nA: 14"
    assert values("Q: 17+5-8=", completion) == [("17+5=22", 1.0), ("22-8=14", 1.0), ("A: 14", 1.0)]


def test_demo_errors_are_refuted_once_and_carried_values_are_not() -> None:
    spans = check_steps(PARAMS, "Q: 17+5-8=", "17+5=23\n23-8=15\nA: 15")
    assert [v for *_, v, _ in spans] == [-1.0, 1.0, 1.0]
    assert spans[0][3]["failed"] == "17+5 = 23: 22 != 23"


def test_answer_line_that_matches_nothing_is_refuted() -> None:
    spans = check_steps(PARAMS, "Q: 17+5-8=", "17+5=22\n22-8=14\nA: 15")
    assert spans[-1][2] == -1.0
    assert "last result is 14" in spans[-1][3]["claims"][0]["reason"]
    off = StepsParams(check_answer_line=False)
    assert check_steps(off, "Q: 17+5-8=", "17+5=22\n22-8=14\nA: 15")[-1][2] == 0.0


def test_custom_answer_pattern() -> None:
    params = StepsParams(answer_pattern=r"RESULT\s*=>\s*(\S+)")
    assert values("", "6*7=42\nRESULT => 42", params)[-1] == ("RESULT => 42", 1.0)


@pytest.mark.parametrize(
    ("prompt", "completion", "expected"),
    [
        ("Solve 3x + 2 = 11.", "3x = 9\nx = 3\nCheck: 3(3) + 2 = 11", [1, 1, 1]),
        (
            "Solve 3x + 2 = 11.",
            "3x = 8\nx = 8/3",
            [-1, 1],
        ),  # the slip is refuted, what follows from it is not
        ("", "3x + 2 = 11 => x = 3", [1]),
        ("", "3x + 2 = 11 => x = 4", [-1]),
        ("", "x^2 - 5x + 6 = 0\n(x - 2)(x - 3) = 0\nx = 2 or x = 3", [0, 1, 1]),
        ("", "x^2 - 5x + 6 = 0\nx = 2", [0, 0]),  # one root of two: a branch, not an error
        ("If x + y = 10 and x - y = 2, find x.", "2x = 12\nx = 6\ny = 4", [1, 1, 1]),
        ("", "(x+1)^2 = x^2 + 2x + 1\n(x+1)^2 = x^2 + 1", [1, -1]),
        ("", "(x + 1)^2 - 1 = x^2 + 2x + 1 - 1\n= x^2 + 2x\n= x^2 + 2", [1, 1, -1]),
        ("", "Let a = 3.\nThen b = a + 4 = 7.\nb - a = 5", [0, 1, -1]),
        ("", "y = 2(3) + 1 = 7\ny^2 = 49\ny^2 = 50", [1, 1, -1]),
    ],
)
def test_algebra(prompt: str, completion: str, expected: list[int]) -> None:
    assert [v for _, v in values(prompt, completion)] == expected


@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        ("$\\frac{1}{2} + \\frac{1}{3} = \\frac{5}{6}$", 1),
        ("$\\sqrt{8} = 2\\sqrt{2}$", 1),
        ("\\[ 100 \\div 4 = 20 \\]", -1),
        ("1/3 = 0.33", 1),
        ("1/4 = 0.4", -1),
        ("sqrt(2) ≈ 1.414", 1),
        ("7 > 3", 0),  # true, but no operation: a trivial claim earns no credit (credit_trivial, issue 56)
        ("7 + 1 > 3", 1),
        ("2 < 1", -1),
        ("2 + 3 = 5 apples", 1),
        ("1,000 + 2,000 = 3,000", 1),
        ("3 * $2.50 = $7.50", 1),
        ("Weng earns 12/60 = $0.2 per minute.", 1),
        ("- 9 - 4 = 5", 1),  # a list marker, not a minus
        ("**Result:** 7 + 8 = 15", 1),
        ("17 mod 5 = 2", 0),  # the run after "mod" lost its left operand
        ("There are 10 choose 3 = 120 ways.", 0),
        ("The sum 1 + 2 + ... + 100 = 5050", 0),  # the run after an ellipsis lost its left part
        ("The meeting was on 2024-03-15.", 0),
        ("Time: 3:45 pm.", 0),
        ("", None),
    ],
)
def test_decoy_formatting(completion: str, expected: int | None) -> None:
    got = values("", completion)
    assert [v for _, v in got] == ([] if expected is None else [expected])


def test_huge_exact_values_are_shown_abbreviated_not_an_error() -> None:
    # 12,000 digits: within the caps, but past Python's int -> str limit (4300 digits).
    spans = check_steps(PARAMS, "", "9" * 60 + "^200 = 1")
    assert spans[0][2] == -1.0
    assert "too long to show" in spans[0][3]["failed"]


def test_spans_are_steps_and_meta_names_the_failed_claim() -> None:
    completion = "  Step 1: 2 + 2 = 4\nStep 2: 3 * 3 = 10\n\nStep 3: done"
    spans = check_steps(PARAMS, "", completion)
    assert [completion[s:e] for s, e, _, _ in spans] == [
        "Step 1: 2 + 2 = 4",
        "Step 2: 3 * 3 = 10",
        "Step 3: done",
    ]
    assert [v for _, _, v, _ in spans] == [1.0, -1.0, 0.0]
    assert spans[1][3]["failed"] == "3 * 3 = 10: 9 != 10"
    assert spans[2][3]["status"] == "no claim"


def test_step_split_modes() -> None:
    text = "a\nb\n\nStep 1: c\nd\nStep 2: e"
    assert [p.text for p in split_steps(text, "lines")] == ["a", "b", "Step 1: c", "d", "Step 2: e"]
    assert [p.text for p in split_steps(text, "markers")] == ["a\nb", "Step 1: c\nd", "Step 2: e"]
    assert [p.text for p in split_steps(text, "auto")] == ["a\nb", "Step 1: c\nd", "Step 2: e"]
    assert [p.text for p in split_steps(text, "separator", r"\n\n")] == ["a\nb", "Step 1: c\nd\nStep 2: e"]
    assert [p.text for p in split_steps(text, "regex", r"(?m)^step \d+: \w$")] == ["Step 1: c", "Step 2: e"]
    for piece in split_steps(text, "auto"):  # pieces index the completion
        assert text[piece.start : piece.end] == piece.text
    params = StepsParams(step_split="separator", step_regex=r";")
    assert [v for _, v in values("", "1+1=2; 2+2=5", params)] == [1, -1]
    params = StepsParams(step_split="regex", step_regex=r"\d\+\d=\d")
    assert [v for _, v in values("", "so 1+1=2 and 2+2=5", params)] == [1, -1]


def test_step_split_params_need_and_check_their_pattern() -> None:
    for mode in ("regex", "separator"):
        with pytest.raises(ValidationError, match=f"step_split: {mode} needs step_regex"):
            StepsParams(step_split=mode)
    with pytest.raises(ValidationError, match="step_regex: .*not a valid regular expression"):
        StepsParams(step_split="separator", step_regex="(")


def test_work_caps_per_completion() -> None:
    params = StepsParams(max_steps=2, max_step_chars=30)
    spans = check_steps(params, "", "1+1=2\n" + "2+2=4 " * 10 + "\n3+3=7")
    assert [v for *_, v, _ in spans] == [1.0, 0.0, 0.0]
    assert spans[1][3]["status"] == "not checked (max_step_chars)"
    assert spans[2][3]["status"] == "not checked (max_steps): 1 more steps"


def test_max_steps_caps_the_number_of_spans() -> None:
    """20,000 steps give max_steps spans plus one 0 span over the rest (not 20,000 spans)."""
    completion = "1+1=2\n" * 20_000
    spans = check_steps(StepsParams(max_steps=300), "", completion)
    assert len(spans) == 301
    start, end, value, meta = spans[-1]
    assert (value, end) == (0.0, len(completion) - 1) and start == 300 * len("1+1=2\n")
    assert meta["status"] == "not checked (max_steps): 19700 more steps"


def test_answer_extraction_defaults_and_pattern() -> None:
    assert extract_answer("so \\boxed{\\frac{1}{2}} and more").text == "\\frac{1}{2}"
    assert extract_answer("x\nAnswer: 42\n").text == "42"
    assert extract_answer("**Final Answer:** The final answer is 60. I hope it is correct.").text == "60"
    assert extract_answer("A: 14").text == "14"
    assert extract_answer("The answer is 7.").text == "7"
    assert extract_answer("She has 5 + 3 = 8.\n#### 8").text == "8"  # GSM8K's final line
    assert extract_answer("no answer here") is None
    assert extract_answer("ans=5; ans=6", r"ans=(\d)").text == "6"


@settings(max_examples=200, deadline=None)
@given(
    a=st.integers(0, 10**6),
    b=st.integers(0, 10**6),
    op=st.sampled_from("+-*"),
    c=st.integers(-(10**6), 10**12),
)
def test_fast_arithmetic_path_equals_the_general_path(a: int, b: int, op: str, c: int) -> None:
    completion = f"{a}{op}{b}={c}\n{c}{op}{b}={a}\nA: {c}"
    fast, slow = StepChecker(PARAMS, "Q:", completion), StepChecker(PARAMS, "Q:", completion)
    steps = split_steps(completion)

    def general(step: Piece) -> list[dict]:
        slow._step_start = (
            step.start
        )  # what _check_step sets before either path (the text above an answer line)
        records = slow._claims_of(step)
        slow.credit.apply(records)  # what _check_step does after either path (repeats, trivial claims)
        return records

    assert [fast._check_step(s) for s in steps] == [[span_of(s.start, s.end, general(s))] for s in steps]
    assert fast.state.last_value == slow.state.last_value and fast.state.seen == slow.state.seen
    assert fast.state.last_claims == slow.state.last_claims  # what an answer line copies: verified or not


def test_a_completions_verdicts_do_not_depend_on_which_one_the_worker_checked_first() -> None:
    """The prompt's premises are cached per worker process; a completion that defines ``p(x)`` reads the
    prompt's ``p(2) = 10`` as function notation (no premise), one that does not reads ``2p = 10``. Each
    must get the verdicts it gets in a fresh process, whatever its group-mate checked before it."""
    from botgrpo_sympy import premises

    prompt = "We know p(2) = 10. Find p."
    defines = "Let p(x) = 5x.\np = 5\n# Answer\n5"
    plain = "p = 5\n# Answer\n5"
    fresh: dict[str, list[tuple[str, float]]] = {}
    for completion in (defines, plain):
        premises._PROMPTS.clear()
        fresh[completion] = values(prompt, completion)
    assert fresh[plain][0] == ("p = 5", 1.0)  # follows from the premise 2p = 10
    assert fresh[defines][1] == ("p = 5", 0.0)  # no premise: p is a new value
    for first, second in ((defines, plain), (plain, defines)):
        premises._PROMPTS.clear()
        values(prompt, first)
        assert values(prompt, second) == fresh[second]
