"""Every jsx signal has a batch deadline, ``batch_timeout_s``. The static signals (tree-sitter work in the
killable pool or inline) bounded each sample (``timeout_s``) but not a batch, which could take
samples x timeout_s / workers; ``jsx.visual`` took its screenshots one after another, up to
samples x ``screenshot_timeout_s``; ``jsx.compiles`` on esbuild had only the Node worker's per-request
deadlines. Now the samples cut by the deadline time out (naming the key) and those finished before it
keep their results (and a Node worker still busy then is killed, so the next batch gets a fresh one).

The slow samples are real: 1 MB of random characters, which tree-sitter's error recovery takes about a
second to parse once ``parse_timeout_s`` allows it (measured 1.1 s on the 2-core machine)."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from botgrpo_core.rewards.pool import past_batch_deadline
from botgrpo_core.signals import Sample, SampleError, Value
from botgrpo_jsx.execution import close_pools
from botgrpo_jsx.params import CommonParams, CompilesParams, RendersParams, SyntaxParams, VisualParams
from botgrpo_jsx.plugin import make_compiles, make_syntax

VALID = "```jsx\nexport default function A() { return <div className='ok'/>; }\n```"
OK = (
    "```jsx\nexport default function Todo() {\n  return <div><h1>Todo</h1><button>Add</button></div>;\n}\n```"
)
_rng = random.Random(0)
GARBAGE = "".join(chr(_rng.randrange(1, 0x2FF)) for _ in range(1 << 20))
#: Slack over the configured deadline that a loaded 2-core machine keeps (a worker start, the kills).
MARGIN_S = 10.0


def _slow_batch(n: int) -> list[Sample]:
    """One quick valid component, then ``n`` distinct slow ones (distinct: no parse cache serves them)."""
    return [Sample("", VALID)] + [Sample("", GARBAGE + f"\n// {k}") for k in range(n)]


def _params(**kw: object) -> SyntaxParams:
    return SyntaxParams(timeout_s=60.0, parse_timeout_s=60.0, max_chars=2_000_000, **kw)  # type: ignore[arg-type]


@pytest.fixture(scope="module", autouse=True)
def _pools() -> Iterator[None]:
    yield
    close_pools()


@pytest.mark.timeout(180)
def test_slow_samples_in_the_pool_cost_one_batch_deadline() -> None:
    slow = 20  # without the batch deadline: 20 x ~1 s on the one worker
    params = _params(workers=1, batch_timeout_s=2.0)
    scorer = make_syntax(params)
    scorer.score([Sample("", VALID)])  # the pool's start is not the batch's (its clock starts after)
    start = time.monotonic()
    results = scorer.score(_slow_batch(slow))
    elapsed = time.monotonic() - start
    assert elapsed < params.batch_timeout_s + MARGIN_S < slow * params.timeout_s
    assert results[0] == []  # finished before the deadline: its real result (no syntax error)
    late = [r for r in results if isinstance(r, SampleError)]
    assert late and results[-1] in late, results  # the last ones were cut (not run 20 x ~1 s)
    assert all(r.reason == "timeout" and "batch_timeout_s=2" in str(r) for r in late)
    assert all(past_batch_deadline(r) for r in late)
    done = [r for r in results[1:] if not isinstance(r, SampleError)]
    assert all(isinstance(r, list) and r for r in done)  # real spans on the garbage


@pytest.mark.timeout(180)
def test_slow_samples_inline_stop_at_the_deadline_between_samples() -> None:
    slow = 20
    params = _params(workers=0, batch_timeout_s=1.5)
    start = time.monotonic()
    results = make_syntax(params).score(_slow_batch(slow))
    elapsed = time.monotonic() - start
    # a running sample is not stopped inline: the deadline plus the one that crossed it
    assert elapsed < params.batch_timeout_s + MARGIN_S < slow * 1.0
    assert results[0] == [] and isinstance(results[1], list) and results[1]  # started before the deadline
    late = [r for r in results if isinstance(r, SampleError)]
    assert late and results[-len(late) :] == late  # the cut ones are the last ones, in order
    assert all(r.reason == "timeout" and "batch_timeout_s=1.5" in str(r) for r in late)
    assert all(past_batch_deadline(r) and "before this item started" in str(r) for r in late)


def test_a_generous_deadline_changes_nothing() -> None:
    samples = [Sample("", VALID), Sample("", "```jsx\nconst A = () => <div>;\n```")]
    inline = make_syntax(SyntaxParams(workers=0)).score(samples)
    pooled = make_syntax(SyntaxParams(workers=1, batch_timeout_s=60.0)).score(samples)
    assert inline == pooled and inline[0] == [] and inline[1]


@pytest.mark.parametrize("model", [SyntaxParams, CompilesParams, RendersParams])
def test_the_batch_deadline_is_a_checked_param(model: type[CommonParams]) -> None:
    assert model().batch_timeout_s == 60.0
    for bad in (0, -1.0, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="batch_timeout_s"):
            model(batch_timeout_s=bad)


def test_visual_has_one_deadline_for_the_whole_batch() -> None:
    assert VisualParams(model="m").batch_timeout_s == 600.0
    with pytest.raises(ValueError, match="batch_timeout_s"):
        VisualParams(model="m", batch_timeout_s=0)


# -- jsx.visual ------------------------------------------------------------------------------------


def test_screenshots_past_the_deadline_are_not_started() -> None:
    """No Chromium needed: once the deadline has passed nothing is launched (a launch of this path
    would be an ``error``, 'could not start Chromium')."""
    from botgrpo_jsx.visual import screenshots

    params = VisualParams(model="m", batch_timeout_s=5.0)
    shots = screenshots("/nonexistent/chromium", {0: "<p>a</p>", 3: "<p>b</p>"}, params, time.monotonic())
    assert list(shots) == [0, 3]
    for shot in shots.values():
        assert isinstance(shot, SampleError) and shot.reason == "timeout" and past_batch_deadline(shot)
        assert "batch_timeout_s=5" in str(shot) and "before this screenshot started" in str(shot)


def _chromium() -> str:
    from botgrpo_jsx.visual import ChromiumUnavailable, find_chromium

    try:
        return find_chromium()
    except ChromiumUnavailable as exc:
        pytest.skip(str(exc))


@pytest.mark.timeout(180)
def test_screenshots_stop_at_the_deadline() -> None:
    from botgrpo_jsx.visual import screenshots

    chromium = _chromium()
    params = VisualParams(model="m", batch_timeout_s=30.0, width=320, height=200)
    markups = {i: f"<h1>page {i}</h1>" for i in range(4)}
    shot = screenshots(chromium, {0: markups[0]}, params, time.monotonic() + 60)[0]
    if isinstance(shot, SampleError) and "unshare" in str(shot):
        pytest.skip(str(shot))
    assert isinstance(shot, bytes), shot  # Chromium works here, with time to spare
    # 0.3 s left: the first screenshot is cut (a Chromium start takes longer), the others never start
    start = time.monotonic()
    shots = screenshots(chromium, markups, params, start + 0.3)
    assert time.monotonic() - start < 0.3 + MARGIN_S < len(markups) * params.screenshot_timeout_s
    assert all(isinstance(s, SampleError) and s.reason == "timeout" for s in shots.values()), shots
    assert "batch_timeout_s=30" in str(shots[0]) and "before this screenshot finished" in str(shots[0])
    assert all("before this screenshot started" in str(shots[i]) for i in (1, 2, 3))


class _SlowVisionServer:
    """An OpenAI-compatible server that answers only once closed (a vision model that hangs)."""

    def __init__(self) -> None:
        release = self.release = threading.Event()
        self.requests = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                outer.requests += 1
                self.rfile.read(int(self.headers["Content-Length"]))
                release.wait(300)
                self.send_response(503)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.timeout(300)
def test_a_hanging_vision_model_costs_the_rest_of_the_batch_deadline(sandbox_ready: None) -> None:
    """What the renders and screenshots leave of ``batch_timeout_s`` is the judge's batch deadline:
    the request to a vision model that never answers is cancelled then, not after ``judge_timeout_s``."""
    pytest.importorskip("botgrpo_judge", reason="jsx.visual talks to the vision model through botgrpo-judge")
    _chromium()
    from botgrpo_jsx.plugin import make_visual

    server = _SlowVisionServer()
    params = VisualParams(
        model="m", base_url=server.url, batch_timeout_s=25.0, judge_timeout_s=200.0, width=320, height=200
    )
    scorer = make_visual(params)
    try:
        start = time.monotonic()
        (result,) = scorer.score([Sample("Write a todo list", OK)])
        elapsed = time.monotonic() - start
    finally:
        scorer.close()
        server.close()
    if isinstance(result, SampleError) and "unshare" in str(result):
        pytest.skip(str(result))
    assert not isinstance(result, Value | float), result
    assert server.requests >= 1  # it got as far as asking the model
    assert elapsed < params.batch_timeout_s + MARGIN_S < params.judge_timeout_s
    assert result.reason == "timeout" and past_batch_deadline(result), result
    assert "batch_timeout_s=25" in str(result) and "before the vision model answered" in str(result)


# -- jsx.compiles on esbuild (the Node worker) -------------------------------------------------------

#: A valid 31 KB component file: 600 of them take esbuild about 3 s on the loaded 2-core machine.
BIG = "\n".join(
    f"export const A{j} = () => <div className='x{j}'><span>{{{j} + 1}}</span></div>;" for j in range(400)
)


def _big(n: int, tag: str) -> list[Sample]:
    """``n`` distinct big valid components (distinct: nothing cached serves a later batch)."""
    return [Sample("", f"```jsx\n// {tag} {k}\n{BIG}\n```") for k in range(n)]


def _typed(k: int) -> str:
    """A TSX component that esbuild and TypeScript (strict, names) both accept; ``k`` makes it distinct."""
    return (
        f"```tsx\nimport {{ useState }} from 'react';\nexport function C{k}() {{ const [n, s] = useState({k});"
        " return <button onClick={() => s(n + 1)}>{n}</button>; }\n```"
    )


def _is_cut(result: object, key: str) -> bool:
    return (
        isinstance(result, SampleError)
        and result.reason == "timeout"
        and past_batch_deadline(result)
        and f"batch_timeout_s={key}, jsx.compiles params" in str(result)
    )


def _typescript() -> None:
    from botgrpo_jsx import nodeenv

    modules = nodeenv.node_modules()
    if modules is None or not nodeenv.has_typescript(modules):
        pytest.skip("typescript not installed: run `python -m botgrpo_jsx.setup`")


@pytest.mark.timeout(300)
def test_compiles_many_samples_stop_at_the_batch_deadline(need_node: None) -> None:
    """esbuild had only per-request deadlines: a batch of many samples took as long as they did. Now it
    ends by ``batch_timeout_s`` (a quarter of the time this machine takes for the whole batch): the
    samples esbuild had not answered are ``timeout`` errors naming the key, the others keep their
    verdicts, and the next batch gets a fresh Node process."""
    n = 600
    full = make_compiles(CompilesParams(max_chars=100_000))
    try:
        start = time.monotonic()
        assert full.score(_big(n, "calibrate")) == [1.0] * n
        whole = time.monotonic() - start
    finally:
        full.close()
    params = CompilesParams(max_chars=100_000, batch_timeout_s=round(max(whole / 4, 0.2), 2))
    key = f"{params.batch_timeout_s:g}"
    scorer = make_compiles(params)
    try:
        scorer.score([Sample("", VALID)])  # the Node worker's start is not the batch's
        samples = [Sample("", ""), Sample("", "```jsx\nconst A = () => <div>;\n```")]
        samples += _big(n, "cut")
        start = time.monotonic()
        scorer.prefetch(samples)  # the mixture's path: compiled on a thread, collected by score()
        results = scorer.score(samples)
        elapsed = time.monotonic() - start
        assert elapsed < params.batch_timeout_s + MARGIN_S, (elapsed, whole)
        assert results[0] == 0.0  # no code: a verdict without esbuild, kept
        late = [r for r in results if isinstance(r, SampleError)]
        assert late and all(_is_cut(r, key) for r in late), (whole, results[:3], late[:1])
        assert results[1] in (0.0, late[0])  # broken: its verdict, or cut before the JSX retry
        assert all(r == 1.0 for r in results[2:] if not isinstance(r, SampleError))  # finished: kept
        assert scorer.metrics()["jsx.compiles/batch_deadline"] == len(late)
        # a worker busy at the deadline is killed, not left to answer into the next batch (none is, when on a
        # loaded machine no request was in flight at that moment: make test's two-worker run saw 0)
        assert scorer._worker.deadline_kills <= 1
        # the next batch works, on a fresh process
        after = [Sample("", VALID), Sample("", "```jsx\nconst A = () => <div>;\n```"), *_big(3, "next")]
        assert scorer.score(after) == [1.0, 0.0, 1.0, 1.0, 1.0]
        # the deadline's kill is no restart (checked exactly in test_node_worker_call_deadline_kills_a_busy_process);
        # restarts are not counted here: on a loaded machine a per-request timeout may restart the fresh process
        assert scorer._worker.deadline_kills <= 1
    finally:
        scorer.close()


@pytest.mark.timeout(300)
def test_compiles_strict_checks_stop_at_the_batch_deadline(need_node: None) -> None:
    """TypeScript checks run one at a time (~0.06 s each here), so 400 of them take ~25 s; at
    ``batch_timeout_s: 2`` the batch returns at the deadline with the checks done before it kept (the
    first samples) and the rest cut, and the next batch (a restart with its warm-up first) checks again."""
    _typescript()
    params = CompilesParams(strict=True, batch_timeout_s=2.0)
    scorer = make_compiles(params)
    try:
        assert scorer.score([Sample("", _typed(0))]) == [1.0]  # start and warm-up: not the batch's
        samples = [Sample("", _typed(k)) for k in range(1, 401)]
        start = time.monotonic()
        results = scorer.score(samples)
        elapsed = time.monotonic() - start
        assert elapsed < params.batch_timeout_s + MARGIN_S
        late = [r for r in results if isinstance(r, SampleError)]
        assert late and results[-len(late) :] == late, results  # checked in order: the last ones cut
        assert all(_is_cut(r, "2") for r in late)
        assert results[0] == 1.0 and results[: -len(late)] == [1.0] * (len(results) - len(late))
        wrong = "```tsx\nexport function D() { return <p>{missing}</p>; }\n```"  # TS2304: no such name
        assert scorer.score([Sample("", _typed(500)), Sample("", wrong)]) == [1.0, 0.0]
        # one kill when the deadline lands on a check in flight; none when, on a loaded machine, the compile
        # phase used the whole budget and no check was ever sent (make test runs two workers on two cores)
        assert scorer._worker.deadline_kills <= 1
    finally:
        scorer.close()


@pytest.mark.timeout(120)
def test_node_worker_call_deadline_kills_a_busy_process(need_node: None) -> None:
    from botgrpo_jsx import nodeenv
    from botgrpo_jsx.node import NodeWorker

    node, modules = nodeenv.find_node(), nodeenv.node_modules()
    assert node is not None and modules is not None
    late = SampleError("cut", reason="timeout")
    with NodeWorker(node.node, modules, timeout_s=60.0) as worker:
        worker.ensure_started()
        slow = {"op": "compile_batch", "codes": [f"// {k}\n{BIG}" for k in range(600)], "loader": "jsx"}
        start = time.monotonic()
        replies = worker.request(
            [slow, {"op": "compile", "code": "<a/>", "loader": "jsx"}], end=start + 0.2, late=late
        )
        assert time.monotonic() - start < 0.2 + MARGIN_S
        assert replies[0] is late and worker.deadline_kills == 1 and worker._proc is None
        assert worker.restarts == 0  # the deadline's kill is not a per-request timeout
        # a call already past its deadline sends nothing (and starts nothing)
        (cut,) = worker.request([slow], end=time.monotonic() - 1, late=late)
        assert cut is late and worker._proc is None
        with pytest.raises(ValueError, match="needs `late`"):  # the caller names its own deadline
            worker.request([slow], end=time.monotonic() + 60)
        assert worker._proc is None
        (reply,) = worker.request(
            [{"op": "compile", "code": "<a/>", "loader": "jsx"}], end=time.monotonic() + 60, late=late
        )
        assert reply["ok"] is True and worker.deadline_kills == 1


@pytest.mark.timeout(180)
def test_node_worker_deadline_cuts_a_warm_up_without_failing(need_node: None) -> None:
    """A start inside a call with a deadline (a process that died mid-batch) warms up within it: cut,
    the requests are late (not a NodeWorkerError that would stop the run), and the next call starts anew."""
    _typescript()
    from botgrpo_jsx import nodeenv
    from botgrpo_jsx.node import NodeWorker

    node, modules = nodeenv.find_node(), nodeenv.node_modules()
    assert node is not None and modules is not None
    warm_up = {"op": "check", "code": "export {};", "loader": "tsx"}  # loads TypeScript's lib files
    late = SampleError("cut", reason="timeout")
    with NodeWorker(node.node, modules, warm_up=warm_up) as worker:
        compile_ = {"op": "compile", "code": "<a/>", "loader": "jsx"}
        assert worker.request([compile_], end=time.monotonic() + 0.05, late=late) == [late]
        assert worker._proc is None
        (reply,) = worker.request([compile_])
        assert reply["ok"] is True
