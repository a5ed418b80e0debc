"""Held-out evaluation: greedy and sampled generation on the eval rows, task success and signal means."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from botgrpo_core.rewards.mixture import RewardMixture


# ------------------------------------------------------------------------------------------------
# Progress
# ------------------------------------------------------------------------------------------------
#: seconds between two progress lines of one held-out evaluation
PROGRESS_EVERY_S = 30.0


class EvalProgress:
    """Progress lines of one held-out generation, so a slow evaluation can be told from a stuck one.

    A timer thread writes a line every ``every_s`` seconds while the generation runs, with the tokens
    generated so far when the generation reports them (:meth:`streamer`: Hugging Face ``generate``, one
    column of tokens at a time); a generation that makes no progress still shows its clock, with the token
    count standing still. Used as a context manager; ``log=None`` writes nothing."""

    def __init__(
        self, log: Callable[[str], None] | None, what: str, *, every_s: float = PROGRESS_EVERY_S
    ) -> None:
        self.log, self.what, self.every_s = log, what, every_s
        self.batch, self.batches, self.tokens, self.max_tokens = 0, 0, 0, 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._start = time.monotonic()

    def line(self) -> str:
        """The progress line now: the clock, and the batch and its tokens when known."""
        text = f"{self.what}: {time.monotonic() - self._start:.0f} s"
        if self.batches:
            text += f", batch {self.batch}/{self.batches}"
        if self.max_tokens:
            text += f", {self.tokens}/{self.max_tokens} tokens"
        return text

    def __enter__(self) -> EvalProgress:
        self._start = time.monotonic()
        if self.log is not None:
            self._thread = threading.Thread(target=self._beat, name="eval-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _beat(self) -> None:
        while not self._stop.wait(self.every_s):
            assert self.log is not None
            self.log(self.line())

    def streamer(self, batch: int, batches: int, max_tokens: int) -> Any:
        """A ``generate(streamer=...)`` object counting batch ``batch``'s generated tokens."""
        from transformers.generation.streamers import BaseStreamer

        self.batch, self.batches, self.tokens, self.max_tokens = batch, batches, 0, max_tokens
        progress = self

        class _Count(BaseStreamer):
            first = True

            def put(self, value: Any) -> None:
                if self.first:  # generate puts the prompt first
                    self.first = False
                else:
                    progress.tokens += 1

            def end(self) -> None:
                pass

        return _Count()


def eval_line(step: int, mode: str, values: Mapping[str, float], seconds: float) -> str:
    """The line a finished held-out evaluation writes: its task metrics, each signal's mean, the mean token
    reward and length (``values``: :func:`evaluate`'s)."""
    shown = [
        f"{key.removeprefix('signals/').removesuffix('/mean')} {values[key]:.3f}"
        for key in (
            "answer_accuracy",
            "step_error_rate",
            *sorted(k for k in values if k.startswith("signals/")),
        )
        if isinstance(values.get(key), (int, float))
    ]
    shown += [f"reward {values['reward']:.3f}"] if isinstance(values.get("reward"), (int, float)) else []
    shown += [f"length {values['length']:.0f}"] if isinstance(values.get("length"), (int, float)) else []
    return f"held-out evaluation at step {step} ({mode}, {seconds:.0f} s): {', '.join(shown)}"


# ------------------------------------------------------------------------------------------------
# Evaluation
# ------------------------------------------------------------------------------------------------
def render_prompts(tokenizer: Any, prompts: Sequence[Any]) -> list[str]:
    """Prompt texts: a string as it is, a chat prompt through the tokenizer's chat template (generation prompt on)."""
    return [
        tokenizer.apply_chat_template(p, tokenize=False, add_generation_prompt=True)
        if not isinstance(p, str)
        else p
        for p in prompts
    ]


def colocated_engine(trainer: Any) -> Any:
    """The colocated vLLM engine holding the policy's current weights when ``trainer``'s rollouts come from one,
    else None (evaluation then uses ``model.generate``). Syncs the weights the way TRL does before a generation
    and marks them synced, so the next rollout does not push them again; call it on every rank (a sync may be
    collective)."""
    generation = getattr(trainer, "vllm_generation", None)
    if generation is None or getattr(generation, "mode", None) != "colocate":
        return None
    if trainer._last_loaded_step != trainer.state.global_step:
        generation.sync_weights()
        trainer._last_loaded_step = trainer.state.global_step
    return generation.llm


def generate(
    model: Any,
    tokenizer: Any,
    prompts: Sequence[Any],
    *,
    max_new_tokens: int,
    greedy: bool,
    seed: int = 1234,
    temperature: float = 1.0,
    batch_size: int = 200,
    progress: EvalProgress | None = None,
) -> tuple[list[list[int]], list[str]]:
    """Completions (token ids up to and including EOS, and text) for ``prompts``; RNG state untouched.
    ``progress`` counts each batch's tokens (:class:`EvalProgress`)."""
    import torch

    texts = render_prompts(tokenizer, prompts)
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    ids_out: list[list[int]] = []
    side = tokenizer.padding_side
    tokenizer.padding_side = "left"
    try:
        with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []), torch.no_grad():
            torch.manual_seed(seed)
            for start in range(0, len(texts), batch_size):
                streamer = (
                    progress.streamer(start // batch_size + 1, -(-len(texts) // batch_size), max_new_tokens)
                    if progress is not None
                    else None
                )
                enc = tokenizer(
                    texts[start : start + batch_size],
                    return_tensors="pt",
                    padding=True,
                    add_special_tokens=False,
                ).to(device)
                sampling = (
                    {"do_sample": False}
                    if greedy
                    else {"do_sample": True, "temperature": temperature, "top_k": 0, "top_p": 1.0}
                )
                gen = model.generate(
                    **enc,
                    max_new_tokens=max_new_tokens,
                    pad_token_id=tokenizer.pad_token_id,
                    eos_token_id=tokenizer.eos_token_id,
                    streamer=streamer,
                    **sampling,
                )
                for row in gen[:, enc["input_ids"].shape[1] :].tolist():
                    if tokenizer.eos_token_id in row:
                        row = row[: row.index(tokenizer.eos_token_id) + 1]
                    ids_out.append(row)
    finally:
        tokenizer.padding_side = side
        model.train(was_training)
    return ids_out, tokenizer.batch_decode(ids_out, skip_special_tokens=True)


def generate_vllm(
    llm: Any,
    tokenizer: Any,
    prompts: Sequence[Any],
    *,
    max_new_tokens: int,
    greedy: bool,
    seed: int = 1234,
    temperature: float = 1.0,
) -> tuple[list[list[int]], list[str]]:
    """:func:`generate` on a colocated vLLM engine (``llm``, a ``vllm.LLM`` holding the policy's weights).

    Prompts are rendered and tokenized as :func:`generate` does; sampling is unrestricted (no top-k/top-p,
    as there). vLLM's CPU backend fails on per-request seeds once it schedules in steps ("CPU Generator does
    not use offset"), and a colocated engine samples from this process's torch generator: so, as
    :func:`generate` does, the draw runs under ``torch.random.fork_rng`` seeded with ``seed``: the same
    weights give the same samples, and the rollouts' random stream is left where it was. A prompt listed
    twice gets two different samples.
    """
    import torch
    from vllm import SamplingParams

    texts = render_prompts(tokenizer, prompts)
    inputs = [{"prompt_token_ids": tokenizer(t, add_special_tokens=False)["input_ids"]} for t in texts]
    params = SamplingParams(max_tokens=max_new_tokens, temperature=0.0 if greedy else temperature)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        outputs = llm.generate(inputs, params, use_tqdm=False)
    ids_out = [list(out.outputs[0].token_ids) for out in outputs]  # EOS included when it stopped there
    return ids_out, tokenizer.batch_decode(ids_out, skip_special_tokens=True)


def task_metrics(
    task: Any,
    rows: Sequence[Mapping[str, Any]],
    texts: Sequence[str],
    prompts: Sequence[str],
    truncated: Sequence[bool],
) -> dict[str, float]:
    """``task.evaluate`` of held-out completions, given their prompts and ``truncated`` flags where it takes them
    (keyword arguments ``prompts`` and ``truncated``: word-problems' ``refuted_rate`` reads a cut completion's end as
    its training signal does); a task with the two-argument ``evaluate(rows, completions)`` gets those."""
    import inspect

    if "truncated" in inspect.signature(task.evaluate).parameters:
        return dict(task.evaluate(rows, texts, prompts=list(prompts), truncated=list(truncated)))
    return dict(task.evaluate(rows, texts))


def evaluate(
    model: Any,
    tokenizer: Any,
    rows: Sequence[Mapping[str, Any]],
    *,
    mixture: RewardMixture,
    task: Any,
    max_new_tokens: int,
    greedy: bool,
    batch_size: int = 200,
    seed: int = 1234,
    temperature: float = 1.0,
    engine: Any = None,
    log: Callable[[str], None] | None = None,
    progress_every_s: float = PROGRESS_EVERY_S,
) -> dict[str, float]:
    """Held-out metrics: the task's (answer accuracy, step error rate), the mixture's (reward, signal
    means) and ``length``, the mean completion length in tokens (EOS included).

    ``temperature`` applies to sampled (not greedy) evaluation; the run passes its rollout temperature, so
    the held-out figures describe the policy as training samples it. ``engine``: a colocated ``vllm.LLM``
    holding the policy's current weights generates instead of ``model.generate`` (:func:`generate_vllm`).
    ``log``: where a progress line goes every ``progress_every_s`` seconds of generation (:class:`EvalProgress`;
    None: silent)."""
    from botgrpo_core.rewards.samples import decode_samples, prompt_text

    if not rows:
        return {}
    prompts = [r["prompt"] for r in rows]
    what = f"  held-out {'greedy' if greedy else 'sampled'}, {len(prompts)} completions"
    with EvalProgress(log, what, every_s=progress_every_s) as progress:
        if engine is not None:
            ids, texts = generate_vllm(
                engine,
                tokenizer,
                prompts,
                max_new_tokens=max_new_tokens,
                greedy=greedy,
                seed=seed,
                temperature=temperature,
            )
        else:
            ids, texts = generate(
                model,
                tokenizer,
                prompts,
                max_new_tokens=max_new_tokens,
                greedy=greedy,
                seed=seed,
                temperature=temperature,
                batch_size=batch_size,
                progress=progress,
            )
    plain = [{k: v for k, v in r.items() if k != "prompt"} for r in rows]
    texts_in = [prompt_text(r["prompt"]) for r in rows]
    # the length cap cut it (no end-of-sequence token): training's Sample.truncated
    cut = [tokenizer.eos_token_id not in i for i in ids]
    out: dict[str, float] = {}
    if task is not None:
        out.update(task_metrics(task, plain, texts, texts_in, cut))
    samples = decode_samples(tokenizer, texts_in, ids, plain, truncated=cut)
    mix = mixture.score_batch(samples)
    lengths = mix.mask.sum(1).clamp(min=1)
    per_rollout = (mix.token_rewards.nan_to_num(0.0).sum(1) / lengths)[mix.valid]
    out["reward"] = float(per_rollout.mean()) if per_rollout.numel() else math.nan
    out["length"] = sum(len(i) for i in ids) / len(ids)
    out.update({k: v for k, v in mix.metrics.items() if k.startswith("signals/") and k.endswith("/mean")})
    return out
