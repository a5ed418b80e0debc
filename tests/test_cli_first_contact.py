"""First contact: what a new user meets before training starts.

- without the ``[trl]`` extra, ``botgrpo train`` and ``botgrpo score`` stop with one line naming
  ``pip install "botgrpo-core[trl]"`` (a real ``botgrpo`` process whose imports of the extra's modules fail);
- ``botgrpo validate`` checks what a launch would find: the data files exist and are of the kind
  ``data.source`` reads, and the batch splits over ``WORLD_SIZE`` processes (the trainer's own rule).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from botgrpo_core.cli.extras import TRL_EXTRA, extra_module, missing_modules
from botgrpo_core.cli.main import main

ROOT = Path(__file__).resolve().parents[1]

# A Python without the [trl] extra: importing any of its modules fails as it does when it is not installed
# (None in sys.modules: ModuleNotFoundError on import, importlib.util.find_spec gives None).
_WITHOUT_EXTRA = """
import sys
for name in ("trl", "transformers", "accelerate", "datasets", "matplotlib"):
    sys.modules[name] = None
from botgrpo_core.cli.main import main
sys.exit(main(sys.argv[1:]))
"""

RUN = "rewards:\n  beta: 0\n  signals:\n    - name: core.exact_answer\n"


def _without_extra(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("BOTGRPO_LOAD_PLUGINS", "WORLD_SIZE")}
    return subprocess.run(
        [sys.executable, "-c", _WITHOUT_EXTRA, *argv],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["train", "run.yaml", "--set", "training.steps=1"],
        ["score", "run.yaml", "--input", "rows.jsonl", "--tokenizer", "tiny"],
    ],
    ids=["train", "score-tiny"],
)
def test_without_the_trl_extra_the_command_names_the_extra(argv: list[str], tmp_path: Path) -> None:
    (tmp_path / "run.yaml").write_text(RUN, encoding="utf-8")
    (tmp_path / "rows.jsonl").write_text('{"prompt": "1+1=", "completion": "2", "answer": "2"}\n')
    done = _without_extra(*argv, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert f'pip install "{TRL_EXTRA}"' in done.stderr
    assert "Traceback" not in done.stderr and "ModuleNotFoundError" not in done.stderr
    assert f"botgrpo {argv[0]} needs" in done.stderr


def test_validate_still_works_without_the_trl_extra(tmp_path: Path) -> None:
    (tmp_path / "run.yaml").write_text(RUN, encoding="utf-8")
    done = _without_extra("validate", "run.yaml", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "OK" in done.stdout


def test_a_missing_module_is_named_by_its_top_level_package() -> None:
    assert missing_modules(["json", "botgrpo_core", "no_such_module_botgrpo"]) == ["no_such_module_botgrpo"]
    saved = sys.modules.get("transformers")
    sys.modules["transformers"] = None  # type: ignore[assignment]
    try:
        with pytest.raises(ModuleNotFoundError) as caught:
            import transformers.models  # noqa: F401
    finally:
        if saved is None:
            del sys.modules["transformers"]
        else:
            sys.modules["transformers"] = saved
    assert extra_module(caught.value) == "transformers"
    assert extra_module(ModuleNotFoundError("x", name="yaml")) is None


# --- validate: data files and the batch split ---------------------------------------------------------------
def _jsonl_run(tmp_path: Path, *, path: str, eval_path: str | None = None, prompts: int = 42) -> Path:
    run = tmp_path / "run.yaml"
    data = f"data:\n  source: jsonl\n  path: {path}\n" + (f"  eval_path: {eval_path}\n" if eval_path else "")
    run.write_text(
        data + RUN + f"training:\n  prompts_per_step: {prompts}\n  group_size: 8\n"
        "  gradient_accumulation_steps: auto\n  micro_batch_size: 16\n",
        encoding="utf-8",
    )
    return run


def test_validate_refuses_missing_data_files(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    monkeypatch.chdir(tmp_path)
    run = _jsonl_run(tmp_path, path="data/train.jsonl", eval_path="data/held_out.jsonl")
    assert main(["validate", str(run)]) == 3  # the file is OK; this machine lacks its data
    out, err = capsys.readouterr()
    assert "file OK" in out and "exit 3" in out
    assert "data.path: 'data/train.jsonl' does not exist" in err
    assert "data.eval_path: 'data/held_out.jsonl' does not exist" in err
    assert str(tmp_path) in err  # where relative paths are read from

    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "held_out.jsonl").write_text('{"prompt": "q"}\n')
    (tmp_path / "data" / "train.jsonl").mkdir()  # a folder where a JSONL file should be
    assert main(["validate", str(run)]) == 3
    err = capsys.readouterr().err
    assert "is a folder, but data.source 'jsonl' reads one JSONL file" in err
    assert "data.eval_path" not in err

    (tmp_path / "data" / "train.jsonl").rmdir()
    (tmp_path / "data" / "train.jsonl").write_text('{"prompt": "q"}\n')
    assert main(["validate", str(run)]) == 0
    assert "OK" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("world", "ok"), [(None, True), ("1", True), ("6", True), ("7", True), ("8", True), ("5", False)]
)
def test_validate_checks_the_batch_split_for_world_size(
    world: str | None, ok: bool, tmp_path: Path, monkeypatch, capsys
) -> None:
    """The 8-GPU recipe's split (42 prompts x 8 rollouts): 1, 6, 7 and 8 processes divide it, 5 does not;
    validate says so with the trainer's own message (the nearest prompts_per_step that would work)."""
    (tmp_path / "train.jsonl").write_text('{"prompt": "q"}\n')
    run = _jsonl_run(tmp_path, path=str(tmp_path / "train.jsonl"))
    if world is None:
        monkeypatch.delenv("WORLD_SIZE", raising=False)
    else:
        monkeypatch.setenv("WORLD_SIZE", world)
    code = main(["validate", str(run)])
    out, err = capsys.readouterr()
    if ok:
        assert code == 0, err
        processes = int(world or 1)
        assert f"{processes} process" in out and f"{336 // processes} per process" in out
    else:
        assert code == 2
        assert "with WORLD_SIZE=5" in err and "training.prompts_per_step" in err and "40 or 45" in err


def test_validate_the_8gpu_recipe_with_5_processes_names_both_problems(monkeypatch, capsys) -> None:
    monkeypatch.setenv("WORLD_SIZE", "5")
    monkeypatch.chdir(ROOT)
    code = main(["validate", "examples/recipes/math-qwen2.5-3b-8gpu.yaml"])
    err = capsys.readouterr().err
    assert code == 2
    if not (ROOT / "data" / "aime_train.jsonl").exists():  # made by scripts/make_aime_data.py
        assert "data.path: 'data/aime_train.jsonl' does not exist" in err
    assert "with WORLD_SIZE=5" in err


def test_validate_says_model_peft_needs_peft(tmp_path: Path) -> None:
    (tmp_path / "run.yaml").write_text(RUN + "model:\n  peft: {r: 8}\n", encoding="utf-8")
    without_peft = _WITHOUT_EXTRA.replace('"matplotlib")', '"matplotlib", "peft")')
    done = subprocess.run(
        [sys.executable, "-c", without_peft, "validate", "run.yaml"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 3
    assert 'model.peft needs the peft package: pip install "botgrpo-core[peft]"' in done.stderr


def test_validate_says_report_to_needs_its_package(tmp_path: Path) -> None:
    """wandb is not installed here (nor in make test's venv): validate names it; tensorboard is."""
    if not missing_modules(["wandb"]):
        pytest.skip("wandb is installed here")
    (tmp_path / "run.yaml").write_text(
        RUN + "training:\n  report_to: [tensorboard, wandb]\n", encoding="utf-8"
    )
    done = _without_extra("validate", "run.yaml", cwd=tmp_path)
    assert done.returncode == 3
    assert "training.report_to: wandb needs the wandb package: pip install wandb" in done.stderr
    assert "tensorboard needs" not in done.stderr


@pytest.mark.parametrize(
    "recipe", sorted((ROOT / "examples" / "recipes").glob("*.yaml")), ids=lambda p: p.name
)
def test_a_gpu_recipe_checked_on_a_machine_without_vllm_is_file_ok_exit_3(
    recipe: Path, monkeypatch, capsys
) -> None:
    """Checking a GPU recipe on a laptop: the file is right (never exit 2), and what this machine lacks
    (vLLM; the recipe's data files when not made here) is said apart from it, with exit 3."""
    import botgrpo_core.cli.extras as extras

    real = extras.missing_modules
    monkeypatch.setattr(extras, "missing_modules", lambda names: ["vllm"] if "vllm" in names else real(names))
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    monkeypatch.chdir(ROOT)
    code = main(["validate", str(recipe.relative_to(ROOT))])
    out, err = capsys.readouterr()
    assert code == 3, err
    assert "file OK" in out and "preset" in out
    assert "this machine: engine.use_vllm needs vLLM" in err
    assert all(line.split(": ", 2)[1] == "this machine" for line in err.strip().splitlines()), err
