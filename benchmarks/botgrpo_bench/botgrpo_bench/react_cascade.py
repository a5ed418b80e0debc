"""``bench.react_cascade``: the React level's outcome as a gate cascade (issue 58): compiles, renders, checks.

One global signal, because a mixture adds its signals and a gate multiplies: a trivial page compiles and renders,
so ``jsx.compiles`` and ``jsx.renders`` as terms beside the checks would pay it (round 4's outcome paid such a
page 0.75 of 1). Here, for one page against its row's checks (``jsx.checks``, one sandboxed render):

- 0 when it has no code or does not compile;
- ``compile_credit`` when it compiles and is not trivial (:func:`botgrpo_bench.react_requests.is_trivial`: at
  least :data:`~botgrpo_bench.react_requests.MIN_ELEMENTS` JSX elements), plus ``render_credit`` when it also
  renders;
- plus ``(1 - compile_credit - render_credit)`` x the share of its checks it passes (0 unless it renders), trivial
  or not (a badge that is one ``<span>`` and does what was asked keeps its checks).

So a trivial page (nothing, ``return null``, one element) gets 0: its credits are gated on substance and it
passes no check (``python -m botgrpo_bench.react_check_truth``: every trivial page scores 0 on every request).
With both credits 0 the value is the check share alone. The meta is ``jsx.checks``' (which checks failed and
why) with ``stage``: ``no code``, ``does not compile``, ``trivial``, ``compiles``, ``renders``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import Field, model_validator

from botgrpo_jsx.params import ChecksParams


class CascadeParams(ChecksParams):
    """Parameters of ``bench.react_cascade`` (those of ``jsx.checks``, and the two stage credits)."""

    compile_credit: float = Field(
        0.15, ge=0.0, lt=1.0, description="paid when the page compiles and is not trivial"
    )
    render_credit: float = Field(
        0.15, ge=0.0, lt=1.0, description="paid on top when it also renders (and is not trivial)"
    )

    @model_validator(mode="after")
    def _credits_leave_room(self) -> CascadeParams:
        if self.compile_credit + self.render_credit >= 1.0:
            raise ValueError(
                "bench.react_cascade: compile_credit + render_credit must be below 1 (the rest weighs the checks)"
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
        from botgrpo_bench.react_requests import is_trivial
        from botgrpo_core.signals import SampleError, Value

        p = self.params
        out: list[Any] = []
        for sample, result in zip(samples, self.checks.score(samples), strict=True):
            if isinstance(result, SampleError):
                out.append(result)
                continue
            meta = dict(result.meta or {})
            status = str(meta.get("status", ""))
            compiles = status not in ("no code", "does not compile")
            renders = status.startswith("rendered")
            share = (1.0 - p.compile_credit - p.render_credit) * float(result.value)
            if not compiles:
                stage, value = status, 0.0
            elif is_trivial(sample.completion, True):
                # no stage credit; a one-element page that does what was asked (a badge) keeps its checks
                stage, value = "trivial", share
            else:
                stage = "renders" if renders else "compiles"
                value = p.compile_credit + (p.render_credit if renders else 0.0) + share
            out.append(Value(value, {"stage": stage, **meta}))
        return out


def make_cascade(params: CascadeParams) -> CascadeScorer:
    """Build the ``bench.react_cascade`` scorer."""
    return CascadeScorer(params)
