"""The HTTP judge's bounds against real misbehaving servers on 127.0.0.1 (no model needed).

A server that accepts and never answers costs one batch deadline or a few attempts (circuit breaker),
not requests x attempts x timeout / concurrency; oversized answers are cut at ``max_response_bytes``;
invalid logprobs, deep JSON and NaN are that sample's error (never a silent -1/+1, never an exception
out of ``score``); lone surrogates in a prompt are sent as U+FFFD. Each outcome is counted in the
scorer's ``metrics()``. Timeouts here are a few tenths of a second.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import time
import tracemalloc
import zlib
from collections.abc import Iterator
from typing import Any

import pytest
from judge_testing.hostile import (
    ScriptedServer,
    SilentServer,
    chat_answer,
    completion_answer,
    text_answer,
)

from botgrpo_core.signals import Sample, SampleError
from botgrpo_judge.params import OutcomeParams, StepsParams
from botgrpo_judge.scorer import JudgeScorer

FAST = {"backoff_base_s": 0.001, "backoff_max_s": 0.002}
#: Six steps in three samples (one step per line).
SAMPLES = [
    Sample("what is 1+1?", "1+1=2\nA: 2"),
    Sample("what is 2+2?", "2+2=4\nA: 4"),
    Sample("what is 3+3?", "3+3=6\nA: 6"),
]
GOOD = completion_answer('{" yes": -0.2231435513142097, " no": -1.6094379124341003}')  # P = 0.8, 0.2


def run(url: str, samples: list[Sample] = SAMPLES, **options: Any) -> tuple[list[Any], dict[str, float]]:
    """Score ``samples`` with ``judge.steps`` over HTTP; results and the scorer's metrics."""
    extra = {k: options.pop(k) for k in ("mode", "chat") if k in options}
    params = StepsParams(
        model="judge", backend="openai", openai={"base_url": url, **FAST, **options}, **extra
    )
    scorer = JudgeScorer(params, "steps")
    try:
        return scorer.score(samples), scorer.metrics()
    finally:
        scorer.close()


@pytest.fixture
def scripted() -> Iterator[ScriptedServer]:
    with ScriptedServer() as server:
        yield server


#: Slack over a configured deadline that a loaded 2-core machine keeps (thread start-up, a busy loop).
MARGIN_S = 10.0


def test_silent_server_costs_one_deadline_not_every_retry(caplog: pytest.LogCaptureFixture) -> None:
    # without the deadline: 6 requests x 5 attempts x 5 s / concurrency 2 = 75 s of waiting
    caplog.set_level(logging.WARNING)
    with SilentServer() as server:
        start = time.perf_counter()
        results, metrics = run(
            server.url, timeout_s=5, max_retries=4, concurrency=2, breaker_failures=0, batch_timeout_s=0.5
        )
        elapsed = time.perf_counter() - start
    assert elapsed < 0.5 + MARGIN_S  # the batch deadline plus slack, far below 75 s
    assert all(isinstance(r, SampleError) and r.reason == "timeout" for r in results)
    assert any("batch_timeout_s=0.5" in str(r) for r in results)
    assert metrics["backend_deadline_cancelled"] >= 1
    assert metrics["backend_requests"] < 6 * 5
    assert metrics["samples_failed"] == 3
    assert "cut by batch_timeout_s=0.5" in caplog.text


def test_a_call_can_bring_its_own_batch_deadline(caplog: pytest.LogCaptureFixture) -> None:
    """``generate(..., batch_timeout_s=...)`` (what jsx.visual passes: what is left of its own deadline)
    replaces the params' deadline for that call only."""
    from botgrpo_judge.backends.openai_http import OpenAIBackend
    from botgrpo_judge.params import JudgeParams

    caplog.set_level(logging.WARNING)
    with SilentServer() as server:
        params = JudgeParams(
            model="judge",
            backend="openai",
            mode="generate",
            openai={"base_url": server.url, **FAST, "timeout_s": 5, "max_retries": 4, "batch_timeout_s": 300},
        )
        backend = OpenAIBackend(params)
        try:
            start = time.perf_counter()
            answers = backend.generate(["a", "b"], batch_timeout_s=0.5)
            elapsed = time.perf_counter() - start
        finally:
            backend.close()
    assert elapsed < 0.5 + MARGIN_S  # the call's deadline, not the params' 300 s
    assert all(isinstance(a, SampleError) and a.reason == "timeout" for a in answers)
    assert all("batch_timeout_s=0.5" in str(a) for a in answers)
    assert "cut by batch_timeout_s=0.5" in caplog.text
    assert params.openai.batch_timeout_s == 300


def test_circuit_breaker_stops_calling_a_silent_server(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    with SilentServer() as server:
        results, metrics = run(
            server.url, timeout_s=0.2, max_retries=4, concurrency=1, breaker_failures=2, breaker_cooldown_s=60
        )
        accepted = server.accepted
    # without the breaker: 6 requests x 5 attempts time out (6 s); with it, two attempts (counted, not timed)
    assert all(isinstance(r, SampleError) for r in results)
    assert metrics["backend_requests"] == 2 and metrics["backend_timeouts"] == 2
    assert metrics["backend_breaker_opened"] == 1
    assert metrics["backend_breaker_refused"] >= 4  # the 4 other requests, and the 2 retries
    assert accepted <= 2
    assert any("circuit breaker is open" in str(r) for r in results)
    assert "refused by the open circuit breaker" in caplog.text


def test_breaker_probes_after_the_cooldown_and_closes(scripted: ScriptedServer) -> None:
    scripted.stall()
    options = {"timeout_s": 0.2, "max_retries": 0, "concurrency": 6, "breaker_failures": 1}
    params = StepsParams(
        model="judge",
        backend="openai",
        openai={"base_url": scripted.url, **FAST, **options, "breaker_cooldown_s": 60.0},
    )
    scorer = JudgeScorer(params, "steps")
    skipped = [0.0]  # the breaker's clock runs this far ahead of the real one: no race with a sleep
    scorer.backend._breaker._clock = lambda: time.monotonic() + skipped[0]
    try:
        first = scorer.score(SAMPLES[:1])
        assert isinstance(first[0], SampleError)
        refused = scorer.score(SAMPLES[1:2])  # within the cooldown: not sent
        assert isinstance(refused[0], SampleError) and "circuit breaker is open" in str(refused[0])
        sent = len(scripted.received)
        scripted.reply(GOOD)
        skipped[0] = 61.0  # past the cooldown: one probe goes, the others wait for it
        healthy = scorer.score(SAMPLES)
        metrics = scorer.metrics()
    finally:
        scorer.close()
    assert sent == 2  # the first sample's two steps, nothing while open
    assert all(isinstance(r, list) and [s.value for s in r] == pytest.approx([0.6, 0.6]) for r in healthy)
    assert metrics["backend_breaker_opened"] == 1


@pytest.mark.parametrize("declare_length", [True, False])
def test_oversized_answer_is_cut_at_the_cap(scripted: ScriptedServer, declare_length: bool) -> None:
    size = 200 * 1024 * 1024
    scripted.stream(size, declare_length=declare_length)
    results, metrics = run(scripted.url, SAMPLES[:1], max_response_bytes=64 * 1024, timeout_s=30)
    # cut by the cap (its message), not by timeout_s: no wall-clock bound needed
    assert isinstance(results[0], SampleError) and "max_response_bytes=65536" in str(results[0])
    assert metrics["backend_oversized"] == 2 and metrics.get("backend_retries", 0) == 0  # not retried
    assert scripted.bytes_sent < 64 * 1024 * 1024  # the client stopped reading long before 200 MB


BAD_TABLES = {
    "nan": '{" yes": NaN, " no": -1.0}',
    "infinity": '{" yes": Infinity, " no": -1.0}',
    "minus_infinity": '{" yes": -0.1, " no": -Infinity}',
    "positive": '{" yes": 0.5, " no": -1.0}',
    "thousand": '{" yes": 1000, " no": -1.0}',
    "overflowing_float": '{" yes": 1e400, " no": -1.0}',
    "huge_int": '{" yes": 1' + "0" * 400 + ', " no": -1.0}',
    "string": '{" yes": "-0.5", " no": -1.0}',
    "bool": '{" yes": true, " no": -1.0}',
    "null": '{" yes": null, " no": -1.0}',
    "sum_over_one": '{" yes": 0.0, " Yes": 0.0, " no": -1.0}',
}


@pytest.mark.parametrize("name", sorted(BAD_TABLES))
def test_invalid_logprobs_are_that_samples_error(scripted: ScriptedServer, name: str) -> None:
    scripted.reply(completion_answer(BAD_TABLES[name]))
    results, metrics = run(scripted.url, SAMPLES[:1], max_retries=2)
    failed = results[0]
    assert isinstance(failed, SampleError), f"{name}: scored {failed!r}"
    assert "logprob" in str(failed) or "malformed" in str(failed) or "JSON" in str(failed)
    assert metrics["samples_failed"] == 1
    # NaN / Infinity are not JSON (a malformed answer, retried); the rest are invalid logprobs, not retried
    if name in ("nan", "infinity", "minus_infinity"):
        assert metrics["backend_malformed"] == 2 * 3 and "not valid JSON" in str(failed)
    else:
        assert metrics["backend_invalid_logprobs"] == 2 and metrics.get("backend_retries", 0) == 0


def test_invalid_chat_logprob_is_an_error(scripted: ScriptedServer) -> None:
    scripted.reply(chat_answer('[{"token": " yes", "logprob": "high"}]'))
    results, metrics = run(scripted.url, SAMPLES[:1], chat=True)
    assert isinstance(results[0], SampleError) and "'high' is not a number" in str(results[0])
    assert metrics["backend_invalid_logprobs"] == 2


def test_valid_answer_with_rounding_slack_scores(scripted: ScriptedServer) -> None:
    scripted.reply(completion_answer('{" yes": 1e-9, " no": -30}'))  # a server rounding log(1) up
    results, _ = run(scripted.url, SAMPLES[:1])
    spans = results[0]
    assert isinstance(spans, list) and spans[0].value == pytest.approx(1 - math.exp(-30))


def test_deep_json_answer_is_malformed_not_recursion(scripted: ScriptedServer) -> None:
    scripted.reply(b'{"choices": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")
    results, metrics = run(scripted.url, SAMPLES[:1], max_retries=0)
    assert isinstance(results[0], SampleError) and "deeper than 64" in str(results[0])
    assert metrics["backend_malformed"] == 2


@pytest.mark.parametrize(
    "verdict",
    ["[" * 5000, "[" * 5000 + "]" * 5000, '{"verdict": ' * 20_000, '{"a":' * 100_000],
    ids=["open-brackets", "deep-array", "deep-objects", "many-objects"],
)
def test_pathological_verdicts_are_unparsed(scripted: ScriptedServer, verdict: str) -> None:
    scripted.reply(text_answer(json.dumps(verdict)))
    start = time.process_time()  # CPU time: what a parser gone quadratic would spend, whatever the load
    results, metrics = run(scripted.url, SAMPLES[:1], mode="generate")
    assert time.process_time() - start < 3
    spans = results[0]
    assert isinstance(spans, list) and [s.value for s in spans] == [0.0, 0.0]  # unparsed_value
    assert all(s.meta is not None and s.meta["parsed"] is False for s in spans)
    assert metrics["verdicts_unparsed"] == 2


def test_outcome_verdict_past_float_range_is_unparsed(scripted: ScriptedServer) -> None:
    scripted.reply(text_answer(json.dumps('{"score": 1' + "0" * 400 + "}")))  # OverflowError before
    params = OutcomeParams(
        model="judge", backend="openai", mode="generate", openai={"base_url": scripted.url}
    )
    scorer = JudgeScorer(params, "outcome")
    try:
        assert scorer.score(SAMPLES[:2]) == [0.0, 0.0]  # unparsed_value
        assert scorer.metrics()["verdicts_unparsed"] == 2
    finally:
        scorer.close()


def test_lone_surrogates_are_sent_as_replacement_characters(scripted: ScriptedServer) -> None:
    scripted.reply(GOOD)
    samples = [Sample("what is \ud800 1+1?", "1+1=2 \udcff\nA: 2"), Sample("a pair \ud83d\ude00?", "ok")]
    results, metrics = run(scripted.url, samples)
    assert all(isinstance(r, list) and r for r in results)
    prompts = [json.loads(body.decode("utf-8"))["prompt"] for body in scripted.received]  # valid UTF-8
    assert any("what is \ufffd 1+1?" in p and "1+1=2 \ufffd" in p for p in prompts)
    assert any("a pair \U0001f600?" in p for p in prompts)  # a split pair is joined again
    assert metrics["backend_surrogates_replaced"] == len(scripted.received)


@functools.lru_cache(maxsize=1)
def _zeros_gzip(mib: int) -> bytes:
    """``mib`` MiB of zeros, gzip-compressed (~1 KB per MiB)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = bytes(1 << 20)
    return b"".join([packer.compress(block) for _ in range(mib)] + [packer.flush()])


def _gzip(data: bytes) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    return packer.compress(data) + packer.flush()


def _peak_while(fn: Any) -> tuple[Any, int]:
    """``fn()``'s result and the peak of Python's traced memory meanwhile (every thread's, in bytes)."""
    tracemalloc.start()
    try:
        return fn(), tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


BOMB_MIB = 128


def test_a_doubly_gzipped_bomb_is_refused_before_inflating(scripted: ScriptedServer) -> None:
    """Issue 26 finding 5: ``Content-Encoding: gzip, gzip`` on a ~1 KB body inflating to 128 MiB. Before,
    httpx inflated both layers in full (2 GiB in the report), then the cap refused it; now more than one
    encoding is refused unread, not retried, and memory stays flat."""
    scripted.reply(_gzip(_zeros_gzip(BOMB_MIB)), encoding="gzip, gzip")
    (results, metrics), peak = _peak_while(
        lambda: run(scripted.url, SAMPLES[:1], max_response_bytes=64 * 1024, max_retries=2)
    )
    assert isinstance(results[0], SampleError) and "encoded 2 times" in str(results[0]), results[0]
    assert metrics["backend_bad_encoding"] == 2 and metrics.get("backend_retries", 0) == 0
    assert peak < 16 * 1024 * 1024, peak


@pytest.mark.parametrize("encoding", ["gzip", "x-gzip"])
def test_a_gzip_bomb_is_cut_at_the_cap_while_it_inflates(scripted: ScriptedServer, encoding: str) -> None:
    """One gzip layer inflating to 128 MiB: the inflated bytes count against max_response_bytes as they come,
    so the answer (~130 KB on the wire) is cut at 256 KiB and no more than a step of it is ever held."""
    scripted.reply(_zeros_gzip(BOMB_MIB), encoding=encoding)
    (results, metrics), peak = _peak_while(
        lambda: run(scripted.url, SAMPLES[:1], max_response_bytes=256 * 1024)
    )
    assert isinstance(results[0], SampleError), results[0]
    assert "inflated answer runs past max_response_bytes=262144" in str(results[0])
    assert metrics["backend_oversized"] == 2 and metrics.get("backend_retries", 0) == 0
    assert peak < 16 * 1024 * 1024, peak


def test_a_gzip_or_deflate_answer_is_decoded_and_scored(scripted: ScriptedServer) -> None:
    for encoding, body in (("gzip", _gzip(GOOD)), ("deflate", zlib.compress(GOOD)), ("identity", GOOD)):
        scripted.reply(body, encoding=encoding)
        results, _ = run(scripted.url, SAMPLES[:1])
        assert [s.value for s in results[0]] == pytest.approx([0.6, 0.6]), (encoding, results[0])


@pytest.mark.parametrize("encoding", ["br", "gzip, identity, deflate", "compress"])
def test_other_or_stacked_encodings_are_refused(scripted: ScriptedServer, encoding: str) -> None:
    scripted.reply(_gzip(GOOD), encoding=encoding)
    results, metrics = run(scripted.url, SAMPLES[:1])
    assert isinstance(results[0], SampleError) and "encod" in str(results[0])
    assert metrics["backend_bad_encoding"] == 2


def test_a_corrupt_gzip_answer_is_malformed_and_retried(scripted: ScriptedServer) -> None:
    scripted.reply(b"\x1f\x8b\x08\x00" + b"\xff" * 64, encoding="gzip")
    results, metrics = run(scripted.url, SAMPLES[:1], max_retries=1)
    assert isinstance(results[0], SampleError) and "does not inflate" in str(results[0])
    assert metrics["backend_malformed"] == 2 * 2
