"""Run-file checks that involve a plugin (issue 15): a plugin published under another entry-point name than
its signals' prefix, and a signal's worker settings: at signal level only for a plugin with its own processes
(``SignalSpec.own_pool``), never given twice for one whose params share the names."""

from __future__ import annotations

from importlib.metadata import EntryPoint

import pytest
from adversarial_plugins import OwnPoolParams, Zero

from botgrpo_core.config.checks import check_rewards, validate_params
from botgrpo_core.config.errors import ConfigError
from botgrpo_core.config.models import RewardsConfig
from botgrpo_core.signals import SignalSpec
from botgrpo_core.signals.manager import PluginManager, UnknownSignalError


def _manager(name: str, obj: str) -> PluginManager:
    return PluginManager(
        entry_points=[EntryPoint(name=name, value=f"adversarial_plugins:{obj}", group="botgrpo")]
    )


def test_signal_prefix_differs_from_the_entry_point_name() -> None:
    """Was "unknown signal 'actual.zero'. Did you mean 'actual.zero'?"."""
    manager = _manager("published", "MisnamedPlugin")
    with pytest.raises(UnknownSignalError) as info:
        manager.get_signal("actual.zero")
    message = str(info.value)
    assert "Did you mean" not in message
    assert "registered by plugin 'published'" in message and "not 'actual'" in message
    assert "publish it as 'actual'" in message and "[project.entry-points.botgrpo] actual =" in message
    assert "or name its signals 'published.<signal>'" in message


def test_a_plugin_that_matches_its_prefix_loads() -> None:
    assert _manager("actual", "MisnamedPlugin").get_signal("actual.zero").plugin == "actual"


def _rewards(name: str = "ownpool.zero", **signal: object) -> RewardsConfig:
    return RewardsConfig(alpha=1.0, beta=0.0, signals=[{"name": name, **signal}])


def _own_pool() -> PluginManager:
    return _manager("ownpool", "OwnPoolPlugin")


def _params(**signal: object) -> object:
    """The params the core hands the scorer of an ``own_pool`` signal (check_rewards' own path)."""
    rewards = _rewards(**signal)
    return validate_params(_own_pool().get_signal("ownpool.zero"), rewards.signals[0], "rewards.signals[0]")


@pytest.mark.parametrize("key", ["workers", "timeout_s", "memory_mb"])
def test_own_pool_keys_inside_params_are_refused_with_the_fix(key: str) -> None:
    with pytest.raises(ConfigError) as info:
        check_rewards(_rewards(params={key: 3}), "run.yaml", _own_pool())
    message = str(info.value)
    assert message.startswith(f"run.yaml: rewards.signals[0].params.{key}: signal 'ownpool.zero'")
    assert "runs its own worker processes" in message
    assert f"move it to rewards.signals[0].{key}" in message and f"`{key}: 3`" in message
    assert f"remove rewards.signals[0].params.{key}" in message


def test_own_pool_keys_at_signal_level_fill_the_params() -> None:
    """The one place: signal-level values reach the plugin's params; unset ones keep the plugin's defaults."""
    params = _params(workers=3, timeout_s=2.5, memory_mb=256)
    assert (params.workers, params.timeout_s, params.memory_mb) == (3, 2.5, 256)
    params = _params(timeout_s=0.5)
    assert (params.workers, params.timeout_s, params.memory_mb) == (2, 0.5, 1024)  # OwnPoolParams' defaults
    assert _params() == OwnPoolParams()


def test_a_signal_level_value_the_plugin_refuses_names_the_signal_level_key() -> None:
    """OwnPoolParams.workers >= 1 (sympy's too: model text never checked in-process): workers 0 is refused."""
    with pytest.raises(ConfigError) as info:
        check_rewards(_rewards(workers=0), "run.yaml", _own_pool())
    message = str(info.value)
    assert "  - rewards.signals[0].workers: Input should be greater than or equal to 1 (got 0;" in message
    assert "params.workers" not in message


def test_a_resolved_config_with_every_default_spelled_out_loads() -> None:
    """A run's config.yaml (``model_dump``) names every signal-level key (null at its default): not a clash,
    and the values it spells out fill the params as the original file did."""
    cases = [
        ("ownpool.zero", {"timeout_s": 2.0}, _own_pool()),
        ("sharedkeys.zero", {"params": {"workers": 4}}, _manager("sharedkeys", "SharedKeysPlugin")),
    ]
    for name, signal, manager in cases:
        resolved = RewardsConfig.model_validate(_rewards(name, **signal).model_dump(mode="json"))
        assert {"workers", "timeout_s", "memory_mb"} <= resolved.signals[0].model_fields_set
        check_rewards(resolved, "config.yaml", manager)
    dumped = _rewards(timeout_s=2.0).signals[0].model_dump(mode="json", exclude={"name"})
    assert _params(**dumped) == OwnPoolParams(timeout_s=2.0)


def test_own_pool_needs_the_fields_it_is_filled_with() -> None:
    with pytest.raises(
        ValueError, match=r"own_pool=True needs params fields .*NoParams lacks workers, timeout_s, memory_mb"
    ):
        SignalSpec("x.y", "global", (0.0, 1.0), Zero, own_pool=True)


def _shared_keys(**signal: object) -> RewardsConfig:
    return _rewards("sharedkeys.zero", **signal)


@pytest.mark.parametrize(
    ("signal", "key"),
    [
        ({"workers": 2}, "workers"),  # a second pool around the plugin's own
        ({"workers": 2, "params": {"workers": 3}}, "workers"),
        ({"timeout_s": 3.0}, "timeout_s"),  # ignored without signal-level workers
        ({"memory_mb": 512, "params": {"memory_mb": 256}}, "memory_mb"),
    ],
)
def test_pool_keys_given_twice_name_both(signal: dict, key: str) -> None:
    """A plugin whose params name the pool keys without declaring own_pool."""
    manager = _manager("sharedkeys", "SharedKeysPlugin")
    with pytest.raises(ConfigError) as info:
        check_rewards(_shared_keys(**signal), "run.yaml", manager)
    message = str(info.value)
    assert message.startswith(f"run.yaml: rewards.signals[0].{key}: signal 'sharedkeys.zero'")
    assert f"Set rewards.signals[0].params.{key} instead and remove rewards.signals[0].{key}" in message


@pytest.mark.parametrize(
    "signal",
    [
        {},  # the defaults: nothing set twice
        {"params": {"workers": 4, "timeout_s": 2.0, "memory_mb": 256}},  # the plugin's own keys only
    ],
)
def test_pool_keys_once_are_fine(signal: dict) -> None:
    check_rewards(_shared_keys(**signal), "run.yaml", _manager("sharedkeys", "SharedKeysPlugin"))


def test_signal_level_limits_with_signal_level_workers_are_the_cores() -> None:
    """A plugin param that only shares the name (core.regex's regex time limit) does not clash when the
    core runs the signal in its own pool: there the signal-level timeout_s is the pool's deadline."""
    rewards = RewardsConfig(
        alpha=1.0,
        beta=0.25,
        signals=[
            {"name": "core.exact_answer"},
            {
                "name": "core.regex",
                "workers": 1,
                "timeout_s": 3.0,
                "params": {"pattern": "x", "timeout_s": 1.0},
            },
        ],
    )
    check_rewards(rewards, "run.yaml", PluginManager(entry_points=[]))


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"inner": {"ratio": float("inf")}}, r"params\.inner\.ratio: expected a finite number, got inf"),
        ({"inner": {"strict": "no"}}, r"params\.inner\.strict: expected true or false"),
        ({"timeout_s": True}, r"params\.timeout_s: expected a number, got the boolean true"),
        ({"workers": 2**64}, r"params\.workers: the number is too large"),
    ],
)
def test_plugin_params_get_the_run_files_scalar_rules(params: dict, message: str) -> None:
    """A plugin's own params model (no allow_inf_nan=False, lax bools) is held to the run file's rule."""
    with pytest.raises(ConfigError, match=message + r".* \(signal 'sharedkeys\.zero', plugin"):
        check_rewards(_shared_keys(params=params), "run.yaml", _manager("sharedkeys", "SharedKeysPlugin"))


def test_plugin_params_keep_their_own_types() -> None:
    params = {"inner": {"ratio": 2, "strict": True, "label": "anything"}, "workers": 3}
    check_rewards(_shared_keys(params=params), "run.yaml", _manager("sharedkeys", "SharedKeysPlugin"))
