"""``OpenAIBackend.generate(prompts, images=...)``: a prompt with an image goes out as chat content parts
(text, then ``image_url``), to a real HTTP server on loopback that records what it got."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest

from botgrpo_judge.backends.openai_http import OpenAIBackend
from botgrpo_judge.params import JudgeParams

PNG = "data:image/png;base64,iVBORw0KGgo="


class _Recorder(BaseHTTPRequestHandler):
    bodies: ClassVar[list[dict[str, Any]]] = []

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).bodies.append(body)
        content = body["messages"][0]["content"]
        seen = "an image" if isinstance(content, list) else "text only"
        reply = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": seen}}]})
        payload = reply.encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@pytest.fixture
def server() -> Iterator[str]:
    _Recorder.bodies = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    finally:
        httpd.shutdown()
        httpd.server_close()


def _backend(url: str, chat: bool = True) -> OpenAIBackend:
    params = JudgeParams(
        model="vision", backend="openai", mode="generate", chat=chat, openai={"base_url": url}
    )
    return OpenAIBackend(params)


def test_images_go_as_content_parts_and_prompts_without_one_as_text(server: str) -> None:
    backend = _backend(server)
    try:
        answers = backend.generate(["rate this page", "same words", "same words"], images=[PNG, PNG, None])
    finally:
        backend.close()
    assert answers == ["an image", "an image", "text only"]  # one request per prompt, none merged
    by_text = sorted(_Recorder.bodies, key=lambda b: json.dumps(b))
    parts = [b["messages"][0]["content"] for b in by_text if isinstance(b["messages"][0]["content"], list)]
    assert len(parts) == 2
    for content in parts:
        assert content[0]["type"] == "text" and content[1] == {"type": "image_url", "image_url": {"url": PNG}}
    assert {c[0]["text"] for c in parts} == {"rate this page", "same words"}


def test_images_need_one_per_prompt_and_chat(server: str) -> None:
    backend = _backend(server)
    with pytest.raises(ValueError, match="1 images for 2 prompts"):
        backend.generate(["a", "b"], images=[PNG])
    backend.close()
    completions = _backend(server, chat=False)
    with pytest.raises(ValueError, match=r"needs chat: true"):
        completions.generate(["a"], images=[PNG])
    completions.close()
    assert _Recorder.bodies == []  # refused before any request
