"""The ``vllm`` backend: vLLM's offline ``LLM`` engine in this process (GPU).

``logprob`` mode sends every wanted step prompt as token ids (built by :meth:`TokenizedChain.step_ids`,
the same ids the ``transformers`` backend scores in one pass) with ``max_tokens=1`` and ``logprobs=k``;
vLLM's automatic prefix caching shares the KV cache of a completion's step prompts, which all start the
same way. The probabilities are vLLM's raw logprobs (before sampling parameters), summed over the yes/no
token ids found in the top ``k`` (tokens outside it count as 0; raise ``vllm.top_logprobs`` to widen it).

GPU sharing: by default the judge refuses to start on a device where this process already holds CUDA
memory (a colocated policy); ``vllm.colocate: true`` allows it, with ``vllm.gpu_memory_utilization`` set
low enough to leave the policy room. To put the judge on another GPU, run ``vllm serve`` there and use the
``openai`` backend. vLLM is imported only when this backend is chosen.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from botgrpo_core.signals import SampleError
from botgrpo_judge.backends.base import ProbPair, failure, probs_from_logprobs, resolve_token_ids
from botgrpo_judge.chains import Chain, TokenizedChain, tokenize_chain
from botgrpo_judge.params import JudgeParams

_LOCK = threading.Lock()
_ENGINES: dict[tuple[Any, ...], Any] = {}


def step_requests(
    tokenizer: Any, chains: Sequence[Chain], wanted: Sequence[set[int]] | None, max_length: int
) -> tuple[list[tuple[int, int, list[int]]], dict[int, SampleError]]:
    """``(chain index, step, prompt ids)`` of every wanted step, and per-chain errors.

    Steps whose prompt is over ``max_length`` tokens are left out (the scorer counts them as truncated).
    """
    jobs: list[tuple[int, int, list[int]]] = []
    errors: dict[int, SampleError] = {}
    for i, chain in enumerate(chains):
        try:
            tc: TokenizedChain = tokenize_chain(tokenizer, chain)
        except Exception as exc:
            errors[i] = failure(f"judge could not tokenize the prompt: {exc!r}")
            continue
        steps = sorted(wanted[i]) if wanted is not None else range(tc.num_steps)
        for k in steps:
            ids = tc.step_ids(k)
            if len(ids) <= max_length:
                jobs.append((i, k, ids))
    return jobs, errors


def first_token_logprobs(request_output: Any) -> Any:
    """The top-k table of the first generated token of a vLLM ``RequestOutput`` (id -> ``Logprob``)."""
    logprobs = request_output.outputs[0].logprobs
    if not logprobs:
        raise ValueError("vLLM returned no logprobs; is SamplingParams.logprobs set?")
    return logprobs[0]


class VLLMBackend:
    """Judge backed by a vLLM ``LLM`` engine, created once per process and model."""

    def __init__(self, params: JudgeParams) -> None:
        self.params = params
        self.llm = self._engine(params)
        self.tokenizer = self.llm.get_tokenizer()
        self.identity = f"vllm:{params.model}:top{params.vllm.top_logprobs}"
        self.yes_ids = resolve_token_ids(self.tokenizer, params.yes_tokens, "yes_tokens")
        self.no_ids = resolve_token_ids(self.tokenizer, params.no_tokens, "no_tokens")
        self._metrics: dict[str, float] = {"engine_calls": 0, "prompts": 0}

    @staticmethod
    def _engine(params: JudgeParams) -> Any:
        opts = params.vllm
        key = (params.model, params.tokenizer, opts.model_dump_json())
        with _LOCK:
            if key in _ENGINES:
                return _ENGINES[key]
            import torch

            if not opts.colocate and torch.cuda.is_available() and torch.cuda.memory_allocated() > 0:
                raise ValueError(
                    "judge params.vllm: this process already holds GPU memory (a colocated policy?); set "
                    "vllm.colocate: true with a vllm.gpu_memory_utilization that leaves the policy room, or "
                    "serve the judge on another GPU with `vllm serve` and use backend: openai"
                )
            try:
                from vllm import LLM
            except ImportError as exc:
                raise ValueError(
                    "judge params.backend 'vllm' needs vLLM: pip install 'botgrpo-judge[vllm]' (GPU machines)"
                ) from exc
            engine = LLM(
                model=params.model,
                tokenizer=params.tokenizer or params.model,
                dtype=opts.dtype,
                gpu_memory_utilization=opts.gpu_memory_utilization,
                tensor_parallel_size=opts.tensor_parallel_size,
                max_model_len=opts.max_model_len,
                enable_prefix_caching=opts.enable_prefix_caching,
                max_logprobs=opts.top_logprobs,
                enforce_eager=opts.enforce_eager,
                seed=opts.seed,
            )
            _ENGINES[key] = engine
            return engine

    def next_token_probs(
        self, chains: Sequence[Chain], wanted: Sequence[set[int]] | None = None
    ) -> list[dict[int, ProbPair] | SampleError]:
        from vllm import SamplingParams

        jobs, errors = step_requests(self.tokenizer, chains, wanted, self.params.max_length)
        out: list[dict[int, ProbPair] | SampleError] = [errors.get(i, {}) for i in range(len(chains))]
        if not jobs:
            return out
        sampling = SamplingParams(max_tokens=1, temperature=0.0, logprobs=self.params.vllm.top_logprobs)
        try:
            outputs = self.llm.generate(
                [{"prompt_token_ids": ids} for _, _, ids in jobs], sampling, use_tqdm=False
            )
        except Exception as exc:
            return [failure(f"vLLM scoring failed: {exc!r}") for _ in chains]
        self._metrics["engine_calls"] += 1
        self._metrics["prompts"] += len(jobs)
        for (i, k, _), result in zip(jobs, outputs):
            table = out[i]
            if not isinstance(table, dict):
                continue
            try:
                table[k] = probs_from_logprobs(first_token_logprobs(result), self.yes_ids, self.no_ids)
            except Exception as exc:
                out[i] = failure(f"vLLM answer without valid logprobs: {exc!r}")
        return out

    def generate(self, prompts: Sequence[str]) -> list[str | SampleError]:
        from vllm import SamplingParams

        requests: list[dict[str, Any]] = []
        for prompt in prompts:
            if self.params.chat:
                text = self.tokenizer.apply_chat_template(
                    [{"role": "user", "content": prompt}], tokenize=False, add_generation_prompt=True
                )
                requests.append({"prompt_token_ids": self.tokenizer.encode(text, add_special_tokens=False)})
            else:
                requests.append({"prompt": prompt})
        sampling = SamplingParams(max_tokens=self.params.max_new_tokens, temperature=0.0)
        try:
            outputs = self.llm.generate(requests, sampling, use_tqdm=False)
        except Exception as exc:
            return [failure(f"vLLM generation failed: {exc!r}") for _ in prompts]
        self._metrics["engine_calls"] += 1
        self._metrics["prompts"] += len(requests)
        return [result.outputs[0].text for result in outputs]

    def metrics(self) -> dict[str, float]:
        return dict(self._metrics)

    def close(self) -> None:
        """The engine stays cached for other scorers of this process."""
