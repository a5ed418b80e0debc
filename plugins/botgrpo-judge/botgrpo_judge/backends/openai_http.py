"""The ``openai`` backend: any OpenAI-compatible server (vLLM serve, SGLang, TGI, llama.cpp server, hosted APIs).

``logprob`` mode sends one request per step prompt (``max_tokens: 1`` with the top-k logprobs of the first
generated token) and sums the probabilities of the yes/no token strings found in that top k; a server with
prefix caching (vLLM, SGLang) shares the work of a completion's step prompts. ``generate`` mode asks for a
greedy answer. ``chat: true`` uses ``/chat/completions`` with the prompt as one user message.

Requests run on an asyncio loop in a private thread (so ``score`` works from any caller, event loop or not)
with at most ``concurrency`` in flight. Each attempt has a hard deadline of ``timeout_s``; a 429, a 5xx, a
timeout, a dropped connection or a malformed answer is retried up to ``max_retries`` times after an
exponential backoff with jitter (``Retry-After`` is honoured up to ``backoff_max_s``). Other 4xx answers are
not retried. A request that still fails becomes that sample's ``SampleError``; the batch goes on.

The API key is read from the environment variable named by ``api_key_env`` and kept only in the request
headers: it is never part of the params, an error message, a log line or ``repr``.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import random
import threading
import weakref
from collections import Counter
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, TypeVar

import httpx

from botgrpo_core.signals import SampleError
from botgrpo_judge.backends.base import ProbPair, failure
from botgrpo_judge.chains import Chain
from botgrpo_judge.params import JudgeParams

T = TypeVar("T")


class _Malformed(Exception):
    """The server answered 200 with something that is not the expected JSON."""


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
    cap = min(max_s, base_s * (2.0**attempt))
    delay = cap / 2 + rng.uniform(0, cap / 2)
    if retry_after is not None and math.isfinite(retry_after) and retry_after > 0:
        delay = max(delay, min(retry_after, max_s))
    return delay


def _retry_after(response: httpx.Response) -> float | None:
    try:
        return float(response.headers.get("retry-after", ""))
    except ValueError:
        return None


def top_logprobs_of(data: Any, chat: bool) -> list[tuple[str, float]]:
    """``(token text, logprob)`` of the first generated token's top-k, from a completions or chat answer."""
    try:
        logprobs = data["choices"][0]["logprobs"]
        if chat:
            entries = logprobs["content"][0]["top_logprobs"]
            pairs = [(str(e["token"]), float(e["logprob"])) for e in entries]
        else:
            table = logprobs["top_logprobs"][0]
            pairs = [(str(tok), float(lp)) for tok, lp in table.items()]
    except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
        raise _Malformed(f"no top logprobs in the answer ({type(exc).__name__}: {exc})") from exc
    if not pairs:
        raise _Malformed("empty top logprobs; does the server support logprobs?")
    return pairs


def text_of(data: Any, chat: bool) -> str:
    """The generated text of a completions or chat answer."""
    try:
        choice = data["choices"][0]
        text = choice["message"]["content"] if chat else choice["text"]
    except (KeyError, IndexError, TypeError) as exc:
        raise _Malformed(f"no generated text in the answer ({type(exc).__name__}: {exc})") from exc
    if not isinstance(text, str):
        raise _Malformed("the generated text is not a string")
    return text


class OpenAIBackend:
    """Judge behind an OpenAI-compatible HTTP server."""

    def __init__(self, params: JudgeParams) -> None:
        self.params = params
        opts = params.openai
        headers = {"Content-Type": "application/json"}
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

    def _body(self, prompt: str, *, logprobs: bool) -> dict[str, Any]:
        opts = self.params.openai
        body: dict[str, Any] = {"model": self.params.model, "temperature": 0.0}
        if self.chat:
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
        """POST with deadline, retries and backoff; the parsed answer, or a ``SampleError``."""
        opts = self.params.openai
        client, semaphore = await self._ensure_client()
        reason, message = "error", ""
        retry_after: float | None = None
        for attempt in range(opts.max_retries + 1):
            if attempt:
                self._metrics["retries"] += 1
                delay = backoff_delay(
                    attempt - 1, opts.backoff_base_s, opts.backoff_max_s, self._rng, retry_after
                )
                await asyncio.sleep(delay)
            retry_after = None
            try:
                async with semaphore:
                    self._metrics["requests"] += 1
                    response = await asyncio.wait_for(
                        client.post(self.path, json=body, headers=self._headers), opts.timeout_s
                    )
            except (TimeoutError, asyncio.TimeoutError, httpx.TimeoutException):
                self._metrics["timeouts"] += 1
                reason, message = "timeout", f"no answer within timeout_s={opts.timeout_s}"
                continue
            except httpx.TransportError as exc:
                self._metrics["connection_errors"] += 1
                reason, message = "error", f"connection failed ({type(exc).__name__})"
                continue
            status = response.status_code
            if status == 429 or status >= 500:
                self._metrics[f"http_{status}"] += 1
                retry_after = _retry_after(response) if status == 429 else None
                reason, message = "error", f"HTTP {status}"
                continue
            if status >= 400:
                self._metrics[f"http_{status}"] += 1
                return failure(
                    f"judge server {opts.base_url}{self.path} answered HTTP {status}: {response.text[:300]!r}; "
                    "check judge params.model and params.openai (not retried)"
                )
            try:
                return parse(response.json())
            except (ValueError, _Malformed) as exc:
                self._metrics["malformed"] += 1
                reason, message = "error", f"malformed answer ({exc})"
                continue
        self._metrics["failed"] += 1
        return failure(
            f"judge request to {opts.base_url}{self.path} failed after {opts.max_retries + 1} attempts: {message}",
            reason=reason,
        )

    def _run_all(self, coros: Sequence[Awaitable[T]]) -> list[T]:
        async def gather() -> list[T]:
            return list(await asyncio.gather(*coros))

        return self._loop.run(gather())

    # ------------------------------------------------------------------ backend API
    def _probs(self, data: Any) -> ProbPair:
        pairs = top_logprobs_of(data, self.chat)
        p_yes = sum(math.exp(lp) for tok, lp in pairs if tok in self._yes)
        p_no = sum(math.exp(lp) for tok, lp in pairs if tok in self._no)
        return p_yes, p_no

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

    def generate(self, prompts: Sequence[str]) -> list[str | SampleError]:
        """Greedy answers, all requests concurrent."""
        return self._run_all(
            [
                self._request(self._body(prompt, logprobs=False), lambda d: text_of(d, self.chat))
                for prompt in prompts
            ]
        )

    def metrics(self) -> dict[str, float]:
        return {k: float(v) for k, v in self._metrics.items()}

    def close(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            with contextlib.suppress(RuntimeError):  # the loop is already gone
                self._loop.run(client.aclose())
        self._loop.stop()
