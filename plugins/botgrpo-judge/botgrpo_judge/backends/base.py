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
import numbers
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


#: Rounding slack: a logprob up to this much above 0 reads as 0; the reported probabilities may sum to
#: at most ``1 + PROBABILITY_SLACK``.
LOGPROB_SLACK = 1e-4
PROBABILITY_SLACK = 1e-3


class InvalidLogprobs(ValueError):
    """A judge answer whose logprobs are not a probability distribution's (NaN, positive, strings...)."""


def _shown(value: Any) -> str:
    """A short ``repr`` for an error message (an int too long for ``repr`` is named by its type)."""
    try:
        text = repr(value)
    except ValueError:
        return f"<{type(value).__name__}>"
    return text if len(text) <= 40 else text[:37] + "..."


def checked_logprob(value: Any) -> float:
    """``value`` as a logprob in ``[-inf, 0]``; a real number at most :data:`LOGPROB_SLACK` above 0.

    :raises InvalidLogprobs: a string, a bool, NaN, +Infinity, a positive number (``1000`` would
        overflow ``exp``), or anything else that is not a number.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidLogprobs(f"logprob {_shown(value)} is not a number")
    if not value <= LOGPROB_SLACK:  # NaN compares false
        raise InvalidLogprobs(f"logprob {_shown(value)} is not <= 0 (NaN, positive or +Infinity)")
    if isinstance(value, int) and value < -(10**6):  # float() of a huge int overflows
        return -math.inf
    return min(float(value), 0.0)


def _logprob_of(entry: Any) -> float:
    """A checked logprob from a float, a vLLM ``Logprob`` object or an OpenAI ``{"logprob": x}`` dict."""
    if isinstance(entry, Mapping):
        if "logprob" not in entry:
            raise InvalidLogprobs(f"top-logprob entry without 'logprob': {_shown(entry)}")
        return checked_logprob(entry["logprob"])
    return checked_logprob(getattr(entry, "logprob", entry))


def yes_no_probs(pairs: Iterable[tuple[Any, Any]], yes: Iterable[Any], no: Iterable[Any]) -> ProbPair:
    """``(P(yes), P(no))`` from ``(token, logprob)`` pairs of a top-k table (token ids or texts).

    Every logprob is checked (:func:`checked_logprob`), and so is the total: the reported
    probabilities of distinct tokens cannot sum to more than 1. Tokens of a set missing from the
    table count as probability 0 (they are outside the top k).

    :raises InvalidLogprobs: an entry is not a logprob, or the table sums to more than 1.
    """
    yes_set, no_set = set(yes), set(no)
    p_yes = p_no = total = 0.0
    for token, entry in pairs:
        probability = math.exp(_logprob_of(entry))
        total += probability
        if token in yes_set:
            p_yes += probability
        if token in no_set:
            p_no += probability
    if total > 1.0 + PROBABILITY_SLACK:
        raise InvalidLogprobs(f"the top logprobs sum to probability {total:.6g} > 1")
    return p_yes, p_no


def probs_from_logprobs(top: Mapping[Any, Any], yes: Iterable[Any], no: Iterable[Any]) -> ProbPair:
    """``(P(yes), P(no))`` from a top-k logprob table keyed by token id or token text (checked)."""
    return yes_no_probs(top.items(), yes, no)


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
