"""Model-free loopback servers that misbehave on purpose, for the HTTP judge's bounds.

- :class:`SilentServer` accepts TCP connections and never answers (a hung inference server);
- :class:`ScriptedServer` answers every POST as scripted: a raw body (NaN logprobs, deep JSON, any
  bytes), a stall, or a streamed body of any size (with or without ``Content-Length``), and records
  what it received.

Both listen on 127.0.0.1 only; every loop is bounded (accepts poll a stop flag, a streamed body stops
at its size or when the client hangs up, and every connection has a socket timeout).
"""

from __future__ import annotations

import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_CHUNK = 64 * 1024
_SOCKET_TIMEOUT_S = 5.0


class SilentServer:
    """Accepts connections on 127.0.0.1 and holds them open without reading or answering."""

    def __init__(self) -> None:
        self._socket = socket.create_server(("127.0.0.1", 0))
        self._socket.settimeout(0.05)
        self._stop = threading.Event()
        self._connections: list[socket.socket] = []
        self.accepted = 0
        self._thread = threading.Thread(target=self._accept_loop, name="silent-server", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._socket.getsockname()[1]}/v1"

    def _accept_loop(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self._socket.accept()
            except TimeoutError:
                continue
            except OSError:  # closed by stop()
                return
            self._connections.append(connection)
            self.accepted += 1

    def __enter__(self) -> SilentServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        for connection in self._connections:
            connection.close()
        self._socket.close()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # the default 5 drops SYNs under parallel connects (1 s retries)


class ScriptedServer:
    """HTTP/1.1 on 127.0.0.1 answering every POST with the current script (see the ``reply``... methods)."""

    def __init__(self) -> None:
        self.received: list[bytes] = []
        self.bytes_sent = 0
        self.release = threading.Event()  # ends stalls
        self._script: tuple[Any, ...] = ("reply", 200, b"{}", None)
        self._lock = threading.Lock()
        self._httpd = _Server(("127.0.0.1", 0), _make_handler(self))
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(0.05,), name="scripted-server", daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def reply(self, body: bytes, status: int = 200, encoding: str | None = None) -> None:
        """Answer ``status`` with exactly ``body`` (``Content-Length`` set; ``Content-Encoding: encoding``
        when given, the body then already encoded as it says)."""
        self._script = ("reply", status, body, encoding)

    def stall(self) -> None:
        """Read each request, then never answer (until the server stops)."""
        self._script = ("stall",)

    def stream(self, size: int, *, declare_length: bool) -> None:
        """Answer 200 with ``size`` bytes (the start of a JSON answer, then blanks) in 64 KiB chunks."""
        self._script = ("stream", size, declare_length)

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self._httpd.shutdown()
        self._httpd.server_close()


def _make_handler(server: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            self.connection.settimeout(_SOCKET_TIMEOUT_S)

        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_POST(self) -> None:
            with server._lock:
                server.received.append(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            script = server._script
            try:
                if script[0] == "reply":
                    self._reply(script[1], script[2], script[3])
                elif script[0] == "stall":
                    server.release.wait()
                    self.close_connection = True
                else:
                    self._stream(script[1], script[2])
            except (BrokenPipeError, ConnectionResetError, TimeoutError):
                self.close_connection = True  # the client hung up (as it should on an oversized body)

        def _reply(self, status: int, body: bytes, encoding: str | None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            if encoding is not None:
                self.send_header("Content-Encoding", encoding)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _stream(self, size: int, declare_length: bool) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            if declare_length:
                self.send_header("Content-Length", str(size))
            else:
                self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.close_connection = True
            sent, head = 0, b'{"choices": [{"text": "'
            while sent < size:
                data = (head + b" " * _CHUNK)[: min(_CHUNK, size - sent)]
                head = b""
                self.wfile.write(data if declare_length else b"%x\r\n%s\r\n" % (len(data), data))
                sent += len(data)
                with server._lock:
                    server.bytes_sent = sent
            if not declare_length:
                self.wfile.write(b"0\r\n\r\n")

    return Handler


def completion_answer(top_logprobs: str) -> bytes:
    """A ``/completions`` logprob answer whose first token's top-logprob table is the raw JSON text given.

    Raw text, so a test can send what a broken server would: ``{" yes": NaN}``, strings, 1e400...
    """
    return (
        '{"object": "text_completion", "choices": [{"index": 0, "text": " yes", "logprobs": '
        '{"tokens": [" yes"], "token_logprobs": [-0.1], "top_logprobs": [' + top_logprobs + "]}}]}"
    ).encode()


def chat_answer(top_logprobs: str) -> bytes:
    """A ``/chat/completions`` logprob answer whose first token's ``top_logprobs`` list is the raw JSON given."""
    return (
        '{"object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant", '
        '"content": " yes"}, "logprobs": {"content": [{"token": " yes", "logprob": -0.1, "top_logprobs": '
        + top_logprobs
        + "}]}}]}"
    ).encode()


def text_answer(text_json: str) -> bytes:
    """A ``/completions`` answer (generate mode) whose ``text`` is the raw JSON value given."""
    return ('{"object": "text_completion", "choices": [{"index": 0, "text": ' + text_json + "}]}").encode()
