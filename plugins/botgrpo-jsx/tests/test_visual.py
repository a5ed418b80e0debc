"""jsx.visual end to end: real React render, real headless Chromium, a local OpenAI-compatible server."""

from __future__ import annotations

import base64
import io
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from botgrpo_core.signals import Sample, Value

CORPUS = Path(__file__).parent / "data" / "components"
OK = "```jsx\nexport default function Todo() {\n  return <div><h1>Todo</h1><ul><li>milk</li><li>eggs</li></ul><button>Add</button></div>;\n}\n```"
CRASH = "```jsx\nexport default function Todo() {\n  return <p>{missing.value}</p>;\n}\n```"


class VisionServer:
    """An OpenAI-compatible /v1/chat/completions on 127.0.0.1 that records requests, answers a score."""

    def __init__(self, answer: str = "score: 7\nA todo list with a heading and a button.") -> None:
        self.requests: list[dict] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append({"path": self.path, "body": body})
                reply = json.dumps(
                    {"choices": [{"index": 0, "message": {"role": "assistant", "content": answer}}]}
                )
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply.encode())

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def visual_ready() -> None:
    pytest.importorskip("botgrpo_judge", reason="jsx.visual talks to the vision model through botgrpo-judge")
    from botgrpo_jsx import nodeenv
    from botgrpo_jsx.sandbox import SandboxUnavailable, check_boundary
    from botgrpo_jsx.visual import ChromiumUnavailable, find_chromium

    node = nodeenv.find_node()
    reason = nodeenv.unavailable_reason()
    if reason is not None or node is None:
        pytest.skip(reason or "no Node.js")
    try:
        check_boundary(node.node)
        find_chromium()
    except (SandboxUnavailable, ChromiumUnavailable) as exc:
        pytest.skip(str(exc))


@pytest.fixture
def server():
    s = VisionServer()
    yield s
    s.close()


def _image(png: bytes):
    from PIL import Image

    return Image.open(io.BytesIO(png)).convert("RGB")


def test_screenshots_of_real_components_are_not_blank(visual_ready: None) -> None:
    from botgrpo_jsx.params import RendersParams
    from botgrpo_jsx.renders import Renderer
    from botgrpo_jsx.visual import find_chromium, screenshot

    files = [
        CORPUS / n
        for n in ("reactstrap__src_Badge.jsx", "semantic-ui-react__src_elements_Button_ButtonContent.jsx")
    ]
    files = [f for f in files if f.exists()] or sorted(CORPUS.iterdir())[:2]
    renderer = Renderer(RendersParams())
    samples = [Sample("", OK)] + [Sample("", f"```jsx\n{f.read_text()}```") for f in files]
    try:
        rendered = renderer.render(samples)
    finally:
        renderer.close()
    for sample, r in zip(samples, rendered, strict=True):
        assert r["reply"]["ok"] is True, (sample.completion[:80], r["reply"])
        markup = r["reply"]["html"] or "<div></div>"
        png = screenshot(find_chromium(), markup, 640, 400, 30.0)
        assert isinstance(png, bytes), png
        image = _image(png)
        assert image.size == (640, 400)
        if r["reply"]["html"]:
            assert len(image.getcolors(maxcolors=1 << 16) or range(2)) > 1  # something was drawn


def test_visual_sends_the_screenshot_and_reads_the_score(visual_ready: None, server: VisionServer) -> None:
    from botgrpo_jsx.params import VisualParams
    from botgrpo_jsx.plugin import make_visual

    scorer = make_visual(VisualParams(model="vision-test", base_url=server.url, width=640, height=400))
    try:
        spec = "A todo list with a heading, two items and an Add button."
        result = scorer.score(
            [Sample("Write a todo list", OK, row={"spec": spec}), Sample("Write it", CRASH)]
        )
    finally:
        scorer.close()
    # the crash renders nothing: no request, 0.0
    assert [getattr(r, "value", r) for r in result] == [0.7, 0.0]
    assert isinstance(result[0], Value) and result[1] == 0.0
    (request,) = server.requests
    assert request["path"] == "/v1/chat/completions" and request["body"]["model"] == "vision-test"
    (message,) = request["body"]["messages"]
    text, image = message["content"]
    assert text["type"] == "text" and spec in text["text"]
    assert image["type"] == "image_url" and image["image_url"]["url"].startswith("data:image/png;base64,")
    png = base64.b64decode(image["image_url"]["url"].split(",", 1)[1])
    assert _image(png).size == (640, 400) and png == result[0].meta["screenshot"]


def test_visual_meets_the_signal_contract(visual_ready: None, server: VisionServer) -> None:
    from botgrpo_core.signals.testing import check_signal_contract, make_samples
    from botgrpo_jsx.plugin import SIGNALS

    (spec,) = [s for s in SIGNALS if s.name == "jsx.visual"]
    samples = make_samples([OK, CRASH, "no code"], prompt="Write a todo list")
    results = check_signal_contract(spec, samples, {"model": "m", "base_url": server.url})
    assert [getattr(r, "value", r) for r in results] == [0.7, 0.0, 0.0]


def test_score_html_shows_the_screenshot_the_judge_saw(
    visual_ready: None, server: VisionServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`botgrpo score --html` end to end: the real render, Chromium and the local vision server; the page
    shows the very PNG the judge was sent, as a data: URI, and --json carries it as base64."""
    from botgrpo_core.cli.main import main

    run = tmp_path / "run.yaml"
    run.write_text(
        "rewards:\n  signals:\n    - name: jsx.visual\n      weight: 1.0\n"
        f"      params: {{model: vision-test, base_url: '{server.url}', width: 640, height: 400}}\n"
    )
    data = tmp_path / "in.jsonl"
    rows = [{"prompt": "Write a todo list", "completion": OK}, {"prompt": "Write it", "completion": CRASH}]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    page = tmp_path / "view.html"
    code = main(
        ["score", str(run), "--input", str(data), "--tokenizer", "tiny", "--html", str(page), "--json"]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    ok, crash = (s["signals"]["jsx.visual"] for s in json.loads(out)["samples"])
    assert ok["value"] == 0.7 and crash["value"] == 0.0 and crash["meta"] == {}
    (request,) = server.requests
    sent = request["body"]["messages"][0]["content"][1]["image_url"]["url"]
    assert ok["meta"]["screenshot"]["png_base64"] == sent.split(",", 1)[1]
    html_text = page.read_text(encoding="utf-8")
    (src,) = re.findall(r'<img src="([^"]+)"', html_text)
    assert src == sent  # the one screenshot, the one the judge saw
    assert _image(base64.b64decode(src.split(",", 1)[1])).size == (640, 400)


def test_score_parsing() -> None:
    from botgrpo_jsx.visual import parse_score

    assert parse_score("score: 7") == 0.7
    assert parse_score("Score = 10. Great.") == 1.0
    assert parse_score("I think score: 3 ... final score: 12") == 1.0  # the last one, clipped
    assert parse_score("looks fine") is None
