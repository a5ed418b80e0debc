"""Untrusted text in the trainer's own process (issue 17): span values a plugin got from model output, and
completions cut mid-character, on the real code paths (Span, the reward mixture, the sample decoder)."""

from __future__ import annotations

import math
import time
from importlib.metadata import EntryPoint

import numpy as np
import pytest

from botgrpo_core.config.models import RewardsConfig
from botgrpo_core.engine.tiny import byte_level_bpe_tokenizer
from botgrpo_core.rewards.mixture import RewardMixture
from botgrpo_core.rewards.samples import decode_samples
from botgrpo_core.signals import SampleError, Span
from botgrpo_core.signals.manager import PluginManager
from botgrpo_core.signals.testing import make_samples


@pytest.mark.parametrize(
    ("value", "error", "message"),
    [
        ("-1", TypeError, r"Span\.value must be a real number, got str '-1'"),
        (None, TypeError, r"Span\.value must be a real number, got NoneType"),
        (True, TypeError, r"Span\.value must be a real number, got bool"),
        ([1.0], TypeError, r"got list"),
        ("x" * 10_000, TypeError, r"got str 'xxx.*\.\.\.; convert"),  # the message stays short
        (float("nan"), ValueError, r"value must be finite, got nan; return a SampleError"),
        (float("inf"), ValueError, r"value must be finite, got inf"),
        (-math.inf, ValueError, r"got -inf"),
        (10**400, ValueError, r"value must be finite"),
        (np.float64("nan"), ValueError, r"value must be finite"),
    ],
)
def test_span_rejects_values_that_are_not_finite_numbers(value: object, error: type, message: str) -> None:
    with pytest.raises(error, match=message) as info:
        Span(0, 1, value)  # type: ignore[arg-type]
    assert len(str(info.value)) < 300


def test_span_offsets_must_be_numbers() -> None:
    with pytest.raises(TypeError, match=r"Span\.start must be a real number, got str"):
        Span("0", 1, 1.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"Span\.end must be a real number, got NoneType"):
        Span(0, None, 1.0)  # type: ignore[arg-type]


def test_span_keeps_numpy_and_plain_numbers() -> None:
    span = Span(np.int64(1), np.int32(3), np.float32(-0.5))
    assert (span.start, span.end, float(span.value)) == (1, 3, -0.5)
    assert Span(0, 2, -1).value == -1 and Span(0, 2, 0.25, {"why": "x"}).meta == {"why": "x"}


def test_a_string_span_value_costs_one_sample_in_the_mixture() -> None:
    """Was accepted (numpy parsed "-1"); now that sample is an error under the signal's on_error policy,
    the rest of the batch is scored, and the token rewards stay within the declared bounds."""
    manager = PluginManager(
        entry_points=[EntryPoint(name="text", value="adversarial_plugins:TextPlugin", group="botgrpo")]
    )
    rewards = RewardsConfig(
        alpha=1.0, beta=0.5, signals=[{"name": "core.exact_answer"}, {"name": "text.spans"}]
    )
    out = RewardMixture(rewards, manager).score_batch(
        make_samples(["ok", "str", "nan", "fine"], rows={"answer": "1"})
    )
    ok, text, nan, fine = out.signals["text.spans"].results
    assert isinstance(text, SampleError) and "Span.value must be a real number, got str '-1'" in str(text)
    assert isinstance(nan, SampleError) and "value must be finite, got nan" in str(nan)
    assert [(s.start, s.end, s.value) for s in ok] == [(0, 1, -1.0)] and len(fine) == 1
    assert out.token_rewards[[1, 2]].abs().sum() == 0  # on_error: zero
    assert out.token_rewards[[0, 3], 0].tolist() == [-0.5, -0.5]
    assert out.metrics["signals/text.spans/error_frac"] == pytest.approx(0.5)


def test_completions_cut_mid_character_decode_in_linear_time() -> None:
    """A byte-level BPE completion of 4,096 tokens with many cut characters (U+FFFD): one decode call per
    completion (the old fallback decoded every prefix: 2.2 s per sample at 4,096 tokens)."""
    tokenizer = byte_level_bpe_tokenizer()
    ids = tokenizer.encode("字符串中文混合 text 🙂🙂 end 東京 → ∞ " * 200, add_special_tokens=False)
    cut = [t for k, t in enumerate(ids) if k % 7 != 3][:4096]  # every 7th token gone: ill-formed bytes

    calls = 0
    decode = tokenizer.decode

    def counting_decode(*args, **kwargs):
        nonlocal calls
        calls += 1
        return decode(*args, **kwargs)

    tokenizer.decode = counting_decode  # type: ignore[method-assign]
    start = time.process_time()  # CPU time: the work, whatever else the machine runs (one decode: linear)
    (sample,) = decode_samples(tokenizer, ["p"], [cut])
    elapsed = time.process_time() - start
    assert calls == 1 and elapsed < 1.0, (calls, elapsed)
    assert sample.completion == decode(cut) and sample.completion.count("\ufffd") > 400
    ends = sample.offsets.array[:, 1]
    assert len(sample.offsets) == 4096 and ends[-1] == len(sample.completion)
    assert np.all(np.diff(ends) >= 0) and np.all(np.diff(sample.offsets.array[:, 0]) >= 0)
