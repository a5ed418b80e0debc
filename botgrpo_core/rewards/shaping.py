"""Step shaping of a local signal: what the steps after a completion's first wrong step earn.

``after_first_error`` (per signal, ``rewards.signals[i].after_first_error``):

- ``keep`` (default): every span keeps the value its signal gave it;
- ``zero``: every span that starts at or after the end of the completion's *first negative span* gets 0
  (the first negative span keeps its value). This is the "error propagation" rule of the BoT-GRPO
  paper's math runs, where an LLM judge scores each step: a step built on a wrong one cannot be right in
  context, so it earns nothing; the paper found it the best of its step rules;
- ``negative``: those later spans get the first negative span's value (the error propagates as a penalty).

"First" is by position in the text: the negative span with the smallest ``start`` (then ``end``). A span
that overlaps the first negative span keeps its value. Per-token values (:class:`TokenValues`) are shaped
the same way with each token as its own span: tokens after the first negative token get 0 (``zero``) or
that token's value (``negative``); this one runs as torch ops over the ``(B, T)`` rows.

``shuffle_spans`` (per signal, a control for studies, not a rule): after the rule above, the values of a
completion's spans are permuted among its spans, the permutation fixed by the completion's text (CRC-32), so a
completion keeps its amount of credit and blame and loses its placement (:func:`shuffle_span_values`).

Shaping runs on the signal's values before alignment; a signal's ``results`` (and their ``meta``) are
left as the plugin returned them, so ``botgrpo score`` still shows what the signal said.
"""

from __future__ import annotations

import dataclasses
import random
import zlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, get_args

from botgrpo_core.config.models import AfterFirstError
from botgrpo_core.signals import Span

if TYPE_CHECKING:
    import torch

#: Every mode, in the order the docs list them (the config's Literal is their one home).
AFTER_FIRST_ERROR_MODES: tuple[str, ...] = get_args(AfterFirstError)


def shape_spans(spans: Sequence[Span], mode: AfterFirstError) -> list[Span]:
    """``spans`` with the ``after_first_error`` rule applied (a new list; the spans keep their order).

    :param spans: one completion's spans, in any order.
    :param mode: ``keep``, ``zero`` or ``negative`` (see the module doc).
    """
    if mode == "keep":
        return list(spans)
    if mode not in AFTER_FIRST_ERROR_MODES:
        raise ValueError(f"after_first_error must be one of {AFTER_FIRST_ERROR_MODES}, got {mode!r}")
    negatives = [s for s in spans if s.value < 0]
    if not negatives:
        return list(spans)
    first = min(negatives, key=lambda s: (s.start, s.end))
    later_value = 0.0 if mode == "zero" else float(first.value)
    return [
        dataclasses.replace(s, value=later_value) if s is not first and s.start >= first.end else s
        for s in spans
    ]


def shuffle_span_values(spans: Sequence[Span], text: str) -> list[Span]:
    """``spans`` (sorted by position) with their values permuted among them: the same values at other places.

    :param spans: one completion's spans, in any order.
    :param text: the completion's text; it fixes the permutation (CRC-32 as the seed), so the same completion
        gets the same placement in every batch, run and process.
    """
    ordered = sorted(spans, key=lambda s: (s.start, s.end))
    values = [s.value for s in ordered]
    random.Random(zlib.crc32(text.encode("utf-8", "surrogatepass"))).shuffle(values)
    return [dataclasses.replace(s, value=v) for s, v in zip(ordered, values)]


def shape_token_rows(values: torch.Tensor, mode: AfterFirstError) -> torch.Tensor:
    """``(B, T)`` per-token values with the rule applied row by row, each token its own span.

    Tokens after a row's first negative token get 0 (``zero``) or that token's value (``negative``).
    """
    import torch

    if mode == "keep":
        return values
    if mode not in AFTER_FIRST_ERROR_MODES:
        raise ValueError(f"after_first_error must be one of {AFTER_FIRST_ERROR_MODES}, got {mode!r}")
    negative = values < 0  # (B, T)
    seen = negative.cumsum(dim=1)  # (B, T): negative tokens up to and including t
    later = seen - negative.long() > 0  # (B, T): a negative token comes strictly before t
    if mode == "zero":
        return values.masked_fill(later, 0.0)
    first = negative.long().argmax(dim=1, keepdim=True)  # (B, 1): index of the first negative token
    first_value = values.gather(1, first).expand_as(values)  # (B, T)
    return torch.where(later, first_value, values)
