"""React component requests for a real chat model: the ``react-requests`` task (``data.task: react-requests``).

Rows come from the project's own prompt set (:mod:`botgrpo_bench.react_prompts`: 280 requests, 50 held out):
training rows from its ``train`` split only, evaluation rows from its ``heldout`` split only. Each row is a
TRL conversational prompt (one user turn: the request, then "Return the full code in one ```jsx code block.")
plus ``id``, ``category``, ``request`` and ``checks``: the request's behaviour checks for ``jsx.checks``
(:mod:`botgrpo_bench.react_checks`).

Held-out metrics (:meth:`ReactRequestsTask.evaluate`), each a share of the completions:

- ``compile_rate``: the code compiles (``jsx.compiles``: esbuild on the extracted code);
- ``render_rate``: React renders the component without an error (``jsx.renders``, a sandboxed Node process);
- ``trivial_rate``: an empty or trivial page: no code at all, or code that compiles with fewer than
  :data:`MIN_ELEMENTS` JSX elements (:func:`is_trivial`: ``return null``, one bare ``<div/>``): it passes
  the compile check, yet does nothing a request asks for, the shortcut the source paper saw a compile reward
  teach (a broken page is a failure, not a trivial one);
- ``code_rate``: the answer holds a fenced code block, as the request asks;
- ``substantive_rate``: the code compiles and is not trivial (the rollout success below, on held-out requests):
  ``compile_rate`` counts a page that compiles with one element or none, this one does not;
- with ``eval_checks: true`` (task params): ``check_rate``, the mean share of its request's checks a page
  passes (``jsx.checks``, 0 for a page that does not compile or render), and ``checks_all_rate``, the share of
  pages that pass every check.

Success of one rollout (:meth:`ReactRequestsTask.success`): it compiles and is not trivial.

The level's gaming guard, ``bench.react_substance`` (:class:`SubstanceScorer`, a global signal): 1 when the
answer's code holds at least :data:`MIN_ELEMENTS` JSX elements (compiling or not), else 0. Beside
``jsx.compiles`` in the outcome it makes a page of substance worth more than an empty one that compiles: the
role the React recipe gives its LLM judge, for a machine without one.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from botgrpo_bench.react_prompts import load_react_prompts, user_message
from botgrpo_bench.rows import shuffled_repeats

#: JSX elements a page needs not to count as trivial (a component of a request shows at least two things)
MIN_ELEMENTS = 2


class ReactRequestsParams(BaseModel):
    """``data.task_params`` of ``react-requests``."""

    model_config = ConfigDict(extra="forbid")

    system_prompt: str | None = Field(
        None, description="a system turn before each request (None: no system turn)"
    )
    render_timeout_s: float = Field(
        10.0, gt=0, description="held-out evaluation: jsx.renders' limit per page"
    )
    eval_checks: bool = Field(
        False,
        description="held-out evaluation also runs each request's behaviour checks (jsx.checks): check_rate, "
        "checks_all_rate",
    )


def is_trivial(completion: str, compiles: bool) -> bool:
    """An empty or trivial page: no code (only whitespace), or code that compiles (``compiles``, the jsx.compiles
    verdict) with fewer than :data:`MIN_ELEMENTS` JSX elements."""
    from botgrpo_bench.react_verdict import code_facts
    from botgrpo_jsx.extract import DEFAULT_LANGUAGES, extract_cached

    view = extract_cached(completion, DEFAULT_LANGUAGES)
    if view is None or not view.code.strip():
        return True
    return compiles and len(code_facts(completion).elements) < MIN_ELEMENTS


def element_count(completion: str) -> int:
    """JSX elements in the answer's code (fenced or bare, as the jsx signals extract it; a page that does not
    parse counts the elements tree-sitter still finds)."""
    from botgrpo_bench.react_verdict import code_facts

    return len(code_facts(completion).elements)


class SubstanceScorer:
    """``bench.react_substance``: 1.0 when the code holds at least :data:`MIN_ELEMENTS` JSX elements, else 0.0."""

    def __init__(self, params: Any = None) -> None:
        self.params = params

    def score(self, samples: Sequence[Any]) -> list[float]:
        return [float(element_count(s.completion) >= MIN_ELEMENTS) for s in samples]


class ReactRequestsTask:
    """The ``react-requests`` task: real component requests, checked by the jsx plugin's own scorers."""

    name = "react-requests"

    def __init__(self, params: ReactRequestsParams | None = None) -> None:
        self.params = params or ReactRequestsParams()

    def _row(self, source: dict[str, str]) -> dict[str, Any]:
        turns = (
            [{"role": "system", "content": self.params.system_prompt}] if self.params.system_prompt else []
        )
        turns.append({"role": "user", "content": user_message(source)})
        from botgrpo_bench.react_checks import react_checks

        return {
            "prompt": turns,
            "id": source["id"],
            "category": source["category"],
            "request": source["request"],
            "checks": react_checks(source["id"]),
        }

    def eval_rows(self, n: int, seed: int = 0) -> list[dict[str, Any]]:
        """The first ``n`` held-out requests in id order (``seed`` unused: the held-out set is fixed).

        :raises ValueError: ``n`` above the held-out set's size (``data.eval_size``).
        """
        heldout = load_react_prompts("heldout")
        if n > len(heldout):
            raise ValueError(
                f"react-requests: data.eval_size {n} is above the {len(heldout)} held-out requests; set "
                f"data.eval_size <= {len(heldout)} (training.eval_samples draws more samples per request)"
            )
        return [self._row(r) for r in heldout[:n]]

    def train_rows(
        self, n: int, seed: int = 0, exclude: Sequence[dict[str, Any]] = ()
    ) -> list[dict[str, Any]]:
        """``n`` training requests: the train split shuffled by ``seed``, repeated in new shuffles past its
        size. Held-out requests are never returned (``exclude`` is implied by the split)."""
        return shuffled_repeats(load_react_prompts("train"), n, seed, self._row)

    def demonstrations(self, rows: Sequence[dict[str, Any]], seed: int = 0) -> list[str]:
        """No supervised warm start: the task is for pretrained chat models."""
        raise ValueError(
            "react-requests has no demonstrations: use a pretrained chat model (model.name_or_path) and no "
            "training.warm_start"
        )

    # ---- evaluation ------------------------------------------------------------------------------
    @cached_property
    def _checkers(self) -> tuple[Any, Any]:
        # The jsx plugin's own scorers, in this process (workers=0): evaluation must not start pools.
        from botgrpo_jsx.params import CompilesParams, RendersParams
        from botgrpo_jsx.renders import RendersScorer
        from botgrpo_jsx.scorers import CompilesScorer

        return (
            CompilesScorer(CompilesParams(workers=0)),
            RendersScorer(RendersParams(workers=0, timeout_s=self.params.render_timeout_s)),
        )

    def check(self, completions: Sequence[str]) -> list[dict[str, bool]]:
        """Per completion: ``compiles``, ``renders``, ``trivial``, ``code`` and ``substantive`` (a sandbox failure:
        not rendered)."""
        from botgrpo_core.signals import Sample, SampleError
        from botgrpo_jsx.extract import DEFAULT_LANGUAGES, extract_cached

        samples = [Sample(prompt="", completion=c) for c in completions]
        compiles, renders = self._checkers
        compiled = compiles.score(samples)
        rendered = renders.score(samples)
        out = []
        for text, c, r in zip(completions, compiled, rendered, strict=True):
            ok = not isinstance(c, SampleError) and c == 1.0
            view = extract_cached(text, DEFAULT_LANGUAGES)
            trivial = is_trivial(text, ok)
            out.append(
                {
                    "compiles": ok,
                    "renders": not isinstance(r, SampleError) and r == 1.0,
                    "trivial": trivial,
                    "code": view is not None and view.fenced,
                    "substantive": ok and not trivial,
                }
            )
        return out

    def probe_variants(self, row: dict[str, Any], completion: str) -> dict[str, str]:
        """Gamed pages for ``botgrpo probe`` (:func:`botgrpo_bench.react_probe.gamed_pages`)."""
        from botgrpo_bench.react_probe import gamed_pages

        return gamed_pages(row)

    def evaluate(self, rows: Sequence[dict[str, Any]], completions: Sequence[str]) -> dict[str, float]:
        """``compile_rate``, ``render_rate``, ``trivial_rate``, ``code_rate`` and ``substantive_rate`` of
        ``completions``."""
        if len(rows) != len(completions):
            raise ValueError("evaluate: rows and completions differ in length")
        verdicts = self.check(completions)
        n = max(len(verdicts), 1)
        rates = {} if not self.params.eval_checks else self.check_rates(rows, completions)
        return rates | {
            f"{name}_rate": sum(v[key] for v in verdicts) / n
            for name, key in (
                ("compile", "compiles"),
                ("render", "renders"),
                ("trivial", "trivial"),
                ("code", "code"),
                ("substantive", "substantive"),
            )
        }

    @cached_property
    def _check_scorer(self) -> Any:
        from botgrpo_jsx.checks import ChecksScorer
        from botgrpo_jsx.params import ChecksParams

        return ChecksScorer(ChecksParams(workers=0, timeout_s=self.params.render_timeout_s))

    def check_rates(self, rows: Sequence[dict[str, Any]], completions: Sequence[str]) -> dict[str, float]:
        """``check_rate`` (mean share of checks passed) and ``checks_all_rate`` (share passing all) of
        ``completions`` against their rows' suites (a row without one gets its request's, by ``id``)."""
        from botgrpo_bench.react_checks import react_checks
        from botgrpo_core.signals import Sample, SampleError

        samples = [
            Sample(prompt="", completion=c, row={"checks": r.get("checks") or react_checks(str(r.get("id")))})
            for r, c in zip(rows, completions, strict=True)
        ]
        values = [
            0.0 if isinstance(v, SampleError) else float(v.value) for v in self._check_scorer.score(samples)
        ]
        n = max(len(values), 1)
        return {"check_rate": sum(values) / n, "checks_all_rate": sum(v == 1.0 for v in values) / n}

    def success(self, row: dict[str, Any], completion: str) -> bool:
        """One rollout's success: it compiles and is not trivial (remembered per completion text)."""
        cached = self._successes.get(completion)
        if cached is None:
            cached = self.success_batch([row], [completion])[0]
        return cached

    def success_batch(self, rows: Sequence[dict[str, Any]], completions: Sequence[str]) -> list[bool]:
        """:meth:`success` for many rollouts in one compile request."""
        from botgrpo_core.signals import Sample, SampleError

        todo = sorted({c for c in completions if c not in self._successes})
        if todo:
            results = self._checkers[0].score([Sample(prompt="", completion=c) for c in todo])
            if len(self._successes) > 50_000:  # bound the memory of a long run
                self._successes.clear()
            for c, r in zip(todo, results, strict=True):
                ok = not isinstance(r, SampleError) and r == 1.0
                self._successes[c] = ok and not is_trivial(c, ok)
        return [self._successes[c] for c in completions]

    @cached_property
    def _successes(self) -> dict[str, bool]:
        return {}

    def close(self) -> None:
        """Stop the scorers' Node processes (when evaluation started them)."""
        if "_checkers" in self.__dict__:
            for scorer in self._checkers:
                getattr(scorer, "close", lambda: None)()
        if "_check_scorer" in self.__dict__:
            self._check_scorer.close()
