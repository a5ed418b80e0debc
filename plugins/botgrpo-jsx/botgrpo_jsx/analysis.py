"""Per-sample analyses in completion coordinates: what a worker process (or the caller) runs.

Each function takes one completion (and its prompt/row bits) with validated params and returns that
sample's result: spans for the local signals, a float for tree-sitter validity, or a
:class:`SampleError` for a defined failure (too long, parse deadline). They never raise for bad input.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from botgrpo_core.signals import SampleError, Span
from botgrpo_jsx import esprima_backend
from botgrpo_jsx.extract import CodeView, extract_cached
from botgrpo_jsx.params import CommonParams, RulesParams, SyntaxParams, UnitsParams
from botgrpo_jsx.redeclare import declared_before, redeclarations, uninitialized_consts
from botgrpo_jsx.rules import RULES, ExportRequirement, check_rules, export_requirement_from_prompt
from botgrpo_jsx.segment import Unit, segment, unit_of
from botgrpo_jsx.spans import Mark, disjoint
from botgrpo_jsx.syntax import (
    SyntaxError_,
    bare_tag_expressions,
    known_shapes,
    located_cause,
    syntax_errors,
    valid_prefix,
)
from botgrpo_jsx.tag_blame import located_tag, tag_close_point
from botgrpo_jsx.treesitter import Parsed, ParseTimeout, parse
from botgrpo_jsx.units import analyse, declared_words
from botgrpo_jsx.violation import Violation


def _extract(completion: str, params: CommonParams) -> CodeView | SampleError | None:
    view = extract_cached(completion, tuple(params.languages), params.block)
    if view is not None and len(view.code) > params.max_chars:
        return SampleError(
            f"extracted code has {len(view.code)} characters, over max_chars={params.max_chars} "
            "(raise the signal's `max_chars` param to score such completions)",
            reason="too_large",
        )
    return view


#: The last parses in this process: jsx.syntax and jsx.rules on the same completion parse it once.
#: A batch's worth (the mixture scores one signal over the whole batch, then the next: with 64,
#: jsx.rules re-parsed and re-located every bracket of a 512-sample batch). A parse of 2 KB of code
#: holds ~37 KB (measured), so a full cache ~40 MB.
_recent: OrderedDict[tuple[str, float], Parsed] = OrderedDict()
_RECENT = 1024


def parse_view(view: CodeView, params: CommonParams) -> Parsed | SampleError:
    key = (view.code, params.parse_timeout_s)
    hit = _recent.get(key)
    if hit is not None:
        _recent.move_to_end(key)
        return hit
    try:
        # TSX is (nearly) a superset of JSX; the JS grammar is the fallback when TSX times out.
        parsed = parse(view.code, params.parse_timeout_s, "tsx")
    except ParseTimeout as exc:
        return SampleError(str(exc), reason="timeout")
    _recent[key] = parsed
    while len(_recent) > _RECENT:
        _recent.popitem(last=False)
    return parsed


def _read(completion: str, params: CommonParams) -> tuple[CodeView, Parsed] | list[Span] | SampleError:
    """The completion's code and its parse; ``[]`` (no spans) when it has no code, the error when the code
    cannot be extracted or parsed within the bounds."""
    view = _extract(completion, params)
    if isinstance(view, SampleError):
        return view
    if view is None or not view.code.strip():
        return []
    parsed = parse_view(view, params)
    if isinstance(parsed, SampleError):
        return parsed
    return view, parsed


def syntax_spans(completion: str, params: SyntaxParams) -> list[Span] | SampleError:
    """``jsx.syntax`` for one completion."""
    view = _extract(completion, params)
    if isinstance(view, SampleError):
        return view
    if view is None or not view.code.strip():
        return []  # no code at all: jsx.compiles is the signal that punishes that
    if params.parser == "esprima":
        return _esprima_spans(view, params)
    parsed = parse_view(view, params)
    if isinstance(parsed, SampleError):
        return parsed
    errors = syntax_errors(parsed, params.max_errors)
    if errors:
        errors = located_errors(parsed, errors, params.parse_timeout_s)
        cut = known_shapes(view.code)  # one error each: its own span replaces the parser's on its line
        if cut:
            lines = [(view.code.rfind("\n", 0, e.start) + 1, e.end) for e in cut]
            # a construct left open at the end of input holds every shape after its opener: the shape
            # is the break a parser meets first (its recovery may have taken the closing bracket)
            errors = [
                e
                for e in errors
                if not any(a <= e.start < b for a, b in lines)
                and not (e.meta.get("error") == "unexpected end of input" and e.start < cut[0].start)
            ] + cut
    marks = [
        Mark(view.to_completion(e.start), view.to_completion(e.end), params.error_value, e.meta)
        for e in errors
    ]
    redeclared = redeclarations(parsed, view.is_typescript)
    if "open_prefix" in parsed.memo:  # the code before an ERROR's first inner error, closed, parses
        at, prefix = parsed.memo["open_prefix"]
        known = {(r.start, r.end) for r in redeclared}
        redeclared += [
            r
            for r in redeclarations(prefix, view.is_typescript)
            if (r.start, r.end) not in known and declared_before(prefix, r, at)
        ]
    for r in redeclared:  # tree-sitter parses these; esbuild does not
        meta = {"error": f"{r.name!r} is already declared in this scope", "grammar": parsed.grammar}
        marks.append(Mark(view.to_completion(r.start), view.to_completion(r.end), params.error_value, meta))
    for e in bare_tag_expressions(parsed):  # tree-sitter parses these too; esbuild does not
        marks.append(Mark(view.to_completion(e.start), view.to_completion(e.end), params.error_value, e.meta))
    for r in uninitialized_consts(parsed):
        meta = {"error": f"const {r.name} has no value", "grammar": parsed.grammar}
        marks.append(Mark(view.to_completion(r.start), view.to_completion(r.end), params.error_value, meta))
    if params.valid_prefix_value > 0:
        first = parsed.index.byte_of_char(errors[0].start) if errors else None
        if first is None and parsed.root.has_error:
            first = 0
        for start, end in valid_prefix(parsed, first):
            marks.append(
                Mark(
                    view.to_completion(start),
                    view.to_completion(end),
                    params.valid_prefix_value,
                    {"valid": True},
                )
            )
    return disjoint(marks)


def located_errors(parsed: Parsed, errors: list[SyntaxError_], deadline_s: float) -> list[SyntaxError_]:
    """The errors of code that does not parse, each in the unit that breaks (:mod:`botgrpo_jsx.units`).

    One missing bracket, else one unclosed (or stray closing) tag, whose repair makes the whole code
    parse is the cause, kept to its unit; otherwise each broken unit's own errors (a page with
    several errors: error recovery after the first must not blame the correct units after it).
    Without a unit analysis, the cause, else tree-sitter's ``errors``.
    """
    found = analyse(parsed, deadline_s)
    if found is None or not found.broken:
        cause = located_cause(parsed, deadline_s) or located_tag(parsed, deadline_s)
        located = [cause] if cause is not None else errors
    else:
        located = [e for k in found.broken for e in found.errors(k)]
    tag = located_tag(parsed, deadline_s) if located_cause(parsed, deadline_s) is None else None
    if tag is not None and any(e.start == tag.start and e.end == tag.end for e in located):
        close = tag_close_point(parsed, deadline_s)  # an unclosed tag: also where it had to close
        if close is not None:
            located.append(close)
    return located


def _esprima_spans(view: CodeView, params: SyntaxParams) -> list[Span] | SampleError:
    try:
        result = esprima_backend.check(view.code)
    except esprima_backend.EsprimaUnavailable as exc:
        return SampleError(str(exc), reason="error")
    if result.ok:
        return []
    # esprima gives a position, not a range: span the token at it (up to the next whitespace).
    code = view.code
    start = min(result.index, max(len(code) - 1, 0))
    end = start + 1
    while end < len(code) and not code[end].isspace() and end - start < 40:
        end += 1
    meta = {"error": result.message, "parser": "esprima"}
    return [Span(view.to_completion(start), view.to_completion(end), params.error_value, meta)]


def export_requirement(params: RulesParams, prompt: str, row: Mapping[str, Any]) -> ExportRequirement | None:
    """Which export the completion must have, from params, the row, or the prompt."""
    if params.require_export == "never":
        return None
    if params.require_export in ("any", "default"):
        return params.require_export
    value = row.get(params.export_field)
    if value is not None:
        if value in ("default", "any"):
            return value
        if value == "named":
            return "any"
        return "any" if bool(value) else None
    return export_requirement_from_prompt(prompt)


def rule_spans(
    completion: str, prompt: str, row: Mapping[str, Any], params: RulesParams
) -> list[Span] | SampleError:
    """``jsx.rules`` for one completion."""
    read = _read(completion, params)
    if not isinstance(read, tuple):
        return read
    view, parsed = read
    weights = params.weights.model_dump()
    violations = rule_violations(parsed, params, export_requirement(params, prompt, row))
    marks = [
        Mark(
            view.to_completion(v.start),
            view.to_completion(v.end),
            -weights[v.rule],
            {"rule": v.rule, "message": v.message},
        )
        for v in violations
    ]
    return disjoint(marks)


def rule_violations(
    parsed: Parsed, params: RulesParams, requirement: ExportRequirement | None, in_broken_units: bool = True
) -> list[Violation]:
    """The violations of the enabled rules, in ``str`` indices of the parsed code.

    On code that does not parse, the rules run in full on the code with its broken units set aside
    (:mod:`botgrpo_jsx.units`: it parses), and each broken unit gets the rules that hold on broken
    code (:func:`_broken_code_violations`) within it (``in_broken_units``); without a unit analysis,
    the whole code gets those.
    """
    weights = params.weights.model_dump()
    enabled = frozenset(rule for rule in RULES if weights[rule] > 0)
    if not parsed.root.has_error:
        return check_rules(parsed, enabled, requirement)
    found = analyse(parsed, params.parse_timeout_s)
    if found is None:
        return _broken_code_violations(parsed, enabled, requirement, params.parse_timeout_s)
    # what the broken units declare or export still counts (the rules see the code without them)
    declared = declared_words(found.blanked)
    wanted = None if "export" in declared else requirement
    repaired = check_rules(found.repaired, enabled, wanted, declared_elsewhere=declared)
    broken = [found.units[k] for k in found.broken]
    out = [
        Violation(v.rule, found.back(v.start), found.back(v.end), v.message)
        for v in repaired
        if not any(unit.contains(found.back(v.start)) for unit in broken)  # a repair's guess
    ]
    for k, trial in found.trials.items() if in_broken_units else ():
        unit = found.units[k]
        for v in _broken_code_violations(trial, enabled, None, params.parse_timeout_s):
            start, end = found.trial_back(v.start), found.trial_back(v.end)
            if unit.contains(start):
                out.append(Violation(v.rule, start, min(end, unit.end), v.message))
    out.sort(key=lambda v: (v.start, v.end, v.rule))
    return out


def _broken_code_violations(
    parsed: Parsed, enabled: frozenset[str], requirement: ExportRequirement | None, deadline_s: float
) -> list[Violation]:
    """The rules on code with a syntax error (:func:`~botgrpo_jsx.rules.check_rules` runs the local ones)."""
    # A syntax error that one bracket explains is jsx.syntax's to report; the tags are not wrong.
    bracket_error = located_cause(parsed, deadline_s) is not None
    violations = check_rules(parsed, enabled, requirement, bracket_error)
    if not bracket_error and "unclosed_tag" in enabled:
        # A tag whose repair parses explains the error (jsx.syntax blames it too): the stack's other
        # guesses (after `<p>x</div>`, the page's last `</div>` "closes nothing") are not reported.
        tag = located_tag(parsed, deadline_s)
        if tag is not None:
            violations = [
                v for v in violations if v.rule != "unclosed_tag" or (v.start < tag.end and tag.start < v.end)
            ]
    return violations


def unit_spans(
    completion: str, prompt: str, row: Mapping[str, Any], params: UnitsParams
) -> list[Span] | SampleError:
    """``jsx.units`` for one completion: ``pass_value`` on each unit that parses in context and breaks
    no rule, ``fail_value`` on each that does not (:mod:`botgrpo_jsx.units`)."""
    read = _read(completion, params)
    if not isinstance(read, tuple):
        return read
    view, parsed = read
    found = analyse(parsed, params.parse_timeout_s)
    units = found.units if found is not None else segment(view.code)
    reasons: list[list[str]] = [[] for _ in units]
    if found is not None:
        for k in found.broken:
            reasons[k].append("syntax")
    else:  # no unit analysis: the units the located errors fall in
        for e in located_errors(parsed, syntax_errors(parsed), params.parse_timeout_s):
            _attribute(units, e.start, "syntax", reasons)
        if not any(reasons):
            for r in reasons:
                r.append("syntax")
    # a broken unit fails already: only the rules in the units that parse are needed
    requirement = export_requirement(params, prompt, row)
    for v in rule_violations(parsed, params, requirement, in_broken_units=False):
        if params.rules or v.rule == "unclosed_tag":  # a mismatched closing tag: esbuild rejects it
            _attribute(units, v.start, v.rule, reasons)
    spans = []  # units are disjoint runs of lines: no overlap to resolve
    for unit, why in zip(units, reasons, strict=True):
        value = params.fail_value if why else params.pass_value
        meta = {"unit": unit.kind, "verdict": ", ".join(dict.fromkeys(why)) if why else "ok"}
        spans += [
            Span(view.to_completion(a), view.to_completion(b), value, meta) for a, b in unit.ranges if b > a
        ]
    spans.sort(key=lambda s: s.start)
    return spans


def _attribute(units: list[Unit], index: int, reason: str, reasons: list[list[str]]) -> None:
    k = unit_of(units, index)
    reasons[0 if k is None else k].append(reason)


def tree_sitter_valid(completion: str, params: CommonParams) -> float | SampleError:
    """1.0 when tree-sitter parses the extracted code without any ERROR/MISSING node, else 0.0."""
    view = _extract(completion, params)
    if isinstance(view, SampleError):
        return 0.0  # too long to judge: not a compiling answer either
    if view is None or not view.code.strip():
        return 0.0
    parsed = parse_view(view, params)
    if isinstance(parsed, SampleError):
        return 0.0  # the parser gave up on it: garbage, not a compiling component
    return 0.0 if parsed.root.has_error else 1.0


def esprima_valid(completion: str, params: CommonParams) -> float | SampleError:
    """1.0 when esprima parses the extracted code (ES2017 + JSX only), else 0.0."""
    view = _extract(completion, params)
    if isinstance(view, SampleError) or view is None or not view.code.strip():
        return 0.0
    try:
        return 1.0 if esprima_backend.check(view.code).ok else 0.0
    except esprima_backend.EsprimaUnavailable as exc:
        return SampleError(str(exc), reason="error")
