"""Issue 26 finding 7 for sympy.*: ``params.batch_timeout_s`` bounds a batch's checks as a whole. Each completion
is bounded by ``timeout_s``; without a batch deadline, hanging completions cost ``timeout_s`` each (twice for a
chunk: once in the chunk, once alone), whatever the batch."""

from __future__ import annotations

import time

import pytest

from botgrpo_core.signals import Sample, SampleError
from botgrpo_sympy.params import StepsParams
from botgrpo_sympy.plugin import STEPS

LIFTED = {"max_exponent": 10**12, "max_bits": 10**13}  # so "9^9^9" really hangs a checker
#: Slack over the configured deadline that a loaded 2-core machine keeps.
MARGIN_S = 10.0


@pytest.mark.timeout(180)
def test_hanging_completions_cost_one_batch_deadline_and_are_not_remembered() -> None:
    params = StepsParams(workers=1, timeout_s=60.0, chunk_size=2, batch_timeout_s=1.0, limits=LIFTED)
    scorer = STEPS.make_scorer(params)
    try:
        good = Sample(prompt="", completion="2 + 2 = 4")
        assert [s.value for s in scorer.score([good])[0]] == [1.0]  # the worker is up: not timed below
        hangs = [Sample(prompt="", completion=f"9^9^9 = {k}") for k in range(4)]
        start = time.monotonic()
        results = scorer.score([good, *hangs])
        elapsed = time.monotonic() - start
        assert elapsed < params.batch_timeout_s + MARGIN_S < params.timeout_s  # not 4 x 60 s
        late = results[1:]
        assert all(isinstance(r, SampleError) and r.reason == "timeout" for r in late), late
        assert all("batch_timeout_s=1" in str(r) and "cached" not in str(r) for r in late)
        # cut by the batch, not found bad: the same input is checked again (and cut again), not cached
        again = scorer.score(hangs[:1])[0]
        assert isinstance(again, SampleError) and "cached" not in str(again)
    finally:
        scorer.close()
