"""sympy.steps on issue 40's shapes and issue 36's findings 3 and 4 (answer lines, lines cut by the length cap).

Each shape has a correct solution written for this file (not the issue's paraphrase) whose checked lines must not be
refuted, and a wrong twin that must be. Expected values by hand.
"""

from __future__ import annotations

import itertools

import pytest

from botgrpo_core.signals import Sample
from botgrpo_sympy.answer import check_answer
from botgrpo_sympy.metrics import line_values
from botgrpo_sympy.params import AnswerParams, StepsParams
from botgrpo_sympy.steps import check_steps

PROSE = StepsParams(step_split="lines")


def _values(prompt: str, completion: str, truncated: bool = False) -> list[int]:
    spans = (
        check_steps(PROSE, prompt, completion, truncated=True)
        if truncated
        else check_steps(PROSE, prompt, completion)
    )
    return [int(v) for *_, v, _ in spans]


# --- issue 36, finding 3: an answer line is credited only for a verified value -----------------------------------
@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        ("Tom has 14 + 23 + 61 = 90 stamps.\n#### 90", [-1, 0]),  # 14 + 23 + 61 is 98
        ("Tom has 14 + 23 + 61 = 90 stamps.\nThe answer is 90.", [-1, 0]),
        ("Tom has $14 + 23 + 61 = 90$ stamps.\n$\\boxed{90}$", [-1, 0]),
        ("Tom has 14 + 23 + 61 = 98 stamps.\n#### 98", [1, 1]),  # verified: still +1
        ("Tom has 14 + 23 + 61 = 90 stamps.\n#### 98", [-1, 0]),  # the right value, written above: 0
        # a later line computed right from the wrong value keeps its +1 (after_first_error: keep); the answer copies
        # that verified line's value
        ("Tom has 14 + 23 + 61 = 90 stamps.\nHe sells 10, so 90 - 10 = 80.\n#### 80", [-1, 1, 1]),
    ],
)
def test_answer_line_credited_only_for_a_verified_value(completion: str, expected: list[int]) -> None:
    assert _values("Tom has three albums of 14, 23 and 61 stamps.", completion) == expected


def test_answer_line_after_a_value_that_was_not_checked_is_not_credited() -> None:
    # "y = 7" defines a value (no claim verified it): copying it into the answer line earns nothing
    assert _values("", "So y = 7.\n#### 7") == [0, 0]


# --- issue 36, finding 4: the last line of a completion cut by the length cap is no claim ------------------------
def test_the_cut_last_line_is_no_claim() -> None:
    completion = "1. 27 + 19 = 46 pens.\n2. 46 + 14 = 6"  # the cap cut "60" after its first digit
    assert _values("", completion) == [1, -1]  # read whole, the cut line is refuted
    spans = check_steps(PROSE, "", completion, truncated=True)
    assert [int(v) for *_, v, _ in spans] == [1, 0]
    assert "length cap" in spans[-1][3]["status"]
    assert completion[spans[-1][0] : spans[-1][1]] == "2. 46 + 14 = 6"


@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        ("1. 27 + 19 = 46 pens.\n2. 46 + 14 = 6", [1, 0]),
        ("27 + 19 = 46\n", [1]),  # cut right after a newline: the last line was finished
        ("27 + 19 = 40", [0]),  # one line, unfinished
        ("27 + 19 = 40\n46 + 14 = 60\nThe answer is 6", [-1, 1, 0]),  # only the last line
    ],
)
def test_only_the_last_line_is_dropped(completion: str, expected: list[int]) -> None:
    assert _values("", completion, truncated=True) == expected


def test_a_cut_line_inside_a_longer_step_keeps_the_lines_before_it() -> None:
    params = StepsParams(step_split="markers")
    completion = "Step 1: 27 + 19 = 46\nStep 2: 46 + 14 = 60\nso 60 - 5 = 5"
    whole = [int(v) for *_, v, _ in check_steps(params, "", completion)]
    cut = check_steps(params, "", completion, truncated=True)
    assert whole == [1, 1, -1]  # step 2's two lines hold a claim each: a span each
    # the step's finished line is still checked; the cut line gets a 0 span of its own
    assert [int(v) for *_, v, _ in cut] == [1, 1, 0]
    assert completion[cut[-1][0] : cut[-1][1]] == "so 60 - 5 = 5"
    line = StepsParams(step_split="markers", truncated_cut="line")
    assert [int(v) for *_, v, _ in check_steps(line, "", completion, truncated=True)] == [1, 1, 0]


def test_the_scorer_passes_truncated_to_the_checker() -> None:
    from botgrpo_sympy.params import StepsParams as Params
    from botgrpo_sympy.scorers import StepsScorer

    completion = "1. 27 + 19 = 46 pens.\n2. 46 + 14 = 6"
    with StepsScorer(Params(step_split="lines", workers=1)) as scorer:
        cut, whole = scorer.score(
            [Sample("", completion, truncated=True), Sample("", completion, truncated=False)]
        )
    assert [s.value for s in cut] == [1.0, 0.0]
    assert [s.value for s in whole] == [1.0, -1.0]


# --- issue 40, shapes 1-9: a correct solution is not refuted, its wrong twin is ----------------------------------
SHAPES = [
    (
        "1 a mixed number divided by a fraction",
        "",
        "A ribbon of 2 1/4 m is cut into pieces of 3/4 m: 2 1/4 / 3/4 = 3 pieces.",
        "A ribbon of 2 1/4 m is cut into pieces of 3/4 m: 2 1/4 / 3/4 = 4 pieces.",
        [1],
    ),
    (
        "1 a named mixed-number quotient",
        "",
        "So $Q = 3 1/3 / 2/3 = 5$.",
        "So $Q = 3 1/3 / 2/3 = 6$.",
        [1],
    ),
    (
        "2 a no-break space before + in dollar amounts",
        "",
        "The bill is $4.25\u00a0+ $3.75 + $2 = $10.",
        "The bill is $4.25\u00a0+ $3.75 + $2 = $11.",
        [1],
    ),
    (
        "2 no-break spaces on both sides of +",
        "",
        "He pays $15\u00a0+\u00a0$6 = $21 in all.",
        "He pays $15\u00a0+\u00a0$6 = $31 in all.",
        [1],
    ),
    (
        "3 an angle in degrees carried into a sine",
        "",
        "Here $\\theta = 130^\\circ$, so $\\sin \\theta = \\sin(180^\\circ - \\theta) = \\sin 50^\\circ$.\n"
        "And $\\cos 130^\\circ = -\\cos 50^\\circ$.",
        "Here $\\theta = 130^\\circ$, so $\\sin \\theta = \\sin(180^\\circ - \\theta) = \\sin 50^\\circ$.\n"
        "And $\\cos 130^\\circ = \\cos 50^\\circ$.",
        [1, 1],
    ),
    (
        "4 an implied product inside a root",
        "",
        "Check $x = 4$: $\\sqrt{17 - 2(4)} = 3$.",
        "Check $x = 4$: $\\sqrt{17 - 2(4)} = 5$.",
        [1],
    ),
    (
        "5 squaring both sides, then expanding, in one chain",
        "Solve for $x$.",
        "$\\sqrt{3x + 4} = x$\nSquaring both sides, $3x + 4 = x^2 = x \\cdot x$.\nSo $x^2 - 3x - 4 = 0$, and $x = 4$.",
        "$\\sqrt{3x + 4} = x$\nSquaring both sides, $3x + 4 = x^2 = x \\cdot x$.\nSo $x^2 - 3x - 4 = 0$, and $x = 5$.",
        [
            0,
            1,
            1,
        ],  # the squared equation is 0 (not implied by the root equation, read), the rewrite x^2 = x x +1
    ),
    (
        "6 a letter reused across cases",
        "",
        "If $t = 2$, then $s = 3t + 1 = 7$.\nIf $t = 5$, then $s = 3t - 2 = 13$.",
        "If $t = 2$, then $s = 3t + 1 = 7$.\nIf $t = 5$, then $s = 3t - 2 = 14$.",
        [1, 1],
    ),
    (
        "6 a letter reused for a new equation on the next line",
        "",
        "Thus $n = 8$.\nNext, $n = 1.5 + 0.5n$, so $0.5n = 1.5$ and $n = 3$.",
        "Thus $n = 8$.\nNext, $n = 1.5 + 0.5n$, so $0.5n = 1.5$ and $n = 4$.",
        [0, 1],
    ),
    (
        "7 an answer in a base, the value said only in words",
        "Write the number forty-one in base 6.",
        "Forty-one is six sixes and five, and $6 - 1 = 5$.\nThe answer is $105_6$.",
        "Forty-one is six sixes and five, and $6 - 1 = 4$.\nThe answer is $105_6$.",
        [1, 0],
    ),
    (
        "8 the second piece of a piecewise function",
        "Let $g(x) = 2x - 1$ for $x \\le 3$ and $g(x) = x^2 - 11$ for $x > 3$. Solve $g(x) = 5$.",
        "On the left piece, $2x - 1 = 5$ gives $x = 3$.\nOn the right piece, $x^2 - 11 = 5$ gives $x = 4$.",
        "On the left piece, $2x - 1 = 5$ gives $x = 3$.\nOn the right piece, $x^2 - 11 = 5$ gives $x = 4$ and $x^2 = 15$.",
        [1, 0],
    ),
    (
        "9 a system in display math with line breaks",
        "",
        "$$ 3p + q = 11 \\\\ p - q = 1 $$\nAdding the two, $4p = 12$, so $p = 3$ and $q = 2$.",
        "$$ 3p + q = 11 \\\\ p - q = 1 $$\nAdding the two, $4p = 12$, so $p = 3$ and $q = 3$.",
        [0, 1],
    ),
]


@pytest.mark.parametrize(
    ("shape", "prompt", "correct", "wrong", "expected"), SHAPES, ids=[s[0] for s in SHAPES]
)
def test_each_shape_is_scored_right(
    shape: str, prompt: str, correct: str, wrong: str, expected: list[int]
) -> None:
    assert _line_values(prompt, correct) == expected, shape
    got = _line_values(prompt, wrong)
    assert -1 in got, (shape, got)


def _line_values(prompt: str, completion: str) -> list[int]:
    return [int(v) for v in line_values(completion, check_steps(PROSE, prompt, completion))]


# --- issue 40: arithmetic in prose, paragraphs split into claims --------------------------------------------------
@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        ("She fills 36 jars * 5 plums = 180 plums.", [1]),
        ("She fills 36 jars * 5 plums = 170 plums.", [-1]),
        ("He buys 15 pencils at $3 = $45.", [1]),
        ("He buys 15 pencils at $3 each = $35.", [-1]),
        ("The class rents 4 buses x 52 seats = 208 seats.", [1]),
        ("Ana has 7 red beads + 9 blue beads = 16 beads.", [1]),
        # units of measure do not add as numbers, and a conversion is no calculation: not read (0)
        ("The trip is 3 hours + 45 minutes = 225 minutes.", [0]),
        ("The road is 2 miles = 3520 yards long.", [0]),
        ("Its speed is 120 km / 2 h = 60 km/h.", [0]),
    ],
)
def test_numbers_with_nouns_between_them_are_claims(completion: str, expected: list[int]) -> None:
    assert _values("", completion) == expected


def test_a_paragraph_gets_one_span_per_clause_with_claims() -> None:
    paragraph = (
        "Leo packs 6 crates of 14 melons, so he has 6 * 14 = 84 melons. He sells 29 at the market, which "
        "leaves 84 - 29 = 55 melons, and his sister brings 3 more crates, that is 3 * 14 = 42 melons. "
        "Now he has 55 + 42 = 97 melons, and he shares them among 4 shops, giving 97 / 4 = 24.25 melons each."
    )
    assert len(paragraph) > 250
    spans = check_steps(PROSE, "", paragraph)
    claims = [c["claim"] for *_, meta in spans for c in meta["claims"]]
    assert claims == ["6 * 14 = 84", "84 - 29 = 55", "3 * 14 = 42", "55 + 42 = 97", "97 / 4 = 24.25"]
    assert [int(v) for *_, v, _ in spans] == [
        1,
        1,
        1,
        1,
        1,
    ]  # one span per claim, not one +1 for the paragraph
    # the spans tile the paragraph
    assert spans[0][0] == 0 and spans[-1][1] == len(paragraph)
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))
    wrong = paragraph.replace("84 - 29 = 55", "84 - 29 = 65").replace("55 + 42 = 97", "65 + 42 = 107")
    got = [int(v) for *_, v, _ in check_steps(PROSE, "", wrong)]
    assert got == [1, -1, 1, 1, 1]  # the -1 sits on the wrong claim's clause only
    # the line as a whole keeps the step's value (metrics read one value per line)
    assert line_values(wrong, check_steps(PROSE, "", wrong)) == [-1.0]


# --- issue 40: answers (sympy.answer) ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("reference", "written", "expected"),
    [
        ("-\\frac{1}{2}", "-\\cos 60^\\circ", 1.0),  # the degree mark inside trigonometry is the angle's unit
        ("\\frac{\\sqrt{3}}{2}", "\\sin 60^\\circ", 1.0),
        ("\\frac{1}{2}", "\\sin 60^\\circ", 0.0),
        ("30", "30^\\circ", 1.0),  # outside it, a label
        ("36", "36 \\text{ m}^2", 1.0),
        ("36", "35 \\text{ m}^2", 0.0),
        ("48", "forty-eight", 1.0),
        ("-9", "minus nine", 1.0),
        ("48", "forty-nine", 0.0),
    ],
)
def test_answers_in_degrees_units_and_words(reference: str, written: str, expected: float) -> None:
    value, _ = check_answer(AnswerParams(), f"So the answer is $\\boxed{{{written}}}$.", reference)
    assert value == expected


# --- a factored restatement with other roots (held-out miss of issue 40's corrupted lines) -----------------------
@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("So $t^2 - 3t - 10 = 0$, that is $(t - 5)(t + 2) = 0$.", 1),  # the same roots, 5 and -2
        ("So $t^2 - 3t - 10 = 0$, that is $(t - 5)(t + 3) = 0$.", -1),  # shares 5, loses -2: wrong
        ("So $t^2 - 3t - 10 = 0$, that is $(t + 5)(t - 2) = 0$.", -1),  # no root shared: wrong before too
        ("So $t^2 - 3t - 10 = 0$, that is $2(t - 5)(t + 2) = 0$.", 1),  # a constant factor restates it
    ],
)
def test_a_restatement_in_one_line_keeps_the_roots(line: str, expected: int) -> None:
    text = f"Squaring gives $t + 10 = t^2 - 2t$.\n{line}"  # t^2 - 3t - 10 = 0 follows from it
    assert _values("Solve for $t$.", text) == [0, 1, expected]  # the line has a span per clause


def test_an_equation_on_a_later_line_may_start_anew() -> None:
    # the next part of a problem reuses the letter: one root shared, other roots, on its own line: not refuted
    text = "Part (a): $u^2 - 5u + 6 = 0$, so $u = 2$ or $u = 3$.\nPart (b): $u^2 - 9 = 0$."
    assert -1 not in _values("", text)


# --- answers of several values, and numerals with a digit outside their base -------------------------------------
SYSTEM = "Adding, $2a = 14$, so $a = 7$.\nThen $b = 10 - 7 = 3$.\n"


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("$\\boxed{(7, 3)}$", 0),  # the values found: not refuted (which unknown each is, is not read)
        ("$\\boxed{(3, 7)}$", 0),
        ("$\\boxed{(8, 3)}$", -1),  # 8 appears nowhere above
        ("The answer is $(7, 5)$.", -1),  # (7, 2) would be 0: 2 is written above (2a = 14)
        ("$\\boxed{\\{3, 7\\}}$", 0),
        ("$\\boxed{(7, \\sqrt{2})}$", 0),  # not a rational: "written above" says nothing of it
    ],
)
def test_an_answer_of_several_values_is_refuted_by_a_value_found_nowhere(answer: str, expected: int) -> None:
    assert _values("Solve the system $a + b = 10$, $a - b = 4$.", SYSTEM + answer)[-1] == expected


@pytest.mark.parametrize(("answer", "expected"), [("$\\boxed{62_8}$", 0), ("$\\boxed{69_8}$", -1)])
def test_a_numeral_with_a_digit_outside_its_base_is_refuted(answer: str, expected: int) -> None:
    text = f"Fifty is six eights and two, since $6 \\cdot 8 = 48$.\n{answer}"
    assert _values("Write fifty in base 8.", text)[-1] == expected


# --- issue 37: a cut one-line solution had none of its claims checked (truncated_cut) -----------------------------
SENTENCE = StepsParams(step_split="lines", truncated_cut="sentence")


def _cut_values(params: StepsParams, completion: str) -> list[tuple[int, str]]:
    return [(int(v), completion[a:b]) for a, b, v, _ in check_steps(params, "", completion, truncated=True)]


def test_line_cut_leaves_a_one_line_solution_unchecked_sentence_cut_does_not() -> None:
    completion = "So 9 + 12 = 11 apples. The answer is 11. The answer is 11. The answer"  # 9 + 12 is 21
    line = StepsParams(step_split="lines", truncated_cut="line")
    assert _cut_values(line, completion) == [(0, completion)]  # the hole: the false claim escapes its -1
    assert _cut_values(SENTENCE, completion) == [
        (-1, "So 9 + 12 = 11 apples. The answer is 11. The answer is 11."),
        (0, "The answer"),
    ]
    right = "So 9 + 12 = 21 apples. The answer is 21. The ans"
    assert _cut_values(SENTENCE, right) == [(1, "So 9 + 12 = 21 apples. The answer is 21."), (0, "The ans")]


@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        # a list marker is no sentence: the cut line stays whole, as under 'line'
        ("1. 27 + 19 = 46 pens.\n2. 46 + 14 = 6", [(1, "1. 27 + 19 = 46 pens."), (0, "2. 46 + 14 = 6")]),
        ("a) 27 + 19 = 4", [(0, "a) 27 + 19 = 4")]),
        # a period with no white space after it may be a decimal point the cap cut ("5." of "5.5")
        ("It costs 3.5 + 2 = 5.", [(0, "It costs 3.5 + 2 = 5.")]),
        # white space after the break: that sentence was finished
        ("It costs 3.5 + 2 = 5. ", [(-1, "It costs 3.5 + 2 = 5.")]),
        # a finished claim in the cut sentence is checked (issue 56: any joiner; 7 - 2 is 5)
        (
            "He has 3 + 4 = 7 apples! Then 7 - 2 = 6 and",
            [(1, "He has 3 + 4 = 7 apples!"), (-1, "Then 7 - 2 = 6"), (0, "and")],
        ),
        ("2. 46 + 14 = 60. Then 60 - 5 = 5", [(1, "2. 46 + 14 = 60."), (0, "Then 60 - 5 = 5")]),
    ],
)
def test_sentence_cut_keeps_only_the_unfinished_sentence_out(
    completion: str, expected: list[tuple[int, str]]
) -> None:
    assert _cut_values(SENTENCE, completion) == expected


def test_truncated_cut_changes_nothing_for_a_finished_completion() -> None:
    completion = "So 9 + 12 = 11 apples. The answer is 11.\n2. 46 + 14 = 60. Then 60 - 5 = 5"
    assert check_steps(SENTENCE, "", completion) == check_steps(PROSE, "", completion)


def test_truncated_cut_refuses_an_unknown_mode() -> None:
    with pytest.raises(ValueError, match="truncated_cut"):
        StepsParams(truncated_cut="word")
