"""botgrpo entry point (``bench = "botgrpo_bench.plugin"``): the ``bench`` command, the ``react`` and
``react-requests`` tasks and the view pages' outcome signals (``bench.react_spec``, ``bench.react_trivial``).

Only the standard library, pydantic and the core's hook marker and signal contract are imported here:
``botgrpo --help`` loads this module, so the bench loads when the command runs; the task module (pydantic
only) when a run file names a task that is not built in; tree-sitter and esbuild when a scorer is built.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from botgrpo_core.signals import NoParams, SignalSpec
from botgrpo_core.signals.hookspecs import hookimpl


def _run_bench(args: argparse.Namespace) -> int:
    from botgrpo_bench.bench import run_bench_command

    return run_bench_command(args)


@hookimpl
def botgrpo_register_commands(subparsers: argparse._SubParsersAction) -> None:
    """``botgrpo bench BENCH.yaml [--quick] [--output DIR] [--set KEY=VALUE ...]``."""
    p = subparsers.add_parser(
        "bench", help="run a grid of presets x seeds x tasks from one warm start; write a results folder"
    )
    p.add_argument("bench_file", help="the benchmark YAML (see benchmarks/)")
    p.add_argument("--quick", action="store_true", help="1 seed, fewer steps, 3 methods")
    p.add_argument("--output", default=None, help="results folder (default: from the bench file)")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a key of the bench file")
    p.set_defaults(func=_run_bench)


@hookimpl
def botgrpo_register_tasks(register: Callable[[str, type, type], None]) -> None:
    """The ``react`` task (``data.task: react``): small React components, checked by the jsx plugin; and
    ``react-requests``: the project's own component requests for a real chat model; ``word-problems``: the
    project's own grade-school word problems for one."""
    from botgrpo_bench.react import ReactParams, ReactTask
    from botgrpo_bench.react_requests import ReactRequestsParams, ReactRequestsTask
    from botgrpo_bench.word_problems import WordProblemsParams, WordProblemsTask

    register("react", ReactTask, ReactParams)
    register("react-requests", ReactRequestsTask, ReactRequestsParams)
    register("word-problems", WordProblemsTask, WordProblemsParams)


@hookimpl
def botgrpo_register_signals(register: Callable[[SignalSpec], None]) -> None:
    """The React view task's outcome (``bench.react_spec``), its local signal (``bench.react_sections``)
    and trivial-page flag (``bench.react_trivial``); the react-requests level's gaming guard
    (``bench.react_substance``)."""
    from botgrpo_bench.react_requests import SubstanceScorer as make_substance
    from botgrpo_bench.react_sections import SectionsParams, make_sections
    from botgrpo_bench.react_verdict import SpecParams, make_spec, make_trivial

    register(
        SignalSpec(
            name="bench.react_spec",
            kind="global",
            bounds=(0.0, 1.0),
            make_scorer=make_spec,
            params_model=SpecParams,
            required_fields=("spec",),
            description="react view pages: 1 if the page compiles and implements its spec, else partial x "
            "the share of spec sections implemented less repeats (empty, null or copied pages score 0)",
        )
    )
    register(
        SignalSpec(
            name="bench.react_sections",
            kind="local",
            bounds=lambda params: (params.fail_value, params.pass_value),
            make_scorer=make_sections,
            params_model=SectionsParams,
            required_fields=("spec",),
            own_pool=True,  # jsx.units' processes: workers/timeout_s/memory_mb come from the signal level
            description="react view pages: jsx.units' verdict per section line, +1 only where the line also "
            "implements a new section of the spec, -1 on a wrong, repeated or broken one and on the closer "
            "of a page with sections missing",
        )
    )
    register(
        SignalSpec(
            name="bench.react_substance",
            kind="global",
            bounds=(0.0, 1.0),
            make_scorer=make_substance,
            params_model=NoParams,
            description="react-requests: 1 when the answer's code holds at least 2 JSX elements (compiling or "
            "not), else 0: beside jsx.compiles in the outcome, a page of substance is worth more than an empty "
            "one that compiles",
        )
    )
    from botgrpo_bench.react_cascade import CascadeParams, cascade_gap, make_cascade

    register(
        SignalSpec(
            name="bench.react_cascade",
            kind="global",
            bounds=(0.0, 1.0),
            make_scorer=make_cascade,
            params_model=CascadeParams,
            required_fields=("checks",),
            own_pool=True,  # jsx.checks' render processes: workers/timeout_s/memory_mb come from the signal level
            gap=cascade_gap,
            description="react-requests: a gate cascade, 0 for a page without substance (elements and logic); "
            "attempt_credit for one with substance, + compile_credit when it compiles, + render_credit when it "
            "renders; + the rest x the share of the row's checks passed (jsx.checks)",
        )
    )
    register(
        SignalSpec(
            name="bench.react_trivial",
            kind="global",
            bounds=(0.0, 1.0),
            make_scorer=make_trivial,
            params_model=NoParams,
            required_fields=("spec",),
            description="react view pages: 1 for an empty or trivial page (no JSX, under half the spec's "
            "fields shown, or a section repeated in place of others); log it with weight 0",
        )
    )
