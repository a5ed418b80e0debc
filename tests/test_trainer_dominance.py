"""Outcome dominance with TRL ``reward_funcs``: the check sees their spread (a declared ``bounds`` or the
outcomes of the first batches), stays silent while it cannot, and its message names an alpha that works."""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

import pytest
import torch
from train_fixtures import digit_runs_mixture, tiny_grpo_args

pytest.importorskip("trl")

from botgrpo_core.config.errors import ConfigError, OutcomeDominanceWarning


def _mixture(**rewards: Any) -> Any:
    return digit_runs_mixture(low=-1.0, **rewards)


def correct(completions: list[str], **kwargs: Any) -> list[float]:
    return [float(c.count("1") >= 2) for c in completions]


def digit_share(completions: list[str], **kwargs: Any) -> list[float]:
    return [sum(ch.isdigit() for ch in c) / max(len(c), 1) for c in completions]


def test_a_local_signal_alone_is_not_warned_about_at_config_time() -> None:
    """The old false alarm: no global signal, so d was taken as 0 and 'raise rewards.alpha' could not help."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", OutcomeDominanceWarning)
        _mixture(alpha=1.0, beta=1.0)


def test_declared_bounds_decide_at_construction_and_name_values_that_work() -> None:
    from botgrpo_core.engine.dominance import OutcomeDominance

    correct.bounds = (0.0, 1.0)  # type: ignore[attr-defined]
    try:
        ok = OutcomeDominance(_mixture(alpha=1.0, beta=0.25), [correct], None)
        assert not ok.pending and ok.result is not None and ok.result["holds"]  # 1 * 1 > 2 * 0.25 * 1
        with pytest.warns(OutcomeDominanceWarning, match=r"raise rewards\.alpha above 2\b") as caught:
            bad = OutcomeDominance(_mixture(alpha=1.0, beta=1.0), [correct], [1.0])
        assert "set rewards.beta below 0.5" in str(caught[0].message)
        assert bad.result is not None and not bad.result["holds"]
        fixed = OutcomeDominance(_mixture(alpha=2.01, beta=1.0), [correct], [1.0])  # the named fix
        assert fixed.result is not None and fixed.result["holds"]
        with pytest.raises(ConfigError, match=r"rewards\.strict: true makes this an error"):
            OutcomeDominance(_mixture(alpha=1.0, beta=1.0, strict=True), [correct], [1.0])
    finally:
        del correct.bounds  # type: ignore[attr-defined]


def test_smallest_group_gap() -> None:
    from botgrpo_core.engine.dominance import smallest_group_gap

    outcome = torch.tensor([0.0, 1.0, 1.0, 0.25, 2.0, 2.0, 2.0, 2.0, float("nan"), 3.0, 3.5, 3.0])
    assert smallest_group_gap(outcome, 4) == pytest.approx(0.25)
    assert smallest_group_gap(torch.tensor([1.0, 1.0, 1.0 + 1e-9, float("nan")]), 4) is None  # float noise
    assert smallest_group_gap(torch.tensor([0.0, 1.0]), 4) is None  # no whole group


def test_observed_gaps_stay_silent_until_outcomes_differ() -> None:
    from botgrpo_core.engine.dominance import OutcomeDominance

    check = OutcomeDominance(_mixture(alpha=1.0, beta=1.0), [correct], None, window=3)
    assert check.pending
    with warnings.catch_warnings():
        warnings.simplefilter("error", OutcomeDominanceWarning)
        check.observe(torch.zeros(8), 4)  # every outcome equal: nothing known, nothing said
    assert check.pending and check.gap is None
    with pytest.warns(OutcomeDominanceWarning, match=r"d = 1 comes from the outcomes of the first 2"):
        check.observe(torch.tensor([0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0]), 4)
    assert not check.pending


def _train_one_step(tmp_path: Path, alpha: float) -> list[str]:
    from datasets import Dataset

    from botgrpo_core import BoTGRPOTrainer
    from botgrpo_core.engine.tiny import build_tiny_model, char_tokenizer

    torch.set_num_threads(1)
    tokenizer = char_tokenizer()
    trainer = BoTGRPOTrainer(
        build_tiny_model(tokenizer, seed=0),
        [digit_share],
        tiny_grpo_args(tmp_path / f"alpha{alpha}", max_completion_length=12, max_steps=1, seed=3),
        Dataset.from_list([{"prompt": f"Q: {a}+1="} for a in range(1, 9)]),
        processing_class=tokenizer,
        mixture=_mixture(alpha=alpha, beta=0.5),
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", OutcomeDominanceWarning)
        trainer.train()
    return [str(w.message) for w in caught if issubclass(w.category, OutcomeDominanceWarning)]


def test_a_real_run_warns_from_observed_outcomes_and_the_named_alpha_silences_it(tmp_path: Path) -> None:
    """A continuous TRL reward (share of digits) and a local signal: the first batch's outcome gaps are
    small, the warning names the alpha that makes dominance hold, and the same run with it is silent."""
    messages = _train_one_step(tmp_path, alpha=1.0)
    assert len(messages) == 1, messages
    named = float(re.search(r"raise rewards\.alpha above ([0-9.e+]+)", messages[0])[1])
    assert named > 1.0
    assert _train_one_step(tmp_path, alpha=named * 1.01) == []
