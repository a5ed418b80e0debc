"""Algorithm presets: contents, compatibility checks, and each preset running end to end."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from botgrpo_core.config.presets import (
    PRESETS,
    Preset,
    PresetError,
    check_estimator_ratio,
    check_preset_compat,
    get_preset,
)
from botgrpo_core.estimators import pooled, registry
from botgrpo_core.estimators.compute import compute_advantages
from botgrpo_core.estimators.registry import get_estimator, register_estimator
from botgrpo_core.loss import policy_loss

torch.set_num_threads(1)

REQUIRED = {"bot-grpo", "grpo", "dapo", "gspo", "dr-grpo", "pure", "process", "token-pool"}


def test_required_presets_exist_and_are_consistent() -> None:
    assert set(PRESETS) >= REQUIRED
    for name, preset in PRESETS.items():
        assert preset.name == name
        assert preset.estimator in registry.available_estimators(), name
        assert preset.description and preset.paper, name
        check_preset_compat(preset)


def test_preset_settings_follow_their_papers() -> None:
    dapo = get_preset("dapo")
    assert (dapo.eps_low, dapo.eps_high, dapo.aggregation, dapo.dynamic_sampling) == (
        0.2,
        0.28,
        "token",
        True,
    )
    assert dapo.estimator == "grpo"
    gspo = get_preset("gspo")
    assert (gspo.ratio_level, gspo.estimator, gspo.eps_low, gspo.eps_high) == ("sequence", "grpo", 3e-4, 4e-4)
    dr = get_preset("dr-grpo")
    assert (dr.estimator, dr.aggregation) == ("dr_grpo", "constant")
    grpo = get_preset("grpo")
    assert (grpo.estimator, grpo.ratio_level, grpo.aggregation) == ("grpo", "token", "sequence")
    bot = get_preset("bot-grpo")
    assert (bot.estimator, bot.ratio_level, bot.uses_local_signals) == ("bot", "token", True)
    assert get_preset("pure").estimator_options["temperature"] == 0.1
    assert get_preset("token-pool").estimator == "token_pool"
    assert get_preset("process").estimator == "process"
    assert not any(p.dynamic_sampling for n, p in PRESETS.items() if n != "dapo")


def test_outcome_level_is_registry_metadata() -> None:
    """Which built-in is outcome-level is stated once, in the torch-free registry."""
    outcome = {n for n in registry.BUILTIN_ESTIMATORS if registry.estimator_is_outcome_level(n)}
    assert outcome == {"grpo", "dr_grpo"}
    assert {"bot", "token_pool", "grpo", "dr_grpo", "process", "pure"} == registry.BUILTIN_ESTIMATORS


def test_token_level_estimator_with_sequence_ratio_is_an_error() -> None:
    bad = Preset(name="my-gspo-bot", estimator="bot", ratio_level="sequence")
    with pytest.raises(
        PresetError, match=r"preset 'my-gspo-bot': estimator 'bot' gives every token.*ratio_level: token"
    ):
        check_preset_compat(bad)
    for name in ("bot", "token_pool", "process", "pure"):
        with pytest.raises(PresetError, match="averaged away"):
            check_estimator_ratio(name, "sequence", where="algorithm.ratio_level")
    check_estimator_ratio("grpo", "sequence")
    check_estimator_ratio("dr_grpo", "sequence")


def test_plugin_estimators_use_their_registered_level() -> None:
    outcome = "test_outcome_level"
    token = "test_token_level"
    register_estimator(outcome, get_estimator("grpo"), outcome_level=True)
    register_estimator(token, pooled.bot)
    try:
        check_estimator_ratio(outcome, "sequence")
        with pytest.raises(PresetError):
            check_estimator_ratio(token, "sequence")
    finally:
        registry._REGISTRY.pop(outcome, None)
        registry._REGISTRY.pop(token, None)
    check_estimator_ratio("not_loaded_anywhere", "sequence")  # unknown: left to the registry at run time


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"eps_low": 1.0}, r"eps_low=1.0 must lie in \[0, 1\)"),
        ({"eps_high": -0.1}, "eps_high=-0.1 must be >= 0"),
        ({"kl_coef": -1.0}, "kl_coef=-1.0 must be >= 0"),
        ({"aggregation": "mean"}, "aggregation='mean' is not one of"),
        ({"ratio_level": "rollout"}, "ratio_level='rollout' is not one of token, sequence"),
        ({"ratio_level": "sequence"}, "estimator 'bot' gives every token"),
        ({"clip": 0.3}, r"unknown field\(s\) clip"),
    ],
)
def test_replace_checks_the_result(changes: dict, message: str) -> None:
    with pytest.raises(PresetError, match=message):
        get_preset("bot-grpo").replace(**changes)


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"eps_low": 1.0}, r"eps_low=1.0 must lie in \[0, 1\)"),
        ({"eps_low": -0.1}, r"eps_low=-0.1 must lie in \[0, 1\)"),
        ({"eps_high": -0.1}, "eps_high=-0.1 must be >= 0"),
        ({"kl_coef": -1.0}, "kl_coef=-1.0 must be >= 0"),
    ],
)
def test_loss_rules_are_one_rule_in_three_places(override: dict, message: str) -> None:
    """The presets and policy_loss state each loss-setting rule with one function
    (``loss_settings_problem``), each naming where the value came from."""
    with pytest.raises(PresetError, match=rf"preset 'dapo': {message}"):
        get_preset("dapo").replace(**override)
    logp = torch.zeros(2, 3)
    mask = torch.ones(2, 3, dtype=torch.bool)
    with pytest.raises(ValueError, match=rf"policy_loss: {message}"):
        policy_loss(logp, logp, torch.zeros(2), mask, ref_logp=logp, **override)


def test_run_file_check_uses_the_loss_rules() -> None:
    """``botgrpo validate`` refuses eps_low >= 1 (the model's ge=0 alone let it through), naming the key."""
    from botgrpo_core.config.errors import ConfigError
    from botgrpo_core.config.loading import parse_config

    data = {
        "algorithm": {"preset": "dapo", "eps_low": 1.0},
        "rewards": {"signals": [{"name": "core.exact_answer"}]},
    }
    with pytest.raises(ConfigError, match=r"<config>: algorithm\.eps_low=1.0 must lie in \[0, 1\)"):
        parse_config(data)


def test_replace_and_immutability() -> None:
    base = get_preset("dapo")
    wider = base.replace(eps_high=0.3)
    assert wider.eps_high == 0.3 and base.eps_high == 0.28
    with pytest.raises(TypeError):
        base.estimator_options["x"] = 1  # type: ignore[index]
    with pytest.raises(AttributeError):
        base.eps_low = 0.1  # type: ignore[misc]


def test_unknown_preset_suggests_the_nearest() -> None:
    with pytest.raises(KeyError, match=r"'dapoo'.*Did you mean 'dapo'.*Available: bot-grpo, dapo"):
        get_preset("dapoo")
    with pytest.raises(KeyError, match="Did you mean 'dr-grpo'"):
        get_preset("dr_grpo")


def test_importing_presets_does_not_import_torch() -> None:
    code = "import sys, botgrpo_core.config.presets as p; p.check_preset_compat(p.PRESETS['gspo']); print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("name", sorted(REQUIRED))
def test_every_preset_runs_end_to_end(name: str) -> None:
    """Token rewards -> the preset's estimator and options -> the preset's loss: finite, and the policy
    gradient on-policy points along the advantages (raising log-probs of positive-advantage tokens)."""
    preset = get_preset(name)
    g = torch.Generator().manual_seed(0)
    mask = torch.arange(6)[None, :] < torch.tensor([6, 4, 5, 2, 6, 3, 1, 6])[:, None]
    outcome = torch.tensor([1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0])[:, None]
    rewards = outcome + 0.25 * torch.randint(-2, 3, (8, 6), generator=g).float()
    advantages = compute_advantages(preset.estimator, rewards, mask, group_size=4, **preset.estimator_options)
    old = -torch.rand(8, 6, generator=g) - 0.5
    logp = old.clone().requires_grad_(True)
    loss, metrics = policy_loss(
        logp,
        old,
        advantages,
        mask,
        ref_logp=old,
        eps_low=preset.eps_low,
        eps_high=preset.eps_high,
        kl_coef=preset.kl_coef,
        ratio_level=preset.ratio_level,
        aggregation=preset.aggregation,
        max_len=6,
    )
    loss.backward()
    assert torch.isfinite(loss) and all(torch.isfinite(v) for v in metrics.values())
    assert (advantages != 0).any()
    if preset.ratio_level == "token":  # on-policy: d loss / d logp = -A * weight, weight > 0
        grad = logp.grad[mask]
        a = advantages[mask]
        assert torch.all(torch.sign(grad[a != 0]) == -torch.sign(a[a != 0]))
