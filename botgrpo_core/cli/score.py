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
import contextlib
import json
import os
import sys
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

    from botgrpo_core.config.models import RunConfig
    from botgrpo_core.rewards.mixture import MixtureOutput
    from botgrpo_core.signals import Sample

from botgrpo_core.cli.score_input import (
    CHUNK_ROWS,
    ScoreInputError,
    chunks,
    plan_input,
    read_chunk,
    read_rows,
)

__all__ = ["ScoreInputError", "ScoreReport", "read_rows", "run_score", "score_rows"]


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
    row_indices: list[int] | None = None  # (B,) each sample's row in the input (default: 0..B-1)


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

    cached = False
    if is_gguf_source(name):  # smollm2-135m-instruct or a .gguf file: its cached Hugging Face folder
        try:
            name, cached = str(materialize(name, log=lambda msg: print(msg, file=sys.stderr))), True
        except TrainingSetupError as exc:
            raise ScoreInputError(str(exc).replace("model.name_or_path", "the tokenizer")) from None
    else:
        from botgrpo_core.engine.model import ADAPTER_CONFIG, adapter_source

        path = Path(name).expanduser()
        if (path / ADAPTER_CONFIG).is_file() and not (path / "tokenizer_config.json").is_file():
            try:  # a LoRA adapter saved without its tokenizer: the base's
                adapter = adapter_source(name, log=lambda msg: print(msg, file=sys.stderr))
            except TrainingSetupError as exc:
                raise ScoreInputError(str(exc).replace("model.name_or_path", "the tokenizer")) from None
            name = adapter.base if adapter else name
    try:
        return AutoTokenizer.from_pretrained(name, local_files_only=True)
    except Exception as exc:  # transformers raises OSError/ValueError/... depending on what is missing
        if cached:
            raise ScoreInputError(
                f"the tokenizer of the cached model folder {name} does not load ({type(exc).__name__}: "
                f"{str(exc).strip()[:200]}): the cache is damaged. Delete it (rm -r {name}); the next run builds it "
                "again from the checkpoint (about a minute)"
            ) from None
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
def _group_ids(rows: Sequence[dict[str, Any]], group_size: int | None) -> list[int]:
    """Group of each row: by prompt (numbered by first appearance), or blocks of ``group_size`` rows."""
    if group_size is None:
        seen: dict[str, int] = {}
        keys = [json.dumps(r["prompt"], ensure_ascii=False, sort_keys=True) for r in rows]
        return [seen.setdefault(k, len(seen)) for k in keys]
    if group_size < 1 or len(rows) % group_size:
        raise ScoreInputError(
            f"--group-size {group_size} must be a positive divisor of the {len(rows)} rows; leave it out to "
            "group rows by prompt"
        )
    return [i // group_size for i in range(len(rows))]


def score_rows(
    config: RunConfig,
    rows: Sequence[dict[str, Any]],
    *,
    tokenizer: Any | str | None = None,
    group_size: int | None = None,
    group_ids: Sequence[int] | None = None,
    row_indices: Sequence[int] | None = None,
    mixture: Any = None,
    token_ids: Sequence[Sequence[int]] | None = None,
) -> ScoreReport:
    """Tokenize, score, mix and compute advantages for ``rows``: plain ``{"prompt", "completion", ...}``
    dicts or :func:`~botgrpo_core.cli.score_input.check_row`'s form (chat prompts, ``truncated``).

    :param tokenizer: a tokenizer object, a name for :func:`load_tokenizer`, or ``None`` for the run's
        (:func:`run_tokenizer`).
    :param group_size: rows per group (consecutive); ``None`` groups rows by prompt.
    :param group_ids: the group of each row (overrides ``group_size``; ``botgrpo score``'s chunks).
    :param row_indices: each row's index in the input, shown in the output.
    :param mixture: an open :class:`~botgrpo_core.rewards.mixture.RewardMixture` to score with (kept open
        across chunks); default: one for this call.
    :param token_ids: each completion's token ids, used instead of the tokenizer's encoding of its text (e.g.
        ending with the end-of-sequence token a finished rollout carries, ``botgrpo probe``).
    """
    import torch

    from botgrpo_core.cli.score_input import check_row
    from botgrpo_core.rewards.mixture import RewardMixture
    from botgrpo_core.rewards.samples import decode_samples
    from botgrpo_core.rewards.uncovered import centre_uncovered

    torch.set_num_threads(1)  # small tensors; more threads only contend (2-core machines)
    rows = [r if "prompt_text" in r else check_row(r, f"row {i}") for i, r in enumerate(rows)]
    completions = [r["completion"] for r in rows]
    group_ids = list(group_ids) if group_ids is not None else _group_ids(rows, group_size)
    alphabet = None
    if tokenizer is None:
        tokenizer, alphabet = run_tokenizer(config)
    if isinstance(tokenizer, str):
        tokenizer_name = tokenizer
        tokenizer = load_tokenizer(tokenizer, completions, alphabet=alphabet)
    else:
        tokenizer_name = getattr(tokenizer, "botgrpo_name", type(tokenizer).__name__)
    ids = (
        [list(t) for t in token_ids]
        if token_ids is not None
        else [_encode(tokenizer, t) for t in completions]
    )
    prompts = [r["prompt_text"] for r in rows]
    cut = [r["truncated"] for r in rows]
    samples = decode_samples(tokenizer, prompts, ids, [r["extra"] for r in rows], truncated=cut)
    indices = list(row_indices) if row_indices is not None else list(range(len(rows)))
    notes = [
        f"row {indices[i]}: the tokenizer does not round-trip this completion; signals score the decoded text"
        for i, (s, text) in enumerate(zip(samples, completions))
        if s.completion != text
    ]
    labels = [list(tokenizer.convert_ids_to_tokens(list(s.token_ids))) for s in samples]
    if mixture is None:
        with RewardMixture(config.rewards) as own:
            output = own.score_batch(samples)
    else:
        output = mixture.score_batch(samples)
    groups = torch.tensor(list(group_ids), dtype=torch.long)  # uncovered: group_mean, as in training
    local = torch.unique(groups, return_inverse=True)[1]
    output = centre_uncovered(output, local, len(set(group_ids)), config.rewards.beta)
    advantages, estimator = compute_run_advantages(config, output, local.tolist())
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
        row_indices=indices,
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


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[Any]:
    """While scoring, file descriptor 1 (and ``sys.stdout``) is stderr, so nothing signal code prints, in
    this process, its children or its pool workers, lands in ``--json``'s output; yields a text stream on
    the real stdout for the output itself."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        real = sys.stdout.fileno() == 1
    except (AttributeError, OSError, ValueError):  # a captured stream (tests, an embedding program)
        real = False
    out = os.fdopen(saved, "w", encoding="utf-8", closefd=False) if real else sys.stdout
    os.dup2(2, 1)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield out
    finally:
        with contextlib.suppress(OSError, ValueError):
            out.flush()
        os.dup2(saved, 1)
        os.close(saved)


def _score_stream(args: argparse.Namespace, config: RunConfig, plan: Any, out: Any) -> list[str]:
    """Score the input chunk by chunk, writing each chunk's output as it is ready (memory flat in the number
    of rows); returns the notes for stderr."""
    from botgrpo_core.cli.html_view import HtmlPage
    from botgrpo_core.cli.records import SummaryTotals, json_end, json_samples
    from botgrpo_core.cli.terminal_view import terminal_footer, terminal_header, terminal_samples
    from botgrpo_core.rewards.mixture import RewardMixture

    name, alphabet = (args.tokenizer, None) if args.tokenizer else run_tokenizer(config)
    tokenizer = load_tokenizer(name, ["".join(plan.chars)], alphabet=alphabet)
    tokenizer.botgrpo_name = name
    color = use_color(out, args.color)
    totals, page = SummaryTotals(), HtmlPage() if args.html else None
    with RewardMixture(config.rewards) as mixture:
        for k, indices in enumerate(chunks(plan, CHUNK_ROWS)):
            rows = read_chunk(plan, indices)
            report = score_rows(
                config,
                rows,
                tokenizer=tokenizer,
                group_ids=[plan.groups[i] for i in indices],
                row_indices=indices,
                mixture=mixture,
            )
            totals.add(report)
            if page is not None:
                page.add(report)
            if args.json:
                out.write(json_samples(report, first=k == 0))
            else:
                if k == 0:
                    out.write(
                        terminal_header(
                            {**totals.result(), "rows": plan.rows, "groups": plan.n_groups}, color
                        )
                    )
                out.write("\n" + terminal_samples(report, color))
            out.flush()
    info = totals.result()
    out.write((json_end(info) if args.json else "\n" + terminal_footer(info, color)) + "\n")
    notes = list(info["notes"])
    if page is not None:
        path = Path(args.html)
        try:
            path.write_text(page.render(info), encoding="utf-8")
        except OSError as exc:
            raise ScoreInputError(f"cannot write {path}: {exc.strerror}") from None
        notes += [*page.notes, f"wrote {path}"]
    return notes


def run_score(args: argparse.Namespace) -> int:
    """Entry point of ``botgrpo score`` (see ``botgrpo score --help``). Returns the exit status."""
    from botgrpo_core.config.errors import ConfigError
    from botgrpo_core.config.loading import load_config
    from botgrpo_core.rewards.runner import SignalError
    from botgrpo_core.signals.manager import PluginError

    try:
        plan = plan_input(args.input, args.group_size)
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
        with stdout_to_stderr() as out:
            notes = _score_stream(args, config, plan, out)
    except BrokenPipeError:  # `botgrpo score ... | head`: the reader left; not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
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
    for note in notes:
        print(note if note.startswith("wrote ") else f"note: {note}", file=sys.stderr)
    return 0
