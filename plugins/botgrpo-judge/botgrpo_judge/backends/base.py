"""The interface every judge backend implements, and helpers they share.

A backend answers two questions, batched:

- ``next_token_probs(chains, wanted)``: for each :class:`~botgrpo_judge.chains.Chain`, ``(P(yes), P(no))`` after the
  judge prompt of each of its steps (``logprob`` mode);
- ``generate(prompts)``: the judge's greedy answer to each prompt (``generate`` mode).

A failure that belongs to one item (a request that timed out after its retries, a prompt over the length
limit) comes back as a :class:`~botgrpo_core.signals.SampleError` in that item's place; the batch goes on.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from botgrpo_core.signals import SampleError
from botgrpo_judge.chains import Chain

#: ``(P(yes), P(no))`` at one verdict position.
ProbPair = tuple[float, float]


class Backend(Protocol):
    """A judge model behind some engine."""

    #: identifies backend and model in cache keys, e.g. ``"transformers:/models/judge"``.
    identity: str

    def next_token_probs(
        self, chains: Sequence[Chain], wanted: Sequence[set[int]] | None = None
    ) -> list[dict[int, ProbPair] | SampleError]:
        """Per chain, ``{step: (P(yes), P(no))}`` for at least the ``wanted`` steps (all by default).

        Steps over the backend's length limit may be missing from the dict.
        """
        ...

    def generate(self, prompts: Sequence[str]) -> list[str | SampleError]:
        """The judge's greedy answer to each prompt."""
        ...

    def metrics(self) -> dict[str, float]:
        """Counters (requests, retries, timeouts, ...)."""
        ...

    def close(self) -> None:
        """Release engines, connections and threads."""
        ...


def _logprob_of(entry: Any) -> float:
    """A float logprob from a float, a vLLM ``Logprob`` object or an OpenAI ``{"logprob": x}`` dict."""
    if isinstance(entry, Mapping):
        return float(entry["logprob"])
    value = getattr(entry, "logprob", entry)
    return float(value)


def probs_from_logprobs(top: Mapping[Any, Any], yes: Iterable[Any], no: Iterable[Any]) -> ProbPair:
    """``(P(yes), P(no))`` from a top-k logprob table keyed by token id or token text.

    Tokens of a set missing from the table count as probability 0 (they are outside the top k).
    """
    yes_set, no_set = set(yes), set(no)
    p_yes = sum(math.exp(_logprob_of(v)) for k, v in top.items() if k in yes_set)
    p_no = sum(math.exp(_logprob_of(v)) for k, v in top.items() if k in no_set)
    return p_yes, p_no


def resolve_token_ids(tokenizer: Any, words: Sequence[str], field: str) -> list[int]:
    """Ids of the strings in ``words`` that are single tokens of ``tokenizer`` (duplicates dropped).

    :raises ValueError: none of them is a single token; the message names the param to fix.
    """
    ids: list[int] = []
    for word in words:
        encoded = tokenizer.encode(word, add_special_tokens=False)
        if len(encoded) == 1 and encoded[0] not in ids:
            ids.append(encoded[0])
    if not ids:
        pieces = {
            w: tokenizer.convert_ids_to_tokens(tokenizer.encode(w, add_special_tokens=False)) for w in words
        }
        raise ValueError(
            f"judge params.{field}: none of {list(words)} is a single token of the judge's tokenizer "
            f"(they split into {pieces}); list strings that are one token each, e.g. ' yes' with the "
            "leading space most tokenizers use"
        )
    return ids


def failure(message: str, reason: str = "error") -> SampleError:
    """A per-item failure (shorthand)."""
    return SampleError(message, reason=reason)
