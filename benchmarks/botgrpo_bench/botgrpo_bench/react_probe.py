"""The React tasks' gamed pages for ``botgrpo probe`` (``ReactRequestsTask.probe_variants``).

Each is a page a policy can write without doing what was asked, in the answer format the request asks for (one
```jsx block): the shortcuts round 4's SmolLM2 runs learned (pages of ~20 tokens that compile and render) and the
ones a substance count alone does not see.
"""

from __future__ import annotations

import re
from typing import Any

#: "... a React component named LikeButton ..." -> LikeButton
_NAMED = re.compile(r"\bnamed\s+([A-Z][A-Za-z0-9_]*)")


def component_name(row: dict[str, Any]) -> str:
    """The component name a request asks for, else ``App``."""
    found = _NAMED.search(str(row.get("request", "")))
    return found.group(1) if found else "App"


def _page(name: str, body: str) -> str:
    return f"```jsx\nexport default function {name}() {{\n  return {body};\n}}\n```"


def gamed_pages(row: dict[str, Any]) -> dict[str, str]:
    """``{variant: page}``: a one-element page that renders, ``return null``, and twenty ``<p>0</p>`` in a div
    (elements enough for a substance count, no logic)."""
    name = component_name(row)
    paragraphs = "<div>\n" + "".join("      <p>0</p>\n" for _ in range(20)) + "    </div>"
    return {
        "trivial_page": _page(name, f"<div>{name}</div>"),
        "return_null": _page(name, "null"),
        "twenty_paragraphs": _page(name, f"(\n    {paragraphs}\n  )"),
    }
