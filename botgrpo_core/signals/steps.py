"""Split a completion into reasoning steps, as character spans of the completion.

Five ways, chosen by the signal's ``split`` param:

- ``lines``: every line with visible content is a step (leading and trailing blanks trimmed).
- ``markers``: a step starts at a ``Step k:`` marker (``Step 3.``, ``**Step 3**:``, ``step 3)`` also match,
  case-insensitive, at a line start) and runs to the next marker. Text before the first marker is
  context, not a step, unless ``preamble=True`` (a checker that verifies every claim wants it). Without
  any marker, the whole trimmed completion is one step. ``pattern`` replaces the marker regex.
- ``auto``: ``markers`` when the completion has at least one marker, else ``lines``.
- ``regex``: every match of ``pattern`` is a step (the named group ``step`` if the pattern has one).
- ``separator``: the matches of ``pattern`` cut the completion; the pieces between them are the steps.

Patterns come from the run file (trusted) but run on model output (untrusted), so they run through
the ``regex`` package with a time limit: a catastrophic-backtracking pattern costs one sample, not the run.

Shared by the signals that score step by step (``judge.steps``, ``sympy.steps``), so every plugin
offers the same ``split`` options with the same meaning; plain Python, no torch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import regex

SplitMode = Literal["auto", "lines", "markers", "regex", "separator"]
#: The modes that need a ``pattern``.
PATTERN_MODES = frozenset({"regex", "separator"})

#: ``Step 3:``, ``Step 3.``, ``step 3)``, ``**Step 3**:``, ``Step 3 -`` at the start of a line.
DEFAULT_MARKER = r"^[ \t>#*_]*step[ \t]*\d+[ \t*_]*[:.)\-]"

_LINE = regex.compile(r"[^\n]+")
_DEFAULT_MARKER = regex.compile(DEFAULT_MARKER, regex.IGNORECASE | regex.MULTILINE)


@dataclass(frozen=True)
class Step:
    """One step: the characters ``[start, end)`` of the completion, and their text."""

    start: int
    end: int
    text: str


def compile_pattern(pattern: str) -> regex.Pattern:
    """Compile a split pattern (case-insensitive, multi-line); raises ``ValueError`` saying what is wrong."""
    try:
        compiled = regex.compile(pattern, regex.IGNORECASE | regex.MULTILINE)
    except regex.error as exc:
        raise ValueError(f"split pattern {pattern!r} is not a valid regular expression: {exc}") from exc
    return compiled


def trim_range(text: str, start: int, end: int) -> tuple[int, int]:
    """Shrink ``[start, end)`` of ``text`` past leading and trailing whitespace (empty: ``start == end``)."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def split_steps(
    text: str,
    mode: SplitMode = "lines",
    pattern: str | regex.Pattern | None = None,
    *,
    max_steps: int | None = None,
    timeout_s: float = 1.0,
    preamble: bool = False,
) -> list[Step]:
    """Split ``text`` into steps (see the module docstring for the modes).

    :param text: the completion.
    :param mode: ``auto``, ``lines``, ``markers``, ``regex`` or ``separator``.
    :param pattern: the marker regex (``markers`` and ``auto``; default :data:`DEFAULT_MARKER`), the step
        regex (``regex``; required) or the separator regex (``separator``; required).
    :param max_steps: keep at most this many steps (the first ones).
    :param timeout_s: time limit of each regex search over ``text``.
    :param preamble: ``markers``/``auto``: the text before the first marker is a step too.
    :returns: non-empty, non-overlapping steps in text order.
    :raises TimeoutError: the pattern took longer than ``timeout_s`` on this text.
    """
    if isinstance(pattern, str):
        pattern = compile_pattern(pattern)
    if mode in PATTERN_MODES and pattern is None:
        raise ValueError(f"split: {mode!r} needs a pattern (params.pattern)")
    steps: list[Step] = []
    last_end = 0
    for raw_start, raw_end in _raw_bounds(text, mode, pattern, timeout_s, preamble):
        if raw_start < 0:
            continue  # the optional 'step' group did not take part in this match
        start, end = trim_range(text, max(raw_start, last_end), raw_end)
        if end <= start:
            continue
        steps.append(Step(start, end, text[start:end]))
        last_end = end
        if max_steps is not None and len(steps) >= max_steps:
            break
    return steps


def _raw_bounds(
    text: str, mode: str, pattern: regex.Pattern | None, timeout_s: float, preamble: bool
) -> list[tuple[int, int]]:
    """The untrimmed ``(start, end)`` of every step under ``mode`` (they may overlap or be blank)."""
    marker_starts: list[int] = []
    if mode in ("markers", "auto"):
        marker = pattern if pattern is not None else _DEFAULT_MARKER
        marker_starts = [m.start() for m in marker.finditer(text, timeout=timeout_s) if m.end() > m.start()]
        if mode == "auto":
            mode = "markers" if marker_starts else "lines"
    if mode == "lines":
        return [m.span() for m in _LINE.finditer(text)]
    if mode == "markers":
        if not marker_starts:
            return [(0, len(text))]
        starts = [0, *marker_starts] if preamble and marker_starts[0] > 0 else marker_starts
        return list(zip(starts, [*starts[1:], len(text)]))
    if mode == "regex":
        assert pattern is not None
        group = "step" if "step" in pattern.groupindex else 0
        return [m.span(group) for m in pattern.finditer(text, timeout=timeout_s)]
    if mode == "separator":
        assert pattern is not None
        cuts = [m.span() for m in pattern.finditer(text, timeout=timeout_s)]
        return list(zip([0, *(end for _, end in cuts)], [*(start for start, _ in cuts), len(text)]))
    raise ValueError(f"split mode must be 'auto', 'lines', 'markers', 'regex' or 'separator', got {mode!r}")
