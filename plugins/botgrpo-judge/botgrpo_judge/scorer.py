"""The scorer behind ``judge.steps`` (spans, one per step) and ``judge.outcome`` (one float per rollout).

One batch goes: render the templates per sample, look every step up in the run's cache, send what is
left (each distinct judge prompt once, even when several rollouts share it) to the backend in one batched
call, then map ``(P(yes), P(no))`` or the parsed verdicts onto the signal's ``range``. A sample whose
prompt cannot be built, whose request failed after its retries, or whose split regex timed out gets a
:class:`~botgrpo_core.signals.SampleError`; the core's ``on_error`` policy decides what it is worth.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from botgrpo_core.signals import Sample, SampleError, Span
from botgrpo_core.signals.steps import Step, compile_pattern, split_steps
from botgrpo_judge import templates
from botgrpo_judge.backends.base import Backend, ProbPair
from botgrpo_judge.cache import LRUCache
from botgrpo_judge.chains import Chain
from botgrpo_judge.params import JudgeParams, StepsParams
from botgrpo_judge.verdict import parse_step_verdicts, parse_verdict

Kind = Literal["steps", "outcome"]
_META_TEXT = 200  # characters of a judge's answer kept in a span's meta


@dataclass
class _LogprobPlan:
    """One logprob batch: each sample's chain and step keys, the answers known, the requests to send."""

    chains: dict[int, Chain] = field(default_factory=dict)
    keys: dict[int, list[tuple[Hashable, ...]]] = field(default_factory=dict)
    found: dict[tuple[Hashable, ...], ProbPair] = field(default_factory=dict)
    owner: dict[tuple[Hashable, ...], int] = field(default_factory=dict)  # key -> the sample asking for it
    requests: list[tuple[int, Chain, set[int]]] = field(default_factory=list)
    errors: dict[int, SampleError] = field(default_factory=dict)


@dataclass
class _Item:
    """One sample, prepared: template variables and its steps (one whole-completion step for outcome)."""

    variables: dict[str, Any]
    steps: list[Step]


class JudgeScorer:
    """Batched judge scorer; build it with :func:`botgrpo_judge.plugin.make_steps_scorer` or ``make_outcome_scorer``."""

    def __init__(self, params: JudgeParams, kind: Kind, backend: Backend | None = None) -> None:
        self.params = params
        self.kind = kind
        if backend is None:
            from botgrpo_judge.backends import make_backend

            backend = make_backend(params)
        self.backend = backend
        self.cache: LRUCache[Any] = LRUCache(params.cache_size)
        self._pattern = (
            compile_pattern(params.pattern) if isinstance(params, StepsParams) and params.pattern else None
        )
        self._counts: Counter[str] = Counter()

    # ------------------------------------------------------------------ public API
    def score(self, samples: Sequence[Sample]) -> list[list[Span] | float | SampleError]:
        """Score a batch: spans per sample (``judge.steps``) or one float per sample (``judge.outcome``)."""
        prepared = [self._prepare(sample) for sample in samples]
        if self.params.mode == "logprob":
            results = self._score_logprob(prepared)
        else:
            results = self._score_generate(prepared)
        self._counts["samples"] += len(samples)
        self._counts["samples_failed"] += sum(isinstance(r, SampleError) for r in results)
        return results

    def metrics(self) -> dict[str, float]:
        """Cumulative counters: steps scored, unparsed verdicts, cache hits, backend requests and retries..."""
        out: dict[str, float] = {k: float(v) for k, v in self._counts.items()}
        out["cache_hits"] = float(self.cache.hits)
        out["cache_misses"] = float(self.cache.misses)
        out.update({f"backend_{k}": float(v) for k, v in self.backend.metrics().items()})
        return out

    def close(self) -> None:
        """Release the backend (HTTP connections, event-loop thread)."""
        self.backend.close()

    # ------------------------------------------------------------------ preparation
    def _prepare(self, sample: Sample) -> _Item | SampleError:
        p = self.params
        row = dict(sample.row)
        try:
            question = row[p.question_field] if p.question_field else sample.prompt
            reference = row[p.reference_field] if p.reference_field else None
        except KeyError as exc:
            field = (
                "question_field" if p.question_field and p.question_field not in row else "reference_field"
            )
            return SampleError(
                f"judge: the dataset row has no field {exc.args[0]!r} (judge params.{field}); "
                f"row fields: {sorted(row)}"
            )
        variables = {
            "question": question,
            "reference": reference,
            "row": row,
            "completion": sample.completion,
        }
        if self.kind == "outcome" or not isinstance(p, StepsParams):
            return _Item(variables, [Step(0, len(sample.completion), sample.completion)])
        try:
            steps = split_steps(sample.completion, p.split, self._pattern, timeout_s=p.split_timeout_s)
        except TimeoutError:
            return SampleError(f"judge: the split pattern took over {p.split_timeout_s} s", reason="timeout")
        if len(steps) > p.max_steps:
            self._counts["steps_over_max_steps"] += len(steps) - p.max_steps
            steps = steps[: p.max_steps]
        return _Item(variables, steps)

    def _step_variables(self, item: _Item, k: int) -> dict[str, Any]:
        texts = [s.text for s in item.steps]
        return {
            **item.variables,
            "steps": texts[: k + 1],
            "step": texts[k],
            "step_index": k + 1,
            "num_steps": len(texts),
        }

    def _chain(self, item: _Item) -> Chain:
        p = self.params
        pieces, previous_end = [], 0
        for step in item.steps:
            pieces.append(item.variables["completion"][previous_end : step.end])
            previous_end = step.end
        if self.kind == "outcome":  # the whole completion, trailing blanks included
            pieces = [item.variables["completion"]]
        prefix = templates.render(p.prompt_template, **self._step_variables(item, 0))
        verdicts = [
            templates.render(p.verdict_template, **self._step_variables(item, k)) for k in range(len(pieces))
        ]
        layout = p.layout if isinstance(p, StepsParams) else "prefix"
        return Chain(prefix, tuple(pieces), tuple(verdicts), layout)

    # ------------------------------------------------------------------ logprob mode
    def _step_key(self, chain: Chain, k: int) -> tuple[Hashable, ...]:
        p = self.params
        context = chain.verdicts[: k + 1] if chain.layout == "tagged" else chain.verdicts[k]
        return (
            self.backend.identity,
            "logprob",
            p.chat,
            chain.layout,
            tuple(p.yes_tokens),
            tuple(p.no_tokens),
            chain.prefix,
            chain.pieces[: k + 1],
            context,
        )

    def _score_logprob(self, items: list[_Item | SampleError]) -> list[list[Span] | float | SampleError]:
        results: list[list[Span] | float | SampleError | None] = [None] * len(items)
        plan = _LogprobPlan()
        for i, item in enumerate(items):
            results[i] = self._plan_logprob(plan, i, item)
        self._ask_logprob(plan)
        for i in plan.chains:
            item = items[i]
            assert isinstance(item, _Item)
            results[i] = self._logprob_result(plan, i, item)
        return [r if r is not None else SampleError("judge: sample was not scored") for r in results]

    def _plan_logprob(
        self, plan: _LogprobPlan, i: int, item: _Item | SampleError
    ) -> list[Span] | SampleError | None:
        """Add sample ``i``'s steps to ``plan``; a result when it needs no judge call, else ``None``."""
        if isinstance(item, SampleError):
            return item
        if not item.steps:
            return [] if self.kind == "steps" else SampleError("judge: nothing to score")
        try:
            chain = self._chain(item)
        except Exception as exc:
            return SampleError(f"judge: rendering a template failed: {exc!r}")
        plan.chains[i] = chain
        plan.keys[i] = [self._step_key(chain, k) for k in range(chain.num_steps)]
        wanted: set[int] = set()
        for k, key in enumerate(plan.keys[i]):
            if key in plan.found or key in plan.owner:
                continue
            cached = self.cache.get(key)
            if cached is not None:
                plan.found[key] = cached
            else:
                plan.owner[key] = i
                wanted.add(k)
        if wanted:
            plan.requests.append((i, chain.head(max(wanted) + 1), wanted))
        return None

    def _ask_logprob(self, plan: _LogprobPlan) -> None:
        """Send the plan's requests to the backend in one call; answers go to ``plan`` and the cache."""
        if not plan.requests:
            return
        self._counts["judge_calls"] += len(plan.requests)
        answers = self.backend.next_token_probs(
            [chain for _, chain, _ in plan.requests], [wanted for _, _, wanted in plan.requests]
        )
        for (i, _, _), answer in zip(plan.requests, answers):
            if isinstance(answer, SampleError):
                plan.errors[i] = answer
                continue
            for k, pair in answer.items():
                key = plan.keys[i][k]
                plan.found[key] = pair
                self.cache.put(key, pair)

    def _logprob_result(self, plan: _LogprobPlan, i: int, item: _Item) -> list[Span] | float | SampleError:
        """Sample ``i``'s spans (or outcome value) from the answers, or the error of a request it needed."""
        spans: list[Span] = []
        failed: SampleError | None = plan.errors.get(i)
        for k, key in enumerate(plan.keys[i]):
            pair = plan.found.get(key)
            if pair is None:
                failed = failed or plan.errors.get(plan.owner.get(key, -1))
                if failed is None:
                    self._counts["steps_truncated"] += 1  # over max_length: no span for this step
                continue
            p_yes, p_no = pair
            step = item.steps[k]
            meta = {"step": k + 1, "p_yes": p_yes, "p_no": p_no}
            spans.append(Span(step.start, step.end, self._value(p_yes, p_no), meta))
        if failed is not None:
            return SampleError(str(failed), reason=failed.reason)
        self._counts["steps_scored"] += len(spans)
        if self.kind == "steps":
            return spans
        return spans[0].value if spans else SampleError("judge: the outcome prompt was not scored")

    def _value(self, p_yes: float, p_no: float) -> float:
        if self.params.normalize:
            total = p_yes + p_no
            raw = (p_yes - p_no) / total if total > 1e-12 else 0.0
        else:
            raw = p_yes - p_no
        return self.params.to_value(raw)

    # ------------------------------------------------------------------ generate mode
    def _prompts(self, item: _Item) -> list[str]:
        """Judge prompts of one sample: one (outcome, or steps judged together) or one per step."""
        p = self.params
        assert p.generate_template is not None
        if self.kind == "steps" and isinstance(p, StepsParams) and p.generate_per == "step":
            return [
                templates.render(p.generate_template, **self._step_variables(item, k))
                for k in range(len(item.steps))
            ]
        last = len(item.steps) - 1
        variables = self._step_variables(item, last) if item.steps else {**item.variables, "steps": []}
        variables["steps"] = [s.text for s in item.steps]
        return [templates.render(p.generate_template, **variables)]

    def _score_generate(self, items: list[_Item | SampleError]) -> list[list[Span] | float | SampleError]:
        results: list[list[Span] | float | SampleError | None] = [None] * len(items)
        prompts: dict[int, list[str]] = {}
        texts: dict[str, str | SampleError] = {}
        pending: list[str] = []
        for i, item in enumerate(items):
            if isinstance(item, SampleError):
                results[i] = item
                continue
            if self.kind == "steps" and not item.steps:
                results[i] = []
                continue
            try:
                prompts[i] = self._prompts(item)
            except Exception as exc:
                results[i] = SampleError(f"judge: rendering generate_template failed: {exc!r}")
                continue
            for prompt in prompts[i]:
                if prompt in texts:
                    continue
                cached = self.cache.get(self._generate_key(prompt))
                texts[prompt] = cached if cached is not None else SampleError("pending")
                if cached is None:
                    pending.append(prompt)
        if pending:
            self._counts["judge_calls"] += len(pending)
            for prompt, answer in zip(pending, self.backend.generate(pending)):
                texts[prompt] = answer
                if not isinstance(answer, SampleError):
                    self.cache.put(self._generate_key(prompt), answer)
        for i, sample_prompts in prompts.items():
            item = items[i]
            assert isinstance(item, _Item)
            results[i] = self._generate_result(item, [texts[prompt] for prompt in sample_prompts])
        return [r if r is not None else SampleError("judge: sample was not scored") for r in results]

    def _generate_result(
        self, item: _Item, answers: list[str | SampleError]
    ) -> list[Span] | float | SampleError:
        """One sample's spans (or outcome value) from its judge answers, unparsed verdicts counted."""
        p = self.params
        failed = next((a for a in answers if isinstance(a, SampleError)), None)
        if failed is not None:
            return SampleError(str(failed), reason=failed.reason)
        texts = [str(a) for a in answers]
        try:
            raws = self._read_verdicts(item, texts)
        except Exception as exc:  # a parser bug costs this sample, never the batch
            self._counts["verdict_errors"] += 1
            return SampleError(f"judge: reading the verdict failed: {exc!r}")
        self._counts["verdicts_unparsed"] += sum(r is None for r in raws)
        self._counts["steps_scored"] += len(raws)
        values = [p.unparsed() if r is None else p.to_value(r) for r in raws]
        if self.kind == "outcome":
            return values[0]
        spans = []
        for k, (step, value, raw) in enumerate(zip(item.steps, values, raws)):
            answer = texts[0] if len(texts) == 1 else texts[k]
            meta = {"step": k + 1, "parsed": raw is not None, "verdict": answer[:_META_TEXT]}
            spans.append(Span(step.start, step.end, value, meta))
        return spans

    def _read_verdicts(self, item: _Item, answers: list[str]) -> list[float | None]:
        """Raw scores in ``[-1, 1]`` (``None``: unparsed) of one sample's judge answers."""
        p = self.params
        if self.kind == "outcome":
            return [parse_verdict(answers[0], p.score_range)]
        if len(answers) == 1:
            return parse_step_verdicts(answers[0], len(item.steps), p.score_range)
        return [parse_verdict(a, p.score_range) for a in answers]

    def _generate_key(self, prompt: str) -> tuple[Hashable, ...]:
        return (self.backend.identity, "generate", self.params.chat, self.params.max_new_tokens, prompt)
