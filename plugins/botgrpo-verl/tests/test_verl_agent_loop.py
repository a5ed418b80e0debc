"""Dense token rewards through verl's agent loop (its default, rule-based reward path), on verl's own code.

verl builds ``rm_scores`` from an agent-loop output in ``AgentLoopOutput.as_dict`` (the default trainer,
``trainer.use_v1=true``) and in ``AgentLoopWorker._agent_loop_postprocess`` + ``_postprocess`` (the legacy
trainer). With the ``botgrpo`` manager's rewards, the rows must equal botgrpo's trainer's token rewards for the
same completions and tokenizer; with verl's ``naive`` manager they must be exactly verl's own (last-token
scalar); a verl whose code is not recognised gets a warning and verl's behaviour. The whole path, from
``AgentLoopWorker.generate_sequences`` through a Ray reward worker, is in test_verl_reward_loop.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "verl", reason="botgrpo-verl's tests run in the verl venv (.venv-verl, made by `make test`)"
)

import asyncio
import pickle

import numpy as np
import torch
import verl
from botgrpo_verl import agent_loop
from botgrpo_verl.reward_manager import BotgrpoRewardManager, TokenRewards
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf
from test_verl_reward_manager import REWARDS, ROWS, run_reward_loop, trainer_token_rewards, verl_batch
from verl.experimental.agent_loop.agent_loop import AgentLoopMetrics, AgentLoopOutput, AgentLoopWorker
from verl.experimental.reward_loop.reward_manager.naive import NaiveRewardManager

from botgrpo_core import RewardMixture
from botgrpo_core.engine.tiny import build_tiny_model, byte_level_bpe_tokenizer, save_pretrained

CONFIG_DIR = Path(verl.__file__).parent / "trainer" / "config"
#: verl's naive manager with its default score (gsm8k: ``#### <answer>``): one right, one wrong, one empty.
NAIVE_ROWS = [("Q: 6*7?", "6*7 is 42 #### 42", "42"), ("Q: 6*7?", "#### 41", "42"), ("Q: 1+1?", "", "2")]


def chat_tokenizer() -> Any:
    """The byte-level BPE built in code, with a plain chat template (verl's agent loop applies one)."""
    tokenizer = byte_level_bpe_tokenizer()
    tokenizer.chat_template = "{% for m in messages %}{{ m['content'] }}\n{% endfor %}"
    return tokenizer


def verl_config(model_dir: Path, overrides: list[str] = ()) -> Any:
    """verl's own Hydra trainer config (``ppo_trainer``) for a tiny model folder, on CPU-sized lengths."""
    base = [
        f"actor_rollout_ref.model.path={model_dir}",
        "actor_rollout_ref.rollout.name=vllm",
        "actor_rollout_ref.rollout.prompt_length=32",
        "actor_rollout_ref.rollout.response_length=96",
        "reward.num_workers=1",
    ]
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base=None):
        return compose(config_name="ppo_trainer", overrides=base + list(overrides))


def tiny_model_dir(tokenizer: Any, folder: Path) -> Path:
    """A tiny Llama and the tokenizer saved where verl's model config reads them."""
    return save_pretrained(build_tiny_model(tokenizer), tokenizer, folder)


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    return chat_tokenizer()


@pytest.fixture(scope="module")
def worker(tokenizer, tmp_path_factory) -> AgentLoopWorker:
    """verl's ``AgentLoopWorker``, built by its own ``__init__`` from verl's config (no rollout server: the
    postprocess steps under test do not generate)."""
    config = verl_config(tiny_model_dir(tokenizer, tmp_path_factory.mktemp("model")))
    return AgentLoopWorker(config, llm_client=None, reward_loop_worker_handles=None)


def loop_outputs(tokenizer, rows, results: list[Any]) -> list[AgentLoopOutput]:
    """Agent-loop outputs of ``rows``' completions (eos-terminated), each given its reward manager's result
    as verl's ``_compute_score`` does (``reward_score`` and ``extra_fields["reward_extra_info"]``); a bare
    float stands for a result without extra info."""
    outputs = []
    for (prompt, completion, _), result in zip(rows, results, strict=True):
        result = result if isinstance(result, dict) else {"reward_score": result, "reward_extra_info": {}}
        response = [*tokenizer.encode(completion, add_special_tokens=False), tokenizer.eos_token_id]
        out = AgentLoopOutput(
            prompt_ids=tokenizer.encode(prompt, add_special_tokens=False),
            response_ids=response,
            response_mask=[1] * len(response),
            metrics=AgentLoopMetrics(),
        )
        out.reward_score = result["reward_score"]
        out.extra_fields["reward_extra_info"] = result["reward_extra_info"]
        outputs.append(out)
    return outputs


def botgrpo_results(tokenizer) -> tuple[list[dict[str, Any]], torch.Tensor]:
    """The ``botgrpo`` manager's results (scores pickled as Ray sends them) and the trainer's token rewards."""
    manager = BotgrpoRewardManager(OmegaConf.create({}), tokenizer, mixture=RewardMixture.from_dict(REWARDS))
    data = verl_batch(tokenizer)
    _, results = run_reward_loop(manager, data)
    want = trainer_token_rewards(tokenizer, data, RewardMixture.from_dict(REWARDS))
    for r in results:
        r["reward_score"] = pickle.loads(pickle.dumps(r["reward_score"]))
    return results, want


def naive_results(tokenizer) -> list[dict[str, Any]]:
    """verl's naive manager (its default score) on ``NAIVE_ROWS``, built and run in one event loop as verl's
    reward worker does (it keeps the loop it was made in)."""
    data = verl_batch(tokenizer, rows=NAIVE_ROWS)
    data.non_tensor_batch["data_source"] = np.array(["openai/gsm8k"] * len(NAIVE_ROWS), dtype=object)

    async def run() -> list[dict[str, Any]]:
        manager = NaiveRewardManager(OmegaConf.create({}), tokenizer, compute_score=None)
        return await asyncio.gather(*(manager.run_single(data[i : i + 1]) for i in range(len(data))))

    return asyncio.run(run())


def postprocess(worker: AgentLoopWorker, outputs: list[AgentLoopOutput], rows) -> Any:
    """verl's legacy path: ``_agent_loop_postprocess`` per output (pads; the reward is already set, so its
    ``_compute_score`` keeps it), then ``_postprocess`` on the batch."""

    async def run() -> list[Any]:
        return [
            await worker._agent_loop_postprocess(o, False, raw_prompt=[{"role": "user", "content": p}])
            for o, (p, _, _) in zip(outputs, rows, strict=True)
        ]

    return worker._postprocess(asyncio.run(run()))


def test_the_entry_point_installed_the_wrappers() -> None:
    assert agent_loop.active()
    for fn in (
        AgentLoopOutput.as_dict,
        AgentLoopWorker._agent_loop_postprocess,
        AgentLoopWorker._postprocess,
    ):
        assert getattr(fn, agent_loop.MARK, False), fn


def test_default_trainer_as_dict_writes_the_trainers_token_rewards(tokenizer) -> None:
    """``trainer.use_v1=true``: each output's ``rm_scores`` (unpadded) is the trainer's token-reward row."""
    results, want = botgrpo_results(tokenizer)
    assert all(type(r["reward_score"]) is TokenRewards for r in results)
    for i, output in enumerate(loop_outputs(tokenizer, ROWS, results)):
        row = output.as_dict()["rm_scores"]
        n = len(output.response_ids)
        assert row.dtype == torch.float32 and row.shape == (n,)
        assert float((row - want[i, :n]).abs().max()) <= 1e-6, i
    assert bool((want != 0).any(dim=1).sum() >= 4), "most responses get nonzero token rewards"


def test_legacy_postprocess_writes_the_trainers_token_rewards(tokenizer, worker) -> None:
    """``trainer.use_v1=false``: the padded batch's ``rm_scores`` rows are the trainer's, zero after."""
    results, want = botgrpo_results(tokenizer)
    out = postprocess(worker, loop_outputs(tokenizer, ROWS, results), ROWS)
    rm_scores = out.batch["rm_scores"]
    assert rm_scores.shape == out.batch["responses"].shape == (len(ROWS), 96)
    width = want.shape[1]
    assert float((rm_scores[:, :width] - want).abs().max()) <= 1e-6
    assert float(rm_scores[:, width:].abs().sum()) == 0.0
    # what verl puts beside them is unchanged: the manager's per-signal extra info, listed for its metrics
    assert out.non_tensor_batch["botgrpo/core.exact_answer/value"].tolist() == [1.0, 0.0, 1.0, 0.0, 0.0, 1.0]
    assert "botgrpo/core.regex/spans" in out.meta_info["reward_extra_keys"]


def test_verl_naive_manager_is_unaffected(tokenizer, worker) -> None:
    """A plain float: the wrapped functions return exactly verl's own (``__wrapped__``) result, the score on
    the last response token."""
    results = naive_results(tokenizer)
    scores = [r["reward_score"] for r in results]
    assert scores == [1.0, 0.0, 0.0] and all(type(s) is not TokenRewards for s in scores)
    for output in loop_outputs(tokenizer, NAIVE_ROWS, results):
        ours, verls = output.as_dict(), AgentLoopOutput.as_dict.__wrapped__(output)
        assert torch.equal(ours["rm_scores"], verls["rm_scores"])
        assert float(ours["rm_scores"][-1]) == output.reward_score
        assert float(ours["rm_scores"][:-1].abs().sum()) == 0.0
    out = postprocess(worker, loop_outputs(tokenizer, NAIVE_ROWS, results), NAIVE_ROWS)
    plain = AgentLoopWorker._postprocess.__wrapped__

    async def internals() -> list[Any]:
        outputs = loop_outputs(tokenizer, NAIVE_ROWS, results)
        run = AgentLoopWorker._agent_loop_postprocess.__wrapped__
        return [await run(worker, o, False, raw_prompt=[]) for o in outputs]

    theirs = plain(worker, asyncio.run(internals()))
    assert torch.equal(out.batch["rm_scores"], theirs.batch["rm_scores"])
    lengths = out.batch["attention_mask"][:, out.batch["prompts"].shape[1] :].sum(1)
    assert out.batch["rm_scores"][torch.arange(3), lengths - 1].tolist() == scores
    assert sorted(out.non_tensor_batch) == sorted(theirs.non_tensor_batch)
    assert out.non_tensor_batch["acc"].tolist() == theirs.non_tensor_batch["acc"].tolist() == scores


def test_a_score_of_another_length_keeps_verls_row(tokenizer, capsys) -> None:
    """An agent loop copying one trajectory's score onto an output of another length: verl's row, said once."""
    from botgrpo_verl import reward_manager

    reward_manager._warned.clear()
    output = loop_outputs(tokenizer, ROWS[:1], [TokenRewards([1.0, 3.0])])[0]
    row = output.as_dict()["rm_scores"]
    assert float(row[-1]) == 2.0 and float(row[:-1].abs().sum()) == 0.0
    assert "carries 2 token rewards" in capsys.readouterr().err


def test_unrecognised_verl_code_warns_and_leaves_verl_as_it_is(tokenizer, monkeypatch, capsys) -> None:
    from botgrpo_verl import reward_manager

    fingerprints = agent_loop.code_fingerprints()
    assert agent_loop.unrecognised(verl.__version__, fingerprints) == []
    changed = {**fingerprints, "AgentLoopWorker._postprocess": "0" * 64}
    assert agent_loop.unrecognised(verl.__version__, changed) == ["AgentLoopWorker._postprocess"]
    agent_loop.uninstall()
    try:
        reward_manager._warned.clear()
        assert agent_loop.install(version="0.9.2") is False
        err = capsys.readouterr().err
        assert "warning: botgrpo-verl: verl 0.9.2's agent loop is not the code botgrpo-verl" in err
        assert "pip install 'verl==0.9.1'" in err and "last token" in err
        assert not agent_loop.active()
        assert not getattr(AgentLoopOutput.as_dict, agent_loop.MARK, False)
        output = loop_outputs(tokenizer, ROWS[:1], [TokenRewards([0.5] * 40)])[0]
        assert float(output.as_dict()["rm_scores"][-1]) == 0.5  # verl's: the token mean on the last token
        monkeypatch.setattr(agent_loop, "code_fingerprints", lambda: changed)
        assert agent_loop.install() is False
        assert "differs: AgentLoopWorker._postprocess" in capsys.readouterr().err
        # the manager then refuses to start, naming the reason and the fix ...
        reward = {"reward_model": {"enable": False, "enable_resource_pool": False}}
        with pytest.raises(RuntimeError, match="refusing to start.*token-mean reward on its last token"):
            BotgrpoRewardManager(
                OmegaConf.create({"reward": reward}), tokenizer, mixture=RewardMixture.from_dict(REWARDS)
            )
        # ... or, opted into knowingly, goes on with the scalars and says on stderr that the dense rewards are lost
        reward_manager._warned.clear()
        config = OmegaConf.create({"reward": {**reward, "reward_kwargs": {"botgrpo_scalar_fallback": True}}})
        BotgrpoRewardManager(config, tokenizer, mixture=RewardMixture.from_dict(REWARDS))
        assert "could not adapt this verl's agent loop" in capsys.readouterr().err
    finally:
        monkeypatch.undo()
        assert agent_loop.install() is True
    assert getattr(AgentLoopOutput.as_dict, agent_loop.MARK, False)
