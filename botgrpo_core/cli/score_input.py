"""``botgrpo score``'s input: the JSONL rows, checked, read in two streaming passes.

A row is a JSON object with ``prompt`` (a string, or TRL's conversational format: a list of ``{"role",
"content"}`` messages), ``completion`` (a string, or a list holding one assistant message), optionally
``truncated`` (``true`` when the length cap cut the completion) and any other fields (the dataset row the
signals see). Every string in a row must be valid Unicode (a lone surrogate such as ``"\\ud800"`` is refused).

The file is never held in memory: :func:`plan_input` reads it once, line by line, checking every row and
keeping only its byte offset and group; :func:`chunks` then hands out bounded chunks of whole groups and
:func:`read_chunk` reads just those lines again.
"""

from __future__ import annotations

import hashlib
import json
import os
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from botgrpo_core.rewards.samples import prompt_text

#: rows scored, rendered and released at a time (whole groups; a larger group is one chunk)
CHUNK_ROWS = 256
#: the longest input line read (a row above it is an error naming the row)
MAX_LINE_BYTES = 64 << 20
#: fields of a row that ``score`` reads itself (the others reach the signals as ``Sample.row``)
OWN_FIELDS = ("prompt", "completion", "truncated")


class ScoreInputError(ValueError):
    """A problem with the ``--input`` file or the options; the message says where and how to fix it."""


def _bad_unicode(value: Any) -> str | None:
    """The path (``.content``, ``[2]``) of the first string in ``value`` that is not valid Unicode (a lone
    surrogate: tokenizers and UTF-8 output both fail on it), or None."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError as exc:
                return f"{path} (character {exc.start}: {item[exc.start]!r})"
        elif isinstance(item, dict):
            stack += [(f"{path}.{k}", v) for k, v in item.items()]
            stack += [(f"{path} key", k) for k in item]
        elif isinstance(item, list):
            stack += [(f"{path}[{i}]", v) for i, v in enumerate(item)]
    return None


def _messages(value: list[Any], where: str, key: str) -> None:
    """Check a conversational value: a non-empty list of ``{"role": str, "content": str | blocks}``."""
    if not value:
        raise ScoreInputError(f"{where}: {key!r} is an empty list; give a string or chat messages")
    for i, message in enumerate(value):
        at = f"{key}[{i}]"
        if not isinstance(message, dict):
            raise ScoreInputError(
                f"{where}: {at} must be a message object {{'role': ..., 'content': ...}}, got "
                f"{type(message).__name__}"
            )
        if not isinstance(message.get("role"), str):
            raise ScoreInputError(
                f"{where}: {at}.role must be a string (system, user, assistant), got "
                f"{type(message.get('role')).__name__}"
            )
        content = message.get("content")
        blocks = isinstance(content, list) and all(
            isinstance(b, dict) and isinstance(b.get("text", ""), str) for b in content
        )
        if not isinstance(content, str) and not blocks:
            raise ScoreInputError(
                f"{where}: {at}.content must be a string (or a list of {{'type': 'text', 'text': ...}} "
                f"blocks), got {type(content).__name__}"
            )


def check_row(row: Any, where: str) -> dict[str, Any]:
    """The row as ``score`` uses it: ``prompt`` (as given), ``prompt_text`` (what signals see,
    :func:`~botgrpo_core.rewards.samples.prompt_text`), ``completion`` (text), ``truncated`` (bool) and
    ``extra`` (the other fields).

    :raises ScoreInputError: naming ``where`` (``file:line``) and the field.
    """
    if not isinstance(row, dict):
        raise ScoreInputError(
            f"{where}: expected a JSON object with 'prompt' and 'completion', got {type(row).__name__}"
        )
    missing = [key for key in ("prompt", "completion") if key not in row]
    if missing:
        raise ScoreInputError(
            f"{where}: missing field(s) {', '.join(repr(k) for k in missing)}; every line needs "
            "'prompt' and 'completion' (other fields are passed to the signals as the dataset row)"
        )
    bad = _bad_unicode(row)
    if bad:
        raise ScoreInputError(
            f"{where}: row{bad} is not valid Unicode (a lone surrogate); fix what wrote the file, or replace "
            "it with U+FFFD"
        )
    prompt, completion = row["prompt"], row["completion"]
    if isinstance(prompt, list):
        _messages(prompt, where, "prompt")
    elif not isinstance(prompt, str):
        raise ScoreInputError(
            f"{where}: 'prompt' must be a string or a list of chat messages, got {type(prompt).__name__}"
        )
    if isinstance(completion, list):
        _messages(completion, where, "completion")
        roles = [m["role"] for m in completion]
        if roles != ["assistant"]:
            raise ScoreInputError(
                f"{where}: 'completion' as chat messages must be one assistant message, got roles {roles}; "
                "score one reply per row"
            )
        completion = prompt_text([{"role": "user", "content": completion[0]["content"]}])
    elif not isinstance(completion, str):
        raise ScoreInputError(
            f"{where}: 'completion' must be a string or one assistant message, got {type(completion).__name__}"
        )
    truncated = row.get("truncated", False)
    if not isinstance(truncated, bool):
        raise ScoreInputError(
            f"{where}: 'truncated' must be true or false (whether the length cap cut the completion), got "
            f"{json.dumps(truncated)[:40]}"
        )
    return {
        "prompt": prompt,
        "prompt_text": prompt_text(prompt),
        "completion": completion,
        "truncated": truncated,
        "extra": {k: v for k, v in row.items() if k not in OWN_FIELDS},
    }


def _lines(path: str | os.PathLike[str]) -> Iterator[tuple[int, int, bytes]]:
    """``(line number, byte offset, line)`` of every line, read in bounded pieces."""
    source = str(path)
    try:
        f = open(path, "rb")  # noqa: SIM115 - closed below, the generator may stop early
    except FileNotFoundError:
        raise ScoreInputError(
            f"{source}: input file not found; pass an existing JSONL file to --input"
        ) from None
    except OSError as exc:
        raise ScoreInputError(f"{source}: cannot read the input file ({exc.strerror})") from None
    with f:
        offset, number = 0, 0
        while True:
            try:
                line = f.readline(MAX_LINE_BYTES + 1)
            except OSError as exc:
                raise ScoreInputError(f"{source}: cannot read the input file ({exc.strerror})") from None
            if not line:
                return
            number += 1
            if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
                raise ScoreInputError(
                    f"{source}:{number}: the line is over {MAX_LINE_BYTES >> 20} MB; split the row or shorten "
                    "its completion"
                )
            yield number, offset, line
            offset += len(line)


def _parse(source: str, number: int, line: bytes) -> dict[str, Any] | None:
    """One line's checked row (None for a blank line)."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ScoreInputError(
            f"{source}:{number}: not UTF-8 (byte {exc.start}); the input must be UTF-8 JSONL"
        ) from None
    if not text.strip():
        return None
    try:
        row = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ScoreInputError(
            f"{source}:{number}: not valid JSON ({exc.msg} at column {exc.colno}); each line must be one "
            'JSON object such as {"prompt": "...", "completion": "..."}'
        ) from None
    except RecursionError:
        raise ScoreInputError(f"{source}:{number}: JSON nested too deeply") from None
    return check_row(row, f"{source}:{number}")


def read_rows(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Every checked row of a (small) input file, in order (:func:`check_row`'s form)."""
    rows = [r for n, _, line in _lines(path) if (r := _parse(str(path), n, line)) is not None]
    if not rows:
        raise ScoreInputError(f"{path}: no rows; add JSON lines with 'prompt' and 'completion'")
    return rows


@dataclass
class InputPlan:
    """What the first pass keeps of each row: its byte offset, line number and group (a few bytes a row),
    and the characters of all completions (the ``tiny`` tokenizer's alphabet grows by them)."""

    path: str
    offsets: array = field(default_factory=lambda: array("q"))
    numbers: array = field(default_factory=lambda: array("q"))
    groups: array = field(default_factory=lambda: array("q"))
    n_groups: int = 0
    chars: dict[str, None] = field(default_factory=dict)

    @property
    def rows(self) -> int:
        return len(self.offsets)


def plan_input(path: str | os.PathLike[str], group_size: int | None) -> InputPlan:
    """Read the whole file once, checking every row; keep :class:`InputPlan`. Rows group by prompt
    (numbered by first appearance; a chat prompt by its whole message list) or in blocks of ``group_size``.

    :raises ScoreInputError: the first bad row (file:line), a bad ``group_size`` or an empty file.
    """
    if group_size is not None and group_size < 1:
        raise ScoreInputError(f"--group-size must be a positive integer, got {group_size}")
    plan, seen = InputPlan(str(path)), {}
    for number, offset, line in _lines(path):
        row = _parse(plan.path, number, line)
        if row is None:
            continue
        if group_size is None:
            key = json.dumps(row["prompt"], ensure_ascii=False, sort_keys=True)
            digest = hashlib.blake2b(key.encode("utf-8"), digest_size=16).digest()
            group = seen.setdefault(digest, len(seen))
        else:
            group = plan.rows // group_size
        plan.offsets.append(offset)
        plan.numbers.append(number)
        plan.groups.append(group)
        for ch in row["completion"]:
            if ch not in plan.chars:
                plan.chars[ch] = None
    if not plan.rows:
        raise ScoreInputError(f"{path}: no rows; add JSON lines with 'prompt' and 'completion'")
    if group_size is not None and plan.rows % group_size:
        raise ScoreInputError(
            f"--group-size {group_size} does not divide the {plan.rows} rows; give a multiple of it, "
            "or leave --group-size out to group rows by prompt"
        )
    plan.n_groups = len(seen) if group_size is None else plan.rows // group_size
    return plan


def chunks(plan: InputPlan, rows_per_chunk: int = CHUNK_ROWS) -> Iterator[list[int]]:
    """Row indices, chunk by chunk: whole groups in order of first appearance, about ``rows_per_chunk`` rows
    a chunk (a bigger group is a chunk of its own), each chunk's rows in file order."""
    members: dict[int, list[int]] = {}
    for i, g in enumerate(plan.groups):
        members.setdefault(g, []).append(i)
    chunk: list[int] = []
    for g in range(plan.n_groups):
        rows = members.pop(g, [])
        if chunk and len(chunk) + len(rows) > rows_per_chunk:
            yield sorted(chunk)
            chunk = []
        chunk += rows
    if chunk:
        yield sorted(chunk)


def read_chunk(plan: InputPlan, indices: Sequence[int]) -> list[dict[str, Any]]:
    """The checked rows at ``indices`` (read again by offset; the first pass checked them)."""
    out = []
    with open(plan.path, "rb") as f:
        for i in indices:
            f.seek(plan.offsets[i])
            row = _parse(plan.path, plan.numbers[i], f.readline(MAX_LINE_BYTES + 1))
            assert row is not None  # a blank line has no offset in the plan
            out.append(row)
    return out
