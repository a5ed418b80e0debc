"""Step splitting: spans are exact slices of the completion, in order, blanks trimmed."""

from __future__ import annotations

import pytest

from botgrpo_core.signals.steps import Step, split_steps


def _texts(steps: list[Step], text: str) -> list[str]:
    for step in steps:
        assert text[step.start : step.end] == step.text  # spans index the completion itself
    return [s.text for s in steps]


def test_lines_trim_blanks_and_skip_empty_lines() -> None:
    text = "  17+5=22 \n\n\t22-8=14\n   \nA: 14\n"
    steps = split_steps(text, "lines")
    assert _texts(steps, text) == ["17+5=22", "22-8=14", "A: 14"]
    assert steps[0].start == 2 and steps[0].end == 9


def test_markers_cover_text_between_markers() -> None:
    text = "Let us solve it.\nStep 1: add 17 and 5.\nSo 22.\n**Step 2**: subtract 8 -> 14\nstep 3) answer 14"
    steps = split_steps(text, "markers")
    assert _texts(steps, text) == [
        "Step 1: add 17 and 5.\nSo 22.",
        "**Step 2**: subtract 8 -> 14",
        "step 3) answer 14",
    ]


def test_markers_without_markers_give_one_step() -> None:
    text = "\n just an answer: 14 \n"
    assert _texts(split_steps(text, "markers"), text) == ["just an answer: 14"]


def test_custom_marker_pattern() -> None:
    text = "(a) first\n(b) second"
    steps = split_steps(text, "markers", r"^\([a-z]\)")
    assert _texts(steps, text) == ["(a) first", "(b) second"]


def test_regex_matches_and_named_group() -> None:
    text = "x=1; y=2; z=3"
    assert _texts(split_steps(text, "regex", r"\w=\d"), text) == ["x=1", "y=2", "z=3"]
    steps = split_steps(text, "regex", r"(?P<step>\w)=\d")
    assert _texts(steps, text) == ["x", "y", "z"]


def test_markers_preamble_is_a_step_on_request() -> None:
    text = "We know 2+3=5.\nStep 1: 5*2=10\nStep 2: 10-1=9"
    assert _texts(split_steps(text, "markers"), text) == ["Step 1: 5*2=10", "Step 2: 10-1=9"]
    with_preamble = split_steps(text, "markers", preamble=True)
    assert _texts(with_preamble, text) == ["We know 2+3=5.", "Step 1: 5*2=10", "Step 2: 10-1=9"]
    # a completion that opens with a marker has no preamble to add
    assert (
        _texts(split_steps(text[15:], "markers", preamble=True), text[15:]) == _texts(with_preamble, text)[1:]
    )


def test_auto_uses_markers_when_present_else_lines() -> None:
    marked = "a\nb\n\nStep 1: c\nd\nStep 2: e"
    assert _texts(split_steps(marked, "auto"), marked) == _texts(split_steps(marked, "markers"), marked)
    assert _texts(split_steps(marked, "auto", preamble=True), marked) == ["a\nb", "Step 1: c\nd", "Step 2: e"]
    plain = "a\nb\n\nc"
    assert _texts(split_steps(plain, "auto"), plain) == ["a", "b", "c"]
    # a custom marker decides for auto too
    assert _texts(split_steps("(a) x\n(b) y", "auto", r"^\([a-z]\)"), "(a) x\n(b) y") == ["(a) x", "(b) y"]


def test_separator_keeps_the_pieces_between_matches() -> None:
    text = "a\nb\n\nStep 1: c\nd\n\n\nStep 2: e\n\n"
    assert _texts(split_steps(text, "separator", r"\n\s*\n"), text) == ["a\nb", "Step 1: c\nd", "Step 2: e"]
    assert _texts(split_steps("1+1=2; 2+2=5", "separator", ";"), "1+1=2; 2+2=5") == ["1+1=2", "2+2=5"]
    assert _texts(split_steps("no cut here", "separator", ";"), "no cut here") == ["no cut here"]


def test_max_steps_keeps_the_first() -> None:
    text = "a\nb\nc\nd"
    assert _texts(split_steps(text, "lines", max_steps=2), text) == ["a", "b"]


def test_non_ascii_offsets_are_code_points() -> None:
    text = "É = mc²\n東京 → ∞"
    steps = split_steps(text, "lines")
    assert _texts(steps, text) == ["É = mc²", "東京 → ∞"]
    assert steps[1].start == 8


def test_catastrophic_pattern_times_out() -> None:
    with pytest.raises(TimeoutError):
        split_steps("a" * 60 + "!", "regex", r"(a|aa)+$", timeout_s=0.05)


def test_bad_inputs() -> None:
    for mode in ("regex", "separator"):
        with pytest.raises(ValueError, match="needs a pattern"):
            split_steps("x", mode)
    with pytest.raises(ValueError, match="split mode must be"):
        split_steps("x", "sentences")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not a valid regular expression"):
        split_steps("x", "regex", "(")
