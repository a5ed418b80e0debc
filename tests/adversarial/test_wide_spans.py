"""Issue 26 finding 6: many wide, overlapping spans. Before, alignment expanded every (span, token) pair:
eight 4,000-token completions with 5,000 full-width spans each took over 7 GiB and a ``RuntimeError`` out of
``score_batch`` failed the whole batch (1,000 spans: 6 s and 1.7 GiB here). Now alignment is O(spans +
tokens), a sample over ``MAX_SPANS_PER_SAMPLE`` is that sample's error, and a sample whose spans cannot be
aligned costs that sample only."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from adversarial_plugins import WideSpansPlugin

from botgrpo_core.config.models import RewardsConfig
from botgrpo_core.rewards.alignment import (
    MAX_SPANS_PER_SAMPLE,
    AlignmentError,
    align_each,
    align_spans,
    offsets_tensor,
)
from botgrpo_core.rewards.mixture import RewardMixture
from botgrpo_core.signals import Span
from botgrpo_core.signals.manager import PluginManager
from botgrpo_core.signals.testing import make_samples

HERE = Path(__file__).parent

#: Run in a fresh interpreter whose address space is capped at its size after import + 1 GiB: the
#: pair expansion (7 GiB) fails there instead of taking the machine's memory.
_BOUNDED_RUN = r"""
import json, resource, sys
import torch
torch.set_num_threads(1)
from adversarial_plugins import WideSpansPlugin
from botgrpo_core.config.models import RewardsConfig
from botgrpo_core.rewards.mixture import RewardMixture
from botgrpo_core.signals.manager import PluginManager
from botgrpo_core.signals.testing import make_samples

manager = PluginManager(entry_points=[])
manager.register(WideSpansPlugin(), name="wide")
config = RewardsConfig(alpha=1.0, beta=1.0, signals=[{"name": "wide.spans", "params": {"spans": 5000}}])
samples = make_samples(["x" * 4000] * 8)
with open("/proc/self/statm") as f:
    size = int(f.read().split()[0]) * resource.getpagesize()
resource.setrlimit(resource.RLIMIT_AS, (size + (1 << 30), size + (1 << 30)))
start = resource.getrusage(resource.RUSAGE_SELF)
out = RewardMixture(config, manager).score_batch(samples)
end = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({
    "local": out.local[:, [0, 1999, 3999]].tolist(),
    "error_frac": out.metrics["signals/wide.spans/error_frac"],
    "cpu_s": end.ru_utime + end.ru_stime - start.ru_utime - start.ru_stime,
}))
"""


@pytest.mark.timeout(300)
def test_eight_long_completions_with_5000_full_width_spans_score_in_bounded_memory() -> None:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run(
        [sys.executable, "-c", _BOUNDED_RUN], capture_output=True, text=True, env=env, timeout=280
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["error_frac"] == 0.0
    # every token is covered by 5,000 spans of 0.001: 5.0 (float64 sums, then float32)
    assert np.allclose(got["local"], 5.0, rtol=1e-6, atol=0)
    assert got["cpu_s"] < 30  # CPU time (load-proof); the pair expansion took 6 s for 1,000 spans


def test_a_sample_over_the_span_cap_costs_that_sample_and_is_counted() -> None:
    manager = PluginManager(entry_points=[])
    manager.register(WideSpansPlugin(), name="wide")
    config = RewardsConfig(
        alpha=1.0, beta=1.0, signals=[{"name": "wide.spans", "params": {"spans": MAX_SPANS_PER_SAMPLE}}]
    )
    # the "!" adds one span: sample 1 has MAX + 1 spans, the others exactly MAX
    samples = make_samples(["abcd", "ab!d", "abcd"])
    out = RewardMixture(config, manager).score_batch(samples)
    outcome = out.signals["wide.spans"]
    assert outcome.failed == [False, True, False]
    assert outcome.reasons == {"too_many_spans": 1}
    assert "over the cap of 16384" in str(outcome.results[1])
    assert out.metrics["signals/wide.spans/error_frac"] == pytest.approx(1 / 3)
    assert out.local[1].abs().sum() == 0  # on_error: zero
    want = MAX_SPANS_PER_SAMPLE * 0.001
    assert torch.allclose(out.local[0, :4], torch.full((4,), want), rtol=1e-6)


def test_a_row_that_cannot_be_aligned_costs_that_row_only() -> None:
    offsets = offsets_tensor([[(t, t + 1) for t in range(5)]] * 3)
    spans = [[Span(0, 2, 1.0)], [Span(1, 9, 1.0)], [Span(3, 5, -0.5)]]  # row 1 ends past its text
    with pytest.raises(AlignmentError):
        align_spans(spans, offsets, [5, 5, 5])
    values, errors = align_each(spans, offsets, [5, 5, 5])
    assert list(errors) == [1] and isinstance(errors[1], AlignmentError)
    good = align_spans([spans[0], [], spans[2]], offsets, [5, 5, 5])
    assert torch.equal(values, good) and values[1].abs().sum() == 0


def test_overlapping_spans_of_mixed_sizes_match_a_float64_reference() -> None:
    """The difference-table sums against a per-token float64 loop, with values of very different sizes and
    spans that end where others start (tokens no span covers must stay exactly 0)."""
    rng = np.random.default_rng(0)
    T, rows = 60, 6
    offsets = offsets_tensor([[(t, t + 1) for t in range(T)]] * rows)
    spans, want = [], np.zeros((rows, T))
    for r in range(rows):
        row = []
        for _ in range(40):
            a = int(rng.integers(0, T - 10))
            b = int(rng.integers(a, a + 10))
            v = float(np.float32(rng.choice([1e-3, 1.0, 50.0]) * rng.choice([-1, 1])))
            row.append(Span(a, b, v))
            want[r, a : max(b, a + 1)] += v
        spans.append(row)
    got = align_spans(spans, offsets, [T] * rows)
    assert torch.equal(got, torch.from_numpy(want).float())
