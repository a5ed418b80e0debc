"""Issue 26 finding 7: ``jsx.renders`` has a batch deadline. Each render was bounded (``timeout_s``) but the
batch was not: 32 hanging components took 87 s at 2 in parallel. Now ``batch_timeout_s`` bounds the batch:
renders still running then are killed, the others are not started, and all of them time out (renders 0)."""

from __future__ import annotations

import time

import pytest

from botgrpo_core.signals import Sample, SampleError
from botgrpo_jsx.params import RendersParams
from botgrpo_jsx.plugin import make_renders

OK = "```jsx\nexport default function App() {\n  return <p>fine</p>;\n}\n```"
HANG = "```jsx\nexport default function App() {\n  for (;;) {}\n  return <p>never</p>;\n}\n```"
#: Slack over the configured deadline that a loaded 2-core machine keeps (node start-up, the kills).
MARGIN_S = 10.0


@pytest.mark.timeout(180)
def test_hanging_components_cost_one_batch_deadline_not_every_timeout(sandbox_ready: None) -> None:
    hanging = 16  # without the batch deadline: 16 x 4 s / 2 in parallel = 32 s
    params = RendersParams(timeout_s=4.0, batch_timeout_s=3.0, memory_mb=768, parallel=2)
    scorer = make_renders(params)
    try:
        samples = [Sample("", OK)] + [Sample("", HANG + "\n" * k) for k in range(hanging)]
        start = time.monotonic()
        verdicts = scorer.score(samples)
        elapsed = time.monotonic() - start
        replies = [r.get("reply") for r in scorer.renderer.render(samples)]  # cached: the same renders
    finally:
        scorer.close()
    assert verdicts == [1.0] + [0.0] * hanging  # the component that renders still counts
    assert elapsed < params.batch_timeout_s + MARGIN_S < hanging * params.timeout_s / params.parallel
    late = [r for r in replies[1:] if isinstance(r, SampleError)]
    assert len(late) == hanging and all(r.reason == "timeout" for r in late)
    assert any("batch_timeout_s=3 before this render started" in str(r) for r in late)


def test_the_batch_deadline_is_a_checked_param() -> None:
    assert RendersParams().batch_timeout_s == 60.0
    with pytest.raises(ValueError, match="batch_timeout_s"):
        RendersParams(batch_timeout_s=0)
