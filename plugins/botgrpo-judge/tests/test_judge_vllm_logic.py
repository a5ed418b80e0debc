"""The vLLM backend's logic, checked without vLLM (it runs on GPUs only; see scripts/gpu_check_vllm.py).

The step prompts it sends are token ids from ``TokenizedChain.step_ids``; scoring each of them in its own
forward pass must reproduce the one-pass tree scores of the transformers backend, and the probability
read-out from a top-k table must sum the right tokens.
"""

from __future__ import annotations

import importlib.util
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import torch
from judge_data import NO, SAMPLES, YES

from botgrpo_judge.backends.base import probs_from_logprobs
from botgrpo_judge.backends.vllm_engine import step_requests
from botgrpo_judge.params import StepsParams
from botgrpo_judge.scorer import JudgeScorer


@dataclass
class Logprob:
    """The fields of ``vllm.logprobs.Logprob`` the backend reads."""

    logprob: float
    rank: int | None = None
    decoded_token: str | None = None


@pytest.mark.parametrize("layout", ["prefix", "tagged"])
def test_step_prompts_scored_separately_equal_one_pass(judge_dir: Path, judge: Any, layout: str) -> None:
    model, tokenizer = judge
    params = StepsParams(model=str(judge_dir), yes_tokens=YES, no_tokens=NO, layout=layout)
    scorer = JudgeScorer(params, "steps")
    one_pass = scorer.score(SAMPLES)
    chains = [scorer._chain(scorer._prepare(s)) for s in SAMPLES]  # type: ignore[arg-type]
    jobs, errors = step_requests(tokenizer, chains, None, max_length=4096)
    assert not errors and len(jobs) == sum(c.num_steps for c in chains)
    yes, no = scorer.backend.yes_ids, scorer.backend.no_ids
    for i, k, ids in jobs:
        assert ids == tokenizer(chains[i].step_prompt(k))["input_ids"]  # what a server would tokenize
        with torch.no_grad():
            logprobs = model(torch.tensor([ids])).logits[0, -1].double().log_softmax(-1)
        top = torch.topk(logprobs, logprobs.numel())  # the whole vocabulary, as vLLM's top-k table
        table = {
            int(t): Logprob(float(v), rank + 1) for rank, (v, t) in enumerate(zip(top.values, top.indices))
        }
        p_yes, p_no = probs_from_logprobs(table, yes, no)
        assert p_yes == pytest.approx(float(logprobs[yes].exp().sum()), abs=1e-9)
        span = one_pass[i][k]  # type: ignore[index]
        assert span.value == pytest.approx(p_yes - p_no, abs=1e-5)
        # a top-2 table misses tokens: they count as probability 0, never more than the exact value
        top2 = dict(list(table.items())[:2])
        assert probs_from_logprobs(top2, yes, no)[0] <= p_yes + 1e-12


def test_probs_from_logprobs_by_id_and_text() -> None:
    table = {5: Logprob(math.log(0.5)), 7: Logprob(math.log(0.2)), 9: Logprob(math.log(0.1))}
    assert probs_from_logprobs(table, [5, 9], [7, 11]) == pytest.approx((0.6, 0.2))
    by_text = {" yes": math.log(0.3), " no": math.log(0.6), "maybe": math.log(0.1)}
    assert probs_from_logprobs(by_text, [" yes", " Yes"], [" no"]) == pytest.approx((0.3, 0.6))


def test_step_requests_respect_wanted_and_max_length(judge: Any) -> None:
    from botgrpo_judge.chains import Chain

    _, tokenizer = judge
    chain = Chain("Q: 2+2?\n", ("2+2=4", "\nA: 4"), ("\nok?", "\nok?"))
    jobs, _ = step_requests(tokenizer, [chain], [{1}], max_length=4096)
    assert [(i, k) for i, k, _ in jobs] == [(0, 1)]
    short = len(tokenizer(chain.step_prompt(0))["input_ids"])
    jobs, _ = step_requests(tokenizer, [chain], None, max_length=short)
    assert [(i, k) for i, k, _ in jobs] == [(0, 0)]  # step 2's prompt is longer: left out


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vLLM is installed here")
def test_vllm_backend_without_vllm_says_how_to_install(judge_dir: Path) -> None:
    with pytest.raises(ValueError, match=r"botgrpo-judge\[vllm\]"):
        JudgeScorer(StepsParams(model=str(judge_dir), backend="vllm"), "steps")
