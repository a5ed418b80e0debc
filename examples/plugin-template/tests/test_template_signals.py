"""Tests of the template plugin, written with the helpers botgrpo gives plugin authors.

Run them with ``pytest tests`` after ``pip install -e .`` (the package must be importable).
"""

from __future__ import annotations

import pytest
import torch

from botgrpo_core import Sample, SampleError, Span
from botgrpo_core.config.checks import check_rewards
from botgrpo_core.config.models import RewardsConfig
from botgrpo_core.rewards.mixture import RewardMixture
from botgrpo_core.signals.manager import PluginManager
from botgrpo_core.signals.testing import check_signal_contract, make_samples, registered_plugin
from botgrpo_template import plugin
from botgrpo_template.signals import BannedWordParams, BannedWordScorer, KeywordCoverageParams

BANNED = plugin.SIGNALS[0]
COVERAGE = plugin.SIGNALS[1]


@pytest.fixture
def manager():
    """A plugin manager with only the built-in signals and this plugin (installed plugins stay out)."""
    manager = PluginManager(allowlist=[])
    with registered_plugin(plugin, name="template", manager=manager, distribution="botgrpo-template"):
        yield manager


def _occurrences(text: str, word: str) -> list[tuple[int, int]]:
    """Independent reference: case-insensitive whole-word occurrences found with str.find."""
    low, w = text.lower(), word.lower()
    found, start = [], low.find(w)
    while start >= 0:
        end = start + len(w)
        before = start == 0 or not (low[start - 1].isalnum() or low[start - 1] == "_")
        after = end == len(low) or not (low[end].isalnum() or low[end] == "_")
        if before and after:
            found.append((start, end))
        start = low.find(w, start + 1)
    return found


def test_contract_of_both_signals() -> None:
    texts = ["a clean answer", "this is Basically literally fine", "", "literally\nliterally"]
    check_signal_contract(BANNED, make_samples(texts), {"words": ["basically", "literally"], "penalty": -0.5})
    rows = [{"keywords": ["answer", "fine"]}, {"keywords": "this, is"}, {"keywords": []}, {"keywords": ["x"]}]
    check_signal_contract(COVERAGE, make_samples(texts, rows=rows))


def test_banned_word_spans_match_a_reference() -> None:
    text = "Basically, the cat sat. CONCAT is not a cat; basically-done. literally"
    params = BannedWordParams(words=["basically", "cat", "literally"], penalty=-0.25)
    [spans] = BannedWordScorer(params).score(make_samples([text]))
    expected = sorted(
        _occurrences(text, "basically") + _occurrences(text, "cat") + _occurrences(text, "literally")
    )
    assert [(s.start, s.end) for s in spans] == expected
    assert all(s.value == -0.25 for s in spans)
    assert [s.meta["word"] for s in spans] == [text[a:b] for a, b in expected]
    # "concat" contains "cat" but is not the word "cat"
    assert text.lower().index("concat") not in [a for a, _ in expected]


def test_substring_mode_and_case() -> None:
    params = BannedWordParams(words=["cat"], whole_word=False, ignore_case=False)
    [spans] = BannedWordScorer(params).score(make_samples(["concat Cat cat"]))
    assert [(s.start, s.end) for s in spans] == [(3, 6), (11, 14)]


def test_keyword_coverage_values_and_errors() -> None:
    from botgrpo_template.signals import KeywordCoverageScorer

    samples = [
        Sample(
            prompt="", completion="Paris is the capital", row={"keywords": ["paris", "capital", "France"]}
        ),
        Sample(prompt="", completion="nothing", row={"keywords": "a, b"}),
        Sample(prompt="", completion="no field", row={}),
        Sample(prompt="", completion="bad", row={"keywords": 3}),
    ]
    results = KeywordCoverageScorer(KeywordCoverageParams()).score(samples)
    assert results[0] == pytest.approx(2 / 3)
    assert results[1] == 0.0
    assert isinstance(results[2], SampleError) and "keywords" in str(results[2])
    assert isinstance(results[3], SampleError)


def test_params_are_checked_when_the_run_file_loads(manager: PluginManager) -> None:
    from botgrpo_core.config.errors import ConfigError

    good = RewardsConfig(
        alpha=1.0,
        beta=0.2,
        signals=[
            {"name": "template.keyword_coverage"},
            {"name": "template.banned_word", "params": {"words": ["um"], "penalty": -1.0}},
        ],
    )
    dominance = check_rewards(good, manager=manager)
    # alpha * d = 1 * (1 - 0) > 2 * beta * |penalty| = 0.4
    assert (
        dominance["holds"]
        and dominance["alpha_gap"] == 1.0
        and dominance["two_beta_local"] == pytest.approx(0.4)
    )
    bad = RewardsConfig(signals=[{"name": "template.banned_word", "params": {"word": ["um"]}}])
    with pytest.raises(
        ConfigError, match=r"rewards\.signals\[0\]\.params\.word: unknown param; did you mean 'words'"
    ):
        check_rewards(bad, manager=manager)


def test_mixture_puts_the_penalty_on_the_banned_tokens(manager: PluginManager) -> None:
    rewards = RewardsConfig(
        alpha=1.0,
        beta=0.5,
        signals=[
            {"name": "template.keyword_coverage", "weight": 2.0},
            {"name": "template.banned_word", "params": {"words": ["um"], "penalty": -1.0}},
        ],
    )
    texts = ["um, Paris", "Paris"]
    samples = make_samples(texts, rows={"keywords": ["paris"]})  # one token per character
    with RewardMixture(rewards, manager=manager) as mixture:
        out = mixture.score_batch(samples)
    # r[i, t] = alpha * 2 * coverage + beta * (-1 on the characters of "um")
    expected0 = torch.full((len(texts[0]),), 1.0 * 2 * 1.0)
    expected0[0:2] += 0.5 * -1.0
    torch.testing.assert_close(out.token_rewards[0, : len(texts[0])], expected0)
    torch.testing.assert_close(out.token_rewards[1, : len(texts[1])], torch.full((len(texts[1]),), 2.0))
    assert out.signals["template.banned_word"].results[0] == [Span(0, 2, -1.0, {"word": "um"})]
