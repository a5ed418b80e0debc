"""What the judge reads in ``logprob`` mode, as text and as token ids, for every backend.

A :class:`Chain` is one completion's judge input: a rendered ``prefix`` (question...), the completion cut
into ``pieces`` (piece ``k`` ends where step ``k`` ends, so ``"".join(pieces[:k + 1])`` is the completion up
to the end of step ``k``) and one rendered ``verdicts[k]`` per step. The score of step ``k`` is read from
the judge's next-token distribution right after the judge prompt of step ``k``:

- layout ``prefix``: ``prefix + pieces[0] + ... + pieces[k] + verdicts[k]`` (the judge sees the solution so
  far and one question about its last step);
- layout ``tagged`` (PRM style): ``prefix + pieces[0] + verdicts[0] + ... + pieces[k] + verdicts[k]`` (earlier
  verdict prompts stay in the context).

In-process backends compute all steps of a chain in ONE forward pass over a token *tree*: segments
(prefix, pieces, verdicts) each with a parent; a token attends to its own segment's earlier tokens and to
every token of its ancestors, with positions continuing from the parent's end. For ``prefix`` the verdicts
hang off their piece as leaves (a 4-D attention mask); for ``tagged`` the tree is a line (plain causal
attention). Because each piece is tokenized on its own, the ids of the step-``k`` prompt are exactly the ids
on its path in the tree, which is what makes the one-pass scores equal separate forward passes.

Everything here is plain Python over token-id lists; the torch side lives in the backends.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

Layout = Literal["prefix", "tagged"]


class Encoder(Protocol):
    """The part of a Hugging Face tokenizer used here."""

    def encode(self, text: str, add_special_tokens: bool = ...) -> list[int]: ...


@dataclass(frozen=True)
class Chain:
    """One completion's judge input in ``logprob`` mode (see the module docstring)."""

    prefix: str
    pieces: tuple[str, ...]
    verdicts: tuple[str, ...]
    layout: Layout = "prefix"

    def __post_init__(self) -> None:
        if len(self.pieces) != len(self.verdicts):
            raise ValueError(
                f"a chain needs one verdict per piece, got {len(self.pieces)} and {len(self.verdicts)}"
            )

    @property
    def num_steps(self) -> int:
        return len(self.pieces)

    def step_prompt(self, k: int) -> str:
        """The full judge prompt of step ``k`` (0-based), as text."""
        if self.layout == "prefix":
            return self.prefix + "".join(self.pieces[: k + 1]) + self.verdicts[k]
        return self.prefix + "".join(p + v for p, v in zip(self.pieces[: k + 1], self.verdicts[: k + 1]))

    def head(self, n: int) -> Chain:
        """The chain of the first ``n`` steps."""
        return Chain(self.prefix, self.pieces[:n], self.verdicts[:n], self.layout)


@dataclass(frozen=True)
class TokenizedChain:
    """A chain's segments as token ids (pieces tokenized one by one; see the module docstring)."""

    prefix: tuple[int, ...]
    pieces: tuple[tuple[int, ...], ...]
    verdicts: tuple[tuple[int, ...], ...]
    layout: Layout

    @property
    def num_steps(self) -> int:
        return len(self.pieces)

    def length(self, n: int | None = None) -> int:
        """Tokens in the one-pass row of the first ``n`` steps (all by default); same for both layouts."""
        n = self.num_steps if n is None else n
        return len(self.prefix) + sum(len(p) + len(v) for p, v in zip(self.pieces[:n], self.verdicts[:n]))

    def steps_within(self, max_length: int) -> int:
        """How many leading steps fit in a row of ``max_length`` tokens."""
        total = len(self.prefix)
        for k, (piece, verdict) in enumerate(zip(self.pieces, self.verdicts)):
            total += len(piece) + len(verdict)
            if total > max_length:
                return k
        return self.num_steps

    def head(self, n: int) -> TokenizedChain:
        return TokenizedChain(self.prefix, self.pieces[:n], self.verdicts[:n], self.layout)

    def step_ids(self, k: int) -> list[int]:
        """Token ids of step ``k``'s judge prompt as ONE separate sequence (what vLLM and the tests use)."""
        ids = list(self.prefix)
        for j in range(k + 1):
            ids.extend(self.pieces[j])
            if self.layout == "tagged" or j == k:
                ids.extend(self.verdicts[j])
        return ids


_SPECIALS_CACHE: dict[int, tuple[int, ...]] = {}


def leading_special_ids(tokenizer: Any) -> tuple[int, ...]:
    """Ids the tokenizer puts before a text (BOS for Llama-style models, nothing for Qwen-style ones).

    Found by comparing ``encode(x)`` with and without special tokens, so trailing specials (an EOS some
    tokenizers append) never land in the middle of a judge prompt.
    """
    key = id(tokenizer)
    if key not in _SPECIALS_CACHE:
        probe = "x"
        plain = tokenizer.encode(probe, add_special_tokens=False)
        full = tokenizer.encode(probe, add_special_tokens=True)
        head: tuple[int, ...] = ()
        for start in range(len(full) - len(plain) + 1):
            if full[start : start + len(plain)] == plain:
                head = tuple(full[:start])
                break
        _SPECIALS_CACHE[key] = head
    return _SPECIALS_CACHE[key]


def tokenize_chain(tokenizer: Any, chain: Chain) -> TokenizedChain:
    """Tokenize a chain segment by segment (the prefix gets the tokenizer's leading special tokens)."""

    def enc(text: str) -> tuple[int, ...]:
        return tuple(tokenizer.encode(text, add_special_tokens=False)) if text else ()

    return TokenizedChain(
        prefix=leading_special_ids(tokenizer) + enc(chain.prefix),
        pieces=tuple(enc(p) for p in chain.pieces),
        verdicts=tuple(enc(v) for v in chain.verdicts),
        layout=chain.layout,
    )


@dataclass(frozen=True)
class TreeRow:
    """One chain flattened for one forward pass.

    :param ids: token ids in segment order.
    :param positions: position id of each token (its depth in the tree).
    :param segments: segment index of each token.
    :param ancestors: ``ancestors[s]`` = segments token of ``s`` may attend to (``s`` itself included).
    :param queries: flat index whose next-token distribution scores step ``k``.
    :param linear: True when plain causal attention is exact (no 4-D mask needed).
    """

    ids: list[int]
    positions: list[int]
    segments: list[int]
    ancestors: list[frozenset[int]]
    queries: list[int]
    linear: bool


def build_row(tc: TokenizedChain) -> TreeRow:
    """Flatten a tokenized chain into a tree row (see the module docstring)."""
    n = tc.num_steps
    if n == 0:
        raise ValueError("a chain with no steps has nothing to score")
    seg_ids: list[Sequence[int]] = [tc.prefix]
    parents: list[int] = [-1]
    # (segment of piece k, segment of verdict k)
    piece_seg: list[int] = []
    verdict_seg: list[int] = []
    if tc.layout == "prefix":
        for k in range(n):
            seg_ids.append(tc.pieces[k])
            parents.append(0 if k == 0 else piece_seg[-1])
            piece_seg.append(len(seg_ids) - 1)
        for k in range(n):
            seg_ids.append(tc.verdicts[k])
            parents.append(piece_seg[k])
            verdict_seg.append(len(seg_ids) - 1)
    else:
        for k in range(n):
            seg_ids.append(tc.pieces[k])
            parents.append(len(seg_ids) - 2)
            piece_seg.append(len(seg_ids) - 1)
            seg_ids.append(tc.verdicts[k])
            parents.append(len(seg_ids) - 2)
            verdict_seg.append(len(seg_ids) - 1)

    ancestors: list[frozenset[int]] = []
    depth_end: list[int] = []  # position after the last token of each segment
    ids: list[int] = []
    positions: list[int] = []
    segments: list[int] = []
    last_index: list[int] = []  # flat index of the last token on the path ending at each segment
    for s, (seg, parent) in enumerate(zip(seg_ids, parents)):
        ancestors.append(frozenset({s}) | (ancestors[parent] if parent >= 0 else frozenset()))
        start = depth_end[parent] if parent >= 0 else 0
        ids.extend(seg)
        positions.extend(range(start, start + len(seg)))
        segments.extend([s] * len(seg))
        depth_end.append(start + len(seg))
        last_index.append(len(ids) - 1 if seg else (last_index[parent] if parent >= 0 else -1))
    queries = [last_index[verdict_seg[k]] for k in range(n)]
    if min(queries) < 0:
        raise ValueError("the judge prompt is empty: give prompt_template or verdict_template some text")
    return TreeRow(ids, positions, segments, ancestors, queries, linear=tc.layout == "tagged")
