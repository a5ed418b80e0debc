"""Cheap input bounds checked before code reaches a backend that recurses on nesting.

esbuild's Go parser recurses once per nesting level; about 200,000 open brackets overflow its stack
and kill its service process. Code nested deeper than any real component is therefore refused before
it is sent (``max_nesting``). The count is lexical (brackets inside strings count too), which only
matters for strings holding hundreds of unmatched brackets.
"""

from __future__ import annotations

import numpy as np

_STEP = np.zeros(256, dtype=np.int8)
_STEP[[ord(c) for c in "({["]] = 1
_STEP[[ord(c) for c in ")}]"]] = -1


def bracket_depth(code: str) -> int:
    """The deepest bracket nesting of ``code`` (``(``, ``{``, ``[``), counted lexically."""
    data = np.frombuffer(code.encode("utf-8", "replace"), dtype=np.uint8)
    if data.size == 0:
        return 0
    return max(0, int(np.cumsum(_STEP[data], dtype=np.int64).max()))


def nested_deeper_than(code: str, limit: int) -> bool:
    """Whether :func:`bracket_depth` of ``code`` exceeds ``limit``; code with no more than ``limit``
    opening brackets cannot, which three ``str.count`` calls tell without the full count."""
    if code.count("(") + code.count("{") + code.count("[") <= limit:
        return False
    return bracket_depth(code) > limit
