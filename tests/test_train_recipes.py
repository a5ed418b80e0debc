"""The quickstart and the recipes are valid run files whose settings TRL accepts, for every process count.

``engine/trl_args.py: per_device_batch`` is the batch arithmetic's one home; these tests run it for each
recipe under ``WORLD_SIZE`` 1, 6, 7 and 8 (the 8-GPU layouts: colocate on 8, a judge or vLLM server on
one GPU beside 7 or 6 training processes) and check that a count that cannot work names the exact
``--set`` that fixes it, by applying that ``--set``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from botgrpo_core.config.loading import load_config
from botgrpo_core.engine.setup import TrainingSetupError, resolve_preset
from botgrpo_core.engine.trl_args import grpo_args, per_device_batch

ROOT = Path(__file__).resolve().parents[1]
RECIPES = sorted((ROOT / "examples" / "recipes").glob("*.yaml"))
RUN_FILES = [ROOT / "examples" / "quickstart.yaml", *RECIPES]
PROCESS_COUNTS = (1, 6, 7, 8)
CPU = [
    "engine.device=cpu",
    "engine.use_vllm=false",
    "engine.bf16=false",
    "engine.gradient_checkpointing=false",
]


def test_there_are_recipes_for_the_documented_models_and_layouts():
    names = {p.name for p in RECIPES}
    assert {"react-qwen2.5-3b.yaml", "math-qwen2.5-3b.yaml", "math-smollm3-3b.yaml"} <= names
    assert {"math-phi4-mini-reasoning.yaml", "math-qwen2.5-3b-8gpu.yaml"} <= names


@pytest.mark.parametrize("path", RUN_FILES, ids=lambda p: p.name)
def test_run_file_is_valid_and_trl_accepts_it(path, tmp_path, recwarn):
    config = load_config(path)
    assert not [w for w in recwarn if "outcome dominance" in str(w.message)]
    cpu = load_config(path, [*CPU, f"training.output_dir={tmp_path}"])
    args = grpo_args(cpu, resolve_preset(cpu), tmp_path)
    t = config.training
    assert (
        args.per_device_train_batch_size * args.gradient_accumulation_steps
        == t.prompts_per_step * t.group_size
    )
    assert args.num_generations == t.group_size and args.max_completion_length == t.max_new_tokens


def _documented_counts(path: Path) -> set[int]:
    """The ``--num_processes N`` of the launch lines in a recipe's header (lines with no ``--set`` fix)."""
    header = path.read_text(encoding="utf-8").split("\nmodel:")[0]
    return {
        int(m[1])
        for line in header.splitlines()
        if "prompts_per_step" not in line
        for m in re.finditer(r"--num_processes (\d+)", line)
    }


def _split(path: Path, processes: int, monkeypatch, extra=()) -> tuple[int, int]:
    monkeypatch.setenv("WORLD_SIZE", str(processes))
    config = load_config(path, [*CPU, *extra])
    return per_device_batch(config, resolve_preset(config))


@pytest.mark.parametrize("processes", PROCESS_COUNTS)
@pytest.mark.parametrize("path", RUN_FILES, ids=lambda p: p.name)
def test_every_process_count_splits_or_says_exactly_what_to_set(path, processes, monkeypatch):
    t = load_config(path).training
    rollouts = t.prompts_per_step * t.group_size
    try:
        per_device, passes = _split(path, processes, monkeypatch)
    except TrainingSetupError as exc:
        assert processes not in _documented_counts(path), (
            f"{path.name} documents {processes} processes: {exc}"
        )
        fix = re.search(r"--set (training\.prompts_per_step=(\d+))", str(exc))
        assert fix, str(exc)
        assert int(fix[2]) % processes == 0 or int(fix[2]) * t.group_size % processes == 0
        per_device, passes = _split(path, processes, monkeypatch, [fix[1]])  # the named fix works
        rollouts = int(fix[2]) * t.group_size
    assert per_device * passes * processes == rollouts
    if t.gradient_accumulation_steps == "auto":
        assert per_device <= t.micro_batch_size
        # the fewest passes: one pass fewer would not split evenly or would exceed micro_batch_size
        share = rollouts // processes
        assert all(share % k or share // k > t.micro_batch_size for k in range(1, passes))


def test_the_8gpu_recipe_documents_6_and_7_processes():
    assert {6, 7} <= _documented_counts(ROOT / "examples" / "recipes" / "math-qwen2.5-3b-8gpu.yaml")


@pytest.mark.parametrize("path", RECIPES, ids=lambda p: p.name)
def test_the_fix_a_recipe_header_gives_for_6_and_7_processes_works(path, monkeypatch):
    fixes = set(re.findall(r"--set (training\.prompts_per_step=\d+)", path.read_text(encoding="utf-8")))
    for fix in fixes:
        for processes in (6, 7, 8):
            per_device, passes = _split(path, processes, monkeypatch, [fix])
            assert per_device * passes * processes == int(fix.split("=")[1]) * 8


@pytest.mark.parametrize("path", RECIPES, ids=lambda p: p.name)
def test_recipes_say_how_to_run_sharded_and_that_works(path, monkeypatch, tmp_path):
    """ZeRO-3/FSDP shard the parameters, so the main-process evaluation cannot run: each recipe's header
    says to add ``--set data.eval_size=0``, and with it the run's TRL arguments build."""
    assert "--set data.eval_size=0" in path.read_text(encoding="utf-8").split("\nmodel:")[0]
    monkeypatch.setenv("ACCELERATE_USE_FSDP", "true")
    config = load_config(path, [*CPU, f"training.output_dir={tmp_path}"])
    with pytest.raises(TrainingSetupError, match=r"--set data\.eval_size=0"):
        grpo_args(config, resolve_preset(config), tmp_path)
    sharded = load_config(path, [*CPU, f"training.output_dir={tmp_path}", "data.eval_size=0"])
    assert per_device_batch(sharded, resolve_preset(sharded))


def test_the_batch_errors_name_the_values_that_work(monkeypatch, tmp_path):
    quickstart = ROOT / "examples" / "quickstart.yaml"
    monkeypatch.setenv("WORLD_SIZE", "7")
    config = load_config(quickstart, ["training.prompts_per_step=32", "training.group_size=8"])
    with pytest.raises(TrainingSetupError, match=r"multiple of 7 \(nearest: 28 or 35\), e\.g\. --set "):
        per_device_batch(config)
    # A fixed gradient_accumulation_steps that does not divide a process's share: its divisors, or auto.
    monkeypatch.setenv("WORLD_SIZE", "2")
    config = load_config(quickstart, ["training.prompts_per_step=6", "training.group_size=4"])
    config.training.gradient_accumulation_steps = 5
    with pytest.raises(TrainingSetupError, match=r"set it to one of 1, 2, 3, 4, 6, 12, or to auto"):
        per_device_batch(config)
    # DAPO keeps whole groups on each process: prompts_per_step must be a multiple of the processes.
    monkeypatch.setenv("WORLD_SIZE", "4")
    config = load_config(quickstart, ["algorithm.preset=dapo", "training.prompts_per_step=6"])
    with pytest.raises(TrainingSetupError, match=r"dynamic sampling .* multiple of 4 \(nearest: 4 or 8\)"):
        per_device_batch(config, resolve_preset(config))
    config.training.prompts_per_step = 8
    assert per_device_batch(config, resolve_preset(config))[0] * 4 == 8 * config.training.group_size


def test_auto_takes_the_fewest_passes_within_micro_batch_size(monkeypatch):
    quickstart = ROOT / "examples" / "quickstart.yaml"
    for processes, prompts, micro, expected in [
        (1, 32, 32, (32, 8)),
        (8, 32, 32, (32, 1)),
        (7, 42, 16, (16, 3)),
    ]:
        monkeypatch.setenv("WORLD_SIZE", str(processes))
        config = load_config(
            quickstart,
            [
                f"training.prompts_per_step={prompts}",
                "training.group_size=8",
                "training.gradient_accumulation_steps=auto",
                f"training.micro_batch_size={micro}",
            ],
        )
        assert per_device_batch(config) == expected
    with pytest.raises(Exception, match="at least 1, or 'auto'"):
        load_config(quickstart, ["training.gradient_accumulation_steps=0"])


def test_every_quickstart_key_is_commented():
    for n, line in enumerate((ROOT / "examples" / "quickstart.yaml").read_text().splitlines(), 1):
        if re.match(r"^\s*(- )?[A-Za-z_]+:", line):
            assert "#" in line, f"quickstart.yaml line {n} has no comment: {line!r}"
