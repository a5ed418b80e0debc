"""core.regex, core.exact_answer, core.length: values by hand, contracts, hostile input."""

from __future__ import annotations

import pytest

from botgrpo_core.signals import SampleError
from botgrpo_core.signals.builtins import SIGNALS, ExactAnswerParams, ExactAnswerScorer
from botgrpo_core.signals.testing import check_signal_contract, make_samples

SPEC = {s.name: s for s in SIGNALS}


def _score(name: str, params: dict, completions: list[str], rows=None) -> list:
    spec = SPEC[name]
    return list(
        spec.make_scorer(spec.params_model.model_validate(params)).score(make_samples(completions, rows=rows))
    )


def test_regex_spans() -> None:
    (spans,) = _score("core.regex", {"pattern": r"\d+", "value": 0.5}, ["a 12 b 345"])
    assert [(s.start, s.end, s.value) for s in spans] == [(2, 4, 0.5), (7, 10, 0.5)]
    (spans,) = _score("core.regex", {"pattern": r"x=(\d)", "group": 1}, ["x=1 x=2"])
    assert [(s.start, s.end) for s in spans] == [(2, 3), (6, 7)]


def test_regex_catastrophic_backtracking_times_out() -> None:
    (result,) = _score("core.regex", {"pattern": r"(a|aa)+$", "timeout_s": 0.05}, ["a" * 36 + "b"])
    assert isinstance(result, SampleError) and result.reason == "timeout"


def test_regex_params_are_checked() -> None:
    with pytest.raises(ValueError, match="invalid regular expression"):
        SPEC["core.regex"].params_model.model_validate({"pattern": "("})


@pytest.mark.parametrize(
    ("completion", "reference", "want"),
    [
        ("so \\boxed{42}", "42", 1.0),
        ("A: 14", "14", 1.0),
        ("A: 14\nA: 15", "15", 1.0),  # the last answer counts
        ("Answer: 1/2", "0.5", 1.0),  # exact numbers
        ("Answer: 0.3333", "1/3", 0.0),
        ("A: 007", "7", 1.0),
        ("no answer here", "7", 0.0),
        ("A: Paris.", "Paris", 1.0),
    ],
)
def test_exact_answer(completion: str, reference: str, want: float) -> None:
    assert _score("core.exact_answer", {}, [completion], rows={"answer": reference}) == [want]


def test_exact_answer_missing_field_is_a_sample_error() -> None:
    (result,) = _score("core.exact_answer", {"reference_field": "gold"}, ["A: 1"], rows={"answer": "1"})
    assert isinstance(result, SampleError) and "gold" in str(result)


def test_length_shaping_matches_dapo() -> None:
    # L_max = 10, L_cache = 4: 0 up to 6, then (6 - L) / 4, -1 beyond 10
    texts = ["x" * n for n in (0, 6, 7, 8, 10, 11)]
    got = _score("core.length", {"max_length": 10, "cache": 4, "unit": "chars"}, texts)
    assert got == [0.0, 0.0, -0.25, -0.5, -1.0, -1.0]
    with pytest.raises(ValueError, match="cache must be <= max_length"):
        SPEC["core.length"].params_model.model_validate({"max_length": 3, "cache": 5})


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("core.regex", {"pattern": "bad", "value": -1}),
        ("core.exact_answer", {}),
        ("core.length", {"max_length": 8, "cache": 4}),
    ],
)
def test_contract(name: str, params: dict) -> None:
    samples = make_samples(["A: 3 bad", "", "bad bad \\boxed{3}", "🙂 A: 4"], rows={"answer": "3"})
    check_signal_contract(SPEC[name], samples, params)


# ---- the one \boxed{} parser -------------------------------------------------------------------------------
def test_boxed_matches_nested_braces_and_ignores_escaped_ones() -> None:
    from botgrpo_core.signals.answers import boxed, last_boxed

    text = r"first \boxed{1} then \boxed{\frac{1}{2}} and \fbox{\{x\}} and \boxed{open"
    found = [text[b.start : b.end] for b in boxed(text)]
    assert found == ["1", r"\frac{1}{2}", r"\{x\}"]
    nested = r"a \boxed{x \boxed{y}} b \boxed{unclosed \boxed{z}"
    assert [nested[b.start : b.end] for b in boxed(nested)] == [r"x \boxed{y}", "z"]  # outermost closed boxes
    assert nested[slice(*last_boxed(nested))] == "z"
    assert last_boxed("no box } here {") is None


def test_boxed_is_linear_on_hostile_nesting() -> None:
    from botgrpo_core.signals.answers import boxed

    text = r"\boxed{" * 50_000 + "}" * 50_000
    assert len(boxed(text)) == 1  # one outermost box; a quadratic scan would take minutes here


def test_exact_answer_reads_a_boxed_fraction_as_its_reference() -> None:
    """The issue's case: ``\\boxed{\\frac{1}{2}}`` against ``\\frac{1}{2}`` used to score 0."""
    scorer = ExactAnswerScorer(ExactAnswerParams())
    samples = make_samples(
        [r"so $\boxed{\frac{1}{2}}$.", "17+5=22\nA: 22", "A: 1e99999999999999", "DATA: 5"],
        rows=[{"answer": r"\frac{1}{2}"}, {"answer": "22"}, {"answer": "1"}, {"answer": "5"}],
    )
    assert scorer.score(samples) == [1.0, 1.0, 0.0, 0.0]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1,234", 1234),
        ("-.5", -0.5),
        ("3/4", 0.75),
        ("1.5e3", 1500),
        ("1e400", 10**400),
        ("1e401", None),
        ("x", None),
    ],
)
def test_exact_number_bounds_what_it_builds(text: str, value: float | None) -> None:
    from botgrpo_core.signals.answers import exact_number

    got = exact_number(text)
    assert (got is None) if value is None else (got == value)
