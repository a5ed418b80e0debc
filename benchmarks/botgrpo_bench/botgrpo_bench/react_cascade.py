"""``bench.react_cascade``: the React level's outcome as a gate cascade (issue 58): compiles, renders, checks.

One global signal, because a mixture adds its signals and a gate multiplies: a trivial page compiles and renders,
so ``jsx.compiles`` and ``jsx.renders`` as terms beside the checks would pay it (round 4's outcome paid such a
page 0.75 of 1). Here, for one page against its row's checks (``jsx.checks``, one sandboxed render):

- 0 when it has no code, or no substance (:func:`substantive`: at least
  :data:`~botgrpo_bench.react_requests.MIN_ELEMENTS` JSX elements *and* some logic: a hook, an event handler, a
  ``.map``/``.filter`` or a value rendered in braces; ``return null``, one element and twenty ``<p>0</p>`` have
  none);
- ``attempt_credit`` for a page of substance, compiling or not, so that an honest page with a typo out-ranks
  every trivial page (issue 56: ``return null`` out-ranked it, 0.75 against 0.5); plus ``compile_credit`` when it
  compiles, plus ``render_credit`` when it also renders;
- plus ``(1 - the three credits)`` x the share of its checks it passes (0 unless it renders), substance or not (a
  badge that is one ``<span>`` and does what was asked keeps its checks).

So a trivial page gets 0: its credits are gated on substance and it passes no check (``python -m
botgrpo_bench.react_check_truth``: every trivial page scores 0 on every request). The meta is ``jsx.checks``'
(which checks failed and why) with ``stage``: ``no code``, ``trivial``, ``does not compile``, ``compiles``,
``renders``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pydantic import Field, model_validator

from botgrpo_jsx.params import ChecksParams

#: Some logic in a component: a hook call, an event handler prop, a list rendered by map/filter, or a value in
#: braces inside JSX ({count}, {props.title}); a page of static markup has none.
_LOGIC = re.compile(
    r"\buse[A-Z]\w*\s*\(|\bon[A-Z]\w*\s*=\s*\{|\.(?:map|filter)\s*\(|>[^<{]*\{\s*[A-Za-z_$][\w$.]*[^}]*\}"
)


def substantive(completion: str) -> bool:
    """A page of substance: at least ``MIN_ELEMENTS`` JSX elements (compiling or not) and some logic
    (:data:`_LOGIC`) in its code."""
    from botgrpo_bench.react_requests import MIN_ELEMENTS, element_count
    from botgrpo_jsx.extract import DEFAULT_LANGUAGES, extract_cached

    view = extract_cached(completion, DEFAULT_LANGUAGES)
    if view is None or not view.code.strip() or element_count(completion) < MIN_ELEMENTS:
        return False
    return _LOGIC.search(view.code) is not None


class CascadeParams(ChecksParams):
    """Parameters of ``bench.react_cascade`` (those of ``jsx.checks``, and the three stage credits)."""

    attempt_credit: float = Field(
        0.15, ge=0.0, lt=1.0, description="paid to a page of substance, compiling or not (module doc)"
    )
    compile_credit: float = Field(0.15, ge=0.0, lt=1.0, description="paid on top when it compiles")
    render_credit: float = Field(0.15, ge=0.0, lt=1.0, description="paid on top when it also renders")

    @model_validator(mode="after")
    def _credits_leave_room(self) -> CascadeParams:
        if self.attempt_credit + self.compile_credit + self.render_credit >= 1.0:
            raise ValueError(
                "bench.react_cascade: attempt_credit + compile_credit + render_credit must be below 1 (the rest "
                "weighs the checks)"
            )
        return self


class CascadeScorer:
    """``bench.react_cascade`` (module doc)."""

    def __init__(self, params: CascadeParams) -> None:
        from botgrpo_jsx.checks import ChecksScorer

        self.params = params
        self.checks = ChecksScorer(params)

    def close(self) -> None:
        self.checks.close()

    def score(self, samples: Sequence[Any]) -> list[Any]:
        from botgrpo_core.signals import SampleError, Value

        p = self.params
        room = 1.0 - p.attempt_credit - p.compile_credit - p.render_credit
        out: list[Any] = []
        for sample, result in zip(samples, self.checks.score(samples), strict=True):
            if isinstance(result, SampleError):
                out.append(result)
                continue
            meta = dict(result.meta or {})
            status = str(meta.get("status", ""))
            compiles = status not in ("no code", "does not compile")
            renders = status.startswith("rendered")
            share = room * float(result.value)  # 0 unless it renders
            if status == "no code":
                stage, value = status, 0.0
            elif not substantive(sample.completion):
                # no credit; a one-element page that does what was asked (a badge) keeps its checks
                stage, value = "trivial", share
            elif not compiles:
                stage, value = status, p.attempt_credit
            else:
                stage = "renders" if renders else "compiles"
                value = p.attempt_credit + p.compile_credit + (p.render_credit if renders else 0.0) + share
            out.append(Value(value, {"stage": stage, **meta}))
        return out


def cascade_gap(params: CascadeParams) -> float:
    """Outcome dominance's ``d``: the smallest stage credit. A check more or less moves the value by the rest /
    the row's number of checks, which can be finer: set ``rewards.outcome_gap`` where that matters."""
    credits = [c for c in (params.attempt_credit, params.compile_credit, params.render_credit) if c > 0]
    return min(credits) if credits else 1.0


def make_cascade(params: CascadeParams) -> CascadeScorer:
    """Build the ``bench.react_cascade`` scorer."""
    return CascadeScorer(params)
