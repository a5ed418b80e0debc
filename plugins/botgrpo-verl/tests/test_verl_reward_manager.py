"""The ``botgrpo`` verl reward manager against botgrpo's trainer path, with a byte-level BPE built in code.

verl's reward loop calls ``run_single`` once per response (concurrently) and ``assemble_rm_scores`` on the
batch; the token rewards must equal what botgrpo's trainer computes for the same completion ids and
tokenizer (``decode_samples`` then ``RewardMixture.score_batch``, as ``BoTGRPOTrainer._calculate_rewards``),
and must match an independent reading of the mixture: ``alpha * exact_answer`` on every valid token,
``beta * weight * value`` on the tokens overlapping a regex match.
"""

from __future__ import annotations

import pickle
import re

import pytest

pytest.importorskip(
    "verl", reason="botgrpo-verl's tests run in the verl venv (.venv-verl, made by `make test`)"
)

import asyncio

import numpy as np
import torch
from botgrpo_verl.reward_manager import BotgrpoRewardManager, TokenRewards
from omegaconf import OmegaConf
from verl import DataProto
from verl.experimental.reward_loop.reward_manager import get_reward_manager_cls
from verl.trainer.ppo.reward import load_reward_manager

from botgrpo_core import RewardMixture
from botgrpo_core.engine.tiny import byte_level_bpe_tokenizer
from botgrpo_core.rewards.samples import decode_samples

ALPHA, BETA, REGEX_WEIGHT, REGEX_VALUE = 1.0, 0.5, 0.8, -0.5
REWARDS = {
    "alpha": ALPHA,
    "beta": BETA,
    "signals": [
        {"name": "core.exact_answer", "params": {"reference_field": "ground_truth"}},
        {
            "name": "core.regex",
            "weight": REGEX_WEIGHT,
            "params": {"pattern": r"Step \d+", "value": REGEX_VALUE},
            "uncovered": "zero",  # verl scores responses as they finish, not by group
        },
    ],
}
ROWS = [
    ("Q: 12*3+4?", "Step 1: 12 * 3 = 36. Step 2: 36 + 4 = 40. The answer is \\boxed{40}.", "40"),
    ("Q: 12*3+4?", "Step 1: 12 * 3 = 35. The answer is \\boxed{39}.", "40"),
    ("Q: café?", "Schöne Grüße: naïve café → ∞. Step 7 \\boxed{∞}", "∞"),
    ("Q: café?", "no steps, no box", "∞"),
    ("Q: n mod 5?", "", "2"),
    ("Q: n mod 5?", "Step 10: n^2 + 1 = 5k, so \\boxed{2}", "2"),
]


@pytest.fixture(scope="module")
def tokenizer():
    return byte_level_bpe_tokenizer()


def verl_batch(tokenizer, rows=ROWS, eos: bool = True) -> DataProto:
    """A batch as verl's agent loop lays it out: left-padded prompts, right-padded responses."""
    prompts = [tokenizer.encode(p, add_special_tokens=False) for p, _, _ in rows]
    responses = [
        tokenizer.encode(c, add_special_tokens=False) + ([tokenizer.eos_token_id] if eos else [])
        for _, c, _ in rows
    ]
    pw, rw = max(map(len, prompts)), max(map(len, responses)) + 3
    pad = tokenizer.pad_token_id
    prompt_ids = torch.tensor([[pad] * (pw - len(p)) + p for p in prompts])
    response_ids = torch.tensor([r + [pad] * (rw - len(r)) for r in responses])
    attention = torch.tensor(
        [
            [0] * (pw - len(p)) + [1] * len(p) + [1] * len(r) + [0] * (rw - len(r))
            for p, r in zip(prompts, responses)
        ]
    )
    return DataProto.from_dict(
        tensors={
            "prompts": prompt_ids,
            "responses": response_ids,
            "input_ids": torch.cat([prompt_ids, response_ids], 1),
            "attention_mask": attention,
        },
        non_tensors={
            "data_source": np.array(["math"] * len(rows), dtype=object),
            "reward_model": np.array(
                [{"ground_truth": a, "style": "rule"} for _, _, a in rows], dtype=object
            ),
            "extra_info": np.array([{"index": i} for i in range(len(rows))], dtype=object),
            "uid": np.array([p for p, _, _ in rows], dtype=object),
        },
    )


def run_reward_loop(manager: BotgrpoRewardManager, data: DataProto) -> tuple[torch.Tensor, list[dict]]:
    """What verl's ``RewardLoopWorker.compute_score_batch`` and ``RewardLoopManager.compute_rm_score`` do."""

    async def all_items() -> list[dict]:
        return await asyncio.gather(*(manager.run_single(data[i : i + 1]) for i in range(len(data))))

    outputs = asyncio.run(all_items())
    scores = [pickle.loads(pickle.dumps(o["reward_score"])) for o in outputs]  # Ray pickles them
    return type(manager).assemble_rm_scores(data, scores), outputs


def trainer_token_rewards(tokenizer, data: DataProto, mixture: RewardMixture) -> torch.Tensor:
    """botgrpo's trainer path (``BoTGRPOTrainer._calculate_rewards``): decode_samples + score_batch."""
    width = data.batch["responses"].shape[1]
    lengths = data.batch["attention_mask"][:, data.batch["prompts"].shape[1] :].sum(1).tolist()
    ids = [data.batch["responses"][i, :n].tolist() for i, n in enumerate(lengths)]
    rows = [{"ground_truth": a} for _, _, a in ROWS]
    samples = decode_samples(tokenizer, [p for p, _, _ in ROWS], ids, rows)
    out = mixture.score_batch(samples).token_rewards
    return torch.nn.functional.pad(out, (0, width - out.shape[1]))


@pytest.mark.parametrize("eos", [True, False])
def test_token_rewards_equal_the_trainers(tokenizer, eos: bool) -> None:
    mixture = RewardMixture.from_dict(REWARDS)
    batches: list[int] = []
    score_batch = mixture.score_batch
    mixture.score_batch = lambda samples: batches.append(len(samples)) or score_batch(samples)
    manager = BotgrpoRewardManager(OmegaConf.create({}), tokenizer, mixture=mixture)
    data = verl_batch(tokenizer, eos=eos)
    rm_scores, outputs = run_reward_loop(manager, data)
    assert batches == [len(ROWS)], "the concurrent run_single calls are scored as one batch"
    want = trainer_token_rewards(tokenizer, data, RewardMixture.from_dict(REWARDS))
    assert rm_scores.shape == data.batch["responses"].shape and rm_scores.dtype == torch.float32
    assert torch.equal(rm_scores, want)
    lengths = data.batch["attention_mask"][:, data.batch["prompts"].shape[1] :].sum(1)
    for i, out in enumerate(outputs):  # the float verl sees: the token-mean reward
        n = int(lengths[i])
        assert float(out["reward_score"]) == pytest.approx(float(want[i, :n].mean()) if n else 0.0, abs=1e-6)


def test_token_rewards_match_an_independent_reading(tokenizer) -> None:
    """``alpha`` on every token of a correct answer; ``beta * w * v`` on tokens overlapping ``Step \\d+``."""
    manager = BotgrpoRewardManager(OmegaConf.create({}), tokenizer, mixture=RewardMixture.from_dict(REWARDS))
    data = verl_batch(tokenizer, eos=False)
    rm_scores, outputs = run_reward_loop(manager, data)
    for i, (_, completion, answer) in enumerate(ROWS):
        ids = tokenizer.encode(completion, add_special_tokens=False)
        # token t covers characters [len(decode(ids[:t])), len(decode(ids[:t+1]))) (byte pieces: best effort)
        ends = [len(tokenizer.decode(ids[: t + 1])) for t in range(len(ids))]
        starts = [0, *ends[:-1]]
        correct = completion.endswith(f"\\boxed{{{answer}}}") or f"\\boxed{{{answer}}}." in completion
        expect = torch.full((len(ids),), ALPHA * float(correct))
        for m in re.finditer(r"Step \d+", completion):
            hit = torch.tensor([s < m.end() and e > m.start() for s, e in zip(starts, ends)])
            expect += BETA * REGEX_WEIGHT * REGEX_VALUE * hit
        assert torch.allclose(rm_scores[i, : len(ids)], expect), (i, completion)
        assert bool((rm_scores[i, len(ids) :] == 0).all())
        info = outputs[i]["reward_extra_info"]
        assert info["botgrpo/core.exact_answer/value"] == float(correct)
        assert info["botgrpo/core.regex/spans"] == len(re.findall(r"Step \d+", completion))
        assert info["botgrpo/valid"] == 1.0


def test_verl_loads_the_manager_from_its_config(tokenizer, tmp_path) -> None:
    """verl's own ``load_reward_manager``: ``reward.reward_manager.name=botgrpo`` and the run file in
    ``reward.reward_kwargs.botgrpo_rewards``; a missing run file is an error naming the key."""
    import yaml

    run_file = tmp_path / "run.yaml"
    run_file.write_text(yaml.safe_dump({"rewards": REWARDS}))
    reward = {
        "reward_manager": {"source": "register", "name": "botgrpo"},
        "custom_reward_function": {"path": None},
        "reward_kwargs": {"botgrpo_rewards": str(run_file)},
    }
    assert get_reward_manager_cls("botgrpo") is BotgrpoRewardManager
    manager = load_reward_manager(OmegaConf.create({"reward": reward}), tokenizer)
    assert isinstance(manager, BotgrpoRewardManager)
    assert [r.spec.name for r in manager.mixture.runners] == ["core.exact_answer", "core.regex"]
    rm_scores, _ = run_reward_loop(manager, verl_batch(tokenizer))
    assert torch.equal(rm_scores, trainer_token_rewards(tokenizer, verl_batch(tokenizer), manager.mixture))
    reward["reward_kwargs"] = {}
    with pytest.raises(ValueError, match=r"reward\.reward_kwargs\.botgrpo_rewards"):
        load_reward_manager(OmegaConf.create({"reward": reward}), tokenizer)


def test_a_plain_float_goes_on_the_last_token(tokenizer) -> None:
    data = verl_batch(tokenizer, rows=ROWS[:2])
    rm = BotgrpoRewardManager.assemble_rm_scores(data, [TokenRewards([0.5, 1.5]), 2.0])
    n = int(data.batch["attention_mask"][1, data.batch["prompts"].shape[1] :].sum())
    assert rm[0, :2].tolist() == [0.5, 1.5] and float(rm[0, 2:].abs().sum()) == 0
    assert float(rm[1, n - 1]) == 2.0 and float(rm[1].abs().sum()) == 2.0
    tokens = TokenRewards([1.0, float("nan")])
    assert float(tokens) == 0.0 and pickle.loads(pickle.dumps(tokens)).tokens[0] == 1.0


def test_no_warning_where_the_agent_loop_is_adapted(tokenizer, capsys) -> None:
    """verl's default (no reward model) scores in its agent loop; botgrpo-verl adapts verl 0.9.1's there
    (test_verl_agent_loop.py), so the manager has nothing to warn about. Where it cannot adapt it, the
    manager says so (test_unrecognised_verl_code_warns_and_leaves_verl_as_it_is)."""
    from botgrpo_verl import agent_loop, reward_manager

    assert agent_loop.active()
    reward_manager._warned.clear()
    for enable, own_pool in ((False, False), (True, True), (True, False)):
        model = {"enable": enable, "enable_resource_pool": own_pool}
        config = OmegaConf.create({"reward": {"reward_model": model}})
        BotgrpoRewardManager(config, tokenizer, mixture=RewardMixture.from_dict(REWARDS))
    assert "warning" not in capsys.readouterr().err


def test_a_group_mean_fill_is_refused_with_the_key(tokenizer) -> None:
    """``uncovered: group_mean`` needs whole groups; verl scores responses as they finish (docs/verl.md)."""
    rewards = {**REWARDS, "signals": [dict(s) for s in REWARDS["signals"]]}
    local = next(i for i, s in enumerate(rewards["signals"]) if s["name"] != "core.exact_answer")
    rewards["signals"][local]["uncovered"] = "group_mean"
    with pytest.raises(
        ValueError, match=rf"rewards\.signals\[{local}\]\.uncovered is 'group_mean'.*uncovered: zero"
    ):
        BotgrpoRewardManager(OmegaConf.create({}), tokenizer, mixture=RewardMixture.from_dict(rewards))
    del rewards["signals"][local]["uncovered"]  # the core's default (group_mean) is refused too, and said so
    with pytest.raises(
        ValueError, match=rf"signals\[{local}\]\.uncovered defaults to 'group_mean'.*'uncovered: zero'"
    ):
        BotgrpoRewardManager(OmegaConf.create({}), tokenizer, mixture=RewardMixture.from_dict(rewards))
