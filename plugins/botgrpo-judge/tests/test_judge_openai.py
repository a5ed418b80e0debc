"""The ``openai`` backend against a real OpenAI-compatible server on loopback serving the tiny judge.

Same scores as the in-process backend; faults (stall, 500, 429, malformed JSON, missing logprobs, dropped
connection, wrong key) are retried or become that sample's ``SampleError`` while the batch goes on; the
core's ``on_error`` policy then does what it documents. Backoff delays are tiny (no sleeps here).
"""

from __future__ import annotations

import logging
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
from judge_data import NO, SAMPLES, YES
from judge_testing.server import JudgeServer

from botgrpo_core.signals import Sample, SampleError
from botgrpo_judge.backends.openai_http import OpenAIBackend, backoff_delay
from botgrpo_judge.params import StepsParams
from botgrpo_judge.scorer import JudgeScorer

FAST = {"backoff_base_s": 0.001, "backoff_max_s": 0.002}


@pytest.fixture(scope="module")
def server(judge: tuple[Any, Any]) -> Iterator[JudgeServer]:
    model, tokenizer = judge
    with JudgeServer(model, tokenizer, model_name="tiny-judge") as srv:
        yield srv


@pytest.fixture(autouse=True)
def _no_faults(server: JudgeServer) -> Iterator[None]:
    server.clear_faults()
    yield
    server.clear_faults()


def http_params(server: JudgeServer, judge: Any, **kwargs: Any) -> StepsParams:
    openai = {"base_url": server.url, "top_logprobs": len(judge[1]), **FAST, **kwargs.pop("openai", {})}
    return StepsParams(
        model="tiny-judge", backend="openai", yes_tokens=YES, no_tokens=NO, openai=openai, **kwargs
    )


def score(params: StepsParams, samples: list[Sample] = SAMPLES) -> tuple[list[Any], dict[str, float]]:
    scorer = JudgeScorer(params, "steps")
    try:
        return scorer.score(samples), scorer.metrics()
    finally:
        scorer.close()


def values(results: list[Any]) -> list[list[float] | None]:
    return [None if isinstance(r, SampleError) else [s.value for s in r] for r in results]


def assert_close(got: list[Any], want: list[Any]) -> None:
    assert len(got) == len(want)
    for a, b in zip(got, want):
        assert a == pytest.approx(b, abs=1e-5)


@pytest.fixture(scope="module")
def local_values(judge_dir: Path) -> dict[str, list[Any]]:
    """The transformers backend's scores, per layout."""
    return {
        layout: values(
            JudgeScorer(
                StepsParams(model=str(judge_dir), yes_tokens=YES, no_tokens=NO, layout=layout), "steps"
            ).score(SAMPLES)
        )
        for layout in ("prefix", "tagged")
    }


@pytest.mark.parametrize("layout", ["prefix", "tagged"])
def test_http_scores_equal_transformers_backend(
    server: JudgeServer, judge: Any, local_values: Any, layout: str
) -> None:
    results, metrics = score(http_params(server, judge, layout=layout, openai={"concurrency": 4}))
    assert_close(values(results), local_values[layout])
    assert metrics["backend_requests"] == 11  # 12 steps, one shared by two rollouts
    assert server.max_in_flight <= 4  # the concurrency bound holds


def test_chat_endpoint_reads_first_assistant_token(server: JudgeServer, judge: Any) -> None:
    model, tokenizer = judge
    results, _ = score(http_params(server, judge, chat=True), SAMPLES[:1])
    spans = results[0]
    assert isinstance(spans, list) and len(spans) == 3
    yes = [tokenizer.encode(w, add_special_tokens=False)[0] for w in YES]
    no = [tokenizer.encode(w, add_special_tokens=False)[0] for w in NO]
    lines = SAMPLES[0].completion.split("\n")
    for k, span in enumerate(spans):
        prompt = f"Question: {SAMPLES[0].prompt}\nSolution:\n" + "\n".join(lines[: k + 1])
        prompt += "\nIs the step above correct? Answer:"
        text = tokenizer.apply_chat_template(
            [{"role": "user", "content": prompt}], tokenize=False, add_generation_prompt=True
        )
        with torch.no_grad():
            probs = (
                model(torch.tensor([tokenizer.encode(text, add_special_tokens=False)]))
                .logits[0, -1]
                .double()
                .softmax(-1)
            )
        assert span.value == pytest.approx(float(probs[yes].sum() - probs[no].sum()), abs=1e-5)


def test_small_top_k_counts_missing_tokens_as_zero(
    server: JudgeServer, judge: Any, local_values: Any
) -> None:
    results, _ = score(http_params(server, judge, openai={"top_logprobs": 1}), SAMPLES[:1])
    # with top-1 only the likeliest token is seen: its own probability if it is a yes/no token, else 0
    spans = results[0]
    assert isinstance(spans, list)
    for span in spans:
        assert (span.meta["p_yes"] == 0.0) or (span.meta["p_no"] == 0.0)


@pytest.mark.parametrize(
    ("fault", "times"), [("500", 2), ("429", 2), ("malformed", 1), ("close", 1), ("no_logprobs", 1)]
)
def test_transient_faults_are_retried(
    server: JudgeServer, judge: Any, local_values: Any, fault: str, times: int
) -> None:
    before = server.counts[f"fault_{fault}"]
    server.add_fault(fault, match="what is 2+2?", times=times)
    results, metrics = score(http_params(server, judge, openai={"max_retries": 2}))
    assert_close(values(results), local_values["prefix"])
    assert metrics["backend_retries"] == times
    assert server.counts[f"fault_{fault}"] - before == times


@pytest.mark.parametrize(
    ("fault", "reason", "message"),
    [
        ("500", "error", "HTTP 500"),
        ("429", "error", "HTTP 429"),
        ("malformed", "error", "malformed"),
        ("no_logprobs", "error", "no top logprobs"),
        ("close", "error", "connection failed"),
        ("stall", "timeout", "timeout_s=0.5"),
    ],
)
def test_persistent_fault_fails_one_sample_and_the_batch_goes_on(
    server: JudgeServer, judge: Any, local_values: Any, fault: str, reason: str, message: str
) -> None:
    before = server.counts[f"fault_{fault}"]
    server.add_fault(fault, match="what is 2+2?")
    # a stalled server costs 2 x timeout_s of waiting; the other faults answer at once
    timeout = 0.5 if fault == "stall" else 10.0
    results, metrics = score(http_params(server, judge, openai={"max_retries": 1, "timeout_s": timeout}))
    failed = results[1]
    assert isinstance(failed, SampleError) and failed.reason == reason and message in str(failed)
    assert "after 2 attempts" in str(failed)
    assert server.counts[f"fault_{fault}"] - before == 4  # 2 steps x (1 try + 1 retry)
    others = [v for i, v in enumerate(values(results)) if i != 1]
    expected = [v for i, v in enumerate(local_values["prefix"]) if i != 1]
    assert_close(others, expected)
    assert metrics["samples_failed"] == 1


def test_backoff_bounds_and_retry_after() -> None:
    rng = random.Random(0)
    for attempt in range(6):
        cap = min(8.0, 0.5 * 2**attempt)
        delay = backoff_delay(attempt, 0.5, 8.0, rng, None)
        assert cap / 2 <= delay <= cap
    assert backoff_delay(0, 0.5, 8.0, rng, 3.0) == 3.0  # Retry-After honoured
    assert backoff_delay(0, 0.5, 8.0, rng, 60.0) == 8.0  # ... up to the cap
    assert 4.0 <= backoff_delay(5000, 0.5, 8.0, rng, None) <= 8.0  # no OverflowError after many retries
    delays = {backoff_delay(3, 0.5, 8.0, rng, None) for _ in range(20)}
    assert len(delays) > 1  # jitter


def test_api_key_from_env_and_never_shown(
    judge: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    secret = "sk-test-0123456789abcdef"
    model, tokenizer = judge
    caplog.set_level(logging.DEBUG)
    with JudgeServer(model, tokenizer, api_key=secret) as keyed:
        monkeypatch.setenv("JUDGE_TEST_KEY", secret)
        params = http_params(keyed, judge, openai={"api_key_env": "JUDGE_TEST_KEY"})
        results, _ = score(params, SAMPLES[:2])
        assert all(isinstance(r, list) and r for r in results)
        monkeypatch.setenv("JUDGE_TEST_KEY", "sk-wrong")
        before = keyed.counts["requests"]
        rejected, metrics = score(params, SAMPLES[:1])
        assert isinstance(rejected[0], SampleError) and "HTTP 401" in str(rejected[0])
        assert keyed.counts["requests"] - before == 3  # 3 steps, a 401 is not retried
        assert metrics["backend_http_401"] == 3
        backend = OpenAIBackend(params)
        shown = repr(backend) + params.model_dump_json() + str(rejected[0]) + caplog.text
        backend.close()
    assert secret not in shown and "sk-wrong" not in shown
    monkeypatch.delenv("JUDGE_TEST_KEY")
    with pytest.raises(ValueError, match="JUDGE_TEST_KEY"):
        OpenAIBackend(params)


def test_on_error_policies_through_the_core_mixture(server: JudgeServer, judge: Any) -> None:
    from botgrpo_core.config.models import RewardsConfig
    from botgrpo_core.rewards.mixture import RewardMixture
    from botgrpo_core.rewards.runner import SignalError
    from botgrpo_core.signals.manager import PluginManager
    from botgrpo_core.signals.testing import make_samples

    server.add_fault("500", match="what is 2+2?")
    params = http_params(server, judge, openai={"max_retries": 0}).model_dump(mode="json")
    samples = make_samples([s.completion for s in SAMPLES[:3]], prompt=[s.prompt for s in SAMPLES[:3]])
    manager = PluginManager(allowlist=["judge"])
    outputs = {}
    for policy in ("zero", "nan"):
        config = RewardsConfig(
            alpha=0.0, beta=1.0, signals=[{"name": "judge.steps", "params": params, "on_error": policy}]
        )
        with RewardMixture(config, manager) as mixture:
            outputs[policy] = mixture.score_batch(samples)
    zero, nan = outputs["zero"], outputs["nan"]
    assert zero.signals["judge.steps"].failed == [False, True, False]
    assert zero.signals["judge.steps"].reasons["error"] == 1
    assert torch.all(zero.token_rewards[1] == 0) and torch.any(zero.token_rewards[0] != 0)
    assert zero.valid.tolist() == [True, True, True]
    assert nan.valid.tolist() == [True, False, True]
    assert torch.isnan(nan.token_rewards[1][nan.mask[1]]).all()
    config = RewardsConfig(
        alpha=0.0, beta=1.0, signals=[{"name": "judge.steps", "params": params, "on_error": "raise"}]
    )
    with RewardMixture(config, manager) as mixture, pytest.raises(SignalError, match="HTTP 500"):
        mixture.score_batch(samples)


def test_server_stops_cleanly_even_if_never_started(judge: Any) -> None:
    model, tokenizer = judge
    JudgeServer(model, tokenizer).stop()  # returns (shutdown() would wait for a loop that never ran)
