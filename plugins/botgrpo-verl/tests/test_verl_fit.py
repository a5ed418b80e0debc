"""verl's own trainer runs botgrpo on CPU: ``python -m verl.trainer.main_ppo`` (examples/verl/tiny-cpu.sh) trains
a tiny model built in code for 2 steps with rollouts from verl's vLLM server on vLLM's CPU build, the
``botgrpo_bot`` estimator and the ``botgrpo`` reward manager (issue 38).

Checked against botgrpo's own computation of the same rollouts (``BOTGRPO_VERL_RECORD``, botgrpo_verl/record.py):
the token rewards verl's trainer handed the estimator (its ``token_level_rewards``, from ``rm_scores`` of verl's
agent loop) equal botgrpo's trainer path (``decode_samples`` + ``RewardMixture.score_batch``) on the stored
response ids, and the advantages verl stores for the actor update equal botgrpo's ``compute_advantages`` of
those; the loss verl logs is finite at each step and the saved weights differ from the initial ones.
"""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "verl", reason="botgrpo-verl's tests run in the verl venv (.venv-verl, made by `make test`)"
)
pytest.importorskip("vllm", reason="the fit test needs vLLM's CPU build in the verl venv (make install-verl)")

import torch
from botgrpo_verl.record import ENV

from botgrpo_core import RewardMixture, compute_advantages
from botgrpo_core.engine.tiny import load_tokenizer
from botgrpo_core.rewards.samples import decode_samples

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "verl" / "tiny-cpu.sh"
REWARDS = ROOT / "examples" / "verl" / "tiny-cpu-rewards.yaml"
STEPS = 2
#: tolerance for float32 token rewards and advantages computed twice
TOL = 1e-5


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> dict[str, Any]:
    """One run of the example: its folder, log, records and wall time."""
    folder = tmp_path_factory.mktemp("verl-fit")
    env = {**os.environ, ENV: str(folder / "record"), "PYTHON": sys.executable, "RAY_DEDUP_LOGS": "0"}
    start = time.monotonic()
    proc = subprocess.run(
        ["bash", str(EXAMPLE), str(folder)], env=env, capture_output=True, text=True, timeout=900
    )
    wall = time.monotonic() - start
    log = proc.stdout + proc.stderr
    (folder / "run.log").write_text(log)
    assert proc.returncode == 0, f"verl's main_ppo failed (rc {proc.returncode}):\n{log[-6000:]}"
    records = folder / "record"

    def load(kind: str) -> list[dict[str, Any]]:
        return [torch.load(p, weights_only=False) for p in sorted(records.glob(f"{kind}-*.pt"))]

    return {
        "folder": folder,
        "log": log,
        "wall": wall,
        "responses": load("responses"),
        "advantages": load("advantages"),
    }


def reference_token_rewards(
    folder: Path, responses: list[dict[str, Any]]
) -> dict[tuple[int, ...], torch.Tensor]:
    """botgrpo's trainer path on every stored response: response ids -> its token rewards."""
    tokenizer = load_tokenizer(folder / "model")
    mixture = RewardMixture.from_yaml(str(REWARDS))
    out: dict[tuple[int, ...], torch.Tensor] = {}
    for call in responses:
        samples = decode_samples(tokenizer, call["prompts"], call["ids"], call["rows"])
        rewards = mixture.score_batch(samples).token_rewards
        for i, ids in enumerate(call["ids"]):
            out[tuple(ids)] = rewards[i, : len(ids)].clone()
    return out


def test_verl_fit_trains_with_botgrpos_rewards_and_advantages(run) -> None:
    steps = [int(s) for s in re.findall(r"\bstep:(\d+) - ", run["log"])]
    assert sorted(set(steps)) == list(range(1, STEPS + 1)), steps
    losses = [float(x) for x in re.findall(r"actor/pg_loss:(\S+?)(?: - |$)", run["log"], flags=re.M)]
    assert len(losses) >= STEPS and all(math.isfinite(x) for x in losses), losses

    assert len(run["advantages"]) == STEPS, "verl's trainer called the botgrpo_bot estimator once a step"
    reference = reference_token_rewards(run["folder"], run["responses"])
    reward_diff = advantage_diff = 0.0
    for call in run["advantages"]:
        assert call["estimator"] == "bot"
        verl_rewards, mask, verl_adv = (
            call["token_level_rewards"],
            call["response_mask"] != 0,
            call["advantages"],
        )
        rows = []
        for i in range(verl_rewards.shape[0]):
            n = int(mask[i].sum())
            row = verl_rewards[i, :n]
            # the stored response whose botgrpo token rewards verl's row is (one of equal length)
            diffs = [
                float((ref - row).abs().max()) if n else 0.0 for ref in reference.values() if len(ref) == n
            ]
            assert diffs and min(diffs) <= TOL, (
                f"verl's row {i} is no stored response's botgrpo token rewards"
            )
            reward_diff = max(reward_diff, min(diffs))
            assert float(verl_rewards[i, n:].abs().sum()) == 0.0
            rows.append(row)
        width = verl_rewards.shape[1]
        want_rewards = torch.stack([torch.nn.functional.pad(r, (0, width - len(r))) for r in rows])
        groups = torch.tensor([sorted(set(call["index"])).index(u) for u in call["index"]])
        want_adv = compute_advantages("bot", want_rewards, mask, group_ids=groups)
        advantage_diff = max(advantage_diff, float((want_adv - verl_adv).abs().max()))
        assert bool((verl_adv != 0).any()), "the rewards differ within some group"
    assert reward_diff <= TOL and advantage_diff <= TOL, (reward_diff, advantage_diff)
    most = max(int(n) for c in run["advantages"] for n in (c["token_level_rewards"] != 0).sum(1))
    assert most >= 2, "dense rows: some rollout has several nonzero token rewards (not one on its last token)"
    print(
        f"\nverl fit: {STEPS} steps, pg_loss {losses}, max |token rewards - botgrpo's| {reward_diff:.2e}, "
        f"max |advantages - botgrpo's| {advantage_diff:.2e}, wall {run['wall']:.0f} s"
    )


def test_verl_fit_changed_the_weights(run) -> None:
    from transformers import AutoModelForCausalLM

    initial = AutoModelForCausalLM.from_pretrained(run["folder"] / "model").state_dict()
    saved = sorted(run["folder"].glob("checkpoints/global_step_*/actor/huggingface"))
    assert saved, f"no saved actor in {run['folder'] / 'checkpoints'}"
    trained = AutoModelForCausalLM.from_pretrained(saved[-1]).state_dict()
    moved = max(float((trained[k] - initial[k]).abs().max()) for k in initial)
    assert math.isfinite(moved) and moved > 0, moved
