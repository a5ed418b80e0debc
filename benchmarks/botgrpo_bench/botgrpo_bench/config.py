"""The bench file: its pydantic models, method names (``preset:key=value,...``) and loading.

Reading, ``--set`` overrides and error messages are the core's (:mod:`botgrpo_core.config.loading`,
:func:`botgrpo_core.config.errors.format_validation_error`), so a bench file fails the way a run file does.
"""

from __future__ import annotations

import copy
import difflib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from botgrpo_core.config.errors import ConfigError, format_validation_error
from botgrpo_core.config.loading import apply_override, read_yaml, set_key
from botgrpo_core.engine.warm_start import WarmStartSpec

#: where a bench file's keys are explained (named by "required key is missing" messages)
EXAMPLE = "benchmarks/bench_full.yaml"


#: run-file keys the bench sets itself for each run (:func:`botgrpo_bench.plan.derive_run`)
BENCH_SET_KEYS = frozenset(
    {"model.name_or_path", "training.seed", "training.output_dir", "training.num_threads"}
)


class BenchError(ConfigError):
    """A bench file problem; the message names the key path and the fix."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TaskBench(_Strict):
    """One benchmark task: a run-file section, its success metric and target, and its warm start."""

    run: dict[str, Any] = Field(
        ...,
        description="a run file (model, data, rewards, training...) without algorithm; the bench sets "
        "model.name_or_path, algorithm.preset, training.seed and training.output_dir per run",
    )
    metric: str = Field(..., description="the evaluation key that measures success (e.g. compile_rate)")
    target: float = Field(..., description="success level whose first crossing counts as 'steps to target'")
    higher_is_better: bool = Field(True, description="whether a larger metric is better")
    extra_metrics: list[str] = Field(default_factory=list, description="other evaluation keys to report")
    warm_start: WarmStartSpec = Field(default_factory=WarmStartSpec, description="the supervised warm start")
    pass_k: int = Field(
        0, ge=0, description="after training, sample k completions per prompt for Pass@k (0 = off)"
    )
    pass_k_prompts: int = Field(100, ge=1, description="held-out prompts for Pass@1/Pass@k")
    domain: str | None = Field(
        None, description="regime benches: the task family this level belongs to (e.g. math, react)"
    )
    level: Literal["short", "medium", "long"] | None = Field(
        None, description="regime benches: the reasoning length of this task within its domain"
    )
    method_overrides: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="per-method run-file changes, method -> {dotted key: value} (e.g. grpo: "
        "{training.learning_rate: 4.0e-4}): a level whose methods each run at their own tuned settings; "
        "every other key is the task's, for every method",
    )

    @model_validator(mode="after")
    def _domain_with_level(self) -> TaskBench:
        if (self.domain is None) != (self.level is None):
            raise ValueError("set both domain and level (a regime level) or neither")
        return self

    @field_validator("method_overrides")
    @classmethod
    def _known_override_methods(cls, overrides: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        for method, changes in overrides.items():
            check_method(method, f"method_overrides.{method}")
            for key in changes:
                if key.split(".")[0].split("[")[0] == "algorithm":
                    raise ValueError(
                        f"method_overrides.{method}: {key!r} sets the algorithm; write it as a method "
                        f"variant instead ('{method}:key=value' in methods)"
                    )
                if key in BENCH_SET_KEYS:
                    raise ValueError(
                        f"method_overrides.{method}: {key!r} is set by the bench for every run; remove it"
                    )
        return overrides

    @field_validator("run")
    @classmethod
    def _no_algorithm(cls, run: dict[str, Any]) -> dict[str, Any]:
        if "algorithm" in run:
            raise ValueError("remove run.algorithm: the bench sets algorithm.preset from `methods`")
        if "rewards" not in run:
            raise ValueError("run.rewards is required (the task's signals)")
        return run


class SweepBench(_Strict):
    """An alpha/beta sweep of one preset on one task; each setting is marked for outcome dominance."""

    task: str = Field(..., description="a key of `tasks`")
    method: str = Field("bot-grpo", description="the preset swept")
    alpha: list[float] = Field([1.0], min_length=1, description="alpha values (grid with beta)")
    beta: list[float] = Field(..., min_length=1, description="beta values (grid with alpha)")
    seeds: list[int] | None = Field(None, description="seeds (default: the bench's seeds)")


class TargetRule(_Strict):
    """How a regime bench fixes every level's target from its warm policy's success (one rule for all).

    ``target = round_to_step(warm + gap_fraction * (best - warm))``, ``best`` 1.0 for a success rate.
    """

    gap_fraction: float = Field(..., gt=0, lt=1, description="share of the gap from warm success to 1.0")
    round_to: float = Field(0.05, gt=0, le=0.5, description="targets are rounded to a multiple of this")

    def target(self, warm: float) -> float:
        """The target this rule gives a level whose warm policy succeeds at rate ``warm``."""
        raw = warm + self.gap_fraction * (1.0 - warm)
        return round(round(raw / self.round_to) * self.round_to, 6)


class BenchFile(_Strict):
    """A whole bench file (see benchmarks/bench_full.yaml)."""

    name: str = Field("bench", description="shown in the summary")
    output_dir: Path = Field(Path("runs/bench"), description="results folder (overridden by --output)")
    cache_dir: Path = Field(Path("runs/bench-cache"), description="cached warm-start checkpoints")
    parallel: int = Field(2, ge=1, description="runs side by side (one per core)")
    threads_per_run: int = Field(1, ge=1, description="torch threads of each run")
    seeds: list[int] = Field([0, 1, 2], min_length=1, description="training seeds of every method")
    methods: list[str] = Field(
        ...,
        min_length=1,
        description="algorithm presets compared; 'preset:key=value,...' is a variant with algorithm overrides",
    )
    reference: str = Field("grpo", description="the baseline in ratios (steps_ref / steps_candidate)")
    candidate: str = Field("bot-grpo", description="the method the ratios are about")
    tasks: dict[str, TaskBench] = Field(..., min_length=1, description="task name -> task section")
    include: list[str] | None = Field(
        None, description="run only these tasks (default: all); e.g. --set include=[react]"
    )
    sweep: SweepBench | None = Field(None, description="alpha/beta sweep (null = none)")
    quick: dict[str, Any] = Field(
        default_factory=dict, description="dotted-key overrides applied by --quick (e.g. seeds: [0])"
    )
    target_rule: TargetRule | None = Field(
        None,
        description="regime benches: the rule every level's target was fixed by (checked against the "
        "warm starts' measured success; a mismatch is reported)",
    )
    profile_fractions: list[float] = Field(
        [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9],
        min_length=1,
        description="regime benches: the speed-up profile's success levels, as shares of the gap from "
        "the initial success to 1.0",
    )
    progress_every_s: float = Field(
        60.0,
        ge=0,
        description="every so many seconds a line per running run: its step and latest "
        "evaluation (0 = only a line per finished run)",
    )
    run_timeout_s: float = Field(3600.0, gt=0, description="a run over this wall time is killed and reported")
    signal_quality_samples: int = Field(
        100,
        ge=0,
        description="warm-policy samples on which the local signals are checked against the task (0 = off)",
    )

    @field_validator("methods")
    @classmethod
    def _known_methods(cls, methods: list[str]) -> list[str]:
        for m in methods:
            check_method(m, "methods")
        if len(set(methods)) != len(methods):
            raise ValueError("a method is listed twice; list each preset once")
        return methods

    @model_validator(mode="after")
    def _references(self) -> BenchFile:
        if self.include is not None:
            unknown = [t for t in self.include if t not in self.tasks]
            if unknown:
                raise ValueError(
                    f"include: unknown task(s) {', '.join(unknown)}; tasks are {', '.join(self.tasks)}"
                )
            self.tasks = {k: v for k, v in self.tasks.items() if k in self.include}
            if self.sweep is not None and self.sweep.task not in self.tasks:
                self.sweep = None
        for key in ("reference", "candidate"):
            check_method(getattr(self, key), key)
        if self.sweep is not None:
            if self.sweep.task not in self.tasks:
                raise ValueError(
                    f"sweep.task {self.sweep.task!r} is not one of tasks: {', '.join(self.tasks)}"
                )
            check_method(self.sweep.method, "sweep.method")
        return self


# --- methods ---------------------------------------------------------------------------------------------------
def parse_method(method: str) -> tuple[str, dict[str, Any]]:
    """``"bot-grpo:aggregation=token,eps_high=0.28"`` -> ``("bot-grpo", {"aggregation": "token", ...})``.

    A method is a preset name, optionally with ``algorithm`` overrides (a variant, e.g. to check the
    loss aggregation); values are read as YAML scalars.
    """
    name, _, rest = method.partition(":")
    overrides: dict[str, Any] = {}
    for item in filter(None, (p.strip() for p in rest.split(","))):
        key, sep, raw = item.partition("=")
        if not sep:
            raise ValueError(f"method {method!r}: expected preset:key=value[,key=value], got {item!r}")
        overrides[key.strip()] = yaml.safe_load(raw)
    return name.strip(), overrides


def method_folder(method: str) -> str:
    """A folder name for a method (variants' ``:`` and ``,`` become ``+``)."""
    return method.replace(":", "+").replace(",", "+")


def check_method(method: str, where: str) -> None:
    """``method`` names a preset and valid ``algorithm`` overrides; ``ValueError`` naming ``where`` if not."""
    from botgrpo_core.config.models import AlgorithmConfig
    from botgrpo_core.config.presets import PRESETS

    name, overrides = parse_method(method)
    if name not in PRESETS:
        close = difflib.get_close_matches(name, list(PRESETS), n=1)
        hint = f" did you mean {close[0]!r}?" if close else ""
        raise ValueError(f"{where}: unknown preset {name!r};{hint} choose from {', '.join(PRESETS)}")
    try:
        AlgorithmConfig.model_validate({"preset": name, **overrides})
    except ValidationError as exc:
        raise ValueError(f"{where}: method {method!r} has invalid algorithm overrides: {exc}") from None


# --- loading ---------------------------------------------------------------------------------------------------
def load_bench(
    path: str | os.PathLike[str], *, quick: bool = False, overrides: Sequence[str] = ()
) -> BenchFile:
    """Read a bench file, apply its ``quick`` overrides (with ``quick``) then ``--set`` ones, validate.

    :raises BenchError: naming the file and the key path, with the fix.
    """
    source = str(path)
    try:
        data = read_yaml(path, what="bench file", keys="name, methods, seeds, tasks, ...")
        if quick:
            q = data.get("quick") or {}
            if not isinstance(q, dict):
                raise BenchError(f"{source}: quick must be a mapping of dotted keys to values")
            for key, value in q.items():
                set_key(data, key, copy.deepcopy(value), where=f"{source}: quick: {key!r}")
        for assignment in overrides:
            apply_override(data, assignment)
    except BenchError:
        raise
    except ConfigError as exc:
        raise BenchError(str(exc)) from None
    try:
        return BenchFile.model_validate(data)
    except ValidationError as exc:
        raise BenchError(
            format_validation_error(exc, source, model=BenchFile, what="bench file", docs=EXAMPLE)
        ) from None
