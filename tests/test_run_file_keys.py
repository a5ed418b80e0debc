"""The run file's keys for what a TRL user sets in a script: ``training.report_to``, ``model.peft`` (LoRA)
and a signal from a Python file (``rewards.signals[i].path``).

One real 2-step run on the tiny model uses all three (TensorBoard event files carry botgrpo's metrics,
only the LoRA adapters train, the file's local signal scores the rollouts); the file signal is also
checked at validate time (missing file or function, a plugin's name, missing kind/bounds) and in the
core's worker pool under its timeout and on_error policy.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from botgrpo_core.config.errors import ConfigError
from botgrpo_core.config.loading import load_config, parse_config
from botgrpo_core.signals import Sample

SIGNAL_FILE = '''
import re, time
from botgrpo_core.signals import Span

def digits(samples):
    """Local: +1 on every run of digits."""
    return [[Span(m.start(), m.end(), 1.0) for m in re.finditer(r"[0-9]+", s.completion)] for s in samples]

def slow_on_x(samples):
    """Global: 1.0, but a completion 'x' takes longer than any timeout in the tests."""
    out = []
    for s in samples:
        if s.completion == "x":
            time.sleep(60)
        out.append(1.0)
    return out

THRESHOLD = 3
'''


def _run(tmp_path: Path, signal: dict, **sections: dict) -> dict:
    data = {
        "model": {"name_or_path": "tiny", "tiny": {"hidden_size": 32, "num_layers": 1, "num_heads": 2}},
        "data": {"source": "task", "task": "arithmetic", "train_size": 64, "eval_size": 4},
        "rewards": {"alpha": 1.0, "beta": 0.25, "signals": [{"name": "core.exact_answer"}, signal]},
        "training": {
            "steps": 2,
            "prompts_per_step": 2,
            "group_size": 4,
            "max_new_tokens": 12,
            "learning_rate": 1e-2,
            "output_dir": str(tmp_path / "out"),
            "eval_every": 0,
            "eval_greedy": False,
            "plots": False,
        },
        "engine": {"device": "cpu"},
    }
    for name, values in sections.items():
        data[name] = {**data.get(name, {}), **values}
    return data


@pytest.fixture
def signal_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "my_signals.py").write_text(SIGNAL_FILE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # relative paths are read from the current folder, as data.path is
    return tmp_path / "my_signals.py"


DIGITS = {"name": "mine.digits", "path": "my_signals.py:digits", "kind": "local", "bounds": [0, 1]}


@pytest.mark.parametrize(
    ("signal", "message"),
    [
        (
            {**DIGITS, "path": "nowhere.py:digits"},
            "rewards.signals[1].path: 'nowhere.py' does not exist (relative to",
        ),
        (
            {**DIGITS, "path": "my_signals.py:digitz"},
            "rewards.signals[1].path: 'my_signals.py' defines no 'digitz' (its functions: digits, slow_on_x)",
        ),
        ({**DIGITS, "path": "my_signals.py:THRESHOLD"}, "'THRESHOLD' is a int, not a function"),
        ({**DIGITS, "path": "my_signals.py"}, "is not 'path/to/file.py:function'"),
        ({k: v for k, v in DIGITS.items() if k != "bounds"}, "needs kind (global or local) and bounds"),
        ({**DIGITS, "params": {"x": 1}}, "a signal from a file takes no params"),
        ({"name": "core.regex", "kind": "local"}, "kind and bounds are declared by the signal's plugin"),
        ({**DIGITS, "name": "core.length"}, "'core.length' is a signal of plugin 'core' (botgrpo-core)"),
    ],
    ids=["no-file", "no-function", "not-callable", "no-colon", "no-bounds", "params", "plugin-kind", "taken"],
)
def test_a_file_signal_is_refused_at_validate_time_naming_the_key(
    signal: dict, message: str, signal_file: Path, tmp_path: Path, plugin_manager
) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(_run(tmp_path, signal), source="run.yaml")
    assert message in str(caught.value)
    assert str(caught.value).startswith("run.yaml: ")


def test_a_file_that_fails_to_import_names_the_error(tmp_path: Path, monkeypatch, plugin_manager) -> None:
    (tmp_path / "broken.py").write_text("import no_such_module_for_botgrpo\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=r"importing 'broken.py' failed: ModuleNotFoundError"):
        parse_config(_run(tmp_path, {**DIGITS, "path": "broken.py:digits"}))


def test_a_file_signal_runs_in_the_core_pool_under_its_timeout_and_on_error(
    signal_file: Path, tmp_path: Path, plugin_manager
) -> None:
    """workers: 1 runs the file's function in a worker process of the core's pool, which loads the file
    itself; a sample past timeout_s gets on_error's value (zero), the others their own."""
    from botgrpo_core.rewards.mixture import RewardMixture

    signal = {
        "name": "mine.slow",
        "path": "my_signals.py:slow_on_x",
        "kind": "global",
        "bounds": [0, 1],
        "workers": 1,
        "timeout_s": 1.0,
        "cache": False,
    }
    data = _run(tmp_path, signal)
    data["rewards"]["signals"] = [signal]
    data["rewards"]["beta"] = 0.0
    config = parse_config(data)
    mixture = RewardMixture(config.rewards)
    try:
        samples = [Sample("p", c, offsets=[(0, 1)], row={"answer": "1"}) for c in ("a", "x", "b")]
        out = mixture.score_batch(samples)
    finally:
        mixture.close()
    slow = out.signals["mine.slow"]
    assert slow.failed == [False, True, False]
    assert slow.reasons == {"timeout": 1}
    assert out.outcome.tolist() == [1.0, 0.0, 1.0]  # on_error: zero for the timed-out sample only


@pytest.mark.slow
def test_report_to_peft_and_a_file_signal_in_one_real_run(signal_file: Path, tmp_path: Path, plugin_manager):
    import torch
    from safetensors.torch import load_file
    from test_python_api import tensorboard_tags

    from botgrpo_core.engine.run import run_training

    data = _run(
        tmp_path,
        {**DIGITS, "uncovered": "zero"},  # +1-only: centred at its group's mean it would give no token credit
        model={"peft": {"r": 4, "alpha": 8, "dropout": 0.0, "target_modules": ["q_proj", "v_proj"]}},
        training={"report_to": "tensorboard"},
    )
    config = parse_config(data)
    assert config.training.report_to == ["tensorboard"]
    summary = run_training(config, progress=False, log=lambda m: None)
    out = tmp_path / "out"
    assert summary
    # model.peft: the final model is a LoRA adapter on q_proj and v_proj only, with r 4 and alpha 8
    adapter = (out / "final_model" / "adapter_config.json").read_text()
    assert '"r": 4' in adapter and '"lora_alpha": 8' in adapter
    weights = load_file(out / "final_model" / "adapter_model.safetensors")
    assert weights and all("lora_" in k and ("q_proj" in k or "v_proj" in k) for k in weights)
    assert any(float(w.abs().sum()) > 0 for k, w in weights.items() if "lora_B" in k)  # the adapters trained
    assert not (out / "final_model" / "model.safetensors").exists()  # the base weights did not change
    # training.report_to: TensorBoard event files carry botgrpo's metrics beside TRL's
    tags = {t.removeprefix("train/") for t in tensorboard_tags(out)}
    assert {"signals/mine.digits/mean", "advantages/mean"} <= tags, sorted(tags)
    # the file signal scored the rollouts (its per-signal metric is in metrics.jsonl too)
    metrics = (out / "metrics.jsonl").read_text()
    assert "signals/mine.digits/mean" in metrics
    assert torch.is_tensor(next(iter(weights.values())))


def test_report_to_in_engine_trl_args_points_at_the_key(tmp_path: Path) -> None:
    from botgrpo_core.engine.setup import TrainingSetupError
    from botgrpo_core.engine.trl_args import _user_trl_args

    with pytest.raises(
        TrainingSetupError, match=r"engine.trl_args: report_to is the run file's training.report_to"
    ):
        _user_trl_args({"report_to": "wandb"}, {"report_to"}, None)  # type: ignore[arg-type]


def test_report_to_values(tmp_path: Path) -> None:
    run = tmp_path / "run.yaml"
    base = "rewards:\n  beta: 0\n  signals:\n    - name: core.exact_answer\ntraining:\n  report_to: {}\n"
    for value, expected in [
        ("none", "none"),
        ("[]", "none"),
        ("wandb", ["wandb"]),
        ("[tensorboard, trackio]", ["tensorboard", "trackio"]),
    ]:
        run.write_text(base.format(value))
        assert load_config(run).training.report_to == expected
    run.write_text(base.format("mlflow"))
    with pytest.raises(ConfigError, match="training.report_to"):
        load_config(run)


def test_peft_needs_peft_installed_and_says_how(monkeypatch) -> None:
    import sys

    from botgrpo_core.config.sections import LoraSpec
    from botgrpo_core.engine.lora import lora_config
    from botgrpo_core.engine.setup import TrainingSetupError

    config = lora_config(LoraSpec(r=8, alpha=16, dropout=0.1, target_modules=["q_proj"]))
    assert (config.r, config.lora_alpha, config.lora_dropout, set(config.target_modules)) == (
        8,
        16,
        0.1,
        {"q_proj"},
    )
    assert lora_config(None) is None
    monkeypatch.setitem(sys.modules, "peft", None)
    with pytest.raises(
        TrainingSetupError, match=r'model.peft needs the peft package: pip install "botgrpo-core\[peft\]"'
    ):
        lora_config(LoraSpec())


def test_the_docs_file_signal_example_validates_and_scores(
    tmp_path: Path, monkeypatch, plugin_manager
) -> None:
    """docs/writing-plugins.md's one-off signal: its file and run file, as printed, load and score."""
    import re

    import yaml

    from botgrpo_core.rewards.mixture import RewardMixture

    text = (Path(__file__).resolve().parents[1] / "docs" / "writing-plugins.md").read_text(encoding="utf-8")
    code = re.search(r"<!-- file-signal -->\n```python\n(.*?)```", text, re.S).group(1)
    run = yaml.safe_load(re.search(r"<!-- file-signal-run -->\n```yaml\n(.*?)```", text, re.S).group(1))
    (tmp_path / "my_rewards.py").write_text(code, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    run["rewards"]["signals"][1]["workers"] = 0  # scored in this process here
    config = parse_config(run, source="writing-plugins.md")
    mixture = RewardMixture(config.rewards)
    try:
        completion = "x TODO y TODO"
        out = mixture.score_batch(
            [Sample("p", completion, offsets=[(i, i + 1) for i in range(len(completion))])]
        )
    finally:
        mixture.close()
    assert out.local[0].tolist() == [0, 0, -1, -1, -1, -1, 0, 0, 0, -1, -1, -1, -1]


def test_a_mixture_built_with_another_manager_registers_the_file_signal(
    signal_file: Path, tmp_path: Path, plugin_manager
) -> None:
    """The run file was checked with one plugin manager; a mixture built later with a fresh one (a test, a
    bench job) registers the file's signal there too."""
    from botgrpo_core.rewards.mixture import RewardMixture
    from botgrpo_core.signals.manager import PluginManager

    config = parse_config(_run(tmp_path, DIGITS))
    fresh = PluginManager(entry_points=[])
    mixture = RewardMixture(config.rewards, manager=fresh)
    try:
        out = mixture.score_batch([Sample("p", "a12", offsets=[(0, 1), (1, 2), (2, 3)], row={"answer": "1"})])
    finally:
        mixture.close()
    assert out.local[0].tolist() == [0.0, 1.0, 1.0]
    assert fresh.signals()["mine.digits"].plugin == "mine.digits (file)"
