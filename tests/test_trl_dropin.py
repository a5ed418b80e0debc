"""BoTGRPOTrainer as a drop-in GRPOTrainer: TRL 1.16's signature, its example scripts' call shapes (positional,
keyword, no ``args``, ``peft_config=LoraConfig``) each trained 2 steps on a tiny model built here, and every
TRL 1.16 ``loss_type`` running with ``(B, T)`` advantages."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest
import torch
from train_fixtures import tiny_grpo_args

pytest.importorskip("trl")


def _tiny() -> tuple[Any, Any]:
    from botgrpo_core.engine.tiny import build_tiny_model, char_tokenizer

    torch.set_num_threads(1)
    tokenizer = char_tokenizer()
    return build_tiny_model(tokenizer, seed=0), tokenizer


def _rows(n: int = 8) -> Any:
    from datasets import Dataset

    return Dataset.from_list([{"prompt": f"Q: {a}+1=", "answer": a + 1} for a in range(1, n + 1)])


def correct(completions: list[str], answer: list[int], **kwargs: Any) -> list[float]:
    """A TRL reward function as TRL's docs write them: 0/1 per completion, dataset columns by name."""
    return [float(str(a) in c) for c, a in zip(completions, answer, strict=True)]


def digits(completions: list[str], **kwargs: Any) -> list[float]:
    """The share of digits (spread even under a random policy)."""
    return [sum(ch.isdigit() for ch in c) / max(len(c), 1) for c in completions]


def _config(tmp_path: Path, **overrides: Any) -> Any:
    return tiny_grpo_args(tmp_path / "out", **overrides)


class _Capture:
    """Records the advantages and masks of every batch the trainer builds."""

    def __init__(self, trainer: Any) -> None:
        self.batches: list[dict[str, Any]] = []
        original = trainer._generate_and_score_completions

        def capture(inputs: Any) -> Any:
            out = original(inputs)
            self.batches.append({k: v.clone() for k, v in out.items() if isinstance(v, torch.Tensor)})
            return out

        trainer._generate_and_score_completions = capture


def test_signature_is_grpotrainers_then_botgrpos_keywords() -> None:
    from trl import GRPOTrainer

    from botgrpo_core import BoTGRPOTrainer

    theirs = list(inspect.signature(GRPOTrainer.__init__).parameters.values())
    ours = list(inspect.signature(BoTGRPOTrainer.__init__).parameters.values())
    assert [(p.name, p.kind, p.default) for p in ours[: len(theirs)]] == [
        (p.name, p.kind, p.default) for p in theirs
    ]
    extra = ours[len(theirs) :]
    assert [p.name for p in extra] == [
        "mixture",
        "preset",
        "success_fn",
        "dynamic_sampling_rounds",
        "log_fn",
        "gaming_monitor",
    ]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in extra)


def test_positional_call_as_trl_scripts_write_it(tmp_path: Path) -> None:
    """``GRPOTrainer(model, [reward], GRPOConfig(...), dataset)``: the call that raised TypeError before."""
    from botgrpo_core import BoTGRPOTrainer

    model, tokenizer = _tiny()
    trainer = BoTGRPOTrainer(model, [correct, digits], _config(tmp_path), _rows(), None, tokenizer)
    seen = _Capture(trainer)
    trainer.train()
    assert trainer.state.global_step == 2
    adv, mask = seen.batches[-1]["advantages"], seen.batches[-1]["completion_mask"]
    assert adv.shape == mask.shape  # (B, T) advantages
    assert trainer.reward_func_names == ["correct", "digits", "botgrpo_mixture"]


def test_keyword_call_with_reward_processing_classes(tmp_path: Path) -> None:
    """TRL's keyword form, a single (non-list) reward function and ``reward_processing_classes``."""
    from botgrpo_core import BoTGRPOTrainer

    model, tokenizer = _tiny()
    trainer = BoTGRPOTrainer(
        model=model,
        reward_funcs=digits,
        args=_config(tmp_path, loss_type="grpo"),
        train_dataset=_rows(),
        processing_class=tokenizer,
        reward_processing_classes=None,
    )
    trainer.train()
    assert trainer.state.global_step == 2
    assert trainer.preset.aggregation == "sequence" and trainer.loss_type == "grpo"
    classes = BoTGRPOTrainer(
        model=model,
        reward_funcs=digits,
        args=_config(tmp_path),
        train_dataset=_rows(),
        processing_class=tokenizer,
        reward_processing_classes=tokenizer,
    ).reward_processing_classes
    assert classes == [tokenizer, None]  # the user's, then none for botgrpo's column


def test_no_args_quickstart_form(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """TRL's quickstart: ``GRPOTrainer(model="...", reward_funcs=f, train_dataset=ds)``, model by path, no
    ``args`` and no ``processing_class`` (both loaded/made as TRL does); stopped after 2 steps by a callback."""
    from transformers import TrainerCallback

    from botgrpo_core import BoTGRPOTrainer
    from botgrpo_core.engine.tiny import save_pretrained

    class StopAfter(TrainerCallback):
        def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            control.should_training_stop = state.global_step >= 2

    model, tokenizer = _tiny()
    path = save_pretrained(model, tokenizer, tmp_path / "tiny-model")
    monkeypatch.chdir(tmp_path)
    trainer = BoTGRPOTrainer(
        model=str(path), reward_funcs=digits, train_dataset=_rows(4), callbacks=[StopAfter()]
    )
    assert trainer.args.output_dir.endswith("tiny-model-GRPO")  # TRL's default name
    assert (trainer.args.num_generations, trainer.args.loss_type) == (8, "dapo")  # TRL's defaults
    trainer.train()
    assert trainer.state.global_step == 2


def test_peft_lora_trains_the_adapter_only(tmp_path: Path) -> None:
    """``peft_config=LoraConfig(...)``: TRL wraps the model; the adapter moves, the base weights do not."""
    from peft import LoraConfig, PeftModel

    from botgrpo_core import BoTGRPOTrainer

    model, tokenizer = _tiny()
    base_before = {n: p.detach().clone() for n, p in model.named_parameters()}
    trainer = BoTGRPOTrainer(
        model=model,
        reward_funcs=[digits],
        args=_config(tmp_path, learning_rate=5e-2),
        train_dataset=_rows(),
        processing_class=tokenizer,
        peft_config=LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"], lora_dropout=0.0),
    )
    assert isinstance(trainer.model, PeftModel)
    lora_before = {n: p.detach().clone() for n, p in trainer.model.named_parameters() if "lora_" in n}
    trainer.train()
    assert trainer.state.global_step == 2
    after = dict(trainer.model.named_parameters())
    moved = [n for n, p in lora_before.items() if not torch.equal(p, after[n].detach())]
    assert moved, "no LoRA weight changed in 2 steps"
    base_after = {n.replace("base_model.model.", "").replace(".base_layer", ""): p for n, p in after.items()}
    assert all(torch.equal(base_before[n], base_after[n].detach()) for n in base_before if n in base_after)


@pytest.mark.parametrize("loss_type", ["grpo", "dapo", "dr_grpo", "bnpo", "luspo", "cispo", "sapo", "vespo"])
def test_every_trl_loss_type_runs_with_token_advantages(tmp_path: Path, loss_type: str) -> None:
    """Each TRL 1.16 loss trains a step with (B, T) advantages that differ inside a rollout (a local
    signal), and its loss moves the weights."""
    from botgrpo_core import BoTGRPOTrainer, RewardMixture, SignalSpec, Span
    from botgrpo_core.engine.trl_algorithm import TRL_LOSSES
    from botgrpo_core.signals.manager import PluginManager, register_signal

    assert loss_type in TRL_LOSSES

    class Halves:
        def __init__(self, params: Any) -> None:
            pass

        def score(self, samples: Any) -> list[list[Span]]:
            return [
                [Span(0, len(s.completion) // 2, 1.0), Span(len(s.completion) // 2, len(s.completion), -1.0)]
                for s in samples
            ]

    manager = PluginManager(entry_points=[])
    register_signal(SignalSpec("test.halves", "local", (-1.0, 1.0), Halves), manager=manager)
    mixture = RewardMixture.from_dict({"beta": 0.5, "signals": [{"name": "test.halves"}]}, manager=manager)
    model, tokenizer = _tiny()
    before = [p.detach().clone() for p in model.parameters()]
    trainer = BoTGRPOTrainer(
        model,
        [digits],
        _config(tmp_path, loss_type=loss_type, max_steps=1, learning_rate=1e-2),
        _rows(),
        processing_class=tokenizer,
        mixture=mixture,
    )
    seen = _Capture(trainer)
    trainer.train()
    adv, mask = seen.batches[-1]["advantages"], seen.batches[-1]["completion_mask"].bool()
    assert adv.shape == mask.shape
    spread = max(float(a[m].max() - a[m].min()) for a, m in zip(adv, mask, strict=True) if int(m.sum()) > 1)
    assert spread > 0.1
    assert trainer.preset.aggregation == TRL_LOSSES[loss_type].aggregation
    assert trainer.preset.name == f"trl-{loss_type}+bot"
    assert any(not torch.equal(a, b.detach()) for a, b in zip(before, model.parameters(), strict=True))
    trainer.create_model_card()
    readme = (tmp_path / "out" / "README.md").read_text()
    assert f"TRL loss_type `{loss_type}`" in readme and "TRL reward function `digits`" in readme


def test_sequence_ratio_with_token_estimator_is_refused_with_the_reason(tmp_path: Path) -> None:
    from botgrpo_core import BoTGRPOTrainer

    model, _ = _tiny()
    with pytest.raises(ValueError, match=r"per-token credit is averaged away"):
        BoTGRPOTrainer(
            model, [digits], _config(tmp_path, loss_type="luspo", importance_sampling_level="sequence")
        )


TRL_SCRIPT = """
import torch
from datasets import Dataset
from peft import LoraConfig
from transformers import TrainerCallback
from trl import GRPOTrainer

from botgrpo_core.engine.tiny import build_tiny_model, char_tokenizer, save_pretrained

torch.set_num_threads(1)
tokenizer = char_tokenizer()
save_pretrained(build_tiny_model(tokenizer, seed=0), tokenizer, "tiny-model")  # stands in for a hub id


def reward_len(completions, **kwargs):
    return [-abs(8 - len(completion)) for completion in completions]


class StopAfterTwoSteps(TrainerCallback):
    def on_step_end(self, args, state, control, **kwargs):
        control.should_training_stop = state.global_step >= 2


dataset = Dataset.from_list([{"prompt": f"Q: {a}+1="} for a in range(4)])
trainer = GRPOTrainer(
    "tiny-model",
    reward_len,
    train_dataset=dataset,
    peft_config=LoraConfig(r=8, target_modules=["q_proj", "v_proj"]),
    callbacks=[StopAfterTwoSteps()],
)
trainer.train()
print("TRAINED", type(trainer).__name__, trainer.state.global_step, type(trainer.model).__name__)
"""


@pytest.mark.slow
def test_a_trl_script_trains_by_changing_the_import_and_the_class_name(tmp_path: Path) -> None:
    """TRL's documented style in one script (model by name, positional reward function, no ``args``, LoRA),
    run in a fresh interpreter with only the import line and the class name changed."""
    import os
    import subprocess
    import sys

    script = TRL_SCRIPT.replace("from trl import GRPOTrainer", "from botgrpo_core import BoTGRPOTrainer")
    script = script.replace("GRPOTrainer(\n", "BoTGRPOTrainer(\n")
    assert script.count("BoTGRPOTrainer") == 2 and len(script.splitlines()) == len(TRL_SCRIPT.splitlines())
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert "TRAINED BoTGRPOTrainer 2 PeftModel" in done.stdout
    assert (tmp_path / "tiny-model-GRPO").is_dir()  # TRL's default output_dir
