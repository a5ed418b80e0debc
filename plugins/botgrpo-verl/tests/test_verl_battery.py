"""Issue 60's battery on botgrpo-verl (items 9, 10, 28, 29): a module of the plugin imported before verl no longer
meets itself half made; ``botgrpo_scalar_fallback`` is checked on every verl; verl's trainer refuses a mistyped
``botgrpo_*`` estimator and a bad rewards file before Ray or any worker starts; the example's usage line names a
command that exists."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip(
    "verl", reason="botgrpo-verl's tests run in the verl venv (.venv-verl, made by `make test`)"
)

from botgrpo_verl import plugin
from botgrpo_verl.reward_manager import SCALAR_FALLBACK_KEY, BotgrpoRewardManager
from omegaconf import OmegaConf

from botgrpo_core import RewardMixture
from botgrpo_core.engine.tiny import byte_level_bpe_tokenizer

ROOT = Path(__file__).resolve().parents[3]
REWARDS = {
    "alpha": 1.0,
    "beta": 0.5,
    "signals": [
        {"name": "core.exact_answer", "params": {"reference_field": "ground_truth"}},
        {"name": "core.regex", "params": {"pattern": r"\d+", "value": 1.0}, "uncovered": "zero"},
    ],
}
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "PYTHONWARNINGS": "ignore"}


PROBE = (
    "import botgrpo_verl.reward_manager\n"
    "from botgrpo_verl import agent_loop\n"
    "from verl.trainer.ppo.core_algos import ADV_ESTIMATOR_REGISTRY\n"
    "print('active', agent_loop.active(), 'botgrpo_bot' in ADV_ESTIMATOR_REGISTRY)\n"
)


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> dict[str, subprocess.Popen[str]]:
    """The two fresh interpreters these tests need (each mostly `import verl`), started together."""
    folder = tmp_path_factory.mktemp("launch")
    bad = folder / "bad.yaml"
    bad.write_text("rewards:\n  signals: [{name: core.nope}]\n", encoding="utf-8")
    trainer = [
        sys.executable, "-m", "verl.trainer.main_ppo", "algorithm.adv_estimator=botgrpo_typo",
        "reward.reward_manager.name=botgrpo", f"+reward.reward_kwargs.botgrpo_rewards={bad}",
    ]  # fmt: skip
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True, "env": ENV}
    return {
        "probe": subprocess.Popen([sys.executable, "-c", PROBE], **pipes),
        "trainer": subprocess.Popen(trainer, cwd=folder, **pipes),
        "folder": folder,  # type: ignore[dict-item]
    }


def test_a_module_imported_before_verl_gets_the_dense_agent_loop(fresh) -> None:
    """Item 9: `import botgrpo_verl.reward_manager` before verl was a circular import: the dense agent loop was not
    installed and the manager then refused with "install verl 0.9.1" on verl 0.9.1."""
    out, err = fresh["probe"].communicate(timeout=300)
    done = subprocess.CompletedProcess([], fresh["probe"].returncode, out, err)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "active True True" in done.stdout, done.stdout + done.stderr[-3000:]
    assert "circular import" not in done.stderr and "failed to load" not in done.stderr, done.stderr[-3000:]


@pytest.mark.parametrize("value", ["maybe", 2, None, "true"])
def test_the_scalar_fallback_flag_is_checked_on_a_supported_verl(value: object) -> None:
    """Item 10: `maybe`, `2` and `null` passed without a word where the agent loop is adapted (the flag was read only
    where it was not)."""
    from botgrpo_verl import agent_loop

    assert agent_loop.active()
    reward = {"reward_kwargs": {SCALAR_FALLBACK_KEY: value}, "reward_model": {"enable": False}}
    config = OmegaConf.create({"reward": reward})
    mixture = RewardMixture.from_dict(REWARDS)
    with pytest.raises(ValueError, match=rf"reward_kwargs\.{SCALAR_FALLBACK_KEY} must be true or false"):
        BotgrpoRewardManager(config, byte_level_bpe_tokenizer(), mixture=mixture)
    for ok in (True, False):
        config = OmegaConf.create({"reward": {**reward, "reward_kwargs": {SCALAR_FALLBACK_KEY: ok}}})
        BotgrpoRewardManager(config, byte_level_bpe_tokenizer(), mixture=mixture)


def test_launch_problems_name_the_override_and_the_fix(tmp_path: Path) -> None:
    """Item 28, the check itself: from the command line's Hydra overrides, at once."""
    good = tmp_path / "rewards.yaml"
    good.write_text(
        "rewards:\n  signals:\n    - {name: core.exact_answer, params: {reference_field: ground_truth}}\n",
        encoding="utf-8",
    )
    assert (
        plugin.launch_problems(
            ["algorithm.adv_estimator=botgrpo_bot", f"+reward.reward_kwargs.botgrpo_rewards={good}", "x=1"]
        )
        == []
    )
    assert plugin.launch_problems(["algorithm.adv_estimator=grpo"]) == []  # verl's own names: verl's business
    typo = plugin.launch_problems(["algorithm.adv_estimator=botgrpo_bott"])
    assert len(typo) == 1 and "did you mean botgrpo_bot?" in typo[0] and "botgrpo_token_pool" in typo[0]
    bad = tmp_path / "bad.yaml"
    bad.write_text("rewards:\n  signals: [{name: core.nope}]\n", encoding="utf-8")
    for path, words in ((bad, "unknown signal 'core.nope'"), (tmp_path / "gone.yaml", "no such file")):
        problems = plugin.launch_problems([f"'+reward.reward_kwargs.botgrpo_rewards={path}'"[1:-1]])
        assert len(problems) == 1 and words in problems[0] and "botgrpo_rewards" in problems[0], problems
    group = tmp_path / "group.yaml"
    group.write_text("rewards:\n  signals: [{name: core.regex, params: {pattern: 'x', value: 1.0}}]\n")
    assert "uncovered: zero" in plugin.launch_problems([f"+reward.reward_kwargs.botgrpo_rewards={group}"])[0]
    assert "maybe" in plugin.launch_problems([f"+reward.reward_kwargs.{SCALAR_FALLBACK_KEY}=maybe"])[0]


def test_verls_trainer_refuses_them_before_anything_starts(fresh) -> None:
    """Item 28: `algorithm.adv_estimator=botgrpo_typo` failed after 2-3 minutes (Ray, workers and vLLM up) with
    verl's message and no list of the botgrpo names; a malformed rewards file only after ~145 s. Now verl's own
    `python -m verl.trainer.main_ppo` exits 2 while it imports verl, both named, Ray never started."""
    began = time.perf_counter()
    out, err = fresh["trainer"].communicate(timeout=300)
    done = subprocess.CompletedProcess([], fresh["trainer"].returncode, out, err)
    assert done.returncode == 2, done.stderr[-3000:]
    errors = [line for line in done.stderr.splitlines() if line.startswith("error: botgrpo-verl:")]
    assert len(errors) == 2, done.stderr[-3000:]
    assert "botgrpo_typo is not a botgrpo estimator" in errors[0] and "botgrpo_bot" in errors[0]
    assert "unknown signal 'core.nope'" in errors[1]
    assert "Ray" not in done.stderr + done.stdout and not (fresh["folder"] / "outputs").exists()
    print(f"refused {time.perf_counter() - began:.0f} s after the previous test (both import verl at once)")


def test_the_examples_usage_line_names_commands_that_exist() -> None:
    """Item 29: examples/verl/tiny-cpu.sh's usage line named `.venv-verl/bin/bash`, which no venv has."""
    script = (ROOT / "examples" / "verl" / "tiny-cpu.sh").read_text(encoding="utf-8")
    named = set(re.findall(r"\.venv-verl/bin/([\w.-]+)", script))
    assert named and named <= {"python", "pip", "activate"}, named
    venv = ROOT / ".venv-verl"
    if venv.is_dir():
        assert all((venv / "bin" / name).exists() for name in named)
    done = subprocess.run(
        ["bash", str(ROOT / "examples" / "verl" / "tiny-cpu.sh")], capture_output=True, text=True
    )
    assert (
        done.returncode != 0 and "PYTHON=.venv-verl/bin/python bash examples/verl/tiny-cpu.sh" in done.stderr
    )
