"""The task and command hooks: a plugin's task is a ``data.task``, a plugin's command a ``botgrpo`` sub-command.

The plugins here are real pluggy plugins registered in-process on a manager without installed entry points,
so the tests hold whether or not botgrpo-bench (the plugin that uses both hooks) is installed.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from botgrpo_core import hookimpl
from botgrpo_core.cli.main import _wants_plugin_commands, build_parser, main
from botgrpo_core.signals import manager as manager_module
from botgrpo_core.signals.manager import PluginError, PluginManager
from botgrpo_core.signals.testing import registered_plugin
from botgrpo_core.tasks import available_tasks, get_task


class CountParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    start: int = 0


class CountTask:
    """Say the next number: ``"3:"`` -> ``"4"``."""

    name = "count"

    def __init__(self, params: CountParams) -> None:
        self.params = params

    def eval_rows(self, n: int, seed: int = 0) -> list[dict[str, Any]]:
        return [
            {"prompt": f"{self.params.start + i}:", "answer": str(self.params.start + i + 1)}
            for i in range(n)
        ]

    def train_rows(
        self, n: int, seed: int = 0, exclude: Sequence[dict[str, Any]] = ()
    ) -> list[dict[str, Any]]:
        return self.eval_rows(n + len(exclude), seed)[len(exclude) :]

    def evaluate(self, rows: Sequence[dict[str, Any]], completions: Sequence[str]) -> dict[str, float]:
        hits = [self.success(r, c) for r, c in zip(rows, completions, strict=True)]
        return {"accuracy": sum(hits) / max(len(hits), 1)}

    def success(self, row: dict[str, Any], completion: str) -> bool:
        return completion.strip() == row["answer"]


class TaskPlugin:
    @hookimpl
    def botgrpo_register_tasks(self, register):
        register("count", CountTask, CountParams)


class ArithmeticAgainPlugin:
    @hookimpl
    def botgrpo_register_tasks(self, register):
        register("arithmetic", CountTask, CountParams)


class CommandPlugin:
    @hookimpl
    def botgrpo_register_commands(self, subparsers: argparse._SubParsersAction) -> None:
        p = subparsers.add_parser("hello", help="say hello")
        p.add_argument("--name", default="world")
        p.set_defaults(func=lambda args: print(f"hello {args.name}") or 0)


class TakenCommandPlugin:
    @hookimpl
    def botgrpo_register_commands(self, subparsers):
        subparsers.add_parser("train", help="a second train")


@pytest.fixture
def manager(monkeypatch: pytest.MonkeyPatch) -> PluginManager:
    """The process-wide manager (what get_task and the CLI use), with no installed entry points."""
    fresh = PluginManager(entry_points=[])
    monkeypatch.setattr(manager_module, "_default", fresh)
    return fresh


def test_task_hook_makes_a_plugin_task_a_data_task(manager: PluginManager) -> None:
    with pytest.raises(ValueError) as info:
        get_task("count")
    message = str(info.value)
    assert "data.task: unknown task 'count'" in message
    assert "available tasks: arithmetic (botgrpo-core)" in message and "botgrpo-bench" in message
    with registered_plugin(TaskPlugin(), name="counting", manager=manager, distribution="botgrpo-counting"):
        task = get_task("count", {"start": 3})
        assert isinstance(task, CountTask)
        assert task.eval_rows(2) == [{"prompt": "3:", "answer": "4"}, {"prompt": "4:", "answer": "5"}]
        assert task.evaluate(task.eval_rows(2), ["4", "7"]) == {"accuracy": 0.5}
        with pytest.raises(ValueError, match="data.task_params for task 'count' are invalid"):
            get_task("count", {"stat": 1})
        assert available_tasks() == {"arithmetic": "botgrpo-core", "count": "botgrpo-counting"}
        assert get_task("arithmetic").__class__.__name__ == "ArithmeticTask"  # built-ins need no plugin


def test_a_task_name_has_one_home(manager: PluginManager) -> None:
    clash = "task 'arithmetic' is registered by both botgrpo-core and plugin 'again'"
    with (
        registered_plugin(ArithmeticAgainPlugin(), name="again", manager=manager),
        pytest.raises(PluginError, match=clash),
    ):
        get_task("count")  # a name that is not built in asks the plugins, which finds the clash

    class OtherCount(CountTask):
        pass

    class OtherPlugin:
        @hookimpl
        def botgrpo_register_tasks(self, register):
            register("count", OtherCount, CountParams)

    with (
        registered_plugin(TaskPlugin(), name="one", manager=manager),
        registered_plugin(OtherPlugin(), name="two", manager=manager),
        pytest.raises(PluginError, match="task 'count' is registered by both plugin '(one|two)' and plugin"),
    ):
        available_tasks()


def test_command_hook_adds_a_subcommand(manager: PluginManager, capsys: pytest.CaptureFixture[str]) -> None:
    with registered_plugin(CommandPlugin(), name="greeter", manager=manager):
        assert main(["hello", "--name", "bench"]) == 0
        assert capsys.readouterr().out == "hello bench\n"
        assert "hello" in build_parser().format_help()
        assert "hello" not in build_parser(plugin_commands=False).format_help()
    # the core's own commands never ask the plugins (no plugin import); help and other names do
    assert not _wants_plugin_commands(["train", "run.yaml", "--set", "x=1"])
    assert not _wants_plugin_commands(["--version", "plugins"])
    assert (
        _wants_plugin_commands(["--help"])
        and _wants_plugin_commands([])
        and _wants_plugin_commands(["hello"])
    )


def test_a_taken_command_name_is_reported_and_skipped(
    manager: PluginManager, capsys: pytest.CaptureFixture[str]
) -> None:
    with registered_plugin(TakenCommandPlugin(), name="taker", manager=manager, distribution="botgrpo-taker"):
        parser = build_parser()
        err = capsys.readouterr().err
        assert "warning: plugin 'taker' (botgrpo-taker)" in err and "train" in err
        args = parser.parse_args(["train", "run.yaml"])
        assert args.func.__name__ == "_cmd_train"  # still the core's train


def test_plugins_command_lists_the_task_and_command_hooks(
    manager: PluginManager, capsys: pytest.CaptureFixture[str]
) -> None:
    with (
        registered_plugin(TaskPlugin(), name="counting", manager=manager),
        registered_plugin(CommandPlugin(), name="greeter", manager=manager),
    ):
        assert main(["plugins", "--json"]) == 0
        listed = {p["name"]: p for p in json.loads(capsys.readouterr().out)["plugins"]}
        assert main(["plugins"]) == 0
        text = capsys.readouterr().out
    assert listed["counting"]["hooks"] == ["botgrpo_register_tasks"] and listed["counting"]["tasks"] == [
        "count"
    ]
    assert listed["greeter"]["hooks"] == ["botgrpo_register_commands"] and listed["greeter"]["tasks"] == []
    assert listed["core"]["tasks"] == []  # built-in tasks are not a plugin's
    assert "hooks: botgrpo_register_tasks" in text and "(data.task: count)" in text
