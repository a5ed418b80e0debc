"""A tolerant parser of the verdicts a generative judge writes.

A verdict becomes a raw score in ``[-1, 1]``: positive words (yes, correct, true, valid, pass, ✓) give
``+1``, negative ones (no, incorrect, wrong, false, invalid, fail, ✗) give ``-1``, and a number is
mapped linearly from ``score_range`` (default ``[0, 1]``) onto ``[-1, 1]`` (out of range: unparsed).
``None`` means "unparsed"; the scorer turns it into the signal's ``unparsed_value`` and counts it.

Formats understood, tried in this order (structured first, prose last):

1. JSON anywhere in the text (bare or in a code fence): ``{"verdict": "correct"}``, ``{"score": 0.8}``,
   ``{"correct": true}``; for several steps ``[true, false]``, ``{"steps": [...]}``, ``{"1": "correct"}``,
   ``[{"step": 1, "verdict": "correct"}, ...]``. JSON nested deeper than :data:`MAX_JSON_DEPTH` levels is
   skipped (bounded work, never a ``RecursionError``); ``NaN``/``Infinity`` are not JSON.
2. Step lines (several steps): ``Step 3: incorrect``, ``**Step 3** - Correct``, ``step 3 is wrong``;
   the last parseable line of each step wins (summaries come after the reasoning).
3. ``\\boxed{...}``: ``\\boxed{correct}``, ``\\boxed{1}``, ``\\boxed{\\text{yes}}``; for several steps a
   comma-separated list ``\\boxed{1,0,1}`` or one box per step.
4. A label: ``Verdict: correct``, ``Answer: yes``, ``Judgement: wrong``, ``Score: 0.7`` (the last one).
5. The whole answer as one value (``0.8``, ``Incorrect.``), else prose: a leading ``Yes.``/``No,``/``Correct``; else the last of correct/incorrect/wrong/valid/
   invalid/true/false, negations flipped (``not correct`` is ``-1``). ``yes``/``no`` count only as the
   leading word: in "there is no error" the ``no`` is not a verdict.
"""

from __future__ import annotations

import math
from typing import Any

import regex

from botgrpo_core.signals.answers import boxed
from botgrpo_judge.bounded_json import json_values_in

#: Deepest JSON nesting read as a verdict (``{"steps": [{"step": 1, ...}]}`` is 3); bounds the work per `[`.
MAX_JSON_DEPTH = 8
POSITIVE = frozenset({"yes", "y", "correct", "right", "true", "valid", "pass", "passed", "✓", "✔", "✅"})
NEGATIVE = frozenset(
    {"no", "n", "incorrect", "wrong", "false", "invalid", "fail", "failed", "✗", "✘", "❌", "error"}
)
_NEGATIONS = r"(?:\bnot|n't|\bnever)"
# Words that settle a verdict anywhere in prose; yes/no are excluded ("there is no error").
_PROSE_WORDS = r"incorrect|correct|wrong|invalid|valid|true|false"
_PROSE = regex.compile(rf"(?i)(?:{_NEGATIONS}\s+(?:\w+\s+)?)?\b({_PROSE_WORDS})\b")
_LEADING = regex.compile(
    r"(?i)^[\s*_>#`\"'(\[]*(yes|no|correct|incorrect|true|false|right|wrong|valid|invalid|pass|fail|✓|✔|✅|✗|✘|❌)"
    r"(?=[*_`\"')\].,;:!\-]|[ \t]*(?:\n|$))"
)
_LABEL = regex.compile(
    r"(?im)\b(?:final\s+)?(?:verdict|answer|judge?ment|conclusion|result|decision|label|score|grade|rating)"
    r"\s*\**\s*[:=]\s*\**\s*([^\n]{1,80})"
)
_TEXT_CMD = regex.compile(r"\\(?:text|textbf|mathrm|mbox)\s*\{([^{}]*)\}")
_STEP_LINE = regex.compile(
    r"(?im)^[\s>#*_\-]*step[\s_]*(\d+)\s*[*_]*\s*(?:[:=\-–—)]|\bis\b)?\s*[*_]*\s*([^\n]{0,120})"
)
_NUMBER = regex.compile(r"^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:\s*/\s*(\d+(?:\.\d*)?))?$")
_FENCE = regex.compile(r"```(?:json)?\s*(.*?)```", regex.DOTALL)
_SINGLE_KEYS = (
    "verdict",
    "correct",
    "is_correct",
    "correctness",
    "judgement",
    "judgment",
    "answer",
    "label",
    "result",
    "decision",
    "score",
    "grade",
)


def _number_value(number: float, score_range: tuple[float, float]) -> float | None:
    low, high = score_range
    if not math.isfinite(number) or not (low <= number <= high) or high <= low:
        return None
    return 2.0 * (number - low) / (high - low) - 1.0


def value_of(token: Any, score_range: tuple[float, float] = (0.0, 1.0)) -> float | None:
    """Raw score of one verdict value (a word, a bool, a number, a short phrase), or ``None``."""
    if isinstance(token, bool):
        return 1.0 if token else -1.0
    if isinstance(token, (int, float)):
        try:
            number = float(token)
        except OverflowError:  # a JSON int past float's range is no score on any scale
            return None
        return _number_value(number, score_range)
    if not isinstance(token, str):
        return None
    text = _TEXT_CMD.sub(r"\1", token).strip().strip("*_`\"'()[] ").rstrip(".!,;:").lower()
    if not text:
        return None
    if text in POSITIVE:
        return 1.0
    if text in NEGATIVE:
        return -1.0
    number = _NUMBER.match(text)
    if number:
        if number.group(1):  # "7/10": a fraction of the top of the scale
            numerator, denominator = (float(x) for x in text.split("/"))
            if denominator == 0:
                return None
            return _number_value(numerator / denominator * score_range[1], score_range)
        return _number_value(float(text), score_range)
    return _phrase_value(text)


def _phrase_value(text: str) -> float | None:
    """A short phrase: its leading verdict word, else its last prose verdict word (negations flipped)."""
    leading = _LEADING.match(text)
    if leading:
        return value_of(leading.group(1))
    last = None
    for match in _PROSE.finditer(text):
        last = match
    if last is None:
        return None
    value = value_of(last.group(1))
    negated = last.group(0)[: last.start(1) - last.start(0)].strip() != ""
    return -value if (value is not None and negated) else value


def _json_candidates(text: str) -> list[Any]:
    """Every JSON object or array that parses, from code fences first, then bare in the text.

    Nesting deeper than :data:`MAX_JSON_DEPTH` is not a verdict: such a value is skipped, never decoded
    (bounded work, no ``RecursionError``; see :mod:`botgrpo_judge.bounded_json`).
    """
    chunks = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    return [value for chunk in chunks for value in json_values_in(chunk, MAX_JSON_DEPTH)]


def _json_single(value: Any, score_range: tuple[float, float]) -> float | None:
    if isinstance(value, dict):
        lowered = {str(k).lower(): v for k, v in value.items()}
        for key in _SINGLE_KEYS:
            if key in lowered:
                return value_of(lowered[key], score_range)
    return None


def _json_steps(value: Any, num_steps: int, score_range: tuple[float, float]) -> list[float | None] | None:
    """Per-step values from a JSON value, or ``None`` when it does not describe steps."""
    out: list[float | None] = [None] * num_steps
    if isinstance(value, dict):
        lowered = {str(k).lower().strip(): v for k, v in value.items()}
        if "steps" in lowered and isinstance(lowered["steps"], (list, dict)):
            return _json_steps(lowered["steps"], num_steps, score_range)
        numbered = False
        for key, item in lowered.items():
            digits = regex.fullmatch(r"(?:step[\s_]*)?(\d+)", key)
            if digits:
                numbered = True
                index = int(digits.group(1)) - 1
                if 0 <= index < num_steps:
                    out[index] = _json_item(item, score_range)
        return out if numbered else None
    if isinstance(value, list):
        if not value:
            return None
        for position, item in enumerate(value):
            index = position
            if isinstance(item, dict):
                lowered = {str(k).lower(): v for k, v in item.items()}
                step = lowered.get("step", lowered.get("index"))
                if isinstance(step, int) and not isinstance(step, bool):
                    index = step - 1
            if 0 <= index < num_steps:
                out[index] = _json_item(item, score_range)
        return out
    return None


def _json_item(item: Any, score_range: tuple[float, float]) -> float | None:
    return _json_single(item, score_range) if isinstance(item, dict) else value_of(item, score_range)


def parse_verdict(text: str, score_range: tuple[float, float] = (0.0, 1.0)) -> float | None:
    """Raw score in ``[-1, 1]`` of a single verdict, or ``None`` when no format matches."""
    for candidate in reversed(_json_candidates(text)):
        value = _json_single(candidate, score_range)
        if value is not None:
            return value
    boxes = _boxes(text)
    if boxes:
        value = value_of(boxes[-1], score_range)
        if value is not None:
            return value
    labels = _LABEL.findall(text)
    for label in reversed(labels):
        value = value_of(label, score_range)
        if value is not None:
            return value
    return value_of(text, score_range)


def parse_step_verdicts(
    text: str, num_steps: int, score_range: tuple[float, float] = (0.0, 1.0)
) -> list[float | None]:
    """Raw scores of steps ``1..num_steps`` from one judge answer (``None``: that step is unparsed)."""
    if num_steps <= 0:
        return []
    for candidate in reversed(_json_candidates(text)):
        values = _json_steps(candidate, num_steps, score_range)
        if values is not None and any(v is not None for v in values):
            return values
    out: list[float | None] = [None] * num_steps
    step_lines = False
    for match in _STEP_LINE.finditer(text):
        index = int(match.group(1)) - 1
        if 0 <= index < num_steps:
            step_lines = True
            value = value_of(match.group(2), score_range)
            if value is not None:
                out[index] = value
    if step_lines:
        return out
    boxes = _boxes(text)
    if len(boxes) == 1 and "," in boxes[0]:
        parts = [value_of(part, score_range) for part in boxes[0].split(",")]
        return (parts + [None] * num_steps)[:num_steps]
    if len(boxes) == num_steps:
        return [value_of(box, score_range) for box in boxes]
    if num_steps == 1:
        return [parse_verdict(text, score_range)]
    return out


def _boxes(text: str) -> list[str]:
    """The contents of the answer's ``\\boxed{}`` s, outermost, braces matched (the core's one parser)."""
    return [text[box.start : box.end] for box in boxed(text)]
