"""``botgrpo score``: score prompt/completion pairs with a run file's mixture and show the credit assignment.

Reads a JSONL file (one object per line with ``prompt``, ``completion`` and the row's other fields),
tokenizes each completion, scores the batch with the run's :class:`~botgrpo_core.rewards.mixture.RewardMixture`,
computes the run's advantages (rows grouped by prompt, or ``--group-size`` consecutive rows) and
renders the result (:mod:`botgrpo_core.cli.records`): a coloured terminal view, ``--json`` for scripts,
``--html`` for a self-contained heatmap.

torch and transformers are imported inside the functions: ``botgrpo --help`` stays instant.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

    from botgrpo_core.config.models import RunConfig
    from botgrpo_core.rewards.mixture import MixtureOutput
    from botgrpo_core.signals import Sample

#: ``--tokenizer`` values that build a tokenizer in code instead of loading one.


class ScoreInputError(ValueError):
    """A problem with the ``--input`` file or the options; the message says where and how to fix it."""


@dataclass
class ScoreReport:
    """Everything ``botgrpo score`` shows, ready for the renderers in :mod:`botgrpo_core.cli.records`."""

    config: RunConfig
    samples: list[Sample]
    output: MixtureOutput
    advantages: torch.Tensor  # (B, T) float32
    group_ids: list[int]  # (B,) group of each row
    estimator: str
    tokenizer_name: str
    token_labels: list[
        list[str]
    ]  # per sample, per token: the tokenizer's piece (shown for empty-range tokens)
    notes: list[str]  # things the user should know (e.g. a tokenizer round trip changed a completion)


# --- input --------------------------------------------------------------------------------------------------------
def read_rows(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Read the JSONL input: one JSON object per non-blank line, each with string ``prompt`` and ``completion``.

    :raises ScoreInputError: naming the file and line for a missing file, bad JSON or a bad row.
    """
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ScoreInputError(
            f"{source}: input file not found; pass an existing JSONL file to --input"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ScoreInputError(
            f"{source}: cannot read the input file ({exc}); it must be UTF-8 JSONL"
        ) from None
    rows: list[dict[str, Any]] = []
    # split on "\n" only: str.splitlines() would also split inside strings holding U+2028 and the like
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ScoreInputError(
                f"{source}:{number}: not valid JSON ({exc.msg} at column {exc.colno}); each line must be one "
                'JSON object such as {"prompt": "...", "completion": "..."}'
            ) from None
        if not isinstance(row, dict):
            raise ScoreInputError(
                f"{source}:{number}: expected a JSON object with 'prompt' and 'completion', got {type(row).__name__}"
            )
        missing = [key for key in ("prompt", "completion") if key not in row]
        if missing:
            raise ScoreInputError(
                f"{source}:{number}: missing field(s) {', '.join(repr(k) for k in missing)}; every line needs "
                "'prompt' and 'completion' (other fields are passed to the signals as the dataset row)"
            )
        for key in ("prompt", "completion"):
            if not isinstance(row[key], str):
                raise ScoreInputError(
                    f"{source}:{number}: {key!r} must be a string, got {type(row[key]).__name__}"
                )
        rows.append(row)
    if not rows:
        raise ScoreInputError(f"{source}: no rows; add JSON lines with 'prompt' and 'completion'")
    return rows


def group_rows(prompts: Sequence[str], group_size: int | None) -> list[int]:
    """Group index of each row: rows with the same prompt (numbered by first appearance), or blocks of
    ``group_size`` consecutive rows."""
    if group_size is None:
        seen: dict[str, int] = {}
        return [seen.setdefault(p, len(seen)) for p in prompts]
    if group_size < 1:
        raise ScoreInputError(f"--group-size must be a positive integer, got {group_size}")
    if len(prompts) % group_size:
        raise ScoreInputError(
            f"--group-size {group_size} does not divide the {len(prompts)} rows; give a multiple of it, "
            "or leave --group-size out to group rows by prompt"
        )
    return [i // group_size for i in range(len(prompts))]


# --- tokenizer ------------------------------------------------------------------------------------------------
def load_tokenizer(name: str, texts: Sequence[str] = (), *, alphabet: str | None = None) -> Any:
    """The tokenizer ``--tokenizer`` names.

    - ``tiny``: the tiny model's character tokenizer (:func:`botgrpo_core.engine.tiny.char_tokenizer`) over
      ``alphabet`` (default: the arithmetic task's). Characters outside it are appended (in order of
      appearance in ``texts``), so any text round-trips and the alphabet's ids stay the tiny model's.
    - ``tiny-bpe``: the byte-level BPE built in code (:func:`botgrpo_core.engine.tiny.byte_level_bpe_tokenizer`).
    - a name of :data:`botgrpo_core.engine.named_models.NAMED_MODELS` or a ``.gguf`` path: that checkpoint's
      tokenizer (chat template kept), from the folder the first load caches.
    - anything else: a hub id or local folder for ``transformers.AutoTokenizer`` (offline: local files only).
    """
    from botgrpo_core.engine import tiny

    if name == "tiny":
        alphabet = alphabet or tiny.ARITHMETIC_CHARS
        extra = dict.fromkeys(ch for text in texts for ch in text if ch not in alphabet)
        return tiny.char_tokenizer(alphabet + "".join(extra))
    if name == "tiny-bpe":
        return tiny.byte_level_bpe_tokenizer()
    from transformers import AutoTokenizer

    from botgrpo_core.engine.named_models import is_gguf_source, materialize
    from botgrpo_core.engine.setup import TrainingSetupError

    if is_gguf_source(name):  # smollm2-135m-instruct or a .gguf file: its cached Hugging Face folder
        try:
            name = str(materialize(name, log=lambda msg: print(msg, file=sys.stderr)))
        except TrainingSetupError as exc:
            raise ScoreInputError(str(exc).replace("model.name_or_path", "the tokenizer")) from None
    try:
        return AutoTokenizer.from_pretrained(name, local_files_only=True)
    except Exception as exc:  # transformers raises OSError/ValueError/... depending on what is missing
        raise ScoreInputError(
            f"cannot load tokenizer {name!r} from local files ({type(exc).__name__}: {exc}). Pass a local "
            "folder or a hub id already in the cache to --tokenizer, or --tokenizer tiny for the built-in "
            "character tokenizer (nothing is downloaded at run time)."
        ) from None


def run_tokenizer(config: RunConfig) -> tuple[str, str | None]:
    """The tokenizer a run uses, as ``(name, tiny alphabet)``: ``model.tokenizer`` or ``model.name_or_path``;
    for the tiny model on a built-in task, the task's character alphabet (what training uses)."""
    name = getattr(config.model, "tokenizer", None) or config.model.name_or_path
    if name != "tiny" or config.data.source != "task":
        return name, None
    try:
        from botgrpo_core.tasks import get_task

        task = get_task(config.data.task or "", dict(getattr(config.data, "task_params", {}) or {}))
    except (ImportError, ValueError):  # no such task: the arithmetic alphabet
        return name, None
    chars = getattr(task, "chars", None)
    return name, str(chars) if chars else None


def _encode(tokenizer: Any, text: str) -> list[int]:
    return list(tokenizer.encode(text, add_special_tokens=False))


# --- advantages ---------------------------------------------------------------------------------------------------
def resolve_estimator(config: RunConfig) -> tuple[str, dict[str, Any]]:
    """The run's advantage estimator and its options: the preset's, overridden by ``algorithm``."""
    from botgrpo_core.config.presets import get_preset

    preset = get_preset(config.algorithm.preset)
    name = config.algorithm.estimator or preset.estimator
    # The preset's options belong to the preset's estimator; an overriding estimator starts from none.
    options = dict(preset.estimator_options) if name == preset.estimator else {}
    options.update(config.algorithm.estimator_options)
    return name, options


def compute_run_advantages(
    config: RunConfig, output: MixtureOutput, group_ids: Sequence[int]
) -> tuple[torch.Tensor, str]:
    """Advantages ``(B, T)`` of the mixture's token rewards with the run's estimator.

    Rollouts dropped by an ``on_error: nan`` policy (NaN token rewards) are left out of the group
    statistics and get advantage 0, as in training.
    """
    import torch

    from botgrpo_core.estimators.compute import compute_advantages, without_dropped_rollouts
    from botgrpo_core.estimators.registry import available_estimators

    name, options = resolve_estimator(config)
    if name not in available_estimators():
        from botgrpo_core.signals.manager import get_plugin_manager

        get_plugin_manager().register_estimators()  # a plugin may provide it
    groups = torch.tensor(list(group_ids), dtype=torch.long)
    rewards, mask, options = without_dropped_rollouts(name, output.token_rewards, output.mask, options)
    advantages = compute_advantages(name, rewards, mask, group_ids=groups, **options)
    return advantages, name


# --- the whole pipeline ---------------------------------------------------------------------------------------
def score_rows(
    config: RunConfig,
    rows: Sequence[dict[str, Any]],
    *,
    tokenizer: Any | str | None = None,
    group_size: int | None = None,
) -> ScoreReport:
    """Tokenize, score, mix and compute advantages for ``rows`` (each with ``prompt`` and ``completion``).

    :param tokenizer: a tokenizer object, a name for :func:`load_tokenizer`, or ``None`` for the run's
        (:func:`run_tokenizer`).
    :param group_size: rows per group (consecutive); ``None`` groups rows by prompt.
    """
    import torch

    from botgrpo_core.rewards.mixture import RewardMixture
    from botgrpo_core.rewards.samples import decode_samples
    from botgrpo_core.rewards.uncovered import centre_uncovered

    torch.set_num_threads(1)  # small tensors; more threads only contend (2-core machines)
    prompts = [r["prompt"] for r in rows]
    completions = [r["completion"] for r in rows]
    group_ids = group_rows(prompts, group_size)
    alphabet = None
    if tokenizer is None:
        tokenizer, alphabet = run_tokenizer(config)
    if isinstance(tokenizer, str):
        tokenizer_name = tokenizer
        tokenizer = load_tokenizer(tokenizer, completions, alphabet=alphabet)
    else:
        tokenizer_name = type(tokenizer).__name__
    ids = [_encode(tokenizer, text) for text in completions]
    extra = [{k: v for k, v in r.items() if k not in ("prompt", "completion")} for r in rows]
    samples = decode_samples(tokenizer, prompts, ids, extra)
    notes = [
        f"row {i}: the tokenizer does not round-trip this completion; signals score the decoded text"
        for i, (s, text) in enumerate(zip(samples, completions))
        if s.completion != text
    ]
    labels = [list(tokenizer.convert_ids_to_tokens(list(s.token_ids))) for s in samples]
    with RewardMixture(config.rewards) as mixture:
        output = mixture.score_batch(samples)
    groups = torch.tensor(list(group_ids), dtype=torch.long)  # uncovered: group_mean, as in training
    output = centre_uncovered(
        output, torch.unique(groups, return_inverse=True)[1], len(set(group_ids)), config.rewards.beta
    )
    advantages, estimator = compute_run_advantages(config, output, group_ids)
    return ScoreReport(
        config=config,
        samples=samples,
        output=output,
        advantages=advantages,
        group_ids=group_ids,
        estimator=estimator,
        tokenizer_name=str(tokenizer_name),
        token_labels=labels,
        notes=notes,
    )


def use_color(stream: Any, choice: str | None = None) -> bool:
    """Colour the terminal view? ``choice`` ``always``/``never`` decide; otherwise (``auto``) ``NO_COLOR``
    turns colour off, ``FORCE_COLOR`` on, and by default only a terminal gets colour."""
    if choice in ("always", "never"):
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return bool(getattr(stream, "isatty", lambda: False)())


def run_score(args: argparse.Namespace) -> int:
    """Entry point of ``botgrpo score`` (see ``botgrpo score --help``). Returns the exit status."""
    from botgrpo_core.cli.html_view import render_html
    from botgrpo_core.cli.records import render_json
    from botgrpo_core.cli.terminal_view import render_terminal
    from botgrpo_core.config.errors import ConfigError
    from botgrpo_core.config.loading import load_config
    from botgrpo_core.rewards.runner import SignalError
    from botgrpo_core.signals.manager import PluginError

    try:
        rows = read_rows(args.input)
    except ScoreInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            config = load_config(args.run_file, getattr(args, "set", None) or [])
        except ConfigError as exc:
            print(str(exc), file=sys.stderr)
            return 2
    for w in caught:
        print(f"warning: {w.message}", file=sys.stderr)
    try:
        report = score_rows(config, rows, tokenizer=args.tokenizer, group_size=args.group_size)
    except (ScoreInputError, ConfigError, PluginError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except SignalError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except (KeyError, ValueError) as exc:  # advantages: unknown estimator, bad estimator options
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"error: {message} (algorithm section of {args.run_file})", file=sys.stderr)
        return 2
    for note in report.notes:
        print(f"note: {note}", file=sys.stderr)
    if args.html:
        path = Path(args.html)
        try:
            path.write_text(render_html(report), encoding="utf-8")
        except OSError as exc:
            print(f"error: cannot write {path}: {exc.strerror}", file=sys.stderr)
            return 2
        print(f"wrote {path}", file=sys.stderr)
    text = (
        render_json(report) if args.json else render_terminal(report, color=use_color(sys.stdout, args.color))
    )
    try:
        print(text)
        sys.stdout.flush()
    except BrokenPipeError:  # `botgrpo score ... | head`: the reader left; not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0
