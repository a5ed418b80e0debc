"""``generate`` mode: the judge writes a verdict, the tolerant parser scores it.

A tiny judge taught (in a few seconds) to answer every prompt with ``Step 1: correct / Step 2: incorrect``
gives known verdicts end to end; the untaught judge's babble checks the unparsed path. Generated texts are
checked against a manual greedy decoding loop, and the ``openai`` backend against the in-process one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from judge_data import TAUGHT_ANSWER
from judge_testing.server import serve

from botgrpo_core.signals import Sample
from botgrpo_judge import templates
from botgrpo_judge.params import OutcomeParams, StepsParams
from botgrpo_judge.scorer import JudgeScorer
from botgrpo_judge.verdict import parse_step_verdicts, parse_verdict

SAMPLES = [
    Sample("what is 17+5-8?", "17+5=22\n22-8=14"),
    Sample("what is 2+2?", "2+2=4\n4=4"),
]


def greedy(model: Any, tokenizer: Any, prompt: str, max_new_tokens: int) -> str:
    """Reference decoding: a full forward pass per new token, argmax, stop at EOS."""
    ids = tokenizer(prompt)["input_ids"]
    new: list[int] = []
    with torch.no_grad():
        for _ in range(max_new_tokens):
            token = int(model(torch.tensor([ids + new])).logits[0, -1].argmax())
            new.append(token)
            if token == tokenizer.eos_token_id:
                break
    return tokenizer.decode(new, skip_special_tokens=True)


@pytest.fixture(scope="module")
def taught(taught_judge_dir: Path) -> tuple[Any, Any]:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    return AutoModelForCausalLM.from_pretrained(taught_judge_dir).eval(), AutoTokenizer.from_pretrained(
        taught_judge_dir
    )


def test_steps_judged_together(taught_judge_dir: Path) -> None:
    scorer = JudgeScorer(StepsParams(model=str(taught_judge_dir), mode="generate"), "steps")
    results = scorer.score(SAMPLES)
    for spans in results:
        assert isinstance(spans, list)
        assert [s.value for s in spans] == [1.0, -1.0]  # "Step 1: correct\nStep 2: incorrect"
        assert spans[0].meta is not None and spans[0].meta["verdict"] == TAUGHT_ANSWER
    assert scorer.metrics()["verdicts_unparsed"] == 0


def test_steps_judged_one_by_one_and_range(taught_judge_dir: Path, taught: Any) -> None:
    params = StepsParams(model=str(taught_judge_dir), mode="generate", generate_per="step", range=(0, 1))
    scorer = JudgeScorer(params, "steps")
    spans = scorer.score(SAMPLES[:1])[0]
    assert isinstance(spans, list)
    model, tokenizer = taught
    for k, span in enumerate(spans):
        prompt = templates.render(
            templates.GENERATE_STEP_ONE,
            question=SAMPLES[0].prompt,
            steps=SAMPLES[0].completion.split("\n")[: k + 1],
            step_index=k + 1,
        )
        text = greedy(model, tokenizer, prompt, params.max_new_tokens)
        raw = parse_verdict(text)
        assert raw is not None and span.value == (raw + 1) / 2
    assert scorer.metrics()["judge_calls"] == 2


def test_outcome_generate(taught_judge_dir: Path) -> None:
    scorer = JudgeScorer(OutcomeParams(model=str(taught_judge_dir), mode="generate"), "outcome")
    # one verdict read from "Step 1: correct\nStep 2: incorrect": the last verdict word, incorrect
    assert scorer.score(SAMPLES) == [-1.0, -1.0]


def test_generated_text_matches_manual_greedy_and_unparsed_are_counted(judge_dir: Path, judge: Any) -> None:
    params = StepsParams(model=str(judge_dir), mode="generate", max_new_tokens=12, unparsed_value=-0.5)
    scorer = JudgeScorer(params, "steps")
    results = scorer.score(SAMPLES)
    model, tokenizer = judge
    unparsed = 0
    for sample, spans in zip(SAMPLES, results):
        assert isinstance(spans, list)
        steps = sample.completion.split("\n")
        prompt = templates.render(templates.GENERATE_STEPS_ALL, question=sample.prompt, steps=steps)
        text = greedy(model, tokenizer, prompt, 12)
        raws = parse_step_verdicts(text, len(steps))
        unparsed += sum(r is None for r in raws)
        assert [s.value for s in spans] == [-0.5 if r is None else r for r in raws]
        assert all(s.meta is not None and s.meta["verdict"] == text[:200] for s in spans)
    assert scorer.metrics()["verdicts_unparsed"] == unparsed > 0


def test_batched_generation_equals_one_by_one(judge_dir: Path) -> None:
    params = StepsParams(model=str(judge_dir), mode="generate", max_new_tokens=12, cache_size=0)
    batched = JudgeScorer(params, "steps").backend.generate(
        ["Question: a", "Question: what is 17+5-8? go", "x"]
    )
    single = [
        JudgeScorer(params, "steps").backend.generate([p])[0]
        for p in ["Question: a", "Question: what is 17+5-8? go", "x"]
    ]
    assert batched == single


def test_http_generate_equals_in_process(taught_judge_dir: Path, taught: Any) -> None:
    model, tokenizer = taught
    local = JudgeScorer(StepsParams(model=str(taught_judge_dir), mode="generate"), "steps").score(SAMPLES)
    with serve(model, tokenizer) as server:
        for chat in (False, True):
            params = StepsParams(
                model="taught", backend="openai", mode="generate", chat=chat, openai={"base_url": server.url}
            )
            scorer = JudgeScorer(params, "steps")
            remote = scorer.score(SAMPLES)
            scorer.close()
            if not chat:
                assert remote == local
            chat_local = JudgeScorer(
                StepsParams(model=str(taught_judge_dir), mode="generate", chat=chat), "steps"
            ).score(SAMPLES)
            assert remote == chat_local
