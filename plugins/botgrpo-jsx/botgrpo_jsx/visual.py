"""``jsx.visual`` (global): a vision model's score of the rendered component's screenshot.

1. The component is rendered to HTML by :class:`~botgrpo_jsx.renders.Renderer` (the sandboxed
   React render ``jsx.renders`` uses, shared through its cache); a component that does not render
   scores 0.0.
2. Headless Chromium (Debian's ``chromium``, or ``$BOTGRPO_JSX_CHROMIUM``) screenshots that HTML,
   offline: it runs in an empty network namespace, and the page's Content-Security-Policy allows no
   script, no request, only inline styles and ``data:`` images. It is static HTML (the DOM the render left).
3. The PNG and the spec (the row's ``spec_field``, else the prompt) go to a vision model through
   botgrpo-judge's OpenAI-compatible backend (retries, deadlines, circuit breaker, size caps) as one
   chat message with a text part and an ``image_url`` part; the answer's ``score: N`` (0..10) / 10
   is the value. An answer with no score is a :class:`SampleError` (the judge failed, not the sample).
4. The value comes back as a :class:`~botgrpo_core.signals.Value` whose ``meta`` holds the screenshot
   (``{"screenshot": PNG bytes}``), so ``botgrpo score --html`` shows what the judge saw.

One deadline, ``batch_timeout_s``, bounds a batch as a whole: the renders (the renderer's batch
deadline), then the screenshots (one at a time, each cut at the deadline), then the vision model's
requests (what is left is the judge backend's batch deadline). Samples not done by then time out.
"""

from __future__ import annotations

import base64
import contextlib
import html
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from botgrpo_core.rewards.pool import batch_deadline_error
from botgrpo_core.signals import Sample, SampleError, Value
from botgrpo_jsx.params import VisualParams
from botgrpo_jsx.renders import Renderer

_SCORE = re.compile(r"score\s*[:=]?\s*(\d+(?:\.\d+)?)", re.I)
_PNG = b"\x89PNG\r\n\x1a\n"
_PAGE = (
    "<!doctype html><html><head><meta charset='utf-8'>"
    "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; style-src 'unsafe-inline'; "
    'img-src data:"><title>component</title></head><body>{body}</body></html>'
)
RUBRIC = (
    "You are judging the user interface a React component renders, shown in the screenshot.\n"
    "The component was asked to do this:\n{spec}\n\n"
    "Judge whether the screenshot shows a UI that fulfils the request: the right elements and "
    "content, a sensible layout, readable text. Answer with one line `score: N`, N from 0 (blank or "
    "wrong) to 10 (exactly what was asked), then one sentence of reasons."
)


class ChromiumUnavailable(RuntimeError):
    """No usable Chromium (the message says how to install it)."""


def find_chromium() -> str:
    """``$BOTGRPO_JSX_CHROMIUM``, else ``chromium`` / ``chromium-browser`` on ``PATH``."""
    for candidate in (os.environ.get("BOTGRPO_JSX_CHROMIUM"), "chromium", "chromium-browser"):
        if candidate and (path := shutil.which(candidate)):
            return path
    raise ChromiumUnavailable(
        "jsx.visual needs headless Chromium: apt-get install chromium (or set $BOTGRPO_JSX_CHROMIUM)"
    )


def page(rendered_html: str) -> str:
    """A complete, script-free HTML page around a component's rendered markup."""
    return _PAGE.format(body=rendered_html)


def screenshot(chromium: str, markup: str, width: int, height: int, timeout_s: float) -> bytes | SampleError:
    """PNG of ``markup`` at ``width`` x ``height``, taken offline, or a ``SampleError``."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return SampleError(
            "jsx.visual: `unshare` (util-linux) is needed to take screenshots offline", reason="error"
        )
    with tempfile.TemporaryDirectory(prefix="botgrpo-shot-") as tmp:
        folder = Path(tmp)
        (folder / "page.html").write_text(page(markup), encoding="utf-8")
        out = folder / "shot.png"
        cmd = [
            unshare, "--user", "--map-root-user", "--net",
            chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--hide-scrollbars", "--no-first-run", "--mute-audio", f"--user-data-dir={folder / 'profile'}",
            f"--window-size={width},{height}", f"--screenshot={out}", (folder / "page.html").as_uri(),
        ]  # fmt: skip
        try:
            proc = subprocess.Popen(
                cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, cwd=tmp
            )
            try:
                proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                return SampleError(f"jsx.visual: Chromium took over {timeout_s:g} s", reason="timeout")
            finally:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, 9)
                proc.wait()
        except OSError as exc:
            return SampleError(f"jsx.visual: could not start Chromium: {exc}", reason="error")
        data = out.read_bytes() if out.is_file() else b""
    if not data.startswith(_PNG):
        return SampleError("jsx.visual: Chromium wrote no screenshot", reason="error")
    return data


def _late(batch_timeout_s: float, what: str) -> SampleError:
    """The ``timeout`` error of a sample the batch deadline cut (:func:`batch_deadline_error`)."""
    return batch_deadline_error(batch_timeout_s, what, params="jsx.visual")


def screenshots(
    chromium: str, markups: dict[int, str], params: VisualParams, end: float
) -> dict[int, bytes | SampleError]:
    """A screenshot of each markup in turn (key: sample index), until the batch deadline ``end``
    (a :func:`time.monotonic` value): each is bounded by ``screenshot_timeout_s`` and by the time left,
    and those not taken by ``end`` are ``timeout`` errors naming ``batch_timeout_s``."""
    shots: dict[int, bytes | SampleError] = {}
    for i, markup in markups.items():
        left = end - time.monotonic()
        if left <= 0:
            shots[i] = _late(params.batch_timeout_s, "before this screenshot started")
            continue
        limit = min(params.screenshot_timeout_s, left)
        shot = screenshot(chromium, markup, params.width, params.height, limit)
        if isinstance(shot, SampleError) and shot.reason == "timeout" and limit < params.screenshot_timeout_s:
            shot = _late(params.batch_timeout_s, f"before this screenshot finished ({limit:.3g} s were left)")
        shots[i] = shot
    return shots


def parse_score(answer: str, top: float = 10.0) -> float | None:
    """The last ``score: N`` of an answer, as N / top clipped to [0, 1]; ``None`` if there is none."""
    found = _SCORE.findall(answer)
    if not found:
        return None
    return max(0.0, min(1.0, float(found[-1]) / top))


def _vision_backend(params: VisualParams) -> Any:
    """botgrpo-judge's OpenAI-compatible backend, sending each prompt with its screenshot."""
    from botgrpo_judge.backends.openai_http import OpenAIBackend
    from botgrpo_judge.params import JudgeParams

    judge = JudgeParams(
        model=params.model,
        backend="openai",
        mode="generate",
        chat=True,
        max_new_tokens=params.max_new_tokens,
        openai={
            "base_url": params.base_url,
            "api_key_env": params.api_key_env,
            "timeout_s": params.judge_timeout_s,
        },
    )

    return OpenAIBackend(judge)  # generate(prompts, images=...) sends each screenshot as an image part


class VisualScorer:
    """``jsx.visual``: the vision model's 0..1 score of the screenshot (0.0 when it does not render)."""

    def __init__(self, params: VisualParams) -> None:
        self.params = params
        self.chromium = find_chromium()
        self.renderer = Renderer(params)
        self.backend = _vision_backend(params)

    def close(self) -> None:
        self.renderer.close()
        self.backend.close()

    def score(self, samples: Sequence[Sample]) -> list[float | Value | SampleError]:
        """Render, screenshot and judge ``samples``, all within ``batch_timeout_s`` (see the module doc)."""
        p = self.params
        end = time.monotonic() + p.batch_timeout_s  # the renderer's own deadline starts just after
        out: list[float | Value | SampleError] = [0.0] * len(samples)
        markups: dict[int, str] = {}
        for i, r in enumerate(self.renderer.render(samples)):
            reply = r.get("reply")
            if isinstance(reply, dict) and reply.get("ok") is True:
                markups[i] = str(reply.get("html", ""))
            # else: does not render (or its render timed out): nothing to look at, 0.0
        shots: dict[int, bytes] = {}
        prompts: dict[int, str] = {}
        for i, shot in screenshots(self.chromium, markups, p, end).items():
            if isinstance(shot, SampleError):
                out[i] = shot
                continue
            shots[i] = shot
            spec = samples[i].row.get(p.spec_field) if p.spec_field else None
            prompts[i] = RUBRIC.format(spec=html.unescape(str(spec if spec else samples[i].prompt))[:4000])
        order = list(prompts)
        left = end - time.monotonic()
        if order and left <= 0:
            for i in order:
                out[i] = _late(p.batch_timeout_s, "before the vision model was asked")
            return out
        images = ["data:image/png;base64," + base64.b64encode(shots[i]).decode() for i in order]
        answers = self._judge([prompts[i] for i in order], images, left) if order else []
        for i, answer in zip(order, answers, strict=True):
            if isinstance(answer, SampleError):
                cut = answer.reason == "timeout" and time.monotonic() >= end - 0.1  # asyncio's clock slack
                out[i] = (
                    _late(p.batch_timeout_s, f"before the vision model answered ({answer})")
                    if cut
                    else answer
                )
                continue
            value = parse_score(answer)
            out[i] = (
                Value(value, {"screenshot": shots[i]})
                if value is not None
                else SampleError(
                    f"jsx.visual: the judge's answer has no `score: N`: {answer[:200]!r}", reason="error"
                )
            )
        return out

    def _judge(self, prompts: list[str], images: list[str], left: float) -> list[Any]:
        """The vision model's answers, with ``left`` seconds as the judge backend's batch deadline."""
        return list(self.backend.generate(prompts, images=images, batch_timeout_s=left))
