"""``jsx.checks`` (global): the share of a row's behaviour checks that the rendered component passes.

The row's ``checks`` field (``field``) holds a :class:`~botgrpo_jsx.checks_schema.CheckSuite`. The
completion's code is compiled as for ``jsx.renders`` and rendered in the same sandbox (a fresh isolated
Node process per page, :mod:`botgrpo_jsx.sandbox`); once it renders, each check runs in that process on
a fresh mount against the live DOM (``js/checks.js``): its steps (click, type, change, submit, key,
hover, wait on a fake clock) and then its expectations (an element exists, with a count; text shows; a
count changes; an element appears or disappears).

Value: the share of the suite's checks passed (``all_or_none``: 1.0 when all pass, else 0.0); 0.0 when
there is no code, it does not compile, exports no component or does not render. Every check is bounded
(``check_timeout_s``; a check past it fails, and the checks after it do not run); the page as a whole
(render and checks) by ``timeout_s``: the process is killed, the checks that had ended keep their result
and the others fail. The result is a :class:`~botgrpo_core.signals.Value` whose meta says what happened
(``status``), how many passed (``passed``) and which failed and why (``failed``), so ``botgrpo score``
and its heatmap show it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from botgrpo_core.signals import Sample, SampleError, Value
from botgrpo_jsx.checks_schema import CheckSuite, parse_suite, to_request
from botgrpo_jsx.params import ChecksParams
from botgrpo_jsx.renders import Renderer


def suite_problem(value: Any, field: str = "checks") -> str | None:
    """Why a row's ``field`` value is not a check suite (one line naming the fix), or None."""
    try:
        parse_suite(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        return (
            f"row field {field!r} is not a check suite: {where}: {first['msg']} (botgrpo_jsx.checks_schema)"
        )
    return None


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


class ChecksScorer:
    """``jsx.checks``: the share of the row's checks the rendered component passes (module doc)."""

    def __init__(self, params: ChecksParams) -> None:
        self.params = params
        self.renderer = Renderer(params)

    def close(self) -> None:
        self.renderer.close()

    def _suite(self, sample: Sample) -> CheckSuite | SampleError:
        value = sample.row.get(self.params.field) if sample.row is not None else None
        if value is None:
            return SampleError(
                f"jsx.checks: the row has no {self.params.field!r} field (params.field names the row field "
                "holding the checks)"
            )
        problem = suite_problem(value, self.params.field)
        return SampleError(f"jsx.checks: {problem}") if problem else parse_suite(value)

    def score(self, samples: Sequence[Sample]) -> list[Value | SampleError]:
        out: list[Value | SampleError | None] = [None] * len(samples)
        suites = [self._suite(s) for s in samples]
        views = {}
        for i, (sample, suite) in enumerate(zip(samples, suites, strict=True)):
            if isinstance(suite, SampleError):
                out[i] = suite
                continue
            view = self.renderer._view(sample)
            if view is None:
                out[i] = self._value(suite, "no code", [])
            else:
                views[i] = view
        compiled = self.renderer._compile(views) if views else {}
        requests, order = [], []
        for i, reply in compiled.items():
            suite = suites[i]
            assert isinstance(suite, CheckSuite)
            if isinstance(reply, SampleError) or not reply.get("ok"):
                out[i] = self._value(suite, "does not compile", [])
                continue
            props = self._render_props(suite, samples[i], views[i])
            request = {
                "code": reply["code"],
                "props": props,
                "max_html": 1000,
                "checks": to_request(suite),
                "check_timeout_ms": int(self.params.check_timeout_s * 1000),
            }
            if suite.fetch is not None:
                request["fetch"] = suite.fetch
            requests.append(request)
            order.append(i)
        for i, reply in zip(order, self.renderer.sandbox.run(requests), strict=True):
            suite = suites[i]
            assert isinstance(suite, CheckSuite)
            if isinstance(reply, SampleError):
                out[i] = (
                    reply if reply.reason == "error" else self._value(suite, f"does not render: {reply}", [])
                )
            elif reply.get("ok") is not True:
                message = str((reply.get("error") or {}).get("message", ""))
                out[i] = self._value(suite, f"does not render: {_short(message, 200)}", [])
            else:
                status = "rendered" if "stopped" not in reply else f"rendered; stopped: {reply['stopped']}"
                out[i] = self._value(suite, status, reply.get("check_results") or [])
        return [o for o in out if o is not None]

    def _render_props(self, suite: CheckSuite, sample: Sample, view: Any) -> Any:
        """The props of the first render: the suite's, else its first check's own (a suite whose every check
        brings props: the component may not render without them), else the row's or synthesised ones."""
        if suite.props is not None:
            return suite.props
        if suite.checks[0].props is not None:
            return suite.checks[0].props
        return self.renderer._props(sample, view)

    def _value(self, suite: CheckSuite, status: str, results: list[dict[str, Any]]) -> Value:
        """The value and its meta from the harness's per-check results (a check without one failed)."""
        total = len(suite.checks)
        if not results:  # nothing ran: the page did not get that far
            meta = {
                "status": status,
                "passed": f"0/{total}",
                "failed": f"all {total} checks: the page {status}",
            }
            return Value(0.0, meta if status != "rendered" else meta | {"failed": f"all {total}: no result"})
        by_index = {r.get("check"): r for r in results if isinstance(r.get("check"), int)}
        passed, failed, ms = [], [], 0
        for n, check in enumerate(suite.checks):
            r = by_index.get(n)
            if r is not None and r.get("ok") is True:
                passed.append(check.name)
            elif r is not None:
                failed.append(f"{check.name}: {_short(str(r.get('why', 'failed')), 240)}")
            else:
                failed.append(f"{check.name}: not run ({status})")
            ms += int(r.get("ms", 0)) if r is not None and isinstance(r.get("ms"), int | float) else 0
        if self.params.all_or_none:
            value = 1.0 if len(passed) == total else 0.0
        else:
            value = len(passed) / total
        meta: dict[str, Any] = {"status": status, "passed": f"{len(passed)}/{total}"}
        if failed:
            meta["failed"] = " | ".join(failed)
        meta["checks_ms"] = ms
        return Value(value, meta)
