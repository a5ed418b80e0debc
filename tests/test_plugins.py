"""Plugin manager: lazy entry points, allowlist, load failures, duplicates, unknown-signal messages."""

from __future__ import annotations

from importlib.metadata import EntryPoint

import pytest
from signal_fixtures import DuplicatePlugin, TestPlugin

from botgrpo_core.signals.manager import (
    DuplicateSignalError,
    PluginLoadError,
    PluginManager,
    UnknownSignalError,
)


def _eps(*pairs: tuple[str, str]) -> list[EntryPoint]:
    return [EntryPoint(name=name, value=value, group="botgrpo") for name, value in pairs]


def test_builtin_signals_are_always_there() -> None:
    manager = PluginManager(entry_points=[])
    assert {"core.regex", "core.exact_answer", "core.length"} <= set(manager.signals())
    core = manager.get_signal("core.regex")
    assert core.distribution == "botgrpo-core"
    info = {p.name: p for p in manager.plugins()}["core"]
    assert info.hooks == ("botgrpo_register_signals",)


def test_entry_points_load_lazily_by_namespace() -> None:
    manager = PluginManager(
        entry_points=_eps(("test", "signal_fixtures:TestPlugin"), ("broken", "broken_plugin"))
    )
    assert "test.word" not in manager.signals()  # nothing imported yet
    assert manager.get_signal("test.word").spec.kind == "local"
    assert manager.failures == {}  # the broken plugin was never imported: the config did not need it


def test_import_failure_is_reported_and_fatal_only_when_needed() -> None:
    manager = PluginManager(
        entry_points=_eps(("test", "signal_fixtures:TestPlugin"), ("broken", "broken_plugin"))
    )
    manager.load_all()
    (failure,) = manager.failures.values()
    assert failure.entry_point == "broken"
    assert "broken on purpose" in failure.error and "Traceback" in failure.traceback
    assert manager.get_signal("test.dot")  # other plugins still work
    with pytest.raises(PluginLoadError, match=r"plugin 'broken'.*failed to load.*broken on purpose"):
        manager.get_signal("broken.anything")


def test_allowlist(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BOTGRPO_LOAD_PLUGINS", "other")
    manager = PluginManager(entry_points=_eps(("test", "signal_fixtures:TestPlugin")))
    assert manager.installed() == [("test", "test", "unknown", False)]
    with pytest.raises(UnknownSignalError, match="not in BOTGRPO_LOAD_PLUGINS"):
        manager.get_signal("test.word")
    monkeypatch.setenv("BOTGRPO_LOAD_PLUGINS", "")  # empty: no plugin loads, the built-ins still work
    manager = PluginManager(entry_points=_eps(("test", "signal_fixtures:TestPlugin")))
    manager.load_all()
    assert "test.word" not in manager.signals() and "core.regex" in manager.signals()


def test_duplicate_names_both_distributions() -> None:
    manager = PluginManager(entry_points=[])
    manager.register(TestPlugin(), name="first", distribution="dist-one")
    with pytest.raises(DuplicateSignalError, match=r"'test.dot'.*'dist-one'.*'dist-two'"):
        manager.register(DuplicatePlugin(), name="second", distribution="dist-two")
    assert "second" not in {p.name for p in manager.plugins()}  # rejected whole


def test_unknown_signal_suggests_nearest() -> None:
    manager = PluginManager(entry_points=[])
    with pytest.raises(UnknownSignalError, match=r"Did you mean 'core.regex'\?.*core.exact_answer"):
        manager.get_signal("core.regexp")


def test_register_and_unregister_in_process() -> None:
    manager = PluginManager(entry_points=[])
    manager.register(TestPlugin(), name="t")
    assert "test.word" in manager.signals()
    manager.unregister("t")
    assert "test.word" not in manager.signals()
