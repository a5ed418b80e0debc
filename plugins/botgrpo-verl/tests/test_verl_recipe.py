"""The verl recipe (examples/verl/math-qwen2.5-3b-8gpu.sh) changes a plain verl GRPO run in exactly the settings
docs/verl.md names, composed with verl's own Hydra config (unknown keys would fail there), and what it names
exists: the estimator, the reward manager and the run file's mixture."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

pytest.importorskip(
    "verl", reason="botgrpo-verl's tests run in the verl venv (.venv-verl, made by `make test`)"
)

import verl
from botgrpo_verl.reward_manager import BotgrpoRewardManager
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf
from verl.trainer.ppo import core_algos
from verl.trainer.ppo.reward import resolve_reward_manager_cls

from botgrpo_core import RewardMixture

ROOT = Path(__file__).resolve().parents[3]
RECIPE = ROOT / "examples" / "verl" / "math-qwen2.5-3b-8gpu.sh"
CONFIG_DIR = Path(verl.__file__).parent / "trainer" / "config"


def bash_array(name: str) -> list[str]:
    """The words of ``NAME=( ... )`` in the recipe, one per line, as bash would split them."""
    lines = RECIPE.read_text().splitlines()
    start = lines.index(f"{name}=(") + 1
    end = lines.index(")", start)
    return [word for line in lines[start:end] for word in shlex.split(line)]


def flat(cfg) -> dict[str, object]:
    out: dict[str, object] = {}

    def walk(node: object, prefix: str) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, f"{prefix}{k}.")
        else:
            out[prefix[:-1]] = node

    walk(OmegaConf.to_container(cfg, resolve=False), "")
    return out


def test_the_recipe_changes_only_the_estimator_and_the_reward_manager() -> None:
    grpo, botgrpo = bash_array("GRPO_ARGS"), bash_array("BOTGRPO_ARGS")
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base=None):
        base = compose(config_name="ppo_trainer", overrides=grpo)
        ours = compose(config_name="ppo_trainer", overrides=grpo + botgrpo)
    before, after = flat(base), flat(ours)
    changed = {
        k for k in before.keys() | after.keys() if before.get(k, "<absent>") != after.get(k, "<absent>")
    }
    assert changed == {
        "algorithm.adv_estimator",
        "reward.reward_manager.name",
        "reward.reward_kwargs.botgrpo_rewards",
    }
    assert before["algorithm.adv_estimator"] == "grpo"
    estimator = after["algorithm.adv_estimator"]
    assert core_algos.get_adv_estimator_fn(estimator).__module__ == "botgrpo_verl.estimators"
    assert resolve_reward_manager_cls(ours) is BotgrpoRewardManager
    rewards = ROOT / str(after["reward.reward_kwargs.botgrpo_rewards"])
    mixture = RewardMixture.from_yaml(rewards)  # checked as `botgrpo validate` checks it (judge installed)
    assert [r.spec.name for r in mixture.runners] == ["core.exact_answer", "judge.steps"]
    assert all(r.params.reference_field == "ground_truth" for r in mixture.runners)
    mixture.close()
