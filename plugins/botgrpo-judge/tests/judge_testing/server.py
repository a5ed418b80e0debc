"""A small OpenAI-compatible HTTP server for a local ``transformers`` causal LM, with fault injection.

It serves ``POST /v1/completions`` and ``POST /v1/chat/completions`` (greedy decoding, ``logprobs`` /
``top_logprobs`` of the generated tokens) and ``GET /v1/models``, the subset the ``openai`` backend uses.
Concurrent requests are batched: a worker thread takes every request waiting in its queue and runs them in
one padded forward pass, as real inference servers do, so concurrency pays off.

It exists so the ``openai`` backend is tested against a real server on loopback, and for trying a judge
locally (``cd plugins/botgrpo-judge/tests && python -m judge_testing.server --model DIR --port 8000``). :meth:`JudgeServer.add_fault` makes it
misbehave on purpose: stall (hold the connection open without answering), answer 500 or 429, send
malformed JSON or a 200 without logprobs, or close the connection without an answer.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import torch

from judge_testing.batcher import Batcher

FAULTS = ("stall", "500", "429", "malformed", "no_logprobs", "close")


@dataclass
class _FaultRule:
    kind: str
    match: str | None
    remaining: int | None  # None: every matching request


class _QuietHTTPServer(ThreadingHTTPServer):
    """A client that gave up (its timeout) closes the socket under a handler: not worth a traceback."""

    daemon_threads = True
    judge: JudgeServer
    request_queue_size = 128  # the default 5 drops SYNs under a client's 16 parallel connects (1 s retries)

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


class JudgeServer:
    """OpenAI-compatible server on ``host:port`` (port 0 picks a free one) for a transformers model.

    :param model: a causal LM (eval mode).
    :param tokenizer: its tokenizer (a chat template is needed for ``/chat/completions``).
    :param model_name: the name reported by ``/v1/models`` (any name is accepted in requests).
    :param api_key: when set, requests without ``Authorization: Bearer <api_key>`` get 401.
    :param latency_s: extra delay before each answer (benchmarks: a stand-in for network and queueing).
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        model_name: str = "judge",
        api_key: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        max_batch: int = 64,
        latency_s: float = 0.0,
    ) -> None:
        self.model, self.tokenizer, self.model_name = model, tokenizer, model_name
        self._api_key = api_key
        self.latency_s = latency_s
        self.counts: Counter[str] = Counter()
        self.in_flight = 0
        self.max_in_flight = 0  # most requests handled at once (checks a client's concurrency bound)
        self.release = threading.Event()  # set on stop: stalled handlers give up
        self._faults: list[_FaultRule] = []
        self._lock = threading.Lock()
        self._tok_lock = threading.Lock()  # HF fast tokenizers are not safe to share across threads
        self._texts: dict[int, str] = {}
        self._batcher = Batcher(model, tokenizer, max_batch)
        self._httpd = _QuietHTTPServer((host, port), _Handler)
        self._httpd.judge = self
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="judge-server", daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def batches(self) -> int:
        """Forward batches run so far."""
        return self._batcher.batches

    def start(self) -> JudgeServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.release.set()
        if self._thread.is_alive():  # shutdown() waits for serve_forever: only when it runs
            self._httpd.shutdown()
        self._httpd.server_close()
        self._batcher.stop()

    def __enter__(self) -> JudgeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def add_fault(self, kind: str, *, match: str | None = None, times: int | None = None) -> None:
        """Misbehave on requests whose prompt contains ``match`` (all when ``None``), ``times`` times (or always)."""
        if kind not in FAULTS:
            raise ValueError(f"unknown fault {kind!r}; choose from {FAULTS}")
        with self._lock:
            self._faults.append(_FaultRule(kind, match, times))

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()

    def _take_fault(self, prompt: str) -> str | None:
        with self._lock:
            for rule in self._faults:
                if (rule.match is None or rule.match in prompt) and (
                    rule.remaining is None or rule.remaining > 0
                ):
                    if rule.remaining is not None:
                        rule.remaining -= 1
                    self.counts[f"fault_{rule.kind}"] += 1
                    return rule.kind
        return None

    def authorized(self, header: str | None) -> bool:
        return self._api_key is None or header == f"Bearer {self._api_key}"

    # ------------------------------------------------------------------ the two endpoints
    def _token_text(self, token_id: int) -> str:
        text = self._texts.get(token_id)
        if text is None:
            text = self._texts[token_id] = self.tokenizer.decode([token_id])
        return text

    def complete(self, body: dict[str, Any], chat: bool) -> dict[str, Any]:
        """Answer a (chat) completions request body."""
        with self._tok_lock:
            if chat:
                text = self.tokenizer.apply_chat_template(
                    body["messages"], tokenize=False, add_generation_prompt=True
                )
                prompt_ids = self.tokenizer.encode(text, add_special_tokens=False)
                top_k = int(body.get("top_logprobs") or 0) if body.get("logprobs") else 0
            else:
                prompt = body["prompt"]
                if not isinstance(prompt, str):
                    raise ValueError("this server takes one string prompt per request")
                prompt_ids = self.tokenizer.encode(prompt)
                top_k = int(body.get("logprobs") or 0)
        max_tokens = int(body.get("max_tokens") or body.get("max_completion_tokens") or 16)
        result = self._batcher.submit(prompt_ids, max_tokens, top_k)
        with self._tok_lock:
            return self._answer(body, chat, prompt_ids, result, top_k)

    def _answer(
        self, body: dict[str, Any], chat: bool, prompt_ids: list[int], result: dict[str, Any], top_k: int
    ) -> dict[str, Any]:
        tokens = result["tokens"]
        text = self.tokenizer.decode(tokens, skip_special_tokens=True)
        finish = "stop" if tokens and tokens[-1] == self.tokenizer.eos_token_id else "length"
        choice: dict[str, Any] = {"index": 0, "finish_reason": finish}
        logprobs: dict[str, Any] | None = None
        if top_k and chat:
            logprobs = {
                "content": [
                    {
                        "token": self._token_text(tok),
                        "logprob": lp,
                        "top_logprobs": [{"token": self._token_text(i), "logprob": v} for i, v in top],
                    }
                    for tok, lp, top in zip(tokens, result["logprobs"], result["top"])
                ]
            }
        elif top_k:
            tables = []
            for top in result["top"]:
                table: dict[str, float] = {}
                for i, v in top:  # ids decoding to the same text: keep the likelier (as servers do)
                    table.setdefault(self._token_text(i), v)
                tables.append(table)
            offsets, position = [], 0
            for tok in tokens:
                offsets.append(position)
                position += len(self._token_text(tok))
            logprobs = {
                "tokens": [self._token_text(t) for t in tokens],
                "token_logprobs": result["logprobs"],
                "top_logprobs": tables,
                "text_offset": offsets,
            }
        if chat:
            choice["message"] = {"role": "assistant", "content": text}
        else:
            choice["text"] = text
        choice["logprobs"] = logprobs
        usage = {"prompt_tokens": len(prompt_ids), "completion_tokens": len(tokens)}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        return {
            "id": f"cmpl-{self.counts['requests']}",
            "object": "chat.completion" if chat else "text_completion",
            "created": int(time.time()),
            "model": body.get("model", self.model_name),
            "choices": [choice],
            "usage": usage,
        }


class _Handler(BaseHTTPRequestHandler):
    """One request to a :class:`JudgeServer`, reached as ``self.judge`` (set on the HTTP server)."""

    protocol_version = "HTTP/1.1"  # keep-alive, as clients expect
    server: _QuietHTTPServer

    @property
    def judge(self) -> JudgeServer:
        return self.server.judge

    def setup(self) -> None:
        super().setup()
        # headers and body go out in two writes: without this, Nagle + delayed ACK add ~40 ms per answer
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests and benchmarks
        return

    def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(payload)

    def _json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(obj).encode(), headers)

    def do_GET(self) -> None:
        if self.path.rstrip("/") == "/v1/models":
            self._json(200, {"object": "list", "data": [{"id": self.judge.model_name, "object": "model"}]})
        else:
            self._json(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        with self.judge._lock:
            self.judge.counts["requests"] += 1
            self.judge.in_flight += 1
            self.judge.max_in_flight = max(self.judge.max_in_flight, self.judge.in_flight)
        try:
            self._post(raw)
        finally:
            with self.judge._lock:
                self.judge.in_flight -= 1

    def _post(self, raw: bytes) -> None:
        if not self.judge.authorized(self.headers.get("Authorization")):
            self._json(401, {"error": {"message": "invalid or missing API key"}})
            return
        route = self.path.rstrip("/")
        if route not in ("/v1/completions", "/v1/chat/completions"):
            self._json(404, {"error": {"message": f"no route {self.path}"}})
            return
        try:
            body = json.loads(raw)
        except ValueError:
            self._json(400, {"error": {"message": "request body is not JSON"}})
            return
        chat = route.endswith("chat/completions")
        prompt = json.dumps(body.get("messages")) if chat else str(body.get("prompt"))
        fault = self.judge._take_fault(prompt)
        if fault == "stall":
            self.judge.release.wait()
            self.close_connection = True
            return
        if fault == "close":
            self.close_connection = True
            return
        if fault == "500":
            self._json(500, {"error": {"message": "injected server error"}})
            return
        if fault == "429":
            self._json(429, {"error": {"message": "injected rate limit"}}, {"Retry-After": "0"})
            return
        if fault == "malformed":
            self._send(200, b'{"choices": [{"text": "unterminated')
            return
        try:
            answer = self.judge.complete(body, chat)
        except (KeyError, ValueError, TypeError) as exc:
            self._json(400, {"error": {"message": f"bad request: {exc}"}})
            return
        except Exception as exc:
            self._json(500, {"error": {"message": f"server error: {exc!r}"}})
            return
        if fault == "no_logprobs":
            answer["choices"][0]["logprobs"] = None
        if self.judge.latency_s:
            self.judge.release.wait(self.judge.latency_s)
        self._json(200, answer)


@contextmanager
def serve(model: Any, tokenizer: Any, **kwargs: Any) -> Iterator[JudgeServer]:
    """Run a :class:`JudgeServer` for the duration of a ``with`` block."""
    server = JudgeServer(model, tokenizer, **kwargs).start()
    try:
        yield server
    finally:
        server.stop()


def main(argv: list[str] | None = None) -> None:
    """``python -m judge_testing.server --model DIR``: serve a local model until interrupted."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="local model folder")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument(
        "--api-key-env", default=None, help="environment variable holding the required API key"
    )
    parser.add_argument("--latency-s", type=float, default=0.0, help="extra delay per answer (benchmarks)")
    args = parser.parse_args(argv)

    torch.set_num_threads(1)
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForCausalLM.from_pretrained(args.model).eval()
    key = os.environ.get(args.api_key_env) if args.api_key_env else None
    server = JudgeServer(
        model,
        tokenizer,
        model_name=args.model,
        api_key=key,
        host=args.host,
        port=args.port,
        latency_s=args.latency_s,
    )
    print(f"serving {args.model} at {server.url}", flush=True)
    server.start()
    try:
        server._thread.join()
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
