"""The verl reward manager ``botgrpo``: a botgrpo ``RewardMixture`` writing dense token rewards.

Set ``reward.reward_manager.name=botgrpo`` and ``+reward.reward_kwargs.botgrpo_rewards=RUN.yaml`` (a botgrpo
run file, whose ``rewards:`` section is read and checked as ``botgrpo validate`` does, or that section
alone). Each response is decoded with verl's tokenizer by botgrpo's own :func:`decode_samples` (text and
token character offsets), scored by every signal of the mixture (their pools, bounds and ``on_error``
policies) and mixed into ``r[t] = alpha * R + beta * S[t]`` by :meth:`RewardMixture.score_batch`: the same
path as botgrpo's TRL trainer, so the same completion gets the same token rewards.

verl takes one ``reward_score`` per response from :meth:`run_single`; the manager returns a
:class:`TokenRewards`, a float (the token-mean reward, what botgrpo's trainer hands TRL as the scalar
reward) that also carries the token rewards. Where verl calls ``RewardLoopManager.compute_rm_score`` (a
colocated reward model) :meth:`assemble_rm_scores` writes them as the ``(bs, L)`` ``rm_scores``; in verl's
agent loop (its default, rule-based path) :mod:`botgrpo_verl.agent_loop` does. Per-signal values go into
verl's reward extra info (``botgrpo/<signal>/<column>``).

The row a signal reads (``Sample.row``): the fields of the sample's ``extra_info``, ``data_source``, and
``ground_truth`` (verl's ``reward_model.ground_truth``), so e.g. ``sympy.answer`` takes
``params: {reference_field: ground_truth}``.
"""

from __future__ import annotations

import asyncio
import math
import sys
import threading
from collections.abc import Mapping, Sequence
from typing import Any

import torch
from verl import DataProto
from verl.experimental.reward_loop.reward_manager import register
from verl.experimental.reward_loop.reward_manager.base import RewardManagerBase

from botgrpo_core import RewardMixture
from botgrpo_core.rewards.samples import decode_samples
from botgrpo_core.rewards.signal_metrics import SIGNAL_COLUMNS
from botgrpo_verl.record import record

#: One response as the mixture needs it: prompt text, response token ids, the row its signals read.
Response = tuple[str, list[int], dict[str, Any]]

#: ``reward.reward_kwargs`` key naming the botgrpo run file (or its ``rewards:`` section alone).
REWARDS_KEY = "botgrpo_rewards"


class TokenRewards(float):
    """A response's token-mean reward (the float verl sees) carrying its ``(n,)`` token rewards."""

    tokens: tuple[float, ...]

    def __new__(cls, tokens: Sequence[float]) -> TokenRewards:
        values = tuple(float(v) for v in tokens)
        finite = [v for v in values if not math.isnan(v)]
        mean = sum(finite) / len(finite) if finite and len(finite) == len(values) else 0.0
        out = super().__new__(cls, mean if values else 0.0)
        out.tokens = values
        return out

    def __reduce__(self) -> tuple[Any, ...]:  # keep the tokens across Ray's pickling
        return (TokenRewards, (self.tokens,))


def response_row(non_tensor: Mapping[str, Any]) -> dict[str, Any]:
    """The row the signals read, from one sample's ``non_tensor_batch`` fields (see the module doc)."""
    row: dict[str, Any] = {}
    extra = non_tensor.get("extra_info")
    if isinstance(extra, Mapping):
        row.update(extra)
    if "data_source" in non_tensor:
        row["data_source"] = non_tensor["data_source"]
    reward_model = non_tensor.get("reward_model")
    if isinstance(reward_model, Mapping) and "ground_truth" in reward_model:
        row["ground_truth"] = reward_model["ground_truth"]
    return row


def _rewards_path(config: Any) -> str:
    reward = config.get("reward", None) if config is not None else None
    kwargs = reward.get("reward_kwargs", None) if reward is not None else None
    path = kwargs.get(REWARDS_KEY, None) if kwargs is not None else None
    if not path:
        raise ValueError(
            f"reward manager 'botgrpo' needs reward.reward_kwargs.{REWARDS_KEY}: the botgrpo run file (or "
            f"rewards section) to score with, e.g. +reward.reward_kwargs.{REWARDS_KEY}=examples/quickstart.yaml"
        )
    return str(path)


#: ``reward.reward_kwargs`` key that lets a run go on with token-mean scalars where the dense path is off.
SCALAR_FALLBACK_KEY = "botgrpo_scalar_fallback"

AGENT_LOOP_WARNING = (
    "reward manager 'botgrpo': this verl config scores rewards in verl's agent loop (reward.reward_model.enable "
    "is false, or the reward model has its own resource pool), which keeps one float per response "
    "(AgentLoopOutput.reward_score) and puts it on the response's last token, and botgrpo-verl could not "
    "adapt this verl's agent loop (the warning above says why): the dense token rewards are lost there and "
    "every response gets its token-mean reward on its last token. With beta: 0 use "
    "algorithm.adv_estimator=grpo; see docs/verl.md, 'What is not supported'."
)
AGENT_LOOP_REFUSAL = (
    "reward manager 'botgrpo': refusing to start: this verl config scores rewards in verl's agent loop "
    "(reward.reward_model.enable is false, or the reward model has its own resource pool), and botgrpo-verl "
    "could not adapt this verl's agent loop (the warning above names the verl version and the functions whose "
    "code differs), so every response would get its token-mean reward on its last token instead of its dense "
    "token rewards. Fix: pip install 'verl==0.9.1' (the verl botgrpo-verl was checked against), or a "
    "botgrpo-verl release that supports this verl; to train on the token-mean scalars anyway, knowingly, set "
    f"+reward.reward_kwargs.{SCALAR_FALLBACK_KEY}=true (docs/verl.md, 'What is not supported')."
)
_warned: set[str] = set()


def warn_once(message: str) -> None:
    """One ``warning: botgrpo-verl: ...`` line on stderr per distinct message and process."""
    if message not in _warned:
        _warned.add(message)
        sys.stderr.write(f"warning: botgrpo-verl: {message}\n")
        sys.stderr.flush()


def streams_rewards_in_agent_loop(config: Any) -> bool:
    """Whether verl's trainer computes this config's rewards in its agent loop (one float per response), as
    ``RayPPOTrainer`` decides: no reward model, or a reward model with a resource pool of its own."""
    reward = config.get("reward", None) if config is not None else None
    model = reward.get("reward_model", None) if reward is not None else None
    if model is None:
        return False  # not a trainer config (a script or test building the manager itself)
    return not model.get("enable", False) or bool(model.get("enable_resource_pool", False))


def _scalar_fallback(config: Any) -> bool:
    """``reward.reward_kwargs.botgrpo_scalar_fallback``: go on with token-mean scalars where the dense path is
    off (default False: the manager refuses to start, :data:`AGENT_LOOP_REFUSAL`)."""
    reward = config.get("reward", None) if config is not None else None
    kwargs = reward.get("reward_kwargs", None) if reward is not None else None
    value = kwargs.get(SCALAR_FALLBACK_KEY, False) if kwargs is not None else False
    if not isinstance(value, bool):
        raise ValueError(
            f"reward manager 'botgrpo': reward.reward_kwargs.{SCALAR_FALLBACK_KEY} must be true or false, got "
            f"{value!r}"
        )
    return value


def _refuse_group_fills(mixture: RewardMixture) -> None:
    """``uncovered: group_mean`` needs a prompt's whole group at once; verl scores responses as they come."""
    kinds = mixture.signal_kinds()
    for i, signal in enumerate(mixture.config.signals):
        if kinds.get(signal.name) == "local" and signal.uncovered_fill != "zero":
            said = "is" if signal.uncovered else "defaults to"
            raise ValueError(
                f"reward manager 'botgrpo': rewards.signals[{i}].uncovered {said} {signal.uncovered_fill!r} "
                f"({signal.name}), which fills a token from its whole group's verdicts, but verl scores responses "
                "in chunks as they finish, not in whole groups; set 'uncovered: zero' on this signal to train "
                "under verl, or train with botgrpo's own trainer (docs/verl.md, 'What is not supported')"
            )


@register("botgrpo")
class BotgrpoRewardManager(RewardManagerBase):
    """verl reward manager scoring each response with a botgrpo :class:`RewardMixture` (dense token rewards).

    :param config: verl's trainer config (``reward.reward_kwargs.botgrpo_rewards`` names the run file).
    :param tokenizer: verl's tokenizer (the policy's).
    :param compute_score: verl's default score function; unused (the mixture scores).
    :param mixture: a ready mixture instead of the run file (tests, scripts).
    """

    def __init__(
        self,
        config: Any,
        tokenizer: Any,
        compute_score: Any = None,
        reward_router_address: str | None = None,
        reward_model_tokenizer: Any = None,
        mixture: RewardMixture | None = None,
    ) -> None:
        super().__init__(config, tokenizer, compute_score)
        fallback = _scalar_fallback(config)  # checked on every verl: a bad value is an error, used or not
        self.mixture = mixture if mixture is not None else RewardMixture.from_yaml(_rewards_path(config))
        _refuse_group_fills(self.mixture)
        # verl calls run_single for every response of a chunk at once (and, in its agent loop, as responses
        # finish): the calls waiting meanwhile are scored together, one mixture batch at a time
        self._scoring = threading.Lock()
        self._pending: list[tuple[Response, asyncio.Future[dict[str, Any]]]] = []
        self._draining: asyncio.Task[None] | None = None
        if streams_rewards_in_agent_loop(config):
            from botgrpo_verl import agent_loop

            if not agent_loop.active():
                if not fallback:
                    raise RuntimeError(AGENT_LOOP_REFUSAL)
                warn_once(AGENT_LOOP_WARNING)

    def response(self, data: DataProto, index: int = -1) -> Response:
        """What the mixture needs of response ``index`` of ``data``: prompt text, response ids, row."""
        item = data[index]
        prompt_ids, response_ids = item.batch["prompts"], item.batch["responses"]
        prompt_len, response_len = prompt_ids.shape[-1], response_ids.shape[-1]
        attention = item.batch["attention_mask"]
        prompt = self.tokenizer.decode(
            prompt_ids[attention[:prompt_len] != 0].tolist(), skip_special_tokens=True
        )
        valid = int(attention[-response_len:].sum())
        return prompt, response_ids[:valid].tolist(), response_row(item.non_tensor_batch)

    def score(self, responses: Sequence[Response]) -> list[dict[str, Any]]:
        """Score ``responses`` in one mixture batch: ``run_single``'s result for each."""
        prompts, ids, rows = (list(x) for x in zip(*responses)) if responses else ([], [], [])
        samples = decode_samples(self.tokenizer, prompts, ids, rows)
        with self._scoring:
            mix = self.mixture.score_batch(samples)
        width = len(SIGNAL_COLUMNS)
        out = []
        for i, sample in enumerate(samples):
            info: dict[str, Any] = {
                "botgrpo/valid": float(mix.valid[i]),
                "botgrpo/outcome": float(mix.outcome[i]),
            }
            for k, name in enumerate(mix.signals):
                for j, column in enumerate(SIGNAL_COLUMNS):
                    info[f"botgrpo/{name}/{column}"] = float(mix.signal_table[i, width * k + j])
            tokens = mix.token_rewards[i, : len(sample.offsets)].tolist()
            out.append({"reward_score": TokenRewards(tokens), "reward_extra_info": info})
        record(
            "responses",
            {"prompts": prompts, "ids": ids, "rows": rows, "tokens": [r["reward_score"].tokens for r in out]},
        )
        return out

    async def run_single(self, data: DataProto) -> dict[str, Any]:
        """verl's per-response call: the last response of ``data`` (as verl's naive manager does), scored in
        one batch with the calls waiting at the same time."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[dict[str, Any]] = loop.create_future()
        self._pending.append((self.response(data), done))
        if self._draining is None or self._draining.done():
            self._draining = loop.create_task(self._drain())
        return await done

    async def _drain(self) -> None:
        loop = asyncio.get_running_loop()
        while self._pending:
            await asyncio.sleep(0)  # the other calls of the same chunk enqueue first
            batch, self._pending = self._pending, []
            try:
                results = await loop.run_in_executor(None, self.score, [r for r, _ in batch])
            except Exception as exc:  # e.g. on_error: raise: every call of the batch gets the error
                for _, done in batch:
                    if not done.done():
                        done.set_exception(exc)
                continue
            for (_, done), result in zip(batch, results, strict=True):
                if not done.done():
                    done.set_result(result)

    @classmethod
    def assemble_rm_scores(cls, data: DataProto, scores: list[Any]) -> torch.Tensor:
        """``(bs, L)`` float32 ``rm_scores``: each response's token rewards on its valid tokens (0 after).

        A plain float among ``scores`` (not from this manager) goes on its response's last token, as
        verl's default does.
        """
        responses = data.batch["responses"]
        prompt_len = data.batch["prompts"].shape[1]
        lengths = data.batch["attention_mask"][:, prompt_len:].sum(dim=1).tolist()
        rm_scores = torch.zeros(responses.shape, dtype=torch.float32)
        for i, (score, length) in enumerate(zip(scores, lengths, strict=True)):
            if isinstance(score, TokenRewards):
                row = torch.tensor(score.tokens[: int(length)], dtype=torch.float32)
                rm_scores[i, : row.numel()] = row
            elif length > 0:
                rm_scores[i, int(length) - 1] = float(score)
        return rm_scores.to(responses.device)
