"""Find the code a completion contains: a fenced block (```jsx, ```tsx, ```js ...) or the bare text.

Every backend sees only the extracted code; :class:`CodeView` remembers where it starts in the
completion so spans map back with one addition (a block is one contiguous slice of the completion).
A fence the model never closed (it ran out of tokens) runs to the end of the completion. A completion
that starts with code and whose first fence is bare had its opening fence left out: that fence closes
the code before it (models do this: the prose after it is no code).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Literal

from botgrpo_jsx.offsets import sanitize

#: Fence languages treated as React code; "" is an unlabelled fence.
DEFAULT_LANGUAGES = ("jsx", "tsx", "js", "javascript", "ts", "typescript", "react", "mjs", "")
TS_LANGUAGES = frozenset({"tsx", "ts", "typescript"})

# An opening fence: up to 3 spaces, 3+ backticks or tildes, an optional info string.
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})[ \t]*([^\s`]*)[^\n]*$", re.MULTILINE)

# A completion starting with code: its first non-blank line opens with a declaration keyword.
_CODE_START = re.compile(r"\s*(?:import|export|const|let|var|function|class)\b")

BlockChoice = Literal["largest", "first", "last"]


@dataclass(frozen=True)
class CodeView:
    """Extracted code and its place in the completion.

    :param code: the code, sanitized (lone surrogates replaced; same length as the slice).
    :param start: ``str`` index in the completion where ``code`` starts.
    :param lang: the fence's language tag (lower case), ``""`` for an unlabelled fence or bare text.
    :param fenced: whether the code came from a fenced block.
    """

    code: str
    start: int
    lang: str = ""
    fenced: bool = False

    @property
    def is_typescript(self) -> bool:
        return self.lang in TS_LANGUAGES

    def to_completion(self, index: int) -> int:
        """Map a ``str`` index of ``code`` to a ``str`` index of the completion."""
        return self.start + max(0, min(index, len(self.code)))


def fenced_blocks(completion: str) -> list[CodeView]:
    """All fenced blocks of a completion, in order (closed or running to the end)."""
    blocks: list[CodeView] = []
    pos = 0
    first = _FENCE.search(completion)
    # a bare fence after code: it closes that code
    if (
        first is not None
        and first.start() > 0
        and first.group(0).strip() == first.group(1)
        and _CODE_START.match(completion)
    ):
        blocks.append(CodeView(sanitize(completion[: first.start()]), 0, "", True))
        pos = first.end()
    while True:
        opening = _FENCE.search(completion, pos)
        if opening is None:
            return blocks
        fence, lang = opening.group(1), opening.group(2).lower()
        body_start = min(opening.end() + 1, len(completion))
        # The closing fence: same character, at least as long, nothing but spaces after it.
        closing = re.compile(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", re.MULTILINE)
        close = closing.search(completion, body_start)
        body_end = close.start() if close else len(completion)
        blocks.append(CodeView(sanitize(completion[body_start:body_end]), body_start, lang, True))
        if close is None:
            return blocks
        pos = close.end()


def extract_code(
    completion: str,
    languages: tuple[str, ...] = DEFAULT_LANGUAGES,
    block: BlockChoice = "largest",
) -> CodeView | None:
    """The code to check: one fenced block in ``languages`` chosen by ``block``, else the bare text.

    Returns ``None`` when the completion has fenced blocks but none in ``languages`` (e.g. only a
    ```css block): there is no React code to score, which callers treat as a failure.
    """
    blocks = fenced_blocks(completion)
    if not blocks:
        return CodeView(sanitize(completion), 0, "", False)
    wanted = [b for b in blocks if b.lang in languages]
    if not wanted:
        return None
    if block == "first":
        return wanted[0]
    if block == "last":
        return wanted[-1]
    return max(wanted, key=lambda b: len(b.code.strip()))


@functools.lru_cache(maxsize=1024)
def extract_cached(
    completion: str, languages: tuple[str, ...], block: BlockChoice = "largest"
) -> CodeView | None:
    """:func:`extract_code` of the last 1,024 completions: the jsx signals of one completion (and the
    jsx.compiles prefetch thread before them) extract it once per process."""
    return extract_code(completion, languages, block)
