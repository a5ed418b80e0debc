"""Shared pieces of the training tests: in-process arithmetic signals and small run configs.

The signals are a real pluggy plugin (``test_arith``) registered with the process-wide plugin manager,
so the trainer loads them exactly as it loads an installed plugin. They score in the trainer's process
(no worker pool), which keeps the many short training runs of the tests fast.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

import botgrpo_core
from botgrpo_core.signals import Sample, SignalSpec, Span

_STEP = re.compile(r"^(\d+)([+-])(\d+)=(\d+)$")
_ANSWER = re.compile(r"^A: (\d+)$", re.MULTILINE)


class NoParams(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StepScorer:
    """Local: each ``a+b=c`` line gets +1 when true, -1 when false (a span over the line)."""

    def __init__(self, params: NoParams) -> None:
        self.params = params

    def score(self, samples: Sequence[Sample]) -> list[list[Span]]:
        out = []
        for sample in samples:
            spans, pos = [], 0
            for line in sample.completion.split("\n"):
                m = _STEP.match(line)
                if m:
                    a, op, b, c = int(m[1]), m[2], int(m[3]), int(m[4])
                    ok = (a + b if op == "+" else a - b) == c
                    spans.append(Span(pos, pos + len(line), 1.0 if ok else -1.0))
                pos += len(line) + 1
            out.append(spans)
        return out


class AnswerScorer:
    """Global: 1 when the last ``A: n`` line equals ``row['answer']``."""

    def __init__(self, params: NoParams) -> None:
        self.params = params

    def score(self, samples: Sequence[Sample]) -> list[float]:
        out = []
        for sample in samples:
            found = _ANSWER.findall(sample.completion)
            out.append(1.0 if found and found[-1] == str(sample.row["answer"]) else 0.0)
        return out


class DigitScorer:
    """Global: the share of digits among the completion's characters (spread even for a random model)."""

    def __init__(self, params: NoParams) -> None:
        self.params = params

    def score(self, samples: Sequence[Sample]) -> list[float]:
        return [sum(c.isdigit() for c in s.completion) / max(len(s.completion), 1) for s in samples]


class DigitSpanScorer:
    """Local: every run of digits gets +1 (token-level variation even for a random model)."""

    def __init__(self, params: NoParams) -> None:
        self.params = params

    def score(self, samples: Sequence[Sample]) -> list[list[Span]]:
        return [[Span(m.start(), m.end(), 1.0) for m in re.finditer(r"\d+", s.completion)] for s in samples]


class ParityScorer:
    """Global: completion length parity for even reference answers, a constant for odd ones.

    Groups of odd-answer prompts have no spread (DAPO's dynamic sampling drops them), the others do.
    """

    def __init__(self, params: NoParams) -> None:
        self.params = params

    def score(self, samples: Sequence[Sample]) -> list[float]:
        return [float(len(s.completion) % 2) if int(s.row["answer"]) % 2 == 0 else 0.5 for s in samples]


class BrokenScorer:
    """Global: fails on every sample (a misconfigured or crashed signal)."""

    def __init__(self, params: NoParams) -> None:
        self.params = params

    def score(self, samples: Sequence[Sample]) -> list[float]:
        raise RuntimeError("checker crashed: no such binary 'mathcheck'")


def centered(token_rewards: Any, mask: Any, group_index: Any, num_groups: int, *, scale: float = 1.0) -> Any:
    """A plugin estimator: token reward minus the mean of its group's valid token rewards, times ``scale``."""
    import torch

    m = mask.to(token_rewards.dtype)
    r = torch.nan_to_num(token_rewards) * m
    sums = torch.zeros(num_groups, dtype=r.dtype).index_add(0, group_index, r.sum(1))
    counts = torch.zeros(num_groups, dtype=r.dtype).index_add(0, group_index, m.sum(1)).clamp(min=1)
    return (r - (sums / counts)[group_index][:, None]) * m * scale


class ArithPlugin:
    """The ``test_arith`` plugin object."""

    @botgrpo_core.hookimpl
    def botgrpo_register_estimators(self, register: Callable[[str, Any], None]) -> None:
        register("test_centered", centered)

    @botgrpo_core.hookimpl
    def botgrpo_register_signals(self, register: Callable[[SignalSpec], None]) -> None:
        register(SignalSpec("test_arith.steps", "local", (-1.0, 1.0), StepScorer, NoParams))
        register(
            SignalSpec(
                "test_arith.answer", "global", (0.0, 1.0), AnswerScorer, NoParams, required_fields=("answer",)
            )
        )
        register(SignalSpec("test_arith.digits", "global", (0.0, 1.0), DigitScorer, NoParams))
        register(SignalSpec("test_arith.digit_spans", "local", (0.0, 1.0), DigitSpanScorer, NoParams))
        register(SignalSpec("test_arith.broken", "global", (0.0, 1.0), BrokenScorer, NoParams))
        register(SignalSpec("test_arith.parity", "global", (0.0, 1.0), ParityScorer, NoParams))


@pytest.fixture
def arith_plugin(plugin_manager: Any) -> Iterator[Any]:
    """A fresh plugin manager with ``test_arith`` registered."""
    plugin_manager.register(ArithPlugin(), name="test_arith", distribution="botgrpo-tests")
    yield plugin_manager


def run_dict(output_dir: Path, **sections: dict[str, Any]) -> dict[str, Any]:
    """A small run file (as a mapping): tiny model, arithmetic task, test signals, a few steps."""
    base: dict[str, Any] = {
        "model": {"name_or_path": "tiny", "tiny": {"hidden_size": 32, "num_layers": 1, "num_heads": 2}},
        "data": {"source": "task", "task": "arithmetic", "train_size": 64, "eval_size": 8},
        "algorithm": {"preset": "bot-grpo"},
        "rewards": {
            "alpha": 1.0,
            "beta": 0.25,
            "signals": [{"name": "test_arith.digits"}, {"name": "test_arith.steps"}],
        },
        "training": {
            "steps": 2,
            "prompts_per_step": 2,
            "group_size": 4,
            "max_new_tokens": 12,
            "learning_rate": 1e-3,
            "output_dir": str(output_dir),
            "eval_every": 0,
            "eval_greedy": False,
            "plots": False,
        },
        "engine": {"device": "cpu"},
    }
    for name, values in sections.items():
        base[name] = {**base.get(name, {}), **values}
    return base


def core_run_file(tmp_path: Path, workers: int = 0, eval_size: int = 4, **training: object) -> Path:
    """A run file with the core's built-in signals (no test plugin: a subprocess can load it too)."""
    run = {
        "model": {"name_or_path": "tiny", "tiny": {"hidden_size": 32, "num_layers": 1, "num_heads": 2}},
        "data": {"source": "task", "task": "arithmetic", "train_size": 64, "eval_size": eval_size},
        "algorithm": {"preset": "bot-grpo"},
        "rewards": {
            "alpha": 1.0,
            "beta": 0.25,
            "signals": [
                {"name": "core.exact_answer"},
                # uncovered: zero: a +1-only signal centred at its group's mean would give no token credit, and
                # these runs must update the model
                {
                    "name": "core.regex",
                    "params": {"pattern": r"\d+", "value": 1.0},
                    "workers": workers,
                    "uncovered": "zero",
                },
            ],
        },
        "training": {
            "steps": 2,
            "prompts_per_step": 2,
            "group_size": 4,
            "max_new_tokens": 12,
            "learning_rate": 1e-3,
            "output_dir": str(tmp_path / "run"),
            "eval_every": 0,
            "eval_greedy": False,
            **training,
        },
        "engine": {"device": "cpu"},
    }
    path = tmp_path / "run.yaml"
    path.write_text(json.dumps(run), encoding="utf-8")  # JSON is YAML
    return path


def parse(data: dict[str, Any]) -> Any:
    """Validate a run mapping (signals checked against the current plugin manager)."""
    from botgrpo_core.config.loading import parse_config

    return parse_config(data, source="<test>")


def build_trainer(config: Any, **trainer_kwargs: Any) -> tuple[Any, Any, list[dict[str, Any]]]:
    """``(trainer, tokenizer, trainer rows)`` for a run config, built the way `run_training` builds them."""
    import datasets

    from botgrpo_core.engine.data import load_data, to_trainer_rows
    from botgrpo_core.engine.model import load_model, prepare_model_dir
    from botgrpo_core.engine.setup import build_mixture, resolve_preset
    from botgrpo_core.engine.trainer import BoTGRPOTrainer
    from botgrpo_core.engine.trl_args import grpo_args

    preset = resolve_preset(config)
    mixture = build_mixture(config)
    run_data = load_data(config)
    out = Path(config.training.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    model, tokenizer = load_model(config, prepare_model_dir(config, run_data, log=lambda m: None))
    rows = to_trainer_rows(run_data.train, config)
    trainer = BoTGRPOTrainer(
        model,
        args=grpo_args(config, preset, out),
        mixture=mixture,
        preset=preset,
        train_dataset=datasets.Dataset.from_list(rows),
        processing_class=tokenizer,
        **trainer_kwargs,
    )
    return trainer, tokenizer, rows


def group_inputs(rows: Sequence[dict[str, Any]], num_prompts: int, group_size: int) -> list[dict[str, Any]]:
    """A generation batch as TRL's sampler lays it out: each prompt repeated ``group_size`` times."""
    return [dict(row) for row in rows[:num_prompts] for _ in range(group_size)]


#: A fixed batch for the distributed test: 3 groups of 4 rollouts of the first 3 task prompts.
#: Correct and wrong steps, wrong answers, different lengths, one empty completion.
DIST_COMPLETIONS = [
    "{s}\nA: {a}",
    "{s}\nA: 99",
    "",
    "1+1=3\nA: {a}",
    "{s}\nA: {a}",
    "{s}\nA: {a}",
    "{s}\nA: {a}",
    "{s}\nA: {a}",
    "7+1=8\n8+1=10\nA: 0",
    "{s}\nA: {a}",
    "{s}",
    "5-1=4\nA: {a}",
]
DIST_GROUP = 4


def dist_batch(
    tokenizer: Any, rows: Sequence[dict[str, Any]]
) -> tuple[list[str], list[list[int]], list[dict[str, Any]]]:
    """``(prompts, completion ids (with EOS), row fields)`` of the fixed batch, from the task rows."""
    from botgrpo_core.tasks import ArithmeticTask

    prompts, ids, fields = [], [], []
    for i, template in enumerate(DIST_COMPLETIONS):
        row = rows[i // DIST_GROUP]
        solution = ArithmeticTask.solution(ArithmeticTask.parse_row(row)).rsplit("\nA:", 1)[0]
        text = template.format(s=solution, a=row["answer"])
        prompts.append(row["prompt"])
        ids.append(tokenizer(text, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id])
        fields.append({k: v for k, v in row.items() if k != "prompt"})
    return prompts, ids, fields


def dist_results(
    trainer: Any, tokenizer: Any, rows: Sequence[dict[str, Any]], start: int, stop: int
) -> dict[str, Any]:
    """Advantages and metrics of rows ``[start, stop)`` of the fixed batch, for each advantage code path."""
    from botgrpo_core.config.presets import PRESETS
    from botgrpo_core.rewards.samples import decode_samples

    prompts, ids, fields = dist_batch(tokenizer, rows)
    samples = decode_samples(tokenizer, prompts[start:stop], ids[start:stop], fields[start:stop])
    raw = trainer.mixture.score_batch(samples)
    success = trainer._success(raw, samples)
    out: dict[str, Any] = {}
    # test_arith.steps has uncovered: group_mean: its fill gathers (N, 2) coverage moments over processes
    centred = trainer._centre_uncovered(raw, raw.mask, "train")
    out["centred_rewards"] = centred.token_rewards
    # moments gather, outcome path, (B, T) gather; and bot-grpo on the rewards before the fill
    for preset, mix in (
        ("bot-grpo", centred),
        ("grpo", centred),
        ("process", centred),
        ("bot-grpo-raw", raw),
    ):
        trainer.preset = PRESETS[preset.removesuffix("-raw")]
        adv, table, keep = trainer.token_advantages(mix.token_rewards, mix.mask, mix, success)
        out[preset] = {
            "advantages": adv,
            "mask": mix.mask,
            "keep_group": keep,
            "metrics": trainer.batch_metrics(table, adv, mix.mask),
        }
    return out


def dist_config(output_dir: Path) -> dict[str, Any]:
    return run_dict(
        output_dir,
        rewards={
            "alpha": 1.0,
            "beta": 0.4,
            "signals": [
                {"name": "test_arith.answer"},
                {"name": "test_arith.steps", "uncovered": "group_mean"},
            ],
        },
        training={"prompts_per_step": 2, "group_size": DIST_GROUP},
    )


def tiny_grpo_args(output_dir: Path | str, **overrides: Any) -> Any:
    """A TRL ``GRPOConfig`` for a tiny CPU run (8 rollouts of 4 per group, 2 steps, nothing saved)."""
    from trl import GRPOConfig

    kwargs: dict[str, Any] = {
        "output_dir": str(output_dir),
        "per_device_train_batch_size": 8,
        "num_generations": 4,
        "max_completion_length": 10,
        "max_steps": 2,
        "use_cpu": True,
        "bf16": False,
        "report_to": "none",
        "save_strategy": "no",
        "logging_steps": 1,
    }
    kwargs.update(overrides)
    return GRPOConfig(**kwargs)


class DigitRuns:
    """Local: +1 on every run of digits, wherever it is (a tool's answer is digits too)."""

    def __init__(self, params: Any) -> None:
        pass

    def score(self, samples: Sequence[Sample]) -> list[list[Span]]:
        return [[Span(m.start(), m.end(), 1.0) for m in re.finditer(r"\d+", s.completion)] for s in samples]


def digit_runs_mixture(low: float = 0.0, **rewards: Any) -> Any:
    """A ``RewardMixture`` of one local signal, ``test.digit_runs`` (:class:`DigitRuns`, declared bounds
    ``(low, 1)``), on a plugin manager of its own; ``rewards`` are the section's other keys (alpha, beta...).
    Its uncovered tokens get 0 (``uncovered: zero``): centred at its group's mean, a +1-only signal would give
    every token of a group one value, and these tests are about per-token credit."""
    from botgrpo_core import RewardMixture
    from botgrpo_core.signals.manager import PluginManager, register_signal

    manager = PluginManager(entry_points=[])
    register_signal(SignalSpec("test.digit_runs", "local", (low, 1.0), DigitRuns), manager=manager)
    signal = {"name": "test.digit_runs", "uncovered": "zero"}
    return RewardMixture.from_dict({**rewards, "signals": [signal]}, manager=manager)
