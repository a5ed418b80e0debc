"""``BoTGRPOTrainer``: TRL's ``GRPOTrainer`` with token-level rewards and advantages.

(Over 450 lines: one subclass of TRL's trainer, whose overrides share its state; the rest already lives beside it:
the estimators, the reward mixture, engine/gaming.py for the monitor, engine/trl_fields.py for TRL's settings.)

TRL (pinned to 1.16) stays the engine: generation (HF or vLLM), the clipped loss, accelerate /
DeepSpeed / FSDP. This subclass wraps two methods with ``super()`` and copies none of TRL's code:

- ``_calculate_rewards``: decode each local completion with token character offsets, score the
  configured :class:`~botgrpo_core.rewards.mixture.RewardMixture` (global + local signals) into ``(B, T)``
  token rewards, and hand TRL one number per rollout (the token-mean reward) so its own reward logs
  stay meaningful.
- ``_generate_and_score_completions``: after TRL built the batch, replace its ``(B,)`` advantages by
  the configured estimator's ``(B, T)`` advantages; TRL 1.16's ``_compute_loss`` takes them as they are.
  Group statistics need only per-rollout moments, so processes exchange a ``(B, k)`` table (mean r,
  mean r^2, length, valid, plus logging columns), never the padded ``(B, T)`` rewards. Estimators that
  need the whole step structure (``process``, ``pure``, plugins) gather ``(B, T)`` instead.

DAPO's dynamic sampling (which TRL lacks) comes from its own module,
:mod:`botgrpo_core.engine.dynamic_sampling`, as a mixin: groups whose advantages are all zero are dropped and
the batch is refilled by generating for more prompts.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import torch
from trl import GRPOConfig, GRPOTrainer

from botgrpo_core.config.presets import Preset
from botgrpo_core.engine.batch_metrics import ROLLOUT_COLUMNS, advantage_columns
from botgrpo_core.engine.batch_metrics import batch_metrics as gathered_batch_metrics
from botgrpo_core.engine.batches import _pad_right
from botgrpo_core.engine.dominance import OutcomeDominance
from botgrpo_core.engine.dynamic_sampling import DynamicSampling
from botgrpo_core.engine.gaming import GamingMonitor, gaming_metrics
from botgrpo_core.engine.signal_health import SignalHealth
from botgrpo_core.engine.trl_algorithm import check_trl_args, preset_from_trl_args, trl_preset_note
from botgrpo_core.engine.trl_args import default_grpo_config, with_mixture_weight
from botgrpo_core.engine.trl_fields import check_grpo_config
from botgrpo_core.estimators.gathered import gathered_advantages, group_keep
from botgrpo_core.estimators.moments import rollout_moments
from botgrpo_core.rewards.mixture import MixtureOutput, RewardMixture
from botgrpo_core.rewards.samples import decode_samples, prompt_text
from botgrpo_core.rewards.uncovered import centred_signals, coverage_moments, fill_uncovered, group_fills


class BoTGRPOTrainer(DynamicSampling, GRPOTrainer):
    """GRPO trainer whose advantages come from token-level rewards (BoT-GRPO and its baselines).

    A drop-in ``GRPOTrainer``: the same parameters in the same order with the same defaults (TRL 1.16:
    ``model, reward_funcs, args, train_dataset, eval_dataset, processing_class, reward_processing_classes,
    callbacks, optimizers, quantization_config, peft_config, tools, rollout_func, environment_factory``),
    each handed to ``GRPOTrainer`` as it is, then botgrpo's keyword-only ones. A TRL script moves over by its
    class name alone: TRL's reward functions become global rewards and the ``bot`` estimator gives the
    advantages under the ``GRPOConfig``'s own loss (every TRL 1.16 ``loss_type``); add ``mixture=`` for
    token-level signals (docs/python-api.md). What happens to each ``GRPOConfig`` field:
    :mod:`botgrpo_core.engine.trl_fields`. In multi-turn rollouts (``tools``, ``environment_factory``,
    ``rollout_func`` with an ``env_mask``) tool and environment tokens get no reward and advantage 0.

    :param model: the policy (a model object or a path/hub id, as for ``GRPOTrainer``).
    :param reward_funcs: TRL reward functions (TRL's calling convention and types, weighted by
        ``args.reward_weights``): each rollout's weighted sum is one more global reward,
        ``r[i, t] += alpha * sum_f w_f F_f[i]`` (``None``/NaN counts as 0). TRL logs them as usual. A
        function may declare ``bounds = (low, high)`` for the outcome-dominance check
        (:mod:`botgrpo_core.engine.dominance`); otherwise the check observes the first batches.
    :param args: ``GRPOConfig`` (default: TRL's, as ``GRPOTrainer`` makes it); with ``preset=`` its loss
        settings must match the preset (see :func:`trl_algorithm_args`).
    :param mixture: the reward mixture (signals, alpha, beta); default: none (``reward_funcs`` alone).
    :param preset: the algorithm (:func:`resolve_algorithm`); default: :func:`preset_from_trl_args` of
        ``args`` with the ``bot`` estimator.
    :param success_fn: ``success_fn(row, completion) -> bool`` for the task-success metric; by default a
        rollout succeeds when every global signal with a positive weight is at its upper bound (no metric
        when ``reward_funcs`` are given, whose bounds are unknown).
    :param dynamic_sampling_rounds: most extra generation rounds per step when ``preset.dynamic_sampling``.
    :param log_fn: where warnings go (default: stderr), e.g. a signal failing on most of a batch.
    """

    _tag_names: ClassVar[list[str]] = ["trl", "grpo", "botgrpo", "bot-grpo"]  # the hub tags TRL adds
    _name = "BoT-GRPO"

    def __init__(
        self,
        model: Any,
        reward_funcs: Any = None,
        args: GRPOConfig | None = None,
        train_dataset: Any = None,
        eval_dataset: Any = None,
        processing_class: Any = None,
        reward_processing_classes: Any = None,
        callbacks: list[Any] | None = None,
        optimizers: tuple[Any, Any] = (None, None),
        quantization_config: Any = None,
        peft_config: Any = None,
        tools: list[Callable[..., Any]] | None = None,
        rollout_func: Callable[..., dict[str, Any]] | None = None,
        environment_factory: Any = None,
        *,
        mixture: RewardMixture | None = None,
        preset: Preset | None = None,
        success_fn: Callable[[Mapping[str, Any], str], bool] | None = None,
        dynamic_sampling_rounds: int = 4,
        log_fn: Callable[[str], None] | None = None,
        gaming_monitor: str = "warn",
    ) -> None:
        funcs = (
            []
            if reward_funcs is None
            else list(reward_funcs)
            if isinstance(reward_funcs, list)
            else [reward_funcs]
        )
        if mixture is None and not funcs and environment_factory is None:
            raise ValueError(
                "BoTGRPOTrainer needs reward_funcs=[...] (TRL's), a mixture=RewardMixture(...), or both"
            )
        args = args if args is not None else default_grpo_config(model)
        check_grpo_config(args)
        derived = preset is None
        if preset is None:
            preset = preset_from_trl_args(args)
        else:
            check_trl_args(args, preset)
        self.mixture = mixture if mixture is not None else RewardMixture.without_signals()
        self.preset = preset
        self.success_fn = success_fn
        self.dynamic_sampling_rounds = dynamic_sampling_rounds
        self._pending: tuple[MixtureOutput, list[Any]] | None = None
        # this batch's uncovered: group_mean figures (_centre_uncovered), logged with the batch
        self._fill_metrics: dict[str, float] = {}
        self._phase_s = {"generate": 0.0, "score": 0.0}  # this batch's seconds in generation and in scoring
        self._pending_rewards: list[float | None] = []
        self._mixture_column = len(funcs)  # botgrpo's reward column, after the user's reward_funcs
        self._success_bound = None if funcs or environment_factory else self._max_outcome(self.mixture)
        self.last_advantages: torch.Tensor | None = None  # valid-token advantages of the last batch (plots)
        self.log_fn = log_fn or (lambda message: print(message, file=sys.stderr, flush=True))
        if derived and os.environ.get("RANK", "0") == "0":  # say what trl-<loss_type>+<estimator> means, once
            self.log_fn(trl_preset_note(preset))
        self._warned: dict[str, int] = {}
        self._signal_health = SignalHealth(self.mixture.config.on_signal_failure, self.log_fn)
        # training.gaming_monitor: per-step gaming/* metrics and a warning per cause (botgrpo_core.engine.gaming)
        self.gaming_monitor = gaming_monitor
        self._gaming = GamingMonitor(log=self.log_fn) if gaming_monitor != "off" else None
        self.dominance = OutcomeDominance(
            self.mixture, funcs, args.reward_weights, observe_only=environment_factory is not None
        )
        colocated = bool(args.use_vllm) and args.vllm_mode == "colocate"
        cpu_vllm = colocated and _vllm_cpu_build()
        if cpu_vllm:
            from botgrpo_core.engine.vllm_engine import prepare_environment

            prepare_environment()
        if reward_processing_classes is not None:  # one per reward function; none for botgrpo's column
            classes = reward_processing_classes
            reward_processing_classes = [*(classes if isinstance(classes, list) else [classes]), None]
        engine_precision = contextlib.nullcontext()
        if colocated:  # the engine samples in the policy's precision, not vLLM's float32 -> bf16 downcast
            from botgrpo_core.engine.vllm_engine import engine_dtype, policy_compute_dtype

            engine_precision = engine_dtype(policy_compute_dtype(model, args))
        with engine_precision:
            super().__init__(
                model,
                [*funcs, self._make_reward_fn()],
                with_mixture_weight(args, len(funcs)),
                train_dataset,
                eval_dataset,
                processing_class,
                reward_processing_classes,
                callbacks,
                optimizers,
                quantization_config,
                peft_config,
                tools,
                rollout_func,
                environment_factory,
            )
        if cpu_vllm:  # TRL's weight sync, made to work on vLLM's CPU backend (engine/vllm_engine.py)
            from botgrpo_core.engine.vllm_engine import patch_weight_sync

            patch_weight_sync(self.vllm_generation)
        # TRL's reward columns: the user's functions, then any environment's get_reward (TRL appends those)
        self._trl_columns = [i for i in range(len(self.reward_funcs)) if i != self._mixture_column]
        if not self._trl_columns and not self.mixture.runners:
            raise ValueError(
                "BoTGRPOTrainer has no reward: the environment_factory's environments define no get_reward; "
                "pass reward_funcs=[...] or mixture=RewardMixture(...)"
            )
        if dynamic_sampling_rounds and preset.dynamic_sampling:
            local = self.args.per_device_train_batch_size * self.args.steps_per_generation
            if local % self.num_generations:
                raise ValueError(
                    f"dynamic sampling keeps whole groups on each process: per-process generation batch {local} "
                    f"must be a multiple of group_size {self.num_generations}; adjust training.prompts_per_step "
                    "or the number of processes"
                )

    def create_model_card(
        self, model_name: str | None = None, dataset_name: str | None = None, tags: Any = None
    ) -> None:
        """botgrpo's ``README.md`` beside the checkpoints (TRL's says "trained with GRPO", and "fine-tuned
        version of [None]" for a local model): the starting model, the algorithm, the signals."""
        from pathlib import Path

        from trl.trainer.utils import get_config_model_id

        from botgrpo_core.engine.model_card import model_card
        from botgrpo_core.engine.outputs import atomic_write

        if not self.is_world_process_zero():
            return
        names = [self.reward_func_names[i] for i in self._trl_columns]
        text = model_card(
            model_name or Path(self.args.output_dir).name,
            get_config_model_id(self.model.config) or None,
            self.preset,
            self.mixture,
            names,
            self.args.loss_type,
        )
        # a kill while it is written leaves the old card or the new one, never half of one
        atomic_write(Path(self.args.output_dir, "README.md"), text)

    # ---- TRL hooks ------------------------------------------------------------------------------
    def _make_reward_fn(self) -> Callable[..., list[float | None]]:
        """TRL's reward function: the token-mean reward already computed in ``_calculate_rewards``."""
        pending = self._pending_rewards

        def botgrpo_mixture(prompts: list[Any], completions: list[Any], **_: Any) -> list[float | None]:
            if len(pending) != len(prompts):
                raise RuntimeError("botgrpo_mixture called outside BoTGRPOTrainer._calculate_rewards")
            return list(pending)

        return botgrpo_mixture

    def _calculate_rewards(
        self,
        inputs: list[dict[str, Any]],
        prompts: list[Any],
        completions: list[Any],
        completion_ids_list: list[Any],
    ) -> torch.Tensor:
        rows = [{k: v for k, v in x.items() if k != "prompt"} for x in inputs]
        texts = [prompt_text(p) for p in prompts]
        # TRL's own test for a completion the length cap cut (its clipped_ratio metric, mask_truncated_completions)
        stops = {*self.eos_token_ids, self._tokenizer.pad_token_id}
        cut = [len(ids) > 0 and int(ids[-1]) not in stops for ids in completion_ids_list]
        samples = decode_samples(self.processing_class, texts, completion_ids_list, rows, truncated=cut)
        start = time.perf_counter()
        mix = self.mixture.score_batch(samples)
        self._phase_s["score"] += time.perf_counter() - start
        self._warn_failing_signals(mix)
        moments = rollout_moments(mix.token_rewards, mix.mask, nan_policy="mask")
        self._pending_rewards[:] = [
            float(m) if ok else None for m, ok in zip(moments[:, 0].tolist(), mix.valid.tolist(), strict=True)
        ]
        try:
            per_func = super()._calculate_rewards(
                inputs, prompts, completions, completion_ids_list
            )  # (N, F + 1)
        finally:
            self._pending_rewards.clear()
        if self._trl_columns:  # TRL gathered the columns of every process: take this process's rows
            start = self.accelerator.process_index * len(samples)
            trl = per_func[start : start + len(samples), self._trl_columns]  # (B, F)
            weights = self.reward_weights[self._trl_columns].to(trl.device)
            mix = mix.with_global_reward((trl * weights).nansum(dim=1).cpu(), self.mixture.config.alpha)
        self._pending = (mix, samples)
        return per_func

    def _generate_and_score_completions(self, inputs: list[dict[str, Any]]) -> dict[str, Any]:
        mode = "train" if self.model.training else "eval"
        out = self._score_round(inputs, mode)
        if mode == "train" and self.preset.dynamic_sampling and self.dynamic_sampling_rounds:
            out = self._dynamic_sampling(out, len(inputs))
        out.pop("_keep_group", None)
        return out

    def _warn_failing_signals(self, mix: MixtureOutput) -> None:
        """Say so (once per signal and 50 steps) when a signal fails on most of a batch: its reward is then
        mostly the on_error value and the run learns little, which the curves alone would not explain."""
        step = self.state.global_step
        for name, outcome in mix.signals.items():
            failed = sum(outcome.failed)
            if not outcome.failed or failed <= len(outcome.failed) // 2:
                continue
            if step - self._warned.get(name, -(10**9)) < 50:
                continue
            self._warned[name] = step
            first = next(r for r, f in zip(outcome.results, outcome.failed, strict=True) if f)
            reason = getattr(first, "reason", "error")
            self.log_fn(
                f"warning: signal {name!r} failed on {failed}/{len(outcome.failed)} rollouts at step {step} "
                f"({reason}: {str(first)[:300]}); see signals/{name}/error_frac in metrics.jsonl"
            )

    # ---- advantages -------------------------------------------------------------------------------
    def _generate(self, prompts: list[Any]) -> Any:
        start = time.perf_counter()
        try:
            return super()._generate(prompts)
        finally:
            self._phase_s["generate"] += time.perf_counter() - start

    def _score_round(self, inputs: list[dict[str, Any]], mode: str) -> dict[str, Any]:
        self._phase_s = {"generate": 0.0, "score": 0.0}
        start = time.perf_counter()
        out = super()._generate_and_score_completions(inputs)
        # time/batch_s: generation, scoring and TRL's log-probability passes of this batch; TRL's step_time
        # minus it is the update (forward, backward, optimizer)
        self._fill_metrics["time/batch_s"] = time.perf_counter() - start
        self._fill_metrics["time/generate_s"] = self._phase_s["generate"]
        self._fill_metrics["time/score_s"] = self._phase_s["score"]
        assert self._pending is not None, "TRL did not call _calculate_rewards"
        mix, samples = self._pending
        self._pending = None
        width = out["completion_ids"].shape[1]
        mask = _pad_right(mix.mask, width, False)
        if out.get("tool_mask") is not None:  # multi-turn: tool / environment tokens are not the policy's
            mask = mask & out["tool_mask"].bool().to(mask.device)
        if mode == "train" and self._gaming is not None:  # before the fill: what each signal itself covers
            texts, cut = [s.completion for s in samples], [s.truncated for s in samples]
            self._fill_metrics.update(gaming_metrics(texts, cut, mix, self.num_generations))
        mix = self._centre_uncovered(mix, mask[:, : mix.mask.shape[1]], mode)
        # no reward on tool tokens; NaN (dropped) rollouts stay NaN on their own tokens
        rewards = torch.where(mask, _pad_right(mix.token_rewards, width, 0.0), 0.0)
        success = self._success(mix, samples)
        advantages, table, keep_group = self.token_advantages(rewards, mask, mix, success, mode)
        if mode == "train":
            self.dominance.observe(table[:, ROLLOUT_COLUMNS.index("outcome")], self.num_generations)
        out["advantages"] = advantages
        out["_keep_group"] = keep_group
        self._log_batch(mode, table, advantages, mask, mix)
        self._log_completion_advantages(advantages, mask)
        return out

    def _log_completion_advantages(self, advantages: torch.Tensor, mask: torch.Tensor) -> None:
        """TRL's completions table (``GRPOConfig.log_completions``) with botgrpo's advantages: TRL logged its own
        ``(B,)`` advantage, computed before botgrpo's replaced it; its ``advantage`` column becomes the
        rollout's mean token advantage and ``token_advantages`` holds each completion token's (4 decimals)."""
        if not getattr(self, "log_completions", False):
            return
        from accelerate.utils import gather_object

        per_token = [
            [round(float(a), 4) for a in row[keep]]
            for row, keep in zip(advantages.detach().float().cpu(), mask.cpu().bool(), strict=True)
        ]
        means = [
            float(row[keep].mean()) if keep.any() else 0.0
            for row, keep in zip(advantages.detach().double().cpu(), mask.cpu().bool(), strict=True)
        ]
        means, per_token = gather_object(means), gather_object(per_token)
        logged = self._logs["advantages"]
        for _ in range(min(len(means), len(logged))):  # TRL's values of this batch, the last ones logged
            logged.pop()
        logged.extend(means)
        self._logs["extra"]["token_advantages"].extend(per_token)

    def _centre_uncovered(self, mix: MixtureOutput, mask: torch.Tensor, mode: str) -> MixtureOutput:
        """Signals with ``uncovered: group_mean``: uncovered tokens at their group's mean verdict
        (:mod:`botgrpo_core.rewards.uncovered`), from the ``(N, 2K)`` coverage moments of every process."""
        if not centred_signals(mix):
            return mix
        G = self.num_generations if mode == "train" else self.num_generations_eval
        mask = mask.cpu()
        moments = self.accelerator.gather(coverage_moments(mix, mask).to(self.accelerator.device))  # (N, 2K)
        n, start = moments.shape[0], self.accelerator.process_index * mask.shape[0]
        group_index = torch.arange(n, device=moments.device) // G  # (N,)
        every = group_fills(moments, group_index, -(-n // G))  # (N, K)
        for k, name in enumerate(centred_signals(mix)):  # over the batch's rollouts (dropped ones count 0)
            self._fill_metrics[f"signals/{name}/covered_frac"] = float(moments[:, 2 * k + 1].mean())
            self._fill_metrics[f"signals/{name}/uncovered_fill"] = float(every[:, k].mean())
        fills = every[start : start + mask.shape[0]]  # (B, K)
        return fill_uncovered(mix, mask, fills.cpu(), self.mixture.config.beta)

    def token_advantages(
        self,
        rewards: torch.Tensor,
        mask: torch.Tensor,
        mix: MixtureOutput,
        success: torch.Tensor,
        mode: str = "train",
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Local ``(B, T)`` advantages, the gathered per-rollout table ``(N, k)``, local group keep flags.

        Rows ``[p * B, (p + 1) * B)`` of the gathered batch belong to process ``p`` and groups are
        consecutive blocks of ``G`` rows, as TRL lays them out; so the result equals the
        single-process computation on the concatenated batch.
        """
        device = rewards.device
        B = rewards.shape[0]
        G = self.num_generations if mode == "train" else self.num_generations_eval
        moments = rollout_moments(rewards, mask, nan_policy="mask")  # (B, 3) float64
        columns = [
            moments,
            mix.valid.double()[:, None],
            mix.outcome.double()[:, None],
            success.double()[:, None],
        ]
        columns += [self._signal_columns(mix)]
        local_table = torch.cat([c.to(device) for c in columns], dim=1)
        table = self.accelerator.gather(local_table)  # (N, k): the only exchange for moments estimators
        start = self.accelerator.process_index * B

        def gather_tokens() -> tuple[torch.Tensor, torch.Tensor]:  # (N, T') for "tokens" estimators only
            padded = self.accelerator.pad_across_processes(rewards, dim=1, pad_index=0.0)
            padded_mask = self.accelerator.pad_across_processes(mask, dim=1, pad_index=False)
            return self.accelerator.gather(padded), self.accelerator.gather(padded_mask)

        adv = gathered_advantages(
            self.preset.estimator,
            self.preset.estimator_options,
            table[:, :3],
            rewards,
            mask,
            start=start,
            group_size=G,
            gather_tokens=gather_tokens,
        )
        nonzero = self.accelerator.gather((adv != 0).any(dim=1))  # (N,)
        keep_group = group_keep(nonzero, G)[start : start + B]
        return adv, table, keep_group

    # ---- metrics ---------------------------------------------------------------------------------
    def log(self, logs: dict[str, float], start_time: float | None = None) -> None:
        """TRL's log, after the gaming monitor has read the step's metrics (``training.gaming_monitor``)."""
        train = self._metrics.get("train", {}) if hasattr(self, "_metrics") else {}
        if self._gaming is not None and "loss" in logs and train:
            merged = {**{k: sum(v) / len(v) for k, v in train.items() if v}, **logs}
            fired = self._gaming.observe(int(self.state.global_step), merged)
            if fired and self.gaming_monitor == "stop":
                self.log_fn(
                    "training.gaming_monitor is 'stop': the run ends at this step, its outputs written"
                )
                self.control.should_training_stop = True
        super().log(logs, start_time)

    @staticmethod
    def _max_outcome(mixture: RewardMixture) -> float | None:
        total, any_global = 0.0, False
        for runner in mixture.runners:
            if runner.spec.kind == "global":
                any_global = True
                low, high = runner.bounds
                total += runner.config.weight * (high if runner.config.weight > 0 else low)
        return total if any_global else None

    def _success(self, mix: MixtureOutput, samples: Sequence[Any]) -> torch.Tensor:
        if self.success_fn is not None:
            return torch.tensor(
                [bool(self.success_fn(s.row, s.completion)) for s in samples], dtype=torch.bool
            )
        if self._success_bound is None:
            return torch.full((len(samples),), float("nan"))
        return (mix.outcome >= self._success_bound - 1e-6) & mix.valid

    def _signal_columns(self, mix: MixtureOutput) -> torch.Tensor:
        """The rollout table's signal columns: the mixture's ``(B, len(SIGNAL_COLUMNS) * K)`` signal table."""
        return mix.signal_table

    def batch_metrics(
        self, table: torch.Tensor, advantages: torch.Tensor, mask: torch.Tensor, mode: str = "train"
    ) -> dict[str, float]:
        """Metrics of one generation batch (the same on every process): the gathered rollout ``table``
        and the advantages' per-rollout statistics, gathered here, reduced by
        :func:`botgrpo_core.engine.batch_metrics.batch_metrics`."""
        G = self.num_generations if mode == "train" else self.num_generations_eval
        adv_table = self.accelerator.gather(advantage_columns(advantages, mask))  # (N, 6)
        return gathered_batch_metrics(table, adv_table, G, self.mixture.signal_kinds())

    def _log_batch(
        self, mode: str, table: torch.Tensor, advantages: torch.Tensor, mask: torch.Tensor, mix: MixtureOutput
    ) -> None:
        metrics = self.batch_metrics(table, advantages, mask, mode)
        metrics.update(mix.scorer_metrics)  # the scorers' own counters, this process's (rank 0 logs)
        metrics.update(self._fill_metrics)  # gathered: the same on every process
        self._fill_metrics = {}
        for key, value in metrics.items():
            self._metrics[mode][key].append(value)
        self.last_advantages = advantages[mask].detach().float().cpu()
        if mode == "train":  # rewards.on_signal_failure: stop (or warn) when a signal keeps failing
            self._signal_health.observe(self.state.global_step, metrics, mix)


def _vllm_cpu_build() -> bool:
    """Whether rollouts will come from vLLM's CPU backend (imports vLLM: only asked when use_vllm is on)."""
    from botgrpo_core.engine.vllm_engine import vllm_on_cpu

    return vllm_on_cpu()
