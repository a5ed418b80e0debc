"""``logprob`` mode on the transformers backend against manual forward passes of the tiny judge.

The reference for every step is computed independently: the full judge prompt written out as text,
tokenized as a whole, one forward pass, softmax at the last position. The scorer instead scores all
steps of a completion in one pass over a token tree, batched with other completions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from judge_data import NO, SAMPLES, YES

from botgrpo_core.signals import Sample, SampleError, Span
from botgrpo_judge.params import OutcomeParams, StepsParams
from botgrpo_judge.scorer import JudgeScorer

VERDICT = "\nIs the step above correct? Answer:"


def manual(judge: tuple[Any, Any], text: str) -> tuple[float, float]:
    """``(P(yes), P(no))`` after ``text``: whole-text tokenization, one forward pass, float64 softmax."""
    model, tokenizer = judge
    ids = tokenizer(text)["input_ids"]
    with torch.no_grad():
        probs = model(torch.tensor([ids])).logits[0, -1].double().softmax(-1)
    yes = {tokenizer.encode(w, add_special_tokens=False)[0] for w in YES}
    no = {tokenizer.encode(w, add_special_tokens=False)[0] for w in NO}
    return float(probs[list(yes)].sum()), float(probs[list(no)].sum())


def step_prompts(sample: Sample, layout: str) -> list[str]:
    """The judge prompt of every step, written out by hand."""
    lines = sample.completion.split("\n")
    head = f"Question: {sample.prompt}\nSolution:\n"
    prompts = []
    for k in range(len(lines)):
        if layout == "prefix":
            prompts.append(head + "\n".join(lines[: k + 1]) + VERDICT)
        else:
            prompts.append(head + "".join(("\n" if j else "") + lines[j] + VERDICT for j in range(k + 1)))
    return prompts


def steps_params(judge_dir: Path, **kwargs: Any) -> StepsParams:
    return StepsParams(model=str(judge_dir), yes_tokens=YES, no_tokens=NO, **kwargs)


@pytest.mark.parametrize("layout", ["prefix", "tagged"])
def test_one_pass_scores_equal_manual_forward_passes(judge_dir: Path, judge: Any, layout: str) -> None:
    scorer = JudgeScorer(steps_params(judge_dir, layout=layout), "steps")
    results = scorer.score(SAMPLES)
    assert scorer.metrics()["backend_forward_passes"] == 1  # every step of every completion, one pass
    spread = []
    for sample, spans in zip(SAMPLES, results):
        assert isinstance(spans, list)
        assert [sample.completion[s.start : s.end] for s in spans] == sample.completion.split("\n")
        for span, text in zip(spans, step_prompts(sample, layout)):
            p_yes, p_no = manual(judge, text)
            assert span.meta is not None
            assert span.meta["p_yes"] == pytest.approx(p_yes, abs=1e-5)
            assert span.meta["p_no"] == pytest.approx(p_no, abs=1e-5)
            assert span.value == pytest.approx(p_yes - p_no, abs=1e-5)
            spread.append(p_yes - p_no)
    # the comparison has teeth: scores are large and differ between steps by far more than 1e-5
    assert max(spread) - min(spread) > 0.005 and min(abs(v) for v in spread) > 0.05


def test_layouts_differ_after_the_first_step(judge_dir: Path) -> None:
    prefix = JudgeScorer(steps_params(judge_dir, layout="prefix"), "steps").score(SAMPLES[:1])[0]
    tagged = JudgeScorer(steps_params(judge_dir, layout="tagged"), "steps").score(SAMPLES[:1])[0]
    assert isinstance(prefix, list) and isinstance(tagged, list)
    assert prefix[0].value == pytest.approx(tagged[0].value, abs=1e-6)
    assert abs(prefix[1].value - tagged[1].value) > 1e-4


def _values(results: list[Any]) -> list[list[float]]:
    return [[s.value for s in r] for r in results]


@pytest.mark.parametrize("layout", ["prefix", "tagged"])
def test_batching_equals_one_by_one(judge_dir: Path, layout: str) -> None:
    batched = _values(JudgeScorer(steps_params(judge_dir, layout=layout), "steps").score(SAMPLES))
    single = [
        _values(JudgeScorer(steps_params(judge_dir, layout=layout, cache_size=0), "steps").score([s]))[0]
        for s in SAMPLES
    ]
    small = steps_params(judge_dir, layout=layout, transformers={"batch_size": 3}, cache_size=0)
    in_threes = _values(JudgeScorer(small, "steps").score(SAMPLES))
    for a, b, c in zip(batched, single, in_threes):
        assert a == pytest.approx(b, abs=1e-6) and a == pytest.approx(c, abs=1e-6)


def test_eager_kernel_and_per_step_fallback_agree(judge_dir: Path) -> None:
    reference = _values(JudgeScorer(steps_params(judge_dir), "steps").score(SAMPLES))
    eager = JudgeScorer(steps_params(judge_dir, transformers={"attn_implementation": "eager"}), "steps")
    assert eager.backend.attn == "eager"  # additive float tree mask
    fallback = JudgeScorer(steps_params(judge_dir, cache_size=0), "steps")
    fallback.backend.tree_ok = False  # a kernel without 4-D masks: one sequence per step
    per_step = _values(fallback.score(SAMPLES))
    assert fallback.metrics()["backend_forward_passes"] == 2  # 11 step rows in batches of 8
    for a, b, c in zip(reference, _values(eager.score(SAMPLES)), per_step):
        assert a == pytest.approx(b, abs=1e-5) and a == pytest.approx(c, abs=1e-5)


def test_normalize_and_range(judge_dir: Path, judge: Any) -> None:
    scorer = JudgeScorer(steps_params(judge_dir, normalize=True, range=(0, 1)), "steps")
    spans = scorer.score(SAMPLES[:1])[0]
    assert isinstance(spans, list)
    for span, text in zip(spans, step_prompts(SAMPLES[0], "prefix")):
        p_yes, p_no = manual(judge, text)
        assert span.value == pytest.approx(p_yes / (p_yes + p_no), abs=1e-5)


def test_cache_and_shared_prefixes(judge_dir: Path) -> None:
    scorer = JudgeScorer(steps_params(judge_dir), "steps")
    first = scorer.score(SAMPLES)
    passes, calls = scorer.metrics()["backend_forward_passes"], scorer.metrics()["judge_calls"]
    again = scorer.score(SAMPLES)
    metrics = scorer.metrics()
    assert _values(again) == _values(first)
    assert metrics["backend_forward_passes"] == passes and metrics["judge_calls"] == calls
    # 12 steps, of which sample 3's first step is sample 0's (found once per batch, then shared)
    assert metrics["cache_hits"] == sum(len(r) for r in first) - 1
    # samples 0 and 3 share step 1 (same question, same first line): the same value
    assert first[0][0].value == first[3][0].value  # type: ignore[index]


def test_max_length_drops_later_steps(judge_dir: Path, judge: Any) -> None:
    _, tokenizer = judge
    first_prompt = step_prompts(SAMPLES[0], "prefix")[0]
    limit = len(tokenizer(first_prompt)["input_ids"]) + 2
    scorer = JudgeScorer(steps_params(judge_dir, max_length=limit), "steps")
    spans = scorer.score(SAMPLES[:1])[0]
    assert isinstance(spans, list) and len(spans) == 1
    assert scorer.metrics()["steps_truncated"] == 2
    tiny = JudgeScorer(steps_params(judge_dir, max_length=3), "steps").score(SAMPLES[:1])[0]
    assert isinstance(tiny, SampleError) and "max_length" in str(tiny)


def test_no_steps_gives_no_spans(judge_dir: Path) -> None:
    scorer = JudgeScorer(steps_params(judge_dir), "steps")
    assert scorer.score([Sample("q", ""), Sample("q", " \n\n ")]) == [[], []]


def test_outcome_against_reference(judge_dir: Path, judge: Any) -> None:
    params = OutcomeParams(model=str(judge_dir), yes_tokens=YES, no_tokens=NO, reference_field="answer")
    scorer = JudgeScorer(params, "outcome")
    samples = [
        Sample("what is 17+5-8?", "17+5=22\n22-8=14\nA: 14", row={"answer": "14"}),
        Sample("what is 2+2?", "2+2=4\nA: 4", row={"answer": "4"}),
        Sample("what is 2+2?", "2+2=4", row={}),
    ]
    results = scorer.score(samples)
    for sample, value in zip(samples[:2], results):
        text = (
            f"Question: {sample.prompt}\nSolution:\n{sample.completion}\nReference answer: {sample.row['answer']}"
            "\nIs the solution's final answer correct? Answer:"
        )
        p_yes, p_no = manual(judge, text)
        assert isinstance(value, float) and value == pytest.approx(p_yes - p_no, abs=1e-5)
    assert isinstance(results[2], SampleError) and "reference_field" in str(results[2])


def test_question_field_and_custom_templates(judge_dir: Path, judge: Any) -> None:
    params = steps_params(
        judge_dir,
        question_field="problem",
        split="markers",
        prompt_template="Problem: {{ question }}\n",
        verdict_template="\nStep {{ step_index }} of {{ num_steps }} ok? Answer:",
    )
    sample = Sample("ignored prompt", "Step 1: 2+2=4\nStep 2: so 4", row={"problem": "2+2?"})
    spans = JudgeScorer(params, "steps").score([sample])[0]
    assert isinstance(spans, list) and all(isinstance(s, Span) for s in spans)
    expected = [
        "Problem: 2+2?\nStep 1: 2+2=4\nStep 1 of 2 ok? Answer:",
        "Problem: 2+2?\nStep 1: 2+2=4\nStep 2: so 4\nStep 2 of 2 ok? Answer:",
    ]
    for span, text in zip(spans, expected):
        p_yes, p_no = manual(judge, text)
        assert span.value == pytest.approx(p_yes - p_no, abs=1e-5)


def test_token_sets_must_be_single_tokens(judge_dir: Path) -> None:
    with pytest.raises(ValueError, match="yes_tokens"):
        JudgeScorer(StepsParams(model=str(judge_dir), yes_tokens=[" certainly-not-a-token"]), "steps")


def test_model_output_is_text_never_template(judge_dir: Path, judge: Any) -> None:
    """A rollout that looks like Jinja is inserted verbatim (the sandbox never renders model output)."""
    sample = Sample("what is 7*7?", "{{ 7*7 }}\n{% for x in range(3) %}loop{% endfor %}")
    spans = JudgeScorer(steps_params(judge_dir), "steps").score([sample])[0]
    assert isinstance(spans, list) and len(spans) == 2
    head = "Question: what is 7*7?\nSolution:\n"
    p_yes, p_no = manual(judge, head + "{{ 7*7 }}" + VERDICT)
    assert spans[0].value == pytest.approx(p_yes - p_no, abs=1e-5)
    p_yes, p_no = manual(judge, head + sample.completion + VERDICT)
    assert spans[1].value == pytest.approx(p_yes - p_no, abs=1e-5)
