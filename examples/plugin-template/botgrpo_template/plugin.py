"""Entry point of the plugin: registers its signals with botgrpo.

Keep this module cheap to import: ``botgrpo plugins`` and ``botgrpo validate`` import it. Anything
heavy (models, parsers, big tables) belongs in the scorer's constructor, which ``make_scorer`` calls
only when a run actually scores.
"""

from __future__ import annotations

from collections.abc import Callable

from botgrpo_core import SignalSpec, hookimpl
from botgrpo_template.signals import (
    BannedWordParams,
    BannedWordScorer,
    KeywordCoverageParams,
    KeywordCoverageScorer,
)


def _banned_word_bounds(params: BannedWordParams) -> tuple[float, float]:
    # A span carries the penalty (<= 0); the bounds follow the configured value.
    return (params.penalty, 0.0)


SIGNALS = (
    SignalSpec(
        name="template.banned_word",
        kind="local",
        bounds=_banned_word_bounds,
        params_model=BannedWordParams,
        make_scorer=BannedWordScorer,
        description="penalty on every occurrence of a banned word",
    ),
    SignalSpec(
        name="template.keyword_coverage",
        kind="global",
        bounds=(0.0, 1.0),
        params_model=KeywordCoverageParams,
        make_scorer=KeywordCoverageScorer,
        description="fraction of the row's keywords that the completion mentions",
        required_fields=lambda params: (params.field,),
    ),
)


@hookimpl
def botgrpo_register_signals(register: Callable[[SignalSpec], None]) -> None:
    """Register the template's signals (called once when a run file uses ``template.*``)."""
    for spec in SIGNALS:
        register(spec)
