"""The Python API as a TRL user meets it: docs/python-api.md's code runs, and a TRL script trains with
botgrpo's token-level advantages and logs botgrpo's metrics through TRL's ``report_to``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "python-api.md"


def doc_code() -> str:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.DOTALL)
    assert len(blocks) >= 4, "docs/python-api.md lost its code blocks"
    return "\n".join(blocks)


def tensorboard_tags(folder: Path) -> set[str]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    tags: set[str] = set()
    for events in folder.rglob("events.out.tfevents*"):
        acc = EventAccumulator(str(events))
        acc.Reload()
        tags |= set(acc.Tags()["scalars"])
    return tags


@pytest.mark.slow
def test_the_doc_runs_and_tensorboard_carries_botgrpo_metrics() -> None:
    code = doc_code() + "\nprint('OUTPUT_DIR=' + output_dir)\n"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert "trl-dapo+bot bot" in done.stdout
    output_dir = Path(re.search(r"OUTPUT_DIR=(.+)", done.stdout)[1].strip())
    tags = {t.removeprefix("train/") for t in tensorboard_tags(output_dir)}
    # TRL's own keys and botgrpo's, side by side in the same event files
    assert {"rewards/answer_reward/mean", "advantages/mean", "reward/token_mean"} <= tags, sorted(tags)
    assert {"signals/script.steps/mean", "groups/no_signal_frac"} <= tags, sorted(tags)


def test_trl_script_gets_token_level_advantages(tmp_path: Path) -> None:
    """One TRL reward function + one local signal defined here: (B, T) advantages differ within a rollout."""
    import torch
    from datasets import Dataset
    from trl import GRPOConfig

    from botgrpo_core import BoTGRPOTrainer, RewardMixture, SignalSpec, Span
    from botgrpo_core.engine.tiny import build_tiny_model, char_tokenizer
    from botgrpo_core.signals.manager import PluginManager, register_signal

    torch.set_num_threads(1)

    class FirstHalf:  # local: +1 on the first half of every completion, -1 on the second
        def __init__(self, params):  # type: ignore[no-untyped-def]
            pass

        def score(self, samples):  # type: ignore[no-untyped-def]
            return [
                [Span(0, len(s.completion) // 2, 1.0), Span(len(s.completion) // 2, len(s.completion), -1.0)]
                if len(s.completion) >= 2
                else []
                for s in samples
            ]

    def has_digit(completions, **kwargs):  # type: ignore[no-untyped-def]
        return [float(any(ch.isdigit() for ch in c)) for c in completions]

    manager = PluginManager(entry_points=[])
    register_signal(
        SignalSpec(name="test.halves", kind="local", bounds=(-1.0, 1.0), make_scorer=FirstHalf),
        manager=manager,
    )
    mixture = RewardMixture.from_dict(
        {"beta": 0.25, "outcome_gap": 1.0, "signals": [{"name": "test.halves"}]},
        manager=manager,
    )
    tokenizer = char_tokenizer()
    args = GRPOConfig(
        output_dir=str(tmp_path),
        per_device_train_batch_size=8,
        num_generations=4,
        max_completion_length=12,
        max_steps=2,
        use_cpu=True,
        bf16=False,
        report_to="none",
        reward_weights=[2.0],
        save_strategy="no",
    )
    trainer = BoTGRPOTrainer(
        model=build_tiny_model(tokenizer, seed=0),
        reward_funcs=[has_digit],
        mixture=mixture,
        args=args,
        train_dataset=Dataset.from_list([{"prompt": f"Q: {a}+1="} for a in range(1, 9)]),
        processing_class=tokenizer,
    )
    batches = []
    original = trainer._generate_and_score_completions

    def capture(inputs):  # type: ignore[no-untyped-def]
        out = original(inputs)
        batches.append((out["advantages"].clone(), out["completion_mask"].bool().clone()))
        return out

    trainer._generate_and_score_completions = capture  # type: ignore[method-assign]
    trainer.train()
    assert batches and trainer.state.global_step == 2
    adv, mask = batches[-1]
    assert adv.shape == mask.shape and adv.dim() == 2  # (B, T), not TRL's (B,)
    spread = [float(a[m].max() - a[m].min()) for a, m in zip(adv, mask, strict=True) if int(m.sum()) >= 2]
    assert max(spread) > 0.1, "token advantages should differ inside a rollout (first half +1, second -1)"
    assert (
        trainer.preset.estimator == "bot" and trainer.preset.aggregation == "token"
    )  # TRL's default dapo loss
    assert list(trainer.reward_weights) == [2.0, 1.0]  # the TRL function's weight, then botgrpo's column


def test_trainer_needs_some_reward() -> None:
    from trl import GRPOConfig

    from botgrpo_core import BoTGRPOTrainer

    with pytest.raises(ValueError, match="needs reward_funcs"):
        BoTGRPOTrainer(model=None, args=GRPOConfig(output_dir="unused", use_cpu=True, report_to="none"))


def test_preset_from_trl_args_keeps_every_trl_loss_and_names_unknown_ones() -> None:
    from trl import GRPOConfig

    from botgrpo_core.engine.trl_algorithm import preset_from_trl_args

    with pytest.raises(ValueError, match=r"loss_type='ppo' is not a TRL 1.16 loss; use one of bnpo, cispo"):
        preset_from_trl_args(GRPOConfig(output_dir="unused", loss_type="ppo", use_cpu=True))
    preset = preset_from_trl_args(GRPOConfig(output_dir="unused", loss_type="grpo", beta=0.04, use_cpu=True))
    assert (preset.aggregation, preset.kl_coef, preset.estimator) == ("sequence", 0.04, "bot")
    cispo = preset_from_trl_args(GRPOConfig(output_dir="unused", loss_type="cispo", use_cpu=True))
    assert (cispo.name, cispo.aggregation) == ("trl-cispo+bot", "token")


def test_mixture_from_yaml_and_dict_errors_name_the_key(tmp_path: Path) -> None:
    from botgrpo_core import ConfigError, RewardMixture

    mixture = RewardMixture.from_yaml(ROOT / "examples" / "quickstart.yaml")
    assert [r.spec.name for r in mixture.runners]
    with pytest.raises(ConfigError, match=r"signals\[0\]\.wieght: unknown key; did you mean 'weight'"):
        RewardMixture.from_dict({"signals": [{"name": "core.length", "wieght": 1}]})


def test_signals_see_which_completions_the_length_cap_cut(tmp_path: Path) -> None:
    """``Sample.truncated`` is True exactly where the completion ends without EOS or pad (TRL's clipped test)."""
    import torch
    from datasets import Dataset
    from trl import GRPOConfig

    from botgrpo_core import BoTGRPOTrainer, RewardMixture, SignalSpec
    from botgrpo_core.engine.tiny import build_tiny_model, char_tokenizer
    from botgrpo_core.signals.manager import PluginManager, register_signal

    torch.set_num_threads(1)
    seen: list[tuple[bool, tuple[int, ...]]] = []

    class Record:
        def __init__(self, params):  # type: ignore[no-untyped-def]
            pass

        def score(self, samples):  # type: ignore[no-untyped-def]
            seen.extend((s.truncated, tuple(s.token_ids)) for s in samples)
            return [0.0 for _ in samples]

    manager = PluginManager(entry_points=[])
    register_signal(
        SignalSpec(name="test.record", kind="global", bounds=(0.0, 1.0), make_scorer=Record), manager=manager
    )
    mixture = RewardMixture.from_dict({"signals": [{"name": "test.record"}]}, manager=manager)
    tokenizer = char_tokenizer()
    args = GRPOConfig(
        output_dir=str(tmp_path),
        per_device_train_batch_size=8,
        num_generations=4,
        max_completion_length=6,
        max_steps=2,
        use_cpu=True,
        bf16=False,
        report_to="none",
        save_strategy="no",
    )
    trainer = BoTGRPOTrainer(
        model=build_tiny_model(tokenizer, seed=0),
        mixture=mixture,
        args=args,
        train_dataset=Dataset.from_list([{"prompt": f"Q: {a}+1="} for a in range(1, 9)]),
        processing_class=tokenizer,
    )
    trainer.train()
    assert len(seen) == 16
    stops = {tokenizer.eos_token_id, tokenizer.pad_token_id}  # TRL's eos_and_pad
    for truncated, ids in seen:
        assert truncated == (len(ids) > 0 and ids[-1] not in stops), (truncated, ids)
    assert any(t for t, _ in seen), "an untrained tiny model should run into a 6-token cap"
