"""The in-process Hugging Face ``transformers`` backend.

``logprob`` mode scores all steps of a chain in one forward pass over its token tree (see
:mod:`botgrpo_judge.chains`), batched across chains, reading the vocabulary projection only at the verdict
positions (``logits_to_keep``). ``generate`` mode runs batched greedy ``generate`` on left-padded prompts.

The model is loaded once per process and shared by every scorer that names the same model, device and
dtype (``judge.steps`` and ``judge.outcome`` in one run load it once).
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Sequence
from typing import Any

import torch

from botgrpo_core.signals import SampleError
from botgrpo_judge.backends.base import ProbPair, failure, resolve_token_ids
from botgrpo_judge.chains import (
    Chain,
    TokenizedChain,
    TreeRow,
    build_row,
    leading_special_ids,
    tokenize_chain,
)
from botgrpo_judge.params import JudgeParams

_LOCK = threading.Lock()
_MODELS: dict[tuple[Any, ...], tuple[Any, Any]] = {}

#: attention kernels that take a custom 4-D mask (bool for sdpa, additive float for eager).
_TREE_KERNELS = ("sdpa", "eager")
#: ``logits_to_keep`` keeps the union of the batch's verdict positions in every row, so a batch holds
#: ``rows x positions x vocabulary`` logits; batches are cut to keep that under this many elements.


def load_judge(params: JudgeParams) -> tuple[Any, Any]:
    """``(model, tokenizer)`` for ``params``, loaded once per process."""
    opts = params.transformers
    tokenizer_path = params.tokenizer or params.model
    attn = opts.attn_implementation or "sdpa"
    key = (params.model, tokenizer_path, opts.device, opts.dtype, attn, opts.trust_remote_code)
    with _LOCK:
        if key not in _MODELS:
            from transformers import AutoModelForCausalLM, AutoTokenizer

            tokenizer = AutoTokenizer.from_pretrained(
                tokenizer_path, trust_remote_code=opts.trust_remote_code
            )
            dtype: Any = "auto" if opts.dtype == "auto" else getattr(torch, opts.dtype)
            try:
                model = AutoModelForCausalLM.from_pretrained(
                    params.model,
                    dtype=dtype,
                    attn_implementation=attn,
                    trust_remote_code=opts.trust_remote_code,
                )
            except OSError as exc:
                raise ValueError(
                    f"judge params.model: cannot load {params.model!r} ({exc}); give a local folder with "
                    "config.json and weights (downloads are off in offline runs)"
                ) from exc
            model.to(opts.device).eval()
            model.requires_grad_(False)
            _MODELS[key] = (model, tokenizer)
        return _MODELS[key]


def _row_mask(row: TreeRow, length: int) -> torch.Tensor:
    """``(length, length)`` bool: query token i may attend key token j (padding attends itself only)."""
    n = len(row.ids)
    num_segments = len(row.ancestors)
    ancestors = torch.zeros(num_segments, num_segments, dtype=torch.bool)
    for s, anc in enumerate(row.ancestors):
        ancestors[s, list(anc)] = True
    seg = torch.tensor(row.segments, dtype=torch.long)
    mask = torch.eye(length, dtype=torch.bool)
    # Ancestors precede their descendants in the flat order, so "ancestor-or-same segment and j <= i"
    # is the whole rule.
    mask[:n, :n] = ancestors[seg[:, None], seg[None, :]] & torch.ones(n, n, dtype=torch.bool).tril()
    return mask


class TransformersBackend:
    """Judge backed by a ``transformers`` causal LM in this process."""

    def __init__(self, params: JudgeParams) -> None:
        self.params = params
        self.model, self.tokenizer = load_judge(params)
        self.identity = f"transformers:{params.model}"
        self.device = next(self.model.parameters()).device
        self.yes_ids = resolve_token_ids(self.tokenizer, params.yes_tokens, "yes_tokens")
        self.no_ids = resolve_token_ids(self.tokenizer, params.no_tokens, "no_tokens")
        pad = self.tokenizer.pad_token_id
        self.pad_id = pad if pad is not None else (self.tokenizer.eos_token_id or 0)
        attn = getattr(self.model.config, "_attn_implementation", "eager")
        self.attn = attn if isinstance(attn, str) else "eager"
        self.tree_ok = self.attn in _TREE_KERNELS
        self._keep_arg = "logits_to_keep" in inspect.signature(self.model.forward).parameters
        self._metrics: dict[str, float] = {"forward_passes": 0, "tokens_forwarded": 0, "batch_fallbacks": 0}

    # ------------------------------------------------------------------ logprob mode
    def next_token_probs(
        self, chains: Sequence[Chain], wanted: Sequence[set[int]] | None = None
    ) -> list[dict[int, ProbPair] | SampleError]:
        """All steps of each chain (``wanted`` is ignored: one pass computes every step anyway)."""
        results: list[dict[int, ProbPair] | SampleError | None] = [None] * len(chains)
        # (chain index, step indices, row)
        jobs: list[tuple[int, list[int], TreeRow]] = []
        for i, chain in enumerate(chains):
            try:
                tc = tokenize_chain(self.tokenizer, chain)
                n = tc.steps_within(self.params.max_length)
                if n == 0:
                    results[i] = failure(
                        f"judge prompt of the first step is {tc.length(1)} tokens, over max_length "
                        f"{self.params.max_length}; raise judge params.max_length or shorten the templates"
                    )
                    continue
                results[i] = {}
                jobs.extend((i, steps, row) for steps, row in self._rows(tc.head(n)))
            except Exception as exc:
                results[i] = failure(f"judge could not build the prompt: {exc!r}")
        for (i, steps, _), probs in zip(jobs, self._run_rows([row for _, _, row in jobs])):
            table = results[i]
            if isinstance(probs, SampleError):
                results[i] = probs
            elif isinstance(table, dict):
                table.update(zip(steps, probs))
        return [r if r is not None else failure("judge produced no result") for r in results]

    def _rows(self, tc: TokenizedChain) -> list[tuple[list[int], TreeRow]]:
        """One tree row for the whole chain, or one linear row per step when the kernel takes no 4-D mask."""
        if tc.layout == "tagged" or self.tree_ok:
            return [(list(range(tc.num_steps)), build_row(tc))]
        rows = []
        for k in range(tc.num_steps):
            ids = tc.step_ids(k)
            line = TreeRow(
                ids, list(range(len(ids))), [0] * len(ids), [frozenset({0})], [len(ids) - 1], linear=True
            )
            rows.append(([k], line))
        return rows

    def _run_rows(self, rows: list[TreeRow]) -> list[list[ProbPair] | SampleError]:
        out: list[list[ProbPair] | SampleError | None] = [None] * len(rows)
        order = sorted(range(len(rows)), key=lambda r: len(rows[r].ids), reverse=True)
        opts = self.params.transformers
        batch: list[int] = []
        batches: list[list[int]] = []
        for r in order:
            longest = len(rows[batch[0]].ids) if batch else len(rows[r].ids)
            if batch and (
                len(batch) >= opts.batch_size or (len(batch) + 1) * longest > opts.max_batch_tokens
            ):
                batches.append(batch)
                batch = []
            batch.append(r)
        if batch:
            batches.append(batch)
        for batch in batches:
            try:
                values = self._forward([rows[r] for r in batch])
            except Exception as exc:
                if len(batch) == 1:
                    out[batch[0]] = failure(f"judge forward pass failed: {exc!r}")
                    continue
                # Isolate the row that breaks the batch; the others still get scores.
                self._metrics["batch_fallbacks"] += 1
                values = []
                for r in batch:
                    try:
                        values.extend(self._forward([rows[r]]))
                    except Exception as single_exc:
                        values.append(failure(f"judge forward pass failed: {single_exc!r}"))
            for r, value in zip(batch, values):
                out[r] = value
        return [o if o is not None else failure("judge row was not scored") for o in out]

    @torch.inference_mode()
    def _forward(self, rows: list[TreeRow]) -> list[list[ProbPair] | SampleError]:
        batch, length = len(rows), max(len(r.ids) for r in rows)
        ids = torch.full((batch, length), self.pad_id, dtype=torch.long)
        positions = torch.zeros((batch, length), dtype=torch.long)
        for b, row in enumerate(rows):
            ids[b, : len(row.ids)] = torch.tensor(row.ids, dtype=torch.long)
            positions[b, : len(row.ids)] = torch.tensor(row.positions, dtype=torch.long)
        if all(row.linear for row in rows):
            mask: torch.Tensor = torch.zeros((batch, length), dtype=torch.long)
            for b, row in enumerate(rows):
                mask[b, : len(row.ids)] = 1
        else:
            mask = torch.stack([_row_mask(row, length) for row in rows])[:, None]
            if self.attn == "eager":
                dtype = next(self.model.parameters()).dtype
                mask = torch.zeros(mask.shape, dtype=dtype).masked_fill(~mask, torch.finfo(dtype).min)
        keep = sorted({q for row in rows for q in row.queries})
        kwargs: dict[str, Any] = {}
        if self._keep_arg:
            kwargs["logits_to_keep"] = torch.tensor(keep, dtype=torch.long, device=self.device)
        logits = self.model(
            input_ids=ids.to(self.device),
            attention_mask=mask.to(self.device),
            position_ids=positions.to(self.device),
            use_cache=False,
            **kwargs,
        ).logits
        column = {q: (j if self._keep_arg else q) for j, q in enumerate(keep)}
        self._metrics["forward_passes"] += 1
        self._metrics["tokens_forwarded"] += batch * length
        # (B, Q) gather of the rows' own query columns, then softmax in float32 over the vocabulary.
        width = max(len(row.queries) for row in rows)
        index = torch.zeros((batch, width), dtype=torch.long)
        for b, row in enumerate(rows):
            cols = [column[q] for q in row.queries]
            index[b, : len(cols)] = torch.tensor(cols)
        picked = logits.gather(1, index.to(logits.device)[..., None].expand(-1, -1, logits.shape[-1]))
        log_z = torch.logsumexp(picked.float(), dim=-1)
        p_yes = torch.exp(torch.logsumexp(picked[..., self.yes_ids].float(), dim=-1) - log_z).cpu()
        p_no = torch.exp(torch.logsumexp(picked[..., self.no_ids].float(), dim=-1) - log_z).cpu()
        return [
            [(float(p_yes[b, q]), float(p_no[b, q])) for q in range(len(row.queries))]
            for b, row in enumerate(rows)
        ]

    # ------------------------------------------------------------------ generate mode
    def _prompt_ids(self, prompt: str) -> list[int]:
        if self.params.chat:
            text = self.tokenizer.apply_chat_template(
                [{"role": "user", "content": prompt}], tokenize=False, add_generation_prompt=True
            )
            return self.tokenizer.encode(text, add_special_tokens=False)
        return list(leading_special_ids(self.tokenizer)) + self.tokenizer.encode(
            prompt, add_special_tokens=False
        )

    def generate(self, prompts: Sequence[str]) -> list[str | SampleError]:
        from transformers import GenerationConfig

        out: list[str | SampleError | None] = [None] * len(prompts)
        encoded: list[tuple[int, list[int]]] = []
        for i, prompt in enumerate(prompts):
            try:
                ids = self._prompt_ids(prompt)
            except Exception as exc:
                out[i] = failure(f"judge could not build the prompt: {exc!r}")
                continue
            if len(ids) + self.params.max_new_tokens > self.params.max_length:
                out[i] = failure(
                    f"judge prompt ({len(ids)} tokens) + max_new_tokens ({self.params.max_new_tokens}) exceeds "
                    f"max_length {self.params.max_length}; raise judge params.max_length"
                )
                continue
            encoded.append((i, ids))
        config = GenerationConfig(
            max_new_tokens=self.params.max_new_tokens,
            do_sample=False,
            pad_token_id=self.pad_id,
            eos_token_id=self.tokenizer.eos_token_id,
        )
        encoded.sort(key=lambda item: len(item[1]))
        size = self.params.transformers.batch_size
        for start in range(0, len(encoded), size):
            chunk = encoded[start : start + size]
            try:
                texts = self._generate_batch([ids for _, ids in chunk], config)
            except Exception as exc:
                texts = [failure(f"judge generation failed: {exc!r}")] * len(chunk)
            for (i, _), text in zip(chunk, texts):
                out[i] = text
        return [o if o is not None else failure("judge prompt was not generated") for o in out]

    @torch.inference_mode()
    def _generate_batch(self, batch_ids: list[list[int]], config: Any) -> list[str]:
        length = max(len(ids) for ids in batch_ids)
        ids = torch.full((len(batch_ids), length), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(batch_ids), length), dtype=torch.long)
        for b, row in enumerate(batch_ids):  # left padding: generation continues every row at the end
            ids[b, length - len(row) :] = torch.tensor(row, dtype=torch.long)
            mask[b, length - len(row) :] = 1
        generated = self.model.generate(
            input_ids=ids.to(self.device), attention_mask=mask.to(self.device), generation_config=config
        )
        self._metrics["forward_passes"] += 1
        new = generated[:, length:].cpu().tolist()
        return [self.tokenizer.decode(row, skip_special_tokens=True) for row in new]

    # ------------------------------------------------------------------ housekeeping
    def metrics(self) -> dict[str, float]:
        return dict(self._metrics)

    def close(self) -> None:
        """Nothing to release: the model stays cached for other scorers of this process."""
