"""JSON from untrusted text with bounded work: no ``RecursionError``, no quadratic rescans.

Python's decoder recurses once per ``[`` or ``{``, so ``[[[[...`` 100,000 deep (a judge's verdict, or a
server's answer) raises ``RecursionError``. Here a bracketed value is first *scanned* (brackets found
by a regex, strings skipped with ``str.find``, escapes honoured), and the scan stops as soon as the
nesting passes ``max_depth``; only a value balanced within the limit reaches the decoder.

- :func:`loads_bounded` decodes one document (a server's answer) and also refuses ``NaN`` and
  ``Infinity``, which are not JSON (Python's decoder accepts them).
- :func:`json_values_in` finds the JSON objects and arrays embedded in prose (a judge's verdict). After
  a start that yields nothing (a stray bracket, LaTeX braces) the search goes on one character later,
  so those scans share a work budget (:data:`SCAN_BUDGET` brackets and strings): a text of 100,000
  ``{"a":`` stops looking for JSON after that many steps instead of scanning for seconds.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

#: Brackets and strings passed by fruitless scans of one text before :func:`json_values_in` gives up.
SCAN_BUDGET = 50_000
_SPECIAL = re.compile(r'[\[\]{}"]')
_OPENING = re.compile(r"[\[{]")
_OPENERS = frozenset("[{")


class JSONTooDeep(ValueError):
    """The JSON value nests deeper than allowed."""


@dataclass(frozen=True)
class _Scan:
    end: int | None  # index after the value; None: no balanced value within the depth limit
    too_deep: bool
    steps: int  # brackets and strings passed


def _string_end(text: str, quote: int) -> int | None:
    """Index after the quote closing the JSON string that opens at ``text[quote]``, or ``None``."""
    position = quote + 1
    while (close := text.find('"', position)) >= 0:
        backslash = close
        while backslash - 1 > quote and text[backslash - 1] == "\\":
            backslash -= 1
        if (close - backslash) % 2 == 0:  # an even run of backslashes: the quote is not escaped
            return close + 1
        position = close + 1
    return None


def _scan(text: str, start: int, max_depth: int) -> _Scan:
    """Where the bracketed value opening at ``text[start]`` ends; linear in the characters passed."""
    depth, position, steps = 0, start, 0
    while (match := _SPECIAL.search(text, position)) is not None:
        steps += 1
        token, position = match.group(), match.end()
        if token == '"':
            string_end = _string_end(text, match.start())
            if string_end is None:  # a string that never closes
                return _Scan(None, False, steps)
            position = string_end
        elif token in _OPENERS:
            depth += 1
            if depth > max_depth:
                return _Scan(None, True, steps)
        else:  # bracket kinds are not matched here: the decoder checks the syntax
            depth -= 1
            if depth == 0:
                return _Scan(position, False, steps)
    return _Scan(None, False, steps)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _decode(text: str) -> Any:
    return json.loads(text, parse_constant=_reject_constant)


def loads_bounded(text: str, max_depth: int) -> Any:
    """Decode a JSON document that must be one object or array.

    :raises JSONTooDeep: the nesting exceeds ``max_depth``.
    :raises ValueError: anything else that is not such a document (``NaN``/``Infinity`` included).
    """
    start = len(text) - len(text.lstrip())
    if text[start : start + 1] not in _OPENERS:
        raise ValueError("not a JSON object or array")
    scan = _scan(text, start, max_depth)
    if scan.too_deep:
        raise JSONTooDeep(f"JSON nested deeper than {max_depth} levels")
    if scan.end is None:
        raise ValueError("not a complete JSON object or array")
    if text[scan.end :].strip():
        raise ValueError("extra data after the JSON value")
    return _decode(text[start : scan.end])


def json_values_in(text: str, max_depth: int) -> Iterator[Any]:
    """The JSON objects and arrays in ``text``, left to right, none inside another.

    A value nested deeper than ``max_depth``, or text that does not decode, is skipped; the search
    moves on one character later, until such fruitless scans have spent :data:`SCAN_BUDGET` steps.
    """
    index, budget = 0, SCAN_BUDGET
    while budget > 0 and (opening := _OPENING.search(text, index)) is not None:
        start = opening.start()
        scan = _scan(text, start, max_depth)
        if scan.end is not None:
            try:
                value = _decode(text[start : scan.end])
            except ValueError:  # JSONDecodeError, NaN/Infinity, ints over Python's digit limit
                pass
            else:
                yield value
                index = scan.end
                continue
        budget -= scan.steps
        index = start + 1
