"""``jsx.renders`` (global) and ``jsx.render_errors`` (local): render the component with real React.

The extracted code is compiled to one CommonJS module by the pinned esbuild (in the trusted,
long-lived :class:`~botgrpo_jsx.node.NodeWorker`), and rendered as a browser page runs it (a DOM
before the module runs, ``react-dom/client``, no Node built-ins or globals: ``js/render.js``) in a
fresh isolated process per sample (:mod:`botgrpo_jsx.sandbox`), with the row's ``props`` or props
synthesised from usage (:mod:`botgrpo_jsx.props`). Other imports resolve to permissive stubs.

- ``jsx.renders``: 1.0 when the component renders without throwing, 0.0 when it does not compile,
  exports no component, throws, runs past the deadline, or exhausts its memory.
- ``jsx.render_errors``: ``error_value`` on the source line where the render threw (the module's
  source map maps the stack frame back), ``warning_value`` on React's warnings about the code: a
  missing ``key`` (on the elements the ``missing_key`` rule finds, since React names only the
  component), invalid DOM nesting (on the nested element, where the harness saw it made),
  duplicate keys.

Both signals share one render per completion (a small cache), so using both costs one render.
"""

from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from botgrpo_core.signals import Sample, SampleError, Span
from botgrpo_jsx import nodeenv
from botgrpo_jsx.bounds import nested_deeper_than
from botgrpo_jsx.extract import CodeView, extract_cached
from botgrpo_jsx.params import RendersParams
from botgrpo_jsx.spans import Mark, disjoint

_CACHE_SIZE = 2048
#: The React warnings that become spans: a missing key, invalid DOM nesting, duplicate keys.
_REPORTED = re.compile(
    r'unique "key" prop|cannot be a (?:child|descendant) of|Encountered two children with the same key'
)
_cache: OrderedDict[tuple[str, str, str], dict[str, Any]] = OrderedDict()
_cache_lock = threading.Lock()


class Renderer:
    """Compiles and renders completions; one per scorer, the results cached across scorers."""

    def __init__(self, params: RendersParams) -> None:
        from botgrpo_jsx.node import NodeWorker
        from botgrpo_jsx.sandbox import Sandbox

        reason = nodeenv.unavailable_reason()
        if reason is not None:
            raise RuntimeError(f"jsx.renders: {reason}")
        node, modules = nodeenv.find_node(), nodeenv.node_modules()
        assert node is not None and modules is not None
        for package in ("react-dom", "linkedom"):
            if not (modules / package / "package.json").is_file():
                raise RuntimeError(f"jsx.renders: {package} is not installed; {nodeenv.SETUP_HINT}")
        self.params = params
        self.worker = NodeWorker(node.node, modules, timeout_s=params.timeout_s)
        self.sandbox = Sandbox(
            node.node,
            modules,
            timeout_s=params.timeout_s,
            memory_mb=params.memory_mb,
            parallel=params.parallel,
            batch_timeout_s=params.batch_timeout_s,
        )
        self.key = params.model_dump_json()

    def close(self) -> None:
        self.worker.close()

    def render(self, samples: Sequence[Sample]) -> list[dict[str, Any]]:
        """Per sample: {status: compiled|no_code|no_compile|error, reply?, view?, map?}."""
        keys = [
            (self.key, s.completion, json.dumps(s.row.get(self.params.props_field), default=str))
            for s in samples
        ]
        out: list[dict[str, Any] | None] = []
        with _cache_lock:
            for key in keys:
                hit = _cache.get(key)
                out.append(hit)
                if hit is not None:
                    _cache.move_to_end(key)
        todo = [i for i, r in enumerate(out) if r is None]
        fresh = self._render([samples[i] for i in todo])
        with _cache_lock:
            for i, result in zip(todo, fresh, strict=True):
                out[i] = result
                _cache[keys[i]] = result
                while len(_cache) > _CACHE_SIZE:
                    _cache.popitem(last=False)
        return [r for r in out if r is not None]

    def _view(self, sample: Sample) -> CodeView | None:
        p = self.params
        view = extract_cached(sample.completion, tuple(p.languages), p.block)
        if view is None or not view.code.strip() or len(view.code) > p.max_chars:
            return None
        return None if nested_deeper_than(view.code, p.max_nesting) else view

    def _render(self, samples: Sequence[Sample]) -> list[dict[str, Any]]:
        views = [self._view(s) for s in samples]
        results: list[dict[str, Any]] = [{"status": "no_code"} for _ in samples]
        todo = [i for i, v in enumerate(views) if v is not None]
        compiled = self._compile({i: views[i] for i in todo})  # type: ignore[misc]
        requests, order = [], []
        for i, reply in compiled.items():
            view = views[i]
            assert view is not None
            if isinstance(reply, SampleError) or not reply.get("ok"):
                results[i] = {"status": "no_compile", "view": view}
                continue
            props = self._props(samples[i], view)
            requests.append({"code": reply["code"], "props": props, "max_html": self.params.max_html})
            order.append(i)
            results[i] = {"status": "compiled", "view": view, "map": reply["map"], "props": props}
        for i, reply in zip(order, self.sandbox.run(requests), strict=True):
            results[i]["reply"] = reply
        self._locate([results[i] for i in order])
        return results

    def _compile(self, views: dict[int, CodeView]) -> dict[int, Any]:
        order = list(views)
        requests = [{"op": "cjs", "code": views[i].code, "loader": "tsx"} for i in order]
        replies = dict(zip(order, self.worker.request(requests), strict=True))
        retry = [
            i
            for i in order
            if isinstance(replies[i], dict) and not replies[i].get("ok") and not views[i].is_typescript
        ]
        if retry:  # JS that TSX rejects (`<T>` read as a tag) still compiles as JSX
            again = self.worker.request(
                [{"op": "cjs", "code": views[i].code, "loader": "jsx"} for i in retry]
            )
            replies.update(zip(retry, again, strict=True))
        return replies

    def _props(self, sample: Sample, view: CodeView) -> Any:
        given = sample.row.get(self.params.props_field)
        if isinstance(given, dict):
            return given
        from botgrpo_jsx.props import synthesise
        from botgrpo_jsx.treesitter import ParseTimeout, parse

        try:
            return synthesise(parse(view.code, self.params.parse_timeout_s))
        except ParseTimeout:
            return {}

    def _locate(self, results: list[dict[str, Any]]) -> None:
        """Map the thrown error's and the warnings' generated positions back to the source."""
        requests, where = [], []
        for r in results:
            reply = r.get("reply")
            if not isinstance(reply, dict):
                continue
            points = [reply.get("error") or {}] + [w.get("where") or {} for w in reply.get("warnings", [])]
            positions = [
                {"line": int(p["line"]), "column": int(p["column"])}
                if isinstance(p.get("line"), int) and isinstance(p.get("column"), int)
                else {"line": 0, "column": 0}
                for p in points
            ]
            requests.append({"op": "locate", "map": r["map"], "positions": positions})
            where.append((r, points))
        for (r, points), reply in zip(where, self.worker.request(requests), strict=True):
            mapped = reply.get("positions", []) if isinstance(reply, dict) else []
            r["located"] = [m if p.get("line") else None for p, m in zip(points, mapped, strict=False)]


def _position(at: Any) -> bool:
    return isinstance(at, dict) and isinstance(at.get("line"), int) and isinstance(at.get("column"), int)


def _char_of(view: CodeView, line: int, column: int) -> int:
    """``str`` index in ``view.code`` of a 1-based line and a UTF-16 column."""
    lines = view.code.split("\n")
    line = max(1, min(line, len(lines)))
    start = sum(len(x) + 1 for x in lines[: line - 1])
    text, units, k = lines[line - 1], 0, 0
    while k < len(text) and units < column:
        units += 2 if ord(text[k]) > 0xFFFF else 1
        k += 1
    return start + k


def _line_span(view: CodeView, index: int, max_chars: int = 200) -> tuple[int, int]:
    """The line holding ``index``, without its indentation (at most ``max_chars``)."""
    code = view.code
    start = code.rfind("\n", 0, index) + 1
    end = code.find("\n", index)
    end = len(code) if end < 0 else end
    while start < index and code[start].isspace():
        start += 1
    end = min(end, start + max_chars)
    while end > start and code[end - 1].isspace():
        end -= 1
    return start, max(end, min(start + 1, len(code)))


class RendersScorer:
    """``jsx.renders``: 1.0 when the component renders without an error, else 0.0."""

    def __init__(self, params: RendersParams) -> None:
        self.params = params
        self.renderer = Renderer(params)

    def close(self) -> None:
        self.renderer.close()

    def score(self, samples: Sequence[Sample]) -> list[float | SampleError]:
        out: list[float | SampleError] = []
        for r in self.renderer.render(samples):
            reply = r.get("reply")
            if isinstance(reply, SampleError) and reply.reason == "error":
                out.append(reply)  # the sandbox itself failed: not the sample's fault
            else:
                out.append(1.0 if isinstance(reply, dict) and reply.get("ok") is True else 0.0)
        return out


class RenderErrorsScorer:
    """``jsx.render_errors``: spans where the render threw and where React warned."""

    def __init__(self, params: RendersParams) -> None:
        self.params = params
        self.renderer = Renderer(params)

    def close(self) -> None:
        self.renderer.close()

    def score(self, samples: Sequence[Sample]) -> list[list[Span] | SampleError]:
        out: list[list[Span] | SampleError] = []
        for r in self.renderer.render(samples):
            reply = r.get("reply")
            if isinstance(reply, SampleError):
                out.append(reply if reply.reason == "error" else [])
            elif not isinstance(reply, dict):
                out.append([])
            else:
                out.append(disjoint(self._marks(r, reply)))
        return out

    def _marks(self, r: dict[str, Any], reply: dict[str, Any]) -> list[Mark]:
        p, view = self.params, r["view"]
        located = r.get("located") or []
        marks = []
        error = reply.get("error")
        at = located[0] if located else None
        if at is None and isinstance(error, dict) and isinstance(error.get("source"), dict):
            at = error["source"]  # React threw about an element: where it was made (original file)
        if reply.get("ok") is not True and isinstance(error, dict) and _position(at):
            start, end = _line_span(view, _char_of(view, at["line"], at["column"]))
            meta = {"error": str(error.get("message", ""))[:300]}
            marks.append(Mark(view.to_completion(start), view.to_completion(end), p.error_value, meta))
        seen = set()
        for w, where in zip(reply.get("warnings", []), located[1:], strict=False):
            text = str(w.get("text", ""))[:300]
            if not _REPORTED.search(text) or text in seen:
                continue  # React's other notes (legacy APIs, a stub rendered as a child) are not the sample's;
            seen.add(text)  # and the server and the client render warn alike
            where = where or (w.get("source") if _position(w.get("source")) else None)
            if where:
                start, end = _line_span(view, _char_of(view, where["line"], where["column"]))
                marks.append(
                    Mark(
                        view.to_completion(start), view.to_completion(end), p.warning_value, {"warning": text}
                    )
                )
            elif 'unique "key" prop' in text:
                marks += self._key_marks(view, text)
        return marks

    def _key_marks(self, view: CodeView, text: str) -> list[Mark]:
        from botgrpo_jsx.rules import check_rules
        from botgrpo_jsx.treesitter import ParseTimeout, parse

        try:
            parsed = parse(view.code, self.params.parse_timeout_s)
        except ParseTimeout:
            return []
        return [
            Mark(
                view.to_completion(v.start),
                view.to_completion(v.end),
                self.params.warning_value,
                {"warning": text},
            )
            for v in check_rules(parsed, frozenset({"missing_key"}))
        ]
