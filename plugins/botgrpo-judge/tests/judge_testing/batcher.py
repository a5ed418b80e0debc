"""The test server's batcher: one worker thread runs every queued request in one padded forward pass.

Greedy decoding and the top-k logprobs of each generated token, as an inference server computes them, so
concurrent requests are batched and concurrency pays off.
"""

from __future__ import annotations

import queue
import threading
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

import torch


@dataclass
class _Job:
    prompt_ids: list[int]
    max_tokens: int
    top_k: int
    future: Future[dict[str, Any]]


class Batcher:
    """One worker thread running every queued request in a batch (greedy decoding, top-k logprobs)."""

    def __init__(self, model: Any, tokenizer: Any, max_batch: int) -> None:
        self.model, self.tokenizer, self.max_batch = model, tokenizer, max_batch
        pad = tokenizer.pad_token_id
        self.pad_id = pad if pad is not None else (tokenizer.eos_token_id or 0)
        self.queue: queue.Queue[_Job | None] = queue.Queue()
        self.batches = 0
        self.thread = threading.Thread(target=self._loop, name="judge-server-batcher", daemon=True)
        self.thread.start()

    def submit(self, prompt_ids: list[int], max_tokens: int, top_k: int) -> dict[str, Any]:
        future: Future[dict[str, Any]] = Future()
        self.queue.put(_Job(prompt_ids, max_tokens, top_k, future))
        return future.result()

    def stop(self) -> None:
        self.queue.put(None)
        self.thread.join(timeout=10)

    def _loop(self) -> None:
        while True:
            job = self.queue.get()
            if job is None:
                return
            jobs = [job]
            while len(jobs) < self.max_batch:
                try:
                    nxt = self.queue.get_nowait()
                except queue.Empty:
                    break
                if nxt is None:
                    self.queue.put(None)
                    break
                jobs.append(nxt)
            try:
                results = self._run(jobs)
            except Exception as exc:  # answer every waiting request; the server maps it to a 500
                for j in jobs:
                    j.future.set_exception(exc)
                continue
            for j, result in zip(jobs, results):
                j.future.set_result(result)

    @torch.inference_mode()
    def _run(self, jobs: list[_Job]) -> list[dict[str, Any]]:
        """Greedy decoding of a left-padded batch; top-k logprobs of each new token from the raw logits."""
        self.batches += 1
        width = max(len(j.prompt_ids) for j in jobs)
        ids = torch.full((len(jobs), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(jobs), width), dtype=torch.long)
        for b, j in enumerate(jobs):
            ids[b, width - len(j.prompt_ids) :] = torch.tensor(j.prompt_ids, dtype=torch.long)
            mask[b, width - len(j.prompt_ids) :] = 1
        if all(j.max_tokens == 1 for j in jobs):  # scoring requests: one forward pass, no decoding loop
            positions = (mask.cumsum(-1) - 1).clamp(min=0)
            logits = self.model(input_ids=ids, attention_mask=mask, position_ids=positions).logits[:, -1:]
            return self._outputs(jobs, logits.argmax(-1).tolist(), torch.log_softmax(logits.float(), dim=-1))
        out = self.model.generate(
            input_ids=ids,
            attention_mask=mask,
            max_new_tokens=max(j.max_tokens for j in jobs),
            do_sample=False,
            output_logits=True,
            return_dict_in_generate=True,
            pad_token_id=self.pad_id,
            eos_token_id=self.tokenizer.eos_token_id,
        )
        logprobs = torch.log_softmax(torch.stack(out.logits, dim=1).float(), dim=-1)  # (B, steps, V)
        return self._outputs(jobs, out.sequences[:, width:].tolist(), logprobs)

    def _outputs(
        self, jobs: list[_Job], new_tokens: list[list[int]], logprobs: torch.Tensor
    ) -> list[dict[str, Any]]:
        outputs = []
        for b, j in enumerate(jobs):
            tokens = new_tokens[b][: j.max_tokens]
            if self.tokenizer.eos_token_id in tokens:  # rows that finished early are padded afterwards
                tokens = tokens[: tokens.index(self.tokenizer.eos_token_id) + 1]
            top = (
                torch.topk(logprobs[b, : len(tokens)], min(j.top_k, logprobs.shape[-1])) if j.top_k else None
            )
            outputs.append(
                {
                    "tokens": tokens,
                    "logprobs": [float(logprobs[b, t, tok]) for t, tok in enumerate(tokens)],
                    "top": [
                        list(zip(top.indices[t].tolist(), top.values[t].tolist())) if top is not None else []
                        for t in range(len(tokens))
                    ],
                }
            )
        return outputs
