"""botgrpo entry point (``jsx = "botgrpo_jsx.plugin"``): registers the ``jsx.*`` signals.

Only pydantic models are imported here; tree-sitter, esbuild and the worker pool load in
``make_scorer`` when a run actually uses a ``jsx.*`` signal.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from botgrpo_core.signals import SignalSpec
from botgrpo_core.signals.hookspecs import hookimpl
from botgrpo_jsx.params import (
    ChecksParams,
    CompilesParams,
    RendersParams,
    RulesParams,
    SyntaxParams,
    UnitsParams,
    VisualParams,
)

if TYPE_CHECKING:
    from botgrpo_jsx.checks import ChecksScorer
    from botgrpo_jsx.renders import RenderErrorsScorer, RendersScorer
    from botgrpo_jsx.scorers import CompilesScorer, RulesScorer, SyntaxScorer, UnitsScorer
    from botgrpo_jsx.visual import VisualScorer


def make_compiles(params: CompilesParams) -> CompilesScorer:
    """Build the ``jsx.compiles`` scorer."""
    from botgrpo_jsx.scorers import CompilesScorer

    return CompilesScorer(params)


def make_syntax(params: SyntaxParams) -> SyntaxScorer:
    """Build the ``jsx.syntax`` scorer."""
    from botgrpo_jsx.scorers import SyntaxScorer

    return SyntaxScorer(params)


def make_rules(params: RulesParams) -> RulesScorer:
    """Build the ``jsx.rules`` scorer."""
    from botgrpo_jsx.scorers import RulesScorer

    return RulesScorer(params)


def make_units(params: UnitsParams) -> UnitsScorer:
    """Build the ``jsx.units`` scorer."""
    from botgrpo_jsx.scorers import UnitsScorer

    return UnitsScorer(params)


def make_renders(params: RendersParams) -> RendersScorer:
    """Build the ``jsx.renders`` scorer."""
    from botgrpo_jsx.renders import RendersScorer

    return RendersScorer(params)


def make_render_errors(params: RendersParams) -> RenderErrorsScorer:
    """Build the ``jsx.render_errors`` scorer."""
    from botgrpo_jsx.renders import RenderErrorsScorer

    return RenderErrorsScorer(params)


def make_checks(params: ChecksParams) -> ChecksScorer:
    """Build the ``jsx.checks`` scorer."""
    from botgrpo_jsx.checks import ChecksScorer

    return ChecksScorer(params)


def _checks_fields(params: ChecksParams) -> tuple[str, ...]:
    return (params.field,)


def make_visual(params: VisualParams) -> VisualScorer:
    """Build the ``jsx.visual`` scorer."""
    from botgrpo_jsx.visual import VisualScorer

    return VisualScorer(params)


def _units_bounds(params: UnitsParams) -> tuple[float, float]:
    return params.fail_value, params.pass_value


def _render_bounds(params: RendersParams) -> tuple[float, float]:
    return min(params.error_value, params.warning_value), 0.0


def _syntax_bounds(params: SyntaxParams) -> tuple[float, float]:
    return params.error_value, params.valid_prefix_value


def _rules_bounds(params: RulesParams) -> tuple[float, float]:
    return -max(params.weights.model_dump().values()), 0.0


SIGNALS = (
    SignalSpec(
        name="jsx.compiles",
        kind="global",
        bounds=(0.0, 1.0),
        make_scorer=make_compiles,
        params_model=CompilesParams,
        own_pool=True,  # its own processes: workers/timeout_s/memory_mb come from the signal level
        description="1 if the completion's React code compiles (esbuild; strict: + TypeScript 5), else 0",
    ),
    SignalSpec(
        name="jsx.syntax",
        kind="local",
        bounds=_syntax_bounds,
        make_scorer=make_syntax,
        params_model=SyntaxParams,
        own_pool=True,  # its own processes: workers/timeout_s/memory_mb come from the signal level
        description="negative value on each syntax error span (tree-sitter TSX, deadline-guarded)",
    ),
    SignalSpec(
        name="jsx.rules",
        kind="local",
        bounds=_rules_bounds,
        make_scorer=make_rules,
        params_model=RulesParams,
        own_pool=True,  # its own processes: workers/timeout_s/memory_mb come from the signal level
        description="React rule violations as spans: keys, hooks, undefined components, tags, class=, exports",
    ),
    SignalSpec(
        name="jsx.units",
        kind="local",
        bounds=_units_bounds,
        make_scorer=make_units,
        params_model=UnitsParams,
        own_pool=True,  # its own processes: workers/timeout_s/memory_mb come from the signal level
        description="+1 on each top-level unit (section, hook, function) that parses in context and "
        "breaks no rule, -1 on each that does not",
    ),
    SignalSpec(
        name="jsx.renders",
        kind="global",
        bounds=(0.0, 1.0),
        make_scorer=make_renders,
        params_model=RendersParams,
        own_pool=True,  # its own processes: workers/timeout_s/memory_mb come from the signal level
        description="1 if the component renders with React (sandboxed Node process per sample), else 0",
    ),
    SignalSpec(
        name="jsx.render_errors",
        kind="local",
        bounds=_render_bounds,
        make_scorer=make_render_errors,
        params_model=RendersParams,
        own_pool=True,  # its own processes: workers/timeout_s/memory_mb come from the signal level
        description="negative spans where the render threw (source-mapped) and where React warned",
    ),
    SignalSpec(
        name="jsx.checks",
        kind="global",
        bounds=(0.0, 1.0),
        make_scorer=make_checks,
        params_model=ChecksParams,
        required_fields=_checks_fields,
        own_pool=True,  # its own processes: workers/timeout_s/memory_mb come from the signal level
        description="share of the row's behaviour checks (click, type, ... then an expectation) the rendered "
        "component passes in the sandbox; 0 if it does not compile or render",
    ),
    SignalSpec(
        name="jsx.visual",
        kind="global",
        bounds=(0.0, 1.0),
        make_scorer=make_visual,
        params_model=VisualParams,
        own_pool=True,  # its own processes: workers/timeout_s/memory_mb come from the signal level
        description="a vision model's 0-1 score of a headless-Chromium screenshot of the rendered component",
    ),
)


@hookimpl
def botgrpo_register_signals(register: Callable[[SignalSpec], None]) -> None:
    """Register the ``jsx.*`` signals."""
    for spec in SIGNALS:
        register(spec)
