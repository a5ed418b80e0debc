"""The tree-sitter and esbuild scorers: ``jsx.compiles`` (global), ``jsx.syntax``, ``jsx.rules`` and
``jsx.units`` (local).

Each is built once per run from validated params and scores whole batches: tree-sitter work goes
through :mod:`botgrpo_jsx.execution` (a killable worker pool by default), esbuild/TypeScript work
through one persistent :class:`~botgrpo_jsx.node.NodeWorker`. Either way a batch ends by its
``batch_timeout_s``: the samples not scored by then are ``timeout`` errors naming the key.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

from botgrpo_core.rewards.pool import past_batch_deadline
from botgrpo_core.signals import Sample, SampleError, Span
from botgrpo_jsx import nodeenv
from botgrpo_jsx.bounds import nested_deeper_than
from botgrpo_jsx.execution import Task, batch_late, run_tasks
from botgrpo_jsx.extract import TS_LANGUAGES, CodeView, extract_cached
from botgrpo_jsx.params import CompilesParams, RulesParams, SyntaxParams, UnitsParams

#: TypeScript diagnostics about names, which hold on partial code (``strict_checks: names``): cannot
#: find name (2304, 2552 "did you mean", 2582-2584 test/node/lib globals), cannot assign to a constant
#: (2588), used before its declaration (2448), redeclared (2451, 2300), and an import that names a
#: member its module lacks (2305, 2724 "did you mean", 2614).
TS_NAME_CODES = frozenset({2304, 2552, 2582, 2583, 2584, 2588, 2448, 2451, 2300, 2305, 2724, 2614})

log = logging.getLogger(__name__)

#: Snippets compiled in one esbuild build: one that is slow or crashes esbuild costs its chunk a retry
#: one snippet at a time.
COMPILE_BATCH = 64

#: Allowance for the Node worker's first TypeScript check (it loads and binds the lib files).
WARM_UP_S = 120.0

#: A batch deadline: its :func:`time.monotonic` end, and the error of the samples it cuts.
Deadline = tuple[float, SampleError]


def _row_bits(sample: Sample, field: str) -> dict[str, Any]:
    # Only the field the rules read crosses the process boundary (rows may hold large test specs).
    return {field: sample.row[field]} if field in sample.row else {}


def _only_redeclarations(reply: dict[str, Any]) -> bool:
    """Whether every esbuild error of a failed compile is a redeclared name."""
    errors = reply.get("errors") or []
    return bool(errors) and all("has already been declared" in str(e.get("text", "")) for e in errors)


class SyntaxScorer:
    """``jsx.syntax``: ``error_value`` on every syntax error span (see :mod:`botgrpo_jsx.syntax`)."""

    def __init__(self, params: SyntaxParams) -> None:
        self.params = params

    def score(self, samples: Sequence[Sample]) -> list[list[Span] | SampleError]:
        tasks: list[Task] = [("syntax", self.params, s.completion, "", {}) for s in samples]
        return run_tasks(tasks, self.params)


class RulesScorer:
    """``jsx.rules``: ``-weight`` on every rule violation span (see :mod:`botgrpo_jsx.rules`)."""

    def __init__(self, params: RulesParams) -> None:
        self.params = params

    def score(self, samples: Sequence[Sample]) -> list[list[Span] | SampleError]:
        field = self.params.export_field
        tasks: list[Task] = [
            ("rules", self.params, s.completion, s.prompt, _row_bits(s, field)) for s in samples
        ]
        return run_tasks(tasks, self.params)


class UnitsScorer:
    """``jsx.units``: a +/- verdict span on every top-level unit (see :mod:`botgrpo_jsx.units`)."""

    def __init__(self, params: UnitsParams) -> None:
        self.params = params

    def score(self, samples: Sequence[Sample]) -> list[list[Span] | SampleError]:
        field = self.params.export_field
        tasks: list[Task] = [
            ("units", self.params, s.completion, s.prompt, _row_bits(s, field)) for s in samples
        ]
        return run_tasks(tasks, self.params)


class CompilesScorer:
    """``jsx.compiles``: 1.0 if the extracted code compiles (esbuild; strict: + TypeScript), else 0.0.

    Without Node or the pinned packages, ``backend: auto`` falls back to tree-sitter syntax validity,
    logs why once, and reports it in :meth:`metrics` (``jsx.compiles/fallback`` = 1).

    A batch has a deadline, ``params.batch_timeout_s``, on every backend. On esbuild its clock starts
    once the Node worker is up (its first start, strict mode's warm-up and a start after a kill are not
    the batch's, as the pool's start is not for the static signals); the esbuild builds, their
    retries and the TypeScript checks of a batch then all end by it. The samples without a verdict by
    then are ``timeout`` errors naming the key (:func:`~botgrpo_jsx.execution.batch_late`; counted
    in ``jsx.compiles/batch_deadline``), the others keep theirs, and a Node process still busy is
    killed, so the next batch starts on a fresh one.
    """

    def __init__(self, params: CompilesParams) -> None:
        self.params = params
        self.counts: Counter[str] = Counter()
        self._worker: Any = None
        reason = (
            nodeenv.unavailable_reason() if params.backend in ("auto", "esbuild") or params.strict else None
        )
        if params.backend == "esbuild" and reason:
            raise RuntimeError(f"jsx.compiles params.backend='esbuild': {reason}; or set backend: auto")
        if params.strict:
            if params.backend not in ("auto", "esbuild"):
                raise ValueError(
                    "jsx.compiles params.strict=true needs backend 'auto' or 'esbuild' (TypeScript runs in Node)"
                )
            if reason:
                raise RuntimeError(f"jsx.compiles params.strict=true: {reason}")
            modules = nodeenv.node_modules()
            if modules is None or not nodeenv.has_typescript(modules):
                raise RuntimeError(
                    f"jsx.compiles params.strict=true: TypeScript is not installed; {nodeenv.SETUP_HINT}"
                )
        self.backend = params.backend
        self.fallback_reason: str | None = None
        #: the batch compiling in the background: (its completions, the thread, its result or error)
        self._prefetched: tuple[list[str], threading.Thread, dict[str, Any]] | None = None
        if params.backend == "auto":
            self.backend = "esbuild" if reason is None else "tree-sitter"
            if reason is not None:
                self.fallback_reason = reason
                log.warning("jsx.compiles falls back to tree-sitter syntax validity: %s", reason)

    # -- metrics ------------------------------------------------------------------------------
    def metrics(self) -> dict[str, float]:
        """Counters since construction, for the run's logs (``jsx.compiles/<name>``)."""
        out = {f"jsx.compiles/{k}": float(v) for k, v in self.counts.items()}
        out["jsx.compiles/fallback"] = 1.0 if self.fallback_reason else 0.0
        return out

    def close(self) -> None:
        self._take_prefetched(None)
        if self._worker is not None:
            self._worker.close()
            self._worker = None

    # -- scoring ----------------------------------------------------------------------------------
    def score(self, samples: Sequence[Sample]) -> list[float | SampleError]:
        if self.backend in ("tree-sitter", "esprima"):
            kind = "valid" if self.backend == "tree-sitter" else "esprima"
            results = run_tasks([(kind, self.params, s.completion, "", {}) for s in samples], self.params)
        else:
            prefetched = self._take_prefetched(samples)
            results = prefetched if prefetched is not None else self._score_views(self._views(samples))
        self._count(results)
        return results

    def prefetch(self, samples: Sequence[Sample]) -> None:
        """Start compiling ``samples`` on a thread: esbuild runs in the Node process (on another core)
        while the mixture scores the other signals; :meth:`score` of the same batch then collects it.
        Only the esbuild backend waits on another process; the tree-sitter ones do nothing here.

        The code is extracted here, on the caller's thread (cheap, and the other jsx signals read
        the same extractions from :func:`~botgrpo_jsx.extract.extract_cached`): on the thread, where
        it gets the GIL only between the caller's switch intervals, extraction delayed the first
        request to esbuild by ~0.3 s of a 512-sample batch (measured)."""
        if self.backend != "esbuild":
            return
        self._take_prefetched(None)  # one batch at a time: the Node worker serves one caller
        views = self._views(samples)
        holder: dict[str, Any] = {}

        def compile_batch() -> None:
            try:
                holder["results"] = self._score_views(views)
            except BaseException as exc:  # re-raised by score() in the caller's thread
                holder["error"] = exc

        thread = threading.Thread(target=compile_batch, name="jsx.compiles prefetch", daemon=True)
        self._prefetched = ([s.completion for s in samples], thread, holder)
        thread.start()

    def _take_prefetched(self, samples: Sequence[Sample] | None) -> list[float | SampleError] | None:
        """Wait for the background batch; its results when it was ``samples``' (else ``None``: score anew)."""
        if self._prefetched is None:
            return None
        batch, thread, holder = self._prefetched
        self._prefetched = None
        thread.join()
        if samples is None or batch != [s.completion for s in samples]:
            return None
        if "error" in holder:
            raise holder["error"]
        return holder["results"]

    def _count(self, results: Sequence[Any]) -> None:
        for r in results:
            key = "errors" if isinstance(r, SampleError) else ("compiled" if r == 1.0 else "failed")
            self.counts[key] += 1
            if past_batch_deadline(r):
                self.counts["batch_deadline"] += 1

    def _node(self) -> Any:
        if self._worker is None:
            from botgrpo_jsx.node import NodeWorker

            node, modules = nodeenv.find_node(), nodeenv.node_modules()
            assert node is not None and modules is not None
            # TypeScript's first check loads the lib files (~10 s); later ones take ~0.3 s.
            warm_up = {"op": "check", "code": "export {};", "loader": "tsx"} if self.params.strict else None
            self._worker = NodeWorker(
                node.node,
                modules,
                timeout_s=self.params.timeout_s,
                max_old_space_mb=self.params.node_memory_mb,
                warm_up=warm_up,
                warm_up_s=WARM_UP_S,
            )
        return self._worker

    def _views(self, samples: Sequence[Sample]) -> list[CodeView | None]:
        p = self.params
        views: list[CodeView | None] = []
        for s in samples:
            view = extract_cached(s.completion, tuple(p.languages), p.block)
            # No code, or more than we agree to compile: not a compiling answer.
            if view is None or not view.code.strip() or len(view.code) > p.max_chars:
                views.append(None)
            elif nested_deeper_than(view.code, p.max_nesting):
                self.counts["too_deep"] += 1  # would overflow esbuild's parser stack (see bounds.py)
                views.append(None)
            else:
                views.append(view)
        return views

    def _compile(self, views: dict[int, CodeView], loader: str, deadline: Deadline) -> dict[int, Any]:
        """esbuild's reply per view: chunks of :data:`COMPILE_BATCH` in one build each (``compile_batch``,
        a third of the cost of one call per snippet); a chunk that times out, crashes esbuild or fails
        is compiled again one snippet at a time, each under its own deadline. A chunk the batch
        ``deadline`` cut is not retried: its views get the deadline's error."""
        order = list(views)
        worker = self._node()
        end, late = deadline
        chunks = [order[i : i + COMPILE_BATCH] for i in range(0, len(order), COMPILE_BATCH)]
        replies = worker.request(
            [{"op": "compile_batch", "codes": [views[i].code for i in c], "loader": loader} for c in chunks],
            end=end,
            late=late,
        )
        out: dict[int, Any] = {}
        retry: list[int] = []
        for chunk, reply in zip(chunks, replies, strict=True):
            results = reply.get("results") if isinstance(reply, dict) else None
            if isinstance(results, list) and len(results) == len(chunk):
                out.update(zip(chunk, results))
            elif past_batch_deadline(reply):
                out.update(dict.fromkeys(chunk, reply))
            else:
                retry += chunk
        if retry:
            self.counts["batch_retried"] += len(retry)
            singles = worker.request(
                [{"op": "compile", "code": views[i].code, "loader": loader} for i in retry],
                end=end,
                late=late,
            )
            out.update(zip(retry, singles, strict=True))
        return out

    def _score_views(self, views: Sequence[CodeView | None]) -> list[float | SampleError]:
        """esbuild's verdicts (and TypeScript's, when strict) on extracted code; ``None``: 0.0. All by
        the batch deadline, whose clock starts once the Node worker is up (see the class doc)."""
        p = self.params
        results: list[float | SampleError] = [0.0] * len(views)
        todo = {i: v for i, v in enumerate(views) if v is not None}
        if todo:
            self._node().ensure_started()
        late = batch_late(
            p.batch_timeout_s, "before its compile check finished (Node worker)", "jsx.compiles"
        )
        deadline = (time.monotonic() + p.batch_timeout_s, late)
        loader_of: dict[int, str] = {}
        first = "jsx" if p.loader == "jsx" else "tsx"
        for i, reply in self._compile(todo, first, deadline).items():
            if isinstance(reply, SampleError):
                results[i] = reply
            elif reply.get("ok"):
                loader_of[i] = first
        if p.loader == "auto":
            # JS that TSX rejects (e.g. `<T>` read as a tag) still compiles as JSX; never for TS fences.
            retry = {
                i: todo[i]
                for i in todo
                if i not in loader_of
                and not isinstance(results[i], SampleError)
                and not todo[i].is_typescript
            }
            for i, reply in self._compile(retry, "jsx", deadline).items():
                if isinstance(reply, SampleError):
                    results[i] = reply
                elif reply.get("ok"):
                    loader_of[i] = "jsx"
            # JS that TSX accepts may still redeclare a name: TSX lets `import A` and `const A` pass
            # (TypeScript might merge them), JSX rejects it as a JavaScript engine does.
            plain = {
                i: todo[i] for i, loader in loader_of.items() if loader == "tsx" and not todo[i].is_typescript
            }
            for i, reply in self._compile(plain, "jsx", deadline).items():
                if isinstance(reply, SampleError):
                    results[i] = reply
                    del loader_of[i]
                elif not reply.get("ok") and _only_redeclarations(reply):
                    del loader_of[i]
        if p.strict and loader_of:
            loader_of = self._strict(todo, loader_of, results, deadline)
        for i in loader_of:
            results[i] = 1.0
        return results

    def _strict(
        self,
        todo: dict[int, CodeView],
        loader_of: dict[int, str],
        results: list[float | SampleError],
        deadline: Deadline,
    ) -> dict[int, str]:
        """Keep only the samples TypeScript also accepts; the file type follows the fence (or esbuild).
        A sample whose check the batch ``deadline`` cut gets its error."""
        p = self.params
        kinds: dict[int, str] = {}
        unlabeled = {i: todo[i] for i, loader in loader_of.items() if loader == "tsx" and not todo[i].lang}
        plain_js = {
            i
            for i, r in self._compile(unlabeled, "jsx", deadline).items()
            if isinstance(r, dict) and r.get("ok")
        }
        for i, loader in loader_of.items():
            lang = todo[i].lang
            kinds[i] = (
                "tsx"
                if lang in TS_LANGUAGES or (loader == "tsx" and not lang and i not in plain_js)
                else "jsx"
            )
        order = list(kinds)
        which = self._check_filter()
        replies = self._node().request(
            [{"op": "check", "code": todo[i].code, "loader": kinds[i], **which} for i in order],
            timeout_s=p.strict_timeout_s,
            window=1,  # checks run synchronously in Node: a queued one must not spend its deadline waiting
            end=deadline[0],
            late=deadline[1],
        )
        kept = {}
        for i, reply in zip(order, replies, strict=True):
            if isinstance(reply, SampleError):
                results[i] = reply
            elif reply.get("ok"):
                kept[i] = kinds[i]
        return kept

    def _check_filter(self) -> dict[str, list[int]]:
        """Which TypeScript diagnostics count: all but the ignored ones, or only name errors."""
        p = self.params
        out = {"ignore": list(p.strict_ignore_codes)}
        if p.strict_checks == "names":
            out["only"] = sorted(TS_NAME_CODES)
        return out

    def diagnose(self, completion: str) -> dict[str, Any]:
        """Explain one completion's outcome: the errors (completion ``str`` offsets) each backend gave.

        One completion, at most two requests, each under the deadline scoring gives it (``timeout_s``
        for the compile, ``strict_timeout_s`` for the type check), so it needs no batch deadline."""
        from botgrpo_jsx.offsets import TextIndex

        self._take_prefetched(None)
        (view,) = self._views([Sample(prompt="", completion=completion)])
        if view is None:
            return {"compiles": False, "errors": [{"message": "no code to compile"}]}
        if self.backend != "esbuild":
            return {
                "compiles": self.score([Sample(prompt="", completion=completion)])[0] == 1.0,
                "errors": [],
            }
        index = TextIndex(view.code)
        loader = "jsx" if self.params.loader == "jsx" else "tsx"
        (reply,) = self._node().request([{"op": "compile", "code": view.code, "loader": loader}])
        if isinstance(reply, SampleError):
            return {"compiles": False, "errors": [{"message": str(reply)}]}
        errors = []
        for e in reply.get("errors", []):
            start = index.char_of_line_byte_col(e["line"], e["column"])
            end = index.char_of_byte(index.byte_of_char(start) + e["length"])
            errors.append(
                {"start": view.to_completion(start), "end": view.to_completion(end), "message": e["text"]}
            )
        if reply.get("ok") and self.params.strict:
            kind = "tsx" if view.is_typescript else "jsx"
            (check,) = self._node().request(
                [{"op": "check", "code": view.code, "loader": kind, **self._check_filter()}],
                timeout_s=self.params.strict_timeout_s,  # the deadline scoring gives a check
            )
            if isinstance(check, SampleError):
                return {"compiles": False, "errors": [{"message": str(check)}]}
            for e in check.get("errors", []):
                start = index.char_of_utf16(e["start"])
                end = index.char_of_utf16(e["start"] + e["length"])
                errors.append(
                    {
                        "start": view.to_completion(start),
                        "end": view.to_completion(end),
                        "message": f"TS{e['code']}: {e['text']}",
                    }
                )
        return {"compiles": not errors, "errors": errors}
