"""Hook specifications for botgrpo plugins (pluggy project name ``botgrpo``).

A plugin is a module (or object) with functions marked ``@botgrpo_core.hookimpl``, published under the
entry-point group ``botgrpo``. The entry-point *name* is the plugin's signal namespace: a plugin that
registers ``jsx.compiles`` is published as ``jsx = "botgrpo_jsx.plugin"``, so the core imports it only
when a config uses a ``jsx.*`` signal. Hooks are called with keyword arguments; never rely on the
order in which plugins are called.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:  # keep plugin imports free of torch
    import argparse

    from pydantic import BaseModel

    from botgrpo_core.estimators.registry import EstimatorFn
    from botgrpo_core.signals import SignalSpec

PROJECT_NAME = "botgrpo"
ENTRY_POINT_GROUP = "botgrpo"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


class TokenRewardSpec:
    """The hooks a botgrpo plugin can implement."""

    @hookspec
    def botgrpo_register_signals(self, register: Callable[[SignalSpec], None]) -> None:
        """Register reward signals.

        Call ``register`` once per :class:`~botgrpo_core.signals.SignalSpec`. Registration must be
        cheap: import heavy libraries inside ``make_scorer``, not at module level.

        :param register: callback taking one ``SignalSpec``. A name already registered by another
            distribution raises ``DuplicateSignalError`` naming both distributions.
        :returns: nothing; results are collected through ``register``.

        Shapes: a global signal's scorer returns one float (or a ``Value`` with ``meta``) per sample
        ``(B,)``; a local one returns, per sample, a list of ``Span`` in completion characters or
        ``TokenValues`` of length ``T_i``.

        .. versionadded:: 0.1
        .. versionchanged:: 0.1 a global result may be ``Value(value, meta)`` (e.g. a PNG ``botgrpo score`` shows)
        """

    @hookspec
    def botgrpo_register_estimators(self, register: Callable[[str, EstimatorFn], None]) -> None:
        """Register advantage estimators usable as ``algorithm.estimator`` in a run file.

        :param register: callback ``register(name, fn)``; ``fn(token_rewards, mask, group_index,
            num_groups, **options)`` takes token rewards ``(B, T)`` float, completion mask ``(B, T)``
            bool, ``group_index`` ``(B,)`` long in ``[0, num_groups)`` and returns ``(B, T)``
            advantages, 0 on padding. A name that is already registered raises ``ValueError``.
        :returns: nothing; results are collected through ``register``.

        .. versionadded:: 0.1
        """

    @hookspec
    def botgrpo_register_tasks(self, register: Callable[[str, type, type[BaseModel]], None]) -> None:
        """Register task generators usable as ``data.task`` in a run file (with ``data.source: task``).

        :param register: callback ``register(name, task_class, params_model)``. ``task_class(params)``
            builds the task from the validated ``data.task_params`` (an instance of ``params_model``, a
            pydantic model; use ``extra="forbid"``). The task has a ``name`` and gives rows with
            ``train_rows(n, seed, exclude)`` and ``eval_rows(n, seed)``, held-out metrics with
            ``evaluate(rows, completions)``, per-rollout ``success(row, completion)``, and for a
            supervised warm start ``demonstrations(rows, seed)`` and ``chars`` (the tiny tokenizer's
            alphabet); see ``botgrpo_core.tasks.arithmetic``. A name that is built in or registered by
            another plugin raises ``PluginError`` naming both.
        :returns: nothing; results are collected through ``register``.

        .. versionadded:: 0.1
        """

    @hookspec
    def botgrpo_register_commands(self, subparsers: argparse._SubParsersAction) -> None:
        """Add sub-commands to the ``botgrpo`` command line.

        Called while the CLI builds its parser, before it parses: for ``botgrpo --help`` and for a
        command that is not built in. Add a parser with ``subparsers.add_parser(name, help=...)`` and
        ``set_defaults(func=...)``; ``func(args)`` returns the exit code. Import heavy libraries inside
        ``func``, never here: ``botgrpo --help`` must stay instant.

        :param subparsers: the ``argparse`` sub-parsers of the ``botgrpo`` parser. A name that is
            already taken is reported on stderr with the plugin's name, and the command is skipped.
        :returns: nothing; commands are added to ``subparsers``.

        .. versionadded:: 0.1
        """
