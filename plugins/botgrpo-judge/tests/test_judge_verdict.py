"""The tolerant verdict parser, on the formats judges actually write."""

from __future__ import annotations

import pytest

from botgrpo_judge.verdict import parse_step_verdicts, parse_verdict, value_of

SINGLE = [
    ("Yes", 1.0),
    ("no.", -1.0),
    ("Yes, the step is right.", 1.0),
    ("No errors found. The step is correct.", 1.0),
    ("The step is incorrect because 22-8 is 14.", -1.0),
    ("This step isn't correct.", -1.0),
    ("That is not incorrect.", 1.0),
    ("**Correct**", 1.0),
    ("Step 3: incorrect", -1.0),
    ("Verdict: wrong", -1.0),
    ("Judgement: VALID", 1.0),
    ("Final answer: yes", 1.0),
    ("I think... Answer: no", -1.0),
    ("\\boxed{correct}", 1.0),
    ("The result is \\boxed{\\text{no}}.", -1.0),
    ("\\boxed{1}", 1.0),
    ("\\boxed{0}", -1.0),
    ('{"verdict": "incorrect"}', -1.0),
    ('```json\n{"correct": true}\n```', 1.0),
    ('Reasoning first. {"is_correct": false, "why": "sign error"}', -1.0),
    ('{"score": 0.75}', 0.5),
    ("Score: 0.25", -0.5),
    ("0.5", 0.0),
    ("Rating: 7/10", pytest.approx(0.4)),
    ("✓", 1.0),
    ("❌ wrong sign", -1.0),
    ("true", 1.0),
]

UNPARSED = ["", "hmm", "The sum is 22.", "Score: 7", '{"foo": 1}', "Maybe the step"]


@pytest.mark.parametrize(("text", "expected"), SINGLE)
def test_single_verdict_formats(text: str, expected: float) -> None:
    assert parse_verdict(text) == expected


@pytest.mark.parametrize("text", UNPARSED)
def test_unparseable_gives_none(text: str) -> None:
    assert parse_verdict(text) is None


def test_score_range_maps_numbers_linearly() -> None:
    assert parse_verdict("Score: 7", score_range=(0, 10)) == pytest.approx(0.4)
    assert parse_verdict("\\boxed{10}", score_range=(0, 10)) == 1.0
    assert parse_verdict("Score: 11", score_range=(0, 10)) is None
    assert value_of(3, (1, 5)) == 0.0
    assert value_of(True) == 1.0 and value_of(None) is None


MULTI = [
    ("Step 1: correct\nStep 2: incorrect\nStep 3: correct", [1.0, -1.0, 1.0]),
    ("**Step 1**: Correct\n**Step 2** - Wrong\nstep 3 is correct", [1.0, -1.0, 1.0]),
    # the quoted step without a verdict does not count; the later summary line wins
    ("Step 1: 17+5=22\nStep 2: 22-8=14, correct\nSummary:\nStep 1: incorrect", [-1.0, 1.0, None]),
    ("[true, false, true]", [1.0, -1.0, 1.0]),
    ('{"steps": ["correct", "incorrect", "correct"]}', [1.0, -1.0, 1.0]),
    ('{"1": "correct", "step 3": "wrong"}', [1.0, None, -1.0]),
    ('[{"step": 3, "verdict": "correct"}, {"step": 1, "correct": false}]', [-1.0, None, 1.0]),
    ("\\boxed{1, 0, 1}", [1.0, -1.0, 1.0]),
    ("\\boxed{yes} then \\boxed{no} then \\boxed{yes}", [1.0, -1.0, 1.0]),
    ("Step 1: correct\nStep 7: incorrect", [1.0, None, None]),
    ("no idea", [None, None, None]),
]


@pytest.mark.parametrize(("text", "expected"), MULTI)
def test_step_verdict_formats(text: str, expected: list[float | None]) -> None:
    assert parse_step_verdicts(text, 3) == expected


def test_one_step_falls_back_to_single_parser() -> None:
    assert parse_step_verdicts("Yes.", 1) == [1.0]
    assert parse_step_verdicts("anything", 0) == []


@pytest.mark.parametrize(
    "text",
    ["[" * 5000, "[" * 5000 + "]" * 5000, '{"verdict": ' * 20_000 + "null" + "}" * 20_000],
    ids=["open-brackets", "deep-array", "deep-verdict"],
)
def test_deep_json_is_unparsed_not_recursion_error(text: str) -> None:
    assert parse_verdict(text) is None
    assert parse_step_verdicts(text, 3) == [None, None, None]


def test_a_verdict_after_a_stray_bracket_or_too_deep_json_is_found() -> None:
    assert parse_verdict('Step [2 is odd. [[[[[[[[[[1]]]]]]]]]] {"verdict": "wrong"}') == -1.0
    assert parse_step_verdicts('[true, {"x": ' * 10 + "]" + ' {"steps": [true, false]}', 2) == [1.0, -1.0]


def test_numbers_past_float_range_are_unparsed_not_overflow() -> None:
    huge = "1" + "0" * 400  # json.loads reads it as an int that float() cannot hold
    assert parse_verdict('{"score": ' + huge + "}") is None
    assert parse_step_verdicts("[" + huge + ", true]", 2) == [None, 1.0]
    assert value_of(10**400) is None and value_of(-(10**400)) is None
    assert parse_verdict("Score: 1e999") is None  # inf from a string: off the scale


def test_boxes_are_read_by_the_cores_parser_with_nesting() -> None:
    """Boxes come from botgrpo_core.signals.answers (braces matched at any depth): three boxes are three
    steps even when one nests two levels deep; its unreadable content is that step's None, not a shift."""
    from botgrpo_judge.verdict import parse_step_verdicts, parse_verdict

    assert parse_step_verdicts(r"\boxed{1} \boxed{\text{\textbf{0}}} \boxed{1}", 3) == [1.0, None, 1.0]
    assert parse_verdict(r"so \boxed{\text{\textbf{correct}}}") == 1.0
