"""``botgrpo train``: one run from one config, end to end.

(Over 450 lines: it is the run's one sequence, setup -> trainer -> loop -> finish, with the callbacks and the
context they share; the parts with a job of their own already live beside it: outputs.py, evaluation.py,
model.py, data.py, run_lock.py, interrupt.py.)

:func:`run_training` checks everything that can be checked before any training (model path, data
fields the signals read, signals installed, algorithm vs ratio level, batch arithmetic), builds or
loads the model (a tiny model built in code, optionally warm-started on task demonstrations, cached
in the output dir), runs :class:`~botgrpo_core.engine.trainer.BoTGRPOTrainer`, evaluates on held-out prompts
before, during and after, and writes into ``training.output_dir``:

- ``config.yaml``: the resolved run file;
- ``metrics.jsonl``: one JSON object per line, ``{"kind": "train" | "eval", "step": n, ...}`` (the keys:
  docs/concepts.md, "Training metrics");
- ``checkpoint-N/``: TRL/HF checkpoints (``--resume`` continues from the last complete one), ``final_model/``;
- ``training_curves.png`` and ``advantages.png``; ``summary.json``.

An earlier run in that folder is never deleted implicitly (``resume`` continues it, ``overwrite`` replaces
it, otherwise the run is refused), one run at a time trains there (:mod:`botgrpo_core.engine.run_lock`),
SIGINT/SIGTERM stop it at a step boundary after a checkpoint (:mod:`botgrpo_core.engine.interrupt`), and a
full disk stops it with the checkpoint to resume from. Files are rewritten by rename, never in place
(:func:`~botgrpo_core.engine.outputs.atomic_write`). ``resume`` of a complete run changes nothing; of a run
whose last checkpoint is its last step, it trains no step and writes the final model from that checkpoint.

The benchmarks call :func:`run_training` once per (method, seed) with a ready model folder.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from botgrpo_core.config.models import RunConfig
    from botgrpo_core.config.presets import Preset
    from botgrpo_core.rewards.mixture import RewardMixture
from botgrpo_core.engine.data import RunData, check_prompt_tokens, check_rows, load_data, to_trainer_rows
from botgrpo_core.engine.evaluation import colocated_engine, eval_line, evaluate
from botgrpo_core.engine.interrupt import RunInterrupted, StopOnSignal, disk_full
from botgrpo_core.engine.lora import check_lora_targets
from botgrpo_core.engine.model import load_model, prepare_model_dir
from botgrpo_core.engine.outputs import (
    FINAL_MODEL_DIR,
    METRICS_FILE,
    SUMMARY_FILE,
    TMP_SUFFIX,
    MetricsLog,
    atomic_write,
    check_output_dir,
    checkpoint_problem,
    checkpoint_step,
    checkpoints,
    completed_run,
    last_checkpoint,
    prepare_output_dir,
    replace_dir,
    restore_checkpoint,
)
from botgrpo_core.engine.report import _summary, format_report, write_plots
from botgrpo_core.engine.run_lock import OutputDirLock
from botgrpo_core.engine.setup import TrainingSetupError, build_mixture, resolve_preset
from botgrpo_core.engine.trl_args import grpo_args, quiet_library_deprecations
from botgrpo_core.signals.files import DIGESTS_FILE, file_digests, resume_problem


# ------------------------------------------------------------------------------------------------
# Callbacks
# ------------------------------------------------------------------------------------------------
def _callbacks(
    ctx: _RunContext,
) -> list[Any]:
    from transformers import TrainerCallback

    class MetricsCallback(TrainerCallback):
        """Writes TRL's log dicts (with botgrpo's metrics) to metrics.jsonl."""

        def on_log(
            self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kw: Any
        ) -> None:
            if not state.is_world_process_zero or not logs:
                return
            kind = "summary" if "train_runtime" in logs else "train"
            ctx.metrics.write(kind, state.global_step, logs)
            if kind == "train":
                ctx.progress_update(state.global_step, logs)

    class EvalCallback(TrainerCallback):
        """Held-out evaluation every ``training.eval_every`` steps and at the last step."""

        def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            every = ctx.config.training.eval_every
            step = state.global_step
            if step == state.max_steps or (every and step % every == 0):
                ctx.run_eval(step)

    return [MetricsCallback(), EvalCallback()]


@dataclass
class _RunContext:
    """What the callbacks share with :func:`run_training`."""

    config: RunConfig
    metrics: MetricsLog
    run_data: RunData
    mixture: RewardMixture
    tokenizer: Any
    model: Any = None
    trainer: Any = None
    log: Callable[[str], None] = print
    evals: dict[int, dict[str, float]] = field(default_factory=dict)
    bar: Any = None
    is_main: bool = True

    def run_eval(self, step: int) -> dict[str, float]:
        import torch

        model = self.trainer.accelerator.unwrap_model(self.trainer.model) if self.trainer else self.model
        result: dict[str, float] = {}
        engine = colocated_engine(self.trainer) if self.run_data.eval else None  # every rank
        if self.is_main and self.run_data.eval:
            t = self.config.training
            modes = ["sampled", "greedy"] if t.eval_greedy else ["sampled"]
            for mode in modes:
                eval_start, rows = time.time(), self.run_data.eval
                if mode == "sampled":  # training.eval_samples draws per prompt, each with its own seed
                    rows = [row for row in rows for _ in range(t.eval_samples)]
                values = evaluate(
                    model,
                    self.tokenizer,
                    rows,
                    mixture=self.mixture,
                    task=self.run_data.task,
                    max_new_tokens=t.max_new_tokens,
                    greedy=mode == "greedy",
                    batch_size=t.eval_batch_size,
                    temperature=t.temperature,  # sampled evaluation at the rollout temperature
                    engine=engine,
                    log=self.log,  # a progress line every 30 s: a slow evaluation is not a hang
                )
                result.update({f"eval/{mode}/{k}": v for k, v in values.items()})
                self.log(eval_line(step, mode, values, time.time() - eval_start))
            if self.trainer is not None and self.trainer.last_advantages is not None:
                hist = torch.histc(self.trainer.last_advantages.clamp(-4, 4), bins=40, min=-4, max=4)
                result["advantages/histogram"] = hist.tolist()
            self.metrics.write("eval", step, result)
            self.evals[step] = result
        if self.trainer is not None:
            self.trainer.accelerator.wait_for_everyone()
        return result

    def progress_update(self, step: int, logs: Mapping[str, Any]) -> None:
        if self.bar is None:
            return
        self.bar.n = step
        post = {
            "reward": logs.get("reward/token_mean"),
            "success": logs.get("success_rate"),
            "no-signal": logs.get("groups/no_signal_frac"),  # groups the estimator gives no gradient
            # groups whose outcomes are all equal: only the local signals move the policy there
            "outcome-flat": logs.get("groups/outcome_zero_spread_frac"),
        }
        self.bar.set_postfix(
            {k: f"{v:.2f}" for k, v in post.items() if isinstance(v, (int, float))}, refresh=False
        )
        self.bar.refresh()


def _set_threads(config: RunConfig, log: Callable[[str], None] = print) -> None:
    import torch

    if config.engine.device != "cuda":
        torch.set_num_threads(config.training.num_threads)
        os.environ.setdefault("OMP_NUM_THREADS", str(config.training.num_threads))
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
        warning = thread_warning(config.training.num_threads, os.cpu_count() or 1, load)
        if warning:
            log(warning)


def thread_warning(threads: int, cores: int, load: float) -> str | None:
    """A warning when ``training.num_threads`` asks for more cores than this machine has free: torch's
    OpenMP threads then wait on each other at every barrier, and a step or an evaluation can take many
    times as long with no output (issue 59: 16 min in the first evaluation on a busy 2-core machine)."""
    if threads <= 1 or threads + load <= cores + 0.5:
        return None
    return (
        f"warning: training.num_threads is {threads} on a machine with {cores} cores and a load of {load:.1f}: "
        "the threads will wait on each other (a step or an evaluation can take many times as long); "
        "set training.num_threads: 1 while other jobs run"
    )


@dataclass
class _Setup:
    """Everything checked before the first training step."""

    preset: Preset
    mixture: RewardMixture
    run_data: RunData
    args: Any  # trl.GRPOConfig


def run_training(
    config: RunConfig,
    *,
    overrides: Sequence[str] = (),
    resume: bool = False,
    overwrite: bool = False,
    callbacks: Sequence[Any] = (),
    log: Callable[[str], None] | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Train one run; returns a summary (before/after evaluation, paths, wall time).

    :param config: the validated run file.
    :param overrides: the ``--set`` assignments already applied to ``config`` (recorded in the summary).
    :param resume: continue from the last complete ``checkpoint-N`` in ``training.output_dir``.
    :param overwrite: replace an earlier run's outputs in ``training.output_dir`` (without it, a folder
        holding checkpoints, metrics or a final model is refused: nothing is deleted implicitly).
    :param callbacks: extra ``transformers.TrainerCallback`` objects (benchmarks, tests).
    :param log: where progress lines go (default: stderr).
    :param progress: show a progress bar.
    :raises TrainingSetupError: any problem found before training; nothing has been trained then.
    :raises RunInterrupted: SIGINT or SIGTERM stopped the run (after saving a checkpoint when the
        signal came during the training loop); the message says how to continue.
    """
    start = time.time()
    log = log or _stderr
    output_dir = Path(config.training.output_dir)
    is_main = int(os.environ.get("RANK", "0")) == 0
    # one run per folder: the main process holds its lock until the run ends (refused: nothing touched)
    with OutputDirLock(output_dir, log) if is_main else contextlib.nullcontext():
        check_output_dir(output_dir, resume=resume, overwrite=overwrite)  # every rank raises alike
        problem = (
            resume_problem(output_dir, config.rewards.signals, log if is_main else _silent)
            if resume
            else None
        )
        if problem:  # the signal files must be the ones the run started with
            raise TrainingSetupError(problem)
        done = completed_run(output_dir, config.training.steps) if resume else None
        if done is not None:
            if is_main:
                log(
                    f"training.output_dir {str(output_dir)!r} holds a complete run ({done['steps']} steps, "
                    f"training.steps {config.training.steps}; its final_model and summary.json are written): "
                    "nothing to resume, nothing was changed. To train further, raise training.steps "
                    "(--set training.steps=N --resume); to start again, --overwrite"
                )
            return done
        return _run(
            config, output_dir, is_main, start, overrides, resume, overwrite, callbacks, log, progress
        )


def _run(
    config: RunConfig,
    output_dir: Path,
    is_main: bool,
    start: float,
    overrides: Sequence[str],
    resume: bool,
    overwrite: bool,
    callbacks: Sequence[Any],
    log: Callable[[str], None],
    progress: bool,
) -> dict[str, Any]:
    """:func:`run_training` once the folder is this run's: set up, train, finish."""
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # "Writing model shards" bars at every checkpoint
    _set_threads(config, log if is_main else _silent)
    owns_group = not _process_group_initialized()  # else the caller's: left for it to destroy
    setup = _checked_setup(config, log if is_main else _silent)
    resume_from = last_checkpoint(output_dir, log if is_main else _silent) if resume else None
    with StopOnSignal(log) as stop:
        try:
            # The main process prepares the output dir and builds (or warm-starts) the model; the others load it.
            with setup.args.main_process_first(local=False, desc="preparing the output dir and the model"):
                if is_main:
                    prepare_output_dir(output_dir, resume=resume, overwrite=overwrite)
                model_start = time.time()
                source = prepare_model_dir(config, setup.run_data, log)
                model_s = time.time() - model_start  # the warm start, when it is not cached
            model, tokenizer = load_model(config, source)
            check_lora_targets(config, model)  # before anything of the run is written
            check_prompt_tokens(config, setup.run_data.train, tokenizer, "data")
            check_prompt_tokens(config, setup.run_data.eval, tokenizer, "held-out data")
            ctx = _start_metrics(config, setup, model, tokenizer, resume_from, is_main, log)
            _make_trainer(ctx, setup, [*callbacks, stop.callback(lambda: ctx.trainer)])
            if (
                resume_from is None and setup.run_data.eval
            ):  # data.eval_size: 0 evaluates nothing, says nothing
                # after the trainer is built: with vLLM rollouts its engine generates the evaluation too
                log(f"evaluating the initial policy on {len(setup.run_data.eval)} held-out prompts")
                ctx.run_eval(0)
            _train(ctx, setup, resume_from, progress, stop)
            if stop.signum is None:
                summary = _finish(ctx, setup, start, overrides, model_s)
                from botgrpo_core.engine.vllm_engine import close_engine

                close_engine(getattr(ctx.trainer, "vllm_generation", None))  # before the process group goes
                if owns_group:
                    ctx.trainer.accelerator.state.destroy_process_group()
                return summary
        except KeyboardInterrupt:
            setup.mixture.close()
        except Exception as exc:
            cause = disk_full(exc, output_dir)
            if cause is None:
                raise
            setup.mixture.close()
            raise _interrupted(0, output_dir, cause) from exc
        raise _interrupted(stop.signum or signal.SIGINT, output_dir) from None


def _process_group_initialized() -> bool:
    """Whether a ``torch.distributed`` process group exists already.

    The one the trainer creates under torchrun (accelerate's) is destroyed when the run completes:
    left to interpreter exit, gloo's threads can abort the process ("terminate called without an
    active exception", seen on the 2-process CPU test). Not after a failure or a signal, where
    another rank may still be inside a collective and destroying would hang.
    """
    import torch.distributed as dist

    return dist.is_available() and dist.is_initialized()


def _finish(
    ctx: _RunContext, setup: _Setup, start: float, overrides: Sequence[str], model_s: float
) -> dict[str, Any]:
    """After the last step: the final model, the plots and ``summary.json`` (main process); the summary."""
    output_dir = Path(ctx.config.training.output_dir)
    if ctx.is_main:
        # summary.json, written last, marks the run complete; every file before it goes in by rename
        tmp = output_dir / (FINAL_MODEL_DIR + TMP_SUFFIX)
        shutil.rmtree(tmp, ignore_errors=True)
        ctx.trainer.save_model(str(tmp))
        replace_dir(tmp, output_dir / FINAL_MODEL_DIR)
    steps_done = int(ctx.trainer.state.global_step) if ctx.trainer else 0
    summary = _summary(ctx.config, setup.preset, ctx.evals, steps_done, start, overrides)
    summary["model_prep_s"] = round(model_s, 1)
    if ctx.is_main:
        if ctx.config.training.plots:
            summary["plots"] = write_plots(output_dir, ctx.metrics.read())
        atomic_write(output_dir / SUMMARY_FILE, json.dumps(summary, indent=2) + "\n")
        ctx.log(format_report(summary))
    return summary


def _stderr(message: str) -> None:
    """A progress line on stderr; while the progress bar is up, above it (tqdm.write), not onto it."""
    from tqdm.auto import tqdm

    tqdm.write(message, file=sys.stderr)
    sys.stderr.flush()


def _silent(message: str) -> None:
    """Where the other processes' copies of the main process's warnings go."""


def _interrupted(signum: int, output_dir: Path, cause: str | None = None) -> RunInterrupted:
    """The :class:`RunInterrupted` for a stop now: the last complete checkpoint, if any, is where to resume."""
    found = [(s, p) for s, p in checkpoints(output_dir) if checkpoint_problem(p, s) is None]
    step = found[-1][0] if found else 0
    return RunInterrupted(signum, step, found[-1][1].name if found else None, cause)


def _checked_setup(config: RunConfig, log: Callable[[str], None]) -> _Setup:
    """Everything that can fail, checked before the model is built (errors name the config key)."""
    if config.engine.device == "cuda" and "num_threads" in config.training.model_fields_set:
        log(
            "warning: training.num_threads sets torch's CPU threads on CPU runs only; it does nothing with "
            "engine.device: cuda (signal workers: rewards.signals[i].workers)"
        )
    preset = resolve_preset(config)
    mixture = build_mixture(config)
    run_data = load_data(config)
    needed = {"data.prompt_field": (config.data.prompt_field,)}
    for name, fields in mixture.required_fields().items():
        needed[f"signal {name!r}"] = fields
    check_rows(run_data.train, needed, f"data ({run_data.source})")
    check_rows(run_data.eval, needed, f"held-out data ({run_data.source})")
    args = grpo_args(config, preset, Path(config.training.output_dir))
    return _Setup(preset, mixture, run_data, args)


def _start_metrics(
    config: RunConfig,
    setup: _Setup,
    model: Any,
    tokenizer: Any,
    last_checkpoint: str | None,
    is_main: bool,
    log: Callable[[str], None],
) -> _RunContext:
    """Write the resolved config, open metrics.jsonl (or resume its log of a checkpoint's run)."""
    import yaml

    output_dir = Path(config.training.output_dir)
    run_data = setup.run_data
    run_data.eval = to_trainer_rows(run_data.eval, config)
    if is_main:
        resolved = config.model_dump(mode="json")
        atomic_write(output_dir / "config.yaml", yaml.safe_dump(resolved, sort_keys=False))
        digests = file_digests(config.rewards.signals)  # what --resume checks (_check_signal_files)
        atomic_write(output_dir / DIGESTS_FILE, json.dumps(digests, indent=2) + "\n")
    metrics = MetricsLog(output_dir / METRICS_FILE, enabled=is_main)
    ctx = _RunContext(
        config, metrics, run_data, setup.mixture, tokenizer, model=model, log=log, is_main=is_main
    )
    if last_checkpoint is not None:
        step = checkpoint_step(last_checkpoint)
        for dropped in metrics.truncate_after(step):
            log(f"warning: {metrics.path}: dropped {dropped}, torn by an interrupted write")
        ctx.evals = {r["step"]: r for r in metrics.read() if r["kind"] == "eval"}
        log(f"resuming from {last_checkpoint} (step {step})")
    return ctx


def _make_trainer(ctx: _RunContext, setup: _Setup, callbacks: Sequence[Any]) -> Any:
    """The :class:`BoTGRPOTrainer`, with botgrpo's callbacks instead of TRL's printer and progress bar."""
    import datasets
    from transformers import PrinterCallback, ProgressCallback

    from botgrpo_core.engine.lora import lora_config
    from botgrpo_core.engine.trainer import BoTGRPOTrainer

    config, run_data = ctx.config, setup.run_data
    with quiet_library_deprecations():
        trainer = BoTGRPOTrainer(
            ctx.model,
            args=setup.args,
            mixture=setup.mixture,
            preset=setup.preset,
            success_fn=run_data.task.success if run_data.task is not None else None,
            dynamic_sampling_rounds=config.training.dynamic_sampling_rounds,
            log_fn=ctx.log,
            gaming_monitor=config.training.gaming_monitor,
            train_dataset=datasets.Dataset.from_list(to_trainer_rows(run_data.train, config)),
            processing_class=ctx.tokenizer,
            peft_config=lora_config(config.model.peft),  # model.peft: LoRA adapters (None: every weight)
            callbacks=[*_callbacks(ctx), *callbacks],
        )
    ctx.trainer = trainer
    trainer.remove_callback(PrinterCallback)  # metrics go to metrics.jsonl and the compact bar
    trainer.remove_callback(ProgressCallback)
    return trainer


def _train(
    ctx: _RunContext, setup: _Setup, last_checkpoint: str | None, progress: bool, stop: StopOnSignal
) -> None:
    """Run TRL's training loop under the compact progress bar; the mixture's workers are closed after.

    While the loop runs, a first SIGINT/SIGTERM means "save at the end of this step and stop" (``stop``).
    """
    t, preset = ctx.config.training, setup.preset
    if last_checkpoint is not None and checkpoint_step(last_checkpoint) >= t.steps:
        # HF's loop would train one more step: the run is at its end, only its final files are missing
        ctx.log(
            f"{Path(last_checkpoint).name} is the run's last step (training.steps {t.steps}): no step to "
            "train; writing the final model from it"
        )
        restore_checkpoint(ctx.trainer, last_checkpoint)
        setup.mixture.close()
        return
    if progress and ctx.is_main:
        from tqdm.auto import tqdm

        # a resumed run's bar starts at its checkpoint's step, and its s/step counts this process's steps only
        done = checkpoint_step(last_checkpoint) if last_checkpoint is not None else 0
        ctx.bar = tqdm(
            total=t.steps, initial=done, desc=f"{preset.name} training", unit="step", file=sys.stderr
        )
    ctx.log(
        f"training {t.steps} steps: preset {preset.name} (estimator {preset.estimator}), "
        f"{t.prompts_per_step} prompts x {t.group_size} rollouts per step"
    )
    try:
        stop.in_loop = True
        with quiet_library_deprecations():
            ctx.trainer.train(resume_from_checkpoint=last_checkpoint)
    finally:
        stop.in_loop = False
        if ctx.bar is not None:
            ctx.bar.close()
        setup.mixture.close()
