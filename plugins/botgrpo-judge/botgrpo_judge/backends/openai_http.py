"""The ``openai`` backend: any OpenAI-compatible server (vLLM serve, SGLang, TGI, llama.cpp server, hosted APIs).

``logprob`` mode sends one request per step prompt (``max_tokens: 1`` with the top-k logprobs of the first
generated token) and sums the probabilities of the yes/no token strings found in that top k; a server with
prefix caching (vLLM, SGLang) shares the work of a completion's step prompts. ``generate`` mode asks for a
greedy answer. ``chat: true`` uses ``/chat/completions`` with the prompt as one user message.

Requests run on an asyncio loop in a private thread (so ``score`` works from any caller, event loop or not)
with at most ``concurrency`` in flight. Each attempt has a hard deadline of ``timeout_s`` (body included);
a 429, a 5xx, a timeout, a dropped connection or a malformed answer is retried up to ``max_retries``
times after an exponential backoff with jitter (``Retry-After`` is honoured up to ``backoff_max_s``).
Other 4xx answers, answers over ``max_response_bytes`` and answers with invalid logprobs are not
retried. A request that still fails becomes that sample's ``SampleError``; the batch goes on.

Bounds, so a dead or hostile server costs a bounded time and memory per batch: the batch as a whole
has a deadline (``batch_timeout_s``: requests still running then are cancelled and their samples time
out); a circuit breaker (:mod:`~botgrpo_judge.backends.breaker`) stops calling a server that gave no
answer ``breaker_failures`` times in a row, for ``breaker_cooldown_s``; answers are streamed and cut at
``max_response_bytes`` (a compressed answer's inflated bytes count, as they are inflated; more than one
content encoding is refused), and parsed with bounded depth (:mod:`~botgrpo_judge.backends.openai_wire`).
Each of these is counted in :meth:`OpenAIBackend.metrics` and logged once per batch.

The API key is read from the environment variable named by ``api_key_env`` and kept only in the request
headers: it is never part of the params, an error message, a log line or ``repr``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import random
import threading
import weakref
from collections import Counter
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx

from botgrpo_core.signals import SampleError
from botgrpo_judge.backends.base import InvalidLogprobs, ProbPair, failure, yes_no_probs
from botgrpo_judge.backends.breaker import Admission, CircuitBreaker
from botgrpo_judge.backends.openai_wire import (
    BadEncoding,
    Malformed,
    TooLarge,
    encode_body,
    parse_answer,
    read_capped,
    text_of,
    top_logprobs_of,
)
from botgrpo_judge.chains import Chain
from botgrpo_judge.params import JudgeParams

T = TypeVar("T")
logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Retry:
    """An attempt that failed in a way worth retrying."""

    reason: str
    message: str
    retry_after: float | None = None


class _LoopThread:
    """An asyncio event loop running in a daemon thread; ``run`` submits a coroutine and waits."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="botgrpo-judge-http", daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def stop(self) -> None:
        if threading.current_thread() is self.thread:  # collected inside the loop: just stop it
            self.loop.stop()
            return
        if self.loop.is_running():
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(timeout=5)
        if not self.loop.is_running():
            self.loop.close()


def backoff_delay(
    attempt: int, base_s: float, max_s: float, rng: random.Random, retry_after: float | None
) -> float:
    """Wait before retry ``attempt`` (0-based): ``d = min(max, base * 2**attempt)``, uniform in ``[d/2, d]``.

    A server's ``Retry-After`` raises the wait to that many seconds, capped at ``max_s``.
    """
    cap = min(max_s, base_s * (2.0 ** min(attempt, 64)))  # 2.0**1024 would overflow
    delay = cap / 2 + rng.uniform(0, cap / 2)
    if retry_after is not None and math.isfinite(retry_after) and retry_after > 0:
        delay = max(delay, min(retry_after, max_s))
    return delay


def _retry_after(headers: httpx.Headers) -> float | None:
    try:
        return float(headers.get("retry-after", ""))
    except ValueError:
        return None


class OpenAIBackend:
    """Judge behind an OpenAI-compatible HTTP server."""

    def __init__(self, params: JudgeParams) -> None:
        self.params = params
        opts = params.openai
        # identity: answers are counted against max_response_bytes as they come, uncompressed
        headers = {"Content-Type": "application/json", "Accept-Encoding": "identity"}
        if opts.api_key_env:
            key = os.environ.get(opts.api_key_env)
            if not key:
                raise ValueError(
                    f"judge params.openai.api_key_env: the environment variable {opts.api_key_env!r} is not set "
                    "or empty; export the API key under that name before the run"
                )
            headers["Authorization"] = f"Bearer {key}"
        self._headers = headers  # the only place the key lives
        self.chat = params.chat
        self.path = "/chat/completions" if self.chat else "/completions"
        self.identity = f"openai:{opts.base_url}:{params.model}:{self.path}:top{opts.top_logprobs}"
        self._yes = frozenset(params.yes_tokens)
        self._no = frozenset(params.no_tokens)
        self._rng = random.Random()
        self._metrics: Counter[str] = Counter()
        self._loop = _LoopThread()
        weakref.finalize(self, self._loop.stop)  # a scorer dropped without close() leaves no thread behind
        self._client: httpx.AsyncClient | None = None
        self._semaphore: asyncio.Semaphore | None = None
        self._breaker = CircuitBreaker(opts.breaker_failures, opts.breaker_cooldown_s)
        self._url = f"{opts.base_url}{self.path}"

    def __repr__(self) -> str:
        return f"OpenAIBackend({self.identity!r})"

    # ------------------------------------------------------------------ request machinery
    async def _ensure_client(self) -> tuple[httpx.AsyncClient, asyncio.Semaphore]:
        if self._client is None or self._semaphore is None:
            opts = self.params.openai
            self._client = httpx.AsyncClient(
                base_url=opts.base_url,
                timeout=httpx.Timeout(opts.timeout_s),
                limits=httpx.Limits(
                    max_connections=opts.concurrency, max_keepalive_connections=opts.concurrency
                ),
            )
            self._semaphore = asyncio.Semaphore(opts.concurrency)
        return self._client, self._semaphore

    def _body(self, prompt: str, *, logprobs: bool, image: str | None = None) -> dict[str, Any]:
        opts = self.params.openai
        body: dict[str, Any] = {"model": self.params.model, "temperature": 0.0}
        if image is not None:  # OpenAI's content parts: the text, then the image
            parts = [{"type": "text", "text": prompt}, {"type": "image_url", "image_url": {"url": image}}]
            body["messages"] = [{"role": "user", "content": parts}]
        elif self.chat:
            body["messages"] = [{"role": "user", "content": prompt}]
        else:
            body["prompt"] = prompt
        if logprobs:
            body["max_tokens"] = 1
            if self.chat:
                body.update(logprobs=True, top_logprobs=opts.top_logprobs)
            else:
                body["logprobs"] = opts.top_logprobs
        else:
            body["max_tokens"] = self.params.max_new_tokens
        body.update(opts.extra_body)
        return body

    async def _request(self, body: dict[str, Any], parse: Callable[[Any], T]) -> T | SampleError:
        """POST with retries and backoff; the parsed answer, or a ``SampleError``. Never raises."""
        opts = self.params.openai
        try:
            client, semaphore = await self._ensure_client()
            payload, repaired = encode_body(body)
            if repaired:
                self._metrics["surrogates_replaced"] += 1
            retry = _Retry("error", "not sent")
            for attempt in range(opts.max_retries + 1):
                if attempt:
                    self._metrics["retries"] += 1
                    await asyncio.sleep(
                        backoff_delay(
                            attempt - 1, opts.backoff_base_s, opts.backoff_max_s, self._rng, retry.retry_after
                        )
                    )
                async with semaphore:
                    outcome = await self._attempt(client, payload, parse)
                if not isinstance(outcome, _Retry):
                    return outcome
                retry = outcome
        except Exception as exc:  # a bug or an unforeseen answer costs this sample, never the batch
            self._metrics["unexpected_errors"] += 1
            return failure(f"judge request to {self._url} failed unexpectedly: {exc!r}")
        self._metrics["failed"] += 1
        return failure(
            f"judge request to {self._url} failed after {opts.max_retries + 1} attempts: {retry.message}",
            reason=retry.reason,
        )

    async def _attempt(
        self, client: httpx.AsyncClient, payload: bytes, parse: Callable[[Any], T]
    ) -> T | SampleError | _Retry:
        """One attempt, if the circuit breaker lets it through: a result, a final failure, or a retry."""
        opts = self.params.openai
        admission = await self._breaker.admit()
        if admission is Admission.REFUSED:
            self._metrics["breaker_refused"] += 1
            return failure(
                f"judge server {self._url} not called: the circuit breaker is open after "
                f"{opts.breaker_failures} attempts in a row without an answer; it retries after "
                f"breaker_cooldown_s={opts.breaker_cooldown_s} (judge params.openai)"
            )
        self._metrics["requests"] += 1
        try:
            status, headers, raw = await asyncio.wait_for(self._exchange(client, payload), opts.timeout_s)
        except (TimeoutError, asyncio.TimeoutError, httpx.TimeoutException):
            self._breaker.failed(admission)
            self._metrics["timeouts"] += 1
            return _Retry("timeout", f"no answer within timeout_s={opts.timeout_s}")
        except httpx.TransportError as exc:
            self._breaker.failed(admission)
            self._metrics["connection_errors"] += 1
            return _Retry("error", f"connection failed ({type(exc).__name__})")
        except TooLarge as exc:
            self._breaker.answered(admission)
            self._metrics["oversized"] += 1
            return failure(f"judge server {self._url}: {exc} (judge params.openai; not retried)")
        except BadEncoding as exc:
            self._breaker.answered(admission)
            self._metrics["bad_encoding"] += 1
            return failure(f"judge server {self._url}: {exc} (not retried)")
        except httpx.HTTPError as exc:  # e.g. a body that does not decompress
            self._breaker.answered(admission)
            self._metrics["malformed"] += 1
            return _Retry("error", f"malformed answer ({type(exc).__name__}: {exc})")
        except BaseException:  # cancelled by the batch deadline (or a bug, reported by _request)
            self._breaker.abandoned(admission)
            raise
        self._breaker.answered(admission)
        return self._outcome(status, headers, raw, parse)

    async def _exchange(self, client: httpx.AsyncClient, payload: bytes) -> tuple[int, httpx.Headers, bytes]:
        """POST ``payload``; status, headers and the body (read up to ``max_response_bytes``)."""
        async with client.stream("POST", self.path, content=payload, headers=self._headers) as response:
            status = response.status_code
            if status == 429 or status >= 500:  # retried: the body is not needed
                return status, response.headers, b""
            return (
                status,
                response.headers,
                await read_capped(response, self.params.openai.max_response_bytes),
            )

    def _outcome(
        self, status: int, headers: httpx.Headers, raw: bytes, parse: Callable[[Any], T]
    ) -> T | SampleError | _Retry:
        """What an HTTP answer means: a parsed result, a final failure, or a retry."""
        if status == 429 or status >= 500:
            self._metrics[f"http_{status}"] += 1
            return _Retry("error", f"HTTP {status}", _retry_after(headers) if status == 429 else None)
        if status >= 400:
            self._metrics[f"http_{status}"] += 1
            text = raw[:600].decode("utf-8", "replace")[:300]
            return failure(
                f"judge server {self._url} answered HTTP {status}: {text!r}; "
                "check judge params.model and params.openai (not retried)"
            )
        try:
            return parse(parse_answer(raw))
        except InvalidLogprobs as exc:
            self._metrics["invalid_logprobs"] += 1
            return failure(f"judge server {self._url} answered invalid logprobs: {exc} (not retried)")
        except (Malformed, ValueError, ArithmeticError) as exc:
            self._metrics["malformed"] += 1
            return _Retry("error", f"malformed answer ({exc})")

    def _run_all(
        self, coros: Sequence[Coroutine[Any, Any, T | SampleError]], batch_timeout_s: float | None = None
    ) -> list[T | SampleError]:
        """Run a batch's requests under the batch deadline (``batch_timeout_s``, default the params');
        requests still running then time out."""
        deadline = self.params.openai.batch_timeout_s if batch_timeout_s is None else batch_timeout_s

        async def bounded() -> list[T | SampleError]:
            tasks = [asyncio.ensure_future(coro) for coro in coros]
            if not tasks:
                return []
            _, pending = await asyncio.wait(tasks, timeout=deadline)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
            message = (
                f"judge batch deadline: batch_timeout_s={deadline} passed before this request to "
                f"{self._url} finished (judge params.openai)"
            )
            results: list[T | SampleError] = []
            for task in tasks:
                if task.cancelled() or task.exception() is not None:
                    self._metrics["deadline_cancelled"] += 1
                    results.append(failure(message, reason="timeout"))
                else:
                    results.append(task.result())
            return results

        before = Counter(self._metrics)
        results = self._loop.run(bounded())
        self._log_fast_failures(before, len(results), deadline)
        return results

    def _log_fast_failures(self, before: Counter[str], requests: int, deadline: float | None) -> None:
        """One warning per batch with the requests the deadline or the open circuit cost."""
        cancelled = self._metrics["deadline_cancelled"] - before["deadline_cancelled"]
        refused = self._metrics["breaker_refused"] - before["breaker_refused"]
        if cancelled:
            logger.warning(
                "judge %s: %d of %d requests cut by batch_timeout_s=%s (their samples time out)",
                self._url,
                cancelled,
                requests,
                deadline,
            )
        if refused:
            logger.warning(
                "judge %s: %d attempts refused by the open circuit breaker (no answer %d times in a row; "
                "cooldown %s s); their samples are errors",
                self._url,
                refused,
                self.params.openai.breaker_failures,
                self.params.openai.breaker_cooldown_s,
            )

    # ------------------------------------------------------------------ backend API
    def _probs(self, data: Any) -> ProbPair:
        return yes_no_probs(top_logprobs_of(data, self.chat), self._yes, self._no)

    def next_token_probs(
        self, chains: Sequence[Chain], wanted: Sequence[set[int]] | None = None
    ) -> list[dict[int, ProbPair] | SampleError]:
        """The wanted steps of each chain, one request per step prompt, all requests concurrent."""
        jobs = [
            (i, k)
            for i, chain in enumerate(chains)
            for k in sorted(wanted[i] if wanted is not None else range(chain.num_steps))
        ]
        answers = self._run_all(
            [self._request(self._body(chains[i].step_prompt(k), logprobs=True), self._probs) for i, k in jobs]
        )
        out: list[dict[int, ProbPair] | SampleError] = [{} for _ in chains]
        for (i, k), answer in zip(jobs, answers):
            table = out[i]
            if isinstance(answer, SampleError):
                if not isinstance(table, SampleError):
                    out[i] = answer
            elif isinstance(table, dict):
                table[k] = answer
        return out

    def generate(
        self,
        prompts: Sequence[str],
        images: Sequence[str | None] | None = None,
        batch_timeout_s: float | None = None,
    ) -> list[str | SampleError]:
        """Greedy answers, all requests concurrent.

        :param images: one image URL per prompt (``data:image/png;base64,...`` or ``https://...``) or
            ``None``; a prompt with an image is sent as chat content parts (text, ``image_url``) for a
            vision model. Needs ``chat: true``.
        :param batch_timeout_s: this call's batch deadline (default: ``params.openai.batch_timeout_s``),
            e.g. what is left of a caller's own deadline.
        """
        if images is not None:
            if len(images) != len(prompts):
                raise ValueError(f"generate: {len(images)} images for {len(prompts)} prompts")
            if not self.chat and any(image is not None for image in images):
                raise ValueError("generate(images=...) needs chat: true (images go in chat content parts)")
        shown = images if images is not None else [None] * len(prompts)
        return self._run_all(
            [
                self._request(
                    self._body(prompt, logprobs=False, image=image), lambda d: text_of(d, self.chat)
                )
                for prompt, image in zip(prompts, shown, strict=True)
            ],
            batch_timeout_s,
        )

    def metrics(self) -> dict[str, float]:
        """Counters: requests, retries, timeouts, deadline_cancelled, breaker_refused, breaker_opened,
        oversized, bad_encoding, malformed, invalid_logprobs, surrogates_replaced, http_<status>..."""
        out = {k: float(v) for k, v in self._metrics.items()}
        out["breaker_opened"] = float(self._breaker.times_opened)
        return out

    def close(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            with contextlib.suppress(RuntimeError):  # the loop is already gone
                self._loop.run(client.aclose())
        self._loop.stop()
