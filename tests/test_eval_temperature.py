"""Sampled evaluation runs at the rollout temperature (``training.temperature``), as TRL's does: a run that
samples its rollouts at 0.7 is evaluated on how it samples at 0.7, not at 1.0."""

from __future__ import annotations

import json
from pathlib import Path

from train_fixtures import core_run_file

from botgrpo_core.cli.main import main
from botgrpo_core.engine.evaluation import generate
from botgrpo_core.engine.model import load_model

#: far below any logit gap of a float32 model: sampling is argmax
NEAR_ZERO = 1e-4


def _run_file(tmp_path: Path, temperature: float) -> Path:
    """One step, evaluated at steps 0 and 1, greedy and sampled at ``temperature``."""
    return core_run_file(
        tmp_path, eval_size=16, steps=1, group_size=2, temperature=temperature, eval_every=1, eval_greedy=True
    )


def _evals(out: Path) -> list[dict]:
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    return [r for r in rows if r["kind"] == "eval"]


def test_sampled_evaluation_uses_the_rollout_temperature(tmp_path: Path) -> None:
    assert main(["train", str(_run_file(tmp_path, NEAR_ZERO))]) == 0
    evals = _evals(tmp_path / "run")
    assert [e["step"] for e in evals] == [0, 1]
    for e in evals:  # near-zero temperature: every sampled figure is the greedy one
        sampled = {k.removeprefix("eval/sampled/"): v for k, v in e.items() if k.startswith("eval/sampled/")}
        greedy = {k.removeprefix("eval/greedy/"): v for k, v in e.items() if k.startswith("eval/greedy/")}
        assert sampled and sampled == greedy, e


def test_generate_honours_temperature(tmp_path: Path) -> None:
    """The check above can fail: at temperature 1 the same untrained policy's samples are not greedy."""
    from botgrpo_core.config.loading import load_config

    assert main(["train", str(_run_file(tmp_path, 1.0)), "--set", "training.eval_every=0"]) == 0
    config = load_config(tmp_path / "run.yaml")
    model, tokenizer = load_model(config, str(tmp_path / "run" / "final_model"))
    prompts = [f"{a}+{b}=" for a in range(4) for b in range(4)]
    greedy = generate(model, tokenizer, prompts, max_new_tokens=8, greedy=True)[1]
    cold = generate(model, tokenizer, prompts, max_new_tokens=8, greedy=False, temperature=NEAR_ZERO)[1]
    warm = generate(model, tokenizer, prompts, max_new_tokens=8, greedy=False, temperature=1.0)[1]
    assert cold == greedy
    assert warm != greedy


def test_eval_samples_draws_several_samples_per_prompt(tmp_path: Path) -> None:
    """``training.eval_samples: k`` evaluates each held-out prompt k times, each draw its own: at a near-zero
    temperature every draw is the greedy one (figures equal), at temperature 1 the k draws differ."""
    from botgrpo_core.engine import run as run_module

    seen: list[int] = []
    original = run_module.evaluate

    def counting(model, tokenizer, rows, **kw):  # type: ignore[no-untyped-def]
        seen.append(len(rows))
        return original(model, tokenizer, rows, **kw)

    run_module.evaluate = counting  # type: ignore[assignment]
    try:
        path = _run_file(tmp_path, NEAR_ZERO)
        assert main(["train", str(path), "--set", "training.eval_samples=3"]) == 0
    finally:
        run_module.evaluate = original  # type: ignore[assignment]
    assert seen == [48, 16, 48, 16]  # sampled (16 prompts x 3), greedy (16), at steps 0 and 1
    for e in _evals(tmp_path / "run"):
        sampled = {k.removeprefix("eval/sampled/"): v for k, v in e.items() if k.startswith("eval/sampled/")}
        greedy = {k.removeprefix("eval/greedy/"): v for k, v in e.items() if k.startswith("eval/greedy/")}
        assert sampled == greedy and sampled["length"] > 0, e
