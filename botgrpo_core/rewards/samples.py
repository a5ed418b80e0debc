"""Completions as :class:`~botgrpo_core.signals.Sample` batches: decoded text with token character offsets.

The one place a trainer, ``botgrpo score``, the evaluation and plugin authors' test batches turn token ids
into what signals see.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from botgrpo_core.rewards.offsets import decode_with_offsets
from botgrpo_core.signals import Sample


def decode_samples(
    tokenizer: Any,
    prompts: Sequence[str],
    completion_ids: Sequence[Sequence[int]],
    rows: Sequence[Mapping[str, Any]] | None = None,
    truncated: Sequence[bool] | None = None,
) -> list[Sample]:
    """Decode each completion's ids and attach its token character offsets.

    :param tokenizer: a Hugging Face tokenizer (fast or slow).
    :param prompts: ``B`` prompt texts.
    :param completion_ids: ``B`` token id sequences (completion tokens only).
    :param rows: ``B`` dataset rows (their fields reach the signals as ``Sample.row``).
    :param truncated: ``B`` flags, True where the length cap cut the completion (``Sample.truncated``).
    :returns: ``B`` samples, ``offsets[t]`` the character range of token ``t`` in the decoded completion.
    """
    samples = []
    for i, (prompt, ids) in enumerate(zip(prompts, completion_ids, strict=True)):
        text, offsets = decode_with_offsets(tokenizer, ids)
        row = dict(rows[i]) if rows is not None else {}
        cut = bool(truncated[i]) if truncated is not None else False
        samples.append(
            Sample(
                prompt=prompt,
                completion=text,
                token_ids=tuple(int(t) for t in ids),
                offsets=offsets,
                row=row,
                truncated=cut,
            )
        )
    return samples


def prompt_text(prompt: Any) -> str:
    """What signals see as ``Sample.prompt``: a string as it is, a conversational prompt (TRL's list of
    ``{"role", "content"}`` messages) as the text of its last user message. The trainer, the evaluation and
    ``botgrpo score`` all read prompts through this one function."""
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, list) and prompt:
        users = [m for m in prompt if isinstance(m, Mapping) and m.get("role") == "user"] or prompt
        content = users[-1].get("content", "") if isinstance(users[-1], Mapping) else users[-1]
        if isinstance(content, list):  # content blocks
            return "".join(c.get("text", "") for c in content if isinstance(c, Mapping))
        return str(content)
    return str(prompt)
