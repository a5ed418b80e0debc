"""The ``botgrpo`` command line.

Start-up must stay instant: this module imports only the standard library at top level; each
command imports what it needs (``plugins`` and ``validate`` never import torch).
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections.abc import Sequence


def _cmd_plugins(args: argparse.Namespace) -> int:
    from botgrpo_core.signals.manager import PluginError, get_plugin_manager
    from botgrpo_core.tasks import plugin_tasks

    manager = get_plugin_manager()
    manager.load_all()
    registered = manager.signals()
    try:
        tasks = plugin_tasks()
    except PluginError as exc:  # two plugins claim one task name: list the rest, say which
        print(f"warning: {exc}", file=sys.stderr)
        tasks = {}
    plugins = []
    for info in manager.plugins():
        signals = []
        for name in info.signals:
            spec = registered[name].spec
            bounds = spec.bounds if not callable(spec.bounds) else "depends on params"
            signals.append(
                {"name": name, "kind": spec.kind, "bounds": bounds, "description": spec.description}
            )
        plugins.append(
            {
                "name": info.name,
                "distribution": info.distribution,
                "version": info.version,
                "hooks": list(info.hooks),
                "signals": signals,
                "tasks": sorted(n for n, t in tasks.items() if t.plugin == info.name),
            }
        )
    errors = [
        {
            "entry_point": f.entry_point,
            "distribution": f.distribution,
            "version": f.version,
            "error": f.error,
            "traceback": f.traceback,
        }
        for f in manager.failures.values()
    ]
    not_allowed = [
        {"entry_point": n, "distribution": d, "version": v} for n, d, v, ok in manager.installed() if not ok
    ]
    if args.json:
        print(
            json.dumps(
                {"plugins": plugins, "load_errors": errors, "not_allowed": not_allowed},
                indent=2,
                default=list,
            )
        )
        return 0
    _print_plugins(plugins, errors, not_allowed)
    return 0


def _print_plugins(plugins: list[dict], errors: list[dict], not_allowed: list[dict]) -> None:
    """``botgrpo plugins`` as text: each plugin with its hooks, signals and tasks; then load errors."""
    for p in plugins:
        print(f"{p['name']}  ({p['distribution']} {p['version']})  hooks: {', '.join(p['hooks'])}")
        for s in p["signals"]:
            bounds = (
                s["bounds"] if isinstance(s["bounds"], str) else f"[{s['bounds'][0]:g}, {s['bounds'][1]:g}]"
            )
            print(f"    {s['name']:<24} {s['kind']:<7} {bounds:<18} {s['description']}")
        for t in p["tasks"]:
            print(f"    {t:<24} task    (data.task: {t})")
    for e in errors:
        print(
            f"LOAD ERROR  {e['entry_point']}  ({e['distribution']} {e['version']}): {e['error']}",
            file=sys.stderr,
        )
    for n in not_allowed:
        print(
            f"not loaded  {n['entry_point']}  ({n['distribution']} {n['version']}): not in BOTGRPO_LOAD_PLUGINS"
        )


def _cmd_validate(args: argparse.Namespace) -> int:
    from botgrpo_core.config.errors import ConfigError
    from botgrpo_core.config.loading import load_config

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            config = load_config(args.run_file, args.set or [])
        except ConfigError as exc:
            print(str(exc), file=sys.stderr)
            return 2
    for w in caught:
        print(f"warning: {w.message}", file=sys.stderr)
    from botgrpo_core.cli.launch_checks import batch_split, data_problems, engine_problems, package_problems

    # two answers: what the file gets wrong (exit 2), and what this machine lacks to run it (exit 3)
    split, split_problem = batch_split(config)
    problems = [*engine_problems(config), *([split_problem] if split_problem else [])]
    lacks = [*data_problems(config), *package_problems(config)]
    if problems:
        print("\n".join(f"{args.run_file}: {p}" for p in problems), file=sys.stderr)
    if lacks:
        print("\n".join(f"{args.run_file}: this machine: {p}" for p in lacks), file=sys.stderr)
    if problems:
        return 2
    signals = ", ".join(f"{s.name} x{s.weight:g}" for s in config.rewards.signals)
    summary = (
        f"(preset {config.algorithm.preset}; alpha {config.rewards.alpha:g}, beta {config.rewards.beta:g}; "
        f"signals: {signals}; batch: {split})"
    )
    if lacks:
        print(f"{args.run_file}: file OK {summary}; this machine cannot run it as it is (above; exit 3)")
        return 3
    print(f"{args.run_file}: OK  {summary}")
    return 0


def _cmd_score(args: argparse.Namespace) -> int:
    from botgrpo_core.cli.score import run_score

    return run_score(args)


def _cmd_probe(args: argparse.Namespace) -> int:
    from botgrpo_core.cli.probe import run_probe

    return run_probe(args)


def _cmd_sample(args: argparse.Namespace) -> int:
    from botgrpo_core.cli.sample import run_sample

    return run_sample(args)


def _cmd_train(args: argparse.Namespace) -> int:
    from botgrpo_core.config.errors import ConfigError
    from botgrpo_core.config.loading import load_config

    try:
        config = load_config(args.run_file, args.set or [])
    except ConfigError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    from botgrpo_core.engine.interrupt import RunInterrupted
    from botgrpo_core.engine.run import run_training
    from botgrpo_core.engine.setup import TrainingSetupError
    from botgrpo_core.rewards.runner import SignalError

    try:
        run_training(config, overrides=args.set or [], resume=args.resume, overwrite=args.overwrite)
    except (TrainingSetupError, ConfigError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except SignalError as exc:  # a signal that cannot score (its message names it and the fix): no traceback
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except RunInterrupted as exc:  # one line, no traceback: what was saved and the command that continues
        import os
        import shlex

        again = ["botgrpo", "train", args.run_file, *(f"--set={s}" for s in args.set or [])]
        again.append("--resume" if exc.checkpoint else "--overwrite")
        if os.environ.get("RANK", "0") == "0":  # once, not from every process of a launch
            print(f"botgrpo: {exc}: {shlex.join(again)}", file=sys.stderr)
        return exc.exit_code
    return 0


def _wants_plugin_commands(argv: Sequence[str]) -> bool:
    """Whether parsing ``argv`` needs the plugins' commands: not for a core command (no plugin import)."""
    command = next((a for a in argv if not a.startswith("-")), None)
    return command not in CORE_COMMANDS


def build_parser(*, plugin_commands: bool = True) -> argparse.ArgumentParser:
    """The ``botgrpo`` parser; with ``plugin_commands``, plus what plugins add (``botgrpo_register_commands``)."""
    parser = argparse.ArgumentParser(
        prog="botgrpo",
        description="BoT-GRPO: RL for reasoning LLMs with token-level rewards (bag-of-tokens advantages).",
    )
    from botgrpo_core import __version__

    parser.add_argument("--version", action="version", version=f"botgrpo {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for add in _CORE_PARSERS.values():
        add(sub)
    if plugin_commands:
        for problem in add_plugin_commands(sub):
            print(f"warning: {problem}", file=sys.stderr)
    return parser


def _add_plugins(sub: argparse._SubParsersAction) -> None:
    """``botgrpo plugins``'s arguments."""
    p = sub.add_parser("plugins", help="list installed plugins, their signals and load errors")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=_cmd_plugins)


def _add_validate(sub: argparse._SubParsersAction) -> None:
    """``botgrpo validate``'s arguments."""
    p = sub.add_parser(
        "validate",
        help="check a run file without loading models (signal files named by rewards.signals[i].path are "
        "imported: their code runs)",
        description="Check a run file, then what this machine needs to run it (its data files, the packages "
        "its settings need). Exit 0: ready to run here; 2: the file is wrong; 3: the file is OK but this "
        "machine lacks something it needs (a GPU recipe checked on a laptop without vLLM, say).",
    )
    p.add_argument("run_file", help="the run YAML")
    p.add_argument(
        "--set", action="append", metavar="KEY=VALUE", help="override a key, e.g. training.steps=10"
    )
    p.set_defaults(func=_cmd_validate)


def _add_score(sub: argparse._SubParsersAction) -> None:
    """``botgrpo score``'s arguments."""
    p = sub.add_parser(
        "score", help="score completions with a run file's mixture; show token rewards and advantages"
    )
    p.add_argument("run_file", help="the run YAML (its rewards and algorithm sections are used)")
    p.add_argument(
        "--input",
        required=True,
        help="JSONL: prompt (text or chat messages), completion (text or one assistant message), optional "
        "truncated (true: the length cap cut it) and the row's other fields; streamed in chunks of whole groups",
    )
    p.add_argument(
        "--tokenizer", default=None, help="hub id, local path, or 'tiny' (default: the run's model)"
    )
    p.add_argument("--html", metavar="OUT.html", help="write a self-contained HTML heatmap")
    p.add_argument(
        "--json", action="store_true", help="print per-sample tokens, signal values, rewards, advantages"
    )
    p.add_argument(
        "--group-size", type=int, default=None, help="rollouts per prompt (default: group by prompt)"
    )
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a key of the run file")
    p.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour the terminal view (auto: a terminal, unless NO_COLOR; FORCE_COLOR forces it)",
    )
    p.set_defaults(func=_cmd_score)


def _add_probe(sub: argparse._SubParsersAction) -> None:
    """``botgrpo probe``'s arguments."""
    p = sub.add_parser(
        "probe",
        help="can the policy game this run's reward? score gamed variants of honest rows beside them",
        description="Score each honest completion in one group with gamed variants of it (empty, cut short, "
        "run to the length cap, a scored span repeated, every line twice, the bare answer, a task's own), "
        "with the run's mixture, estimator and loss aggregation, and count the rows where a variant out-ranks "
        "the honest completion. Exit 0: passed; 1: some variant out-ranks more than --threshold of the rows; "
        "2: bad input. docs/gaming.md says what to do about each variant.",
    )
    p.add_argument("run_file", help="the run YAML (its rewards, algorithm and training.max_new_tokens)")
    p.add_argument(
        "--input",
        default=None,
        help="JSONL of honest rows: prompt, completion, optional truncated and the row's fields (default: "
        "the run task's reference completions, where it ships them)",
    )
    p.add_argument("--rows", type=int, default=0, help="probe only the first N rows (0: all)")
    p.add_argument(
        "--threshold",
        type=float,
        default=0.10,
        help="largest share of rows a variant may out-rank before the probe fails (default 0.10)",
    )
    p.add_argument(
        "--tokenizer", default=None, help="hub id, local path, or 'tiny' (default: the run's model)"
    )
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--output", default=None, help="also write the JSON result to this file")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a key of the run file")
    p.set_defaults(func=_cmd_probe)


def _add_sample(sub: argparse._SubParsersAction) -> None:
    """``botgrpo sample``'s arguments."""
    p = sub.add_parser(
        "sample",
        help="sample the run's model on the run's prompts; write JSONL rows that score --input reads",
    )
    p.add_argument("run_file", help="the run YAML (its model, data and training sampling settings are used)")
    p.add_argument("--output", required=True, metavar="OUT.jsonl", help="where the rows go")
    p.add_argument(
        "--split", choices=("train", "eval"), default="train", help="the data's training or held-out rows"
    )
    p.add_argument("--limit", type=int, default=0, help="the first N prompts only (0: all)")
    p.add_argument("--samples", type=int, default=1, help="completions per prompt")
    p.add_argument("--seed", type=int, default=None, help="sampling seed (default: training.seed)")
    p.add_argument("--greedy", action="store_true", help="the most likely token each step (no sampling)")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a key of the run file")
    p.set_defaults(func=_cmd_sample)


def _add_train(sub: argparse._SubParsersAction) -> None:
    """``botgrpo train``'s arguments."""
    p = sub.add_parser("train", help="train a policy from a run file")
    p.add_argument("run_file", help="the run YAML")
    p.add_argument(
        "--set", action="append", metavar="KEY=VALUE", help="override a key, e.g. training.steps=10"
    )
    p.add_argument(
        "--resume", action="store_true", help="continue from the last complete checkpoint in the output dir"
    )
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an earlier run in the output dir (without it, such a run is never deleted)",
    )
    p.set_defaults(func=_cmd_train)


#: the commands the core defines, with their parsers; any other name (and ``--help``) asks the plugins
_CORE_PARSERS = {
    "plugins": _add_plugins,
    "validate": _add_validate,
    "score": _add_score,
    "probe": _add_probe,
    "sample": _add_sample,
    "train": _add_train,
}
CORE_COMMANDS = tuple(_CORE_PARSERS)


def add_plugin_commands(subparsers: argparse._SubParsersAction) -> list[str]:
    """Let every allowed plugin add sub-commands (``botgrpo_register_commands``); returns the problems.

    A plugin whose hook fails (a name already taken, a bug) is skipped with a message naming it, and
    the other commands still work.
    """
    from botgrpo_core.signals.manager import get_plugin_manager

    problems = []
    for plugin, distribution, caller in get_plugin_manager().each_plugin("botgrpo_register_commands"):
        before = dict(subparsers.choices)
        try:
            caller(subparsers=subparsers)
        except Exception as exc:  # argparse.ArgumentError for a taken name, or the plugin's own bug
            problems.append(
                f"plugin {plugin!r} ({distribution}) could not add its commands: {type(exc).__name__}: {exc}"
            )
        replaced = sorted(n for n, p in before.items() if subparsers.choices.get(n) is not p)
        if replaced:  # Python < 3.11 lets add_parser replace a command silently: put it back
            subparsers.choices.update({n: before[n] for n in replaced})
            problems.append(
                f"plugin {plugin!r} ({distribution}) tried to replace {', '.join(replaced)}; rename its command"
            )
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(plugin_commands=_wants_plugin_commands(argv))
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    from botgrpo_core.cli.extras import check_command, extra_module, install_hint

    hint = check_command(args.command)
    if hint:  # the [trl] extra is not installed: say which, not a ModuleNotFoundError traceback
        print(hint, file=sys.stderr)
        return 2
    try:
        return int(args.func(args) or 0)
    except ModuleNotFoundError as exc:
        module = extra_module(exc)
        if module is None:
            raise
        print(install_hint(args.command, [module]), file=sys.stderr)
        return 2
    except BrokenPipeError:  # `botgrpo plugins | head`: the reader left, which is not an error
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
