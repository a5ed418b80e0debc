"""The fingerprint of verl's code that the dense path relies on (issue 39 items 13-14, issue 38 item 3).

botgrpo-verl wraps verl 0.9.1's agent loop only when the code of every function it wraps or relies on hashes to
what was checked (``agent_loop.KNOWN_CODE``). That list covers the trainer's consumers of ``rm_scores`` (where
they become ``token_level_scores``), and a function replaced by a ``functools.wraps`` monkeypatch is seen as its
own code, not the code it wraps. When the installed verl is not the checked one, the ``botgrpo`` manager stops in
verl's default reward path instead of training on token-mean scalars unannounced.
"""

from __future__ import annotations

import functools
import importlib
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "verl", reason="botgrpo-verl's tests run in the verl venv (.venv-verl, made by `make test`)"
)

import verl
from botgrpo_verl import agent_loop
from verl.experimental.agent_loop.agent_loop import AgentLoopOutput

CHECKED = "0.9.1"
#: the trainer's consumers of rm_scores (issue 39 item 13): default trainer, legacy trainer
CONSUMERS = ("PPOTrainer._compute_advantage", "extract_reward", "RayPPOTrainer.fit")


def test_installed_verl_is_the_checked_one() -> None:
    """Fails loudly when the venv's verl is not the verl botgrpo-verl's dense path was checked against."""
    fingerprints = agent_loop.code_fingerprints()
    differs = agent_loop.unrecognised(verl.__version__, fingerprints)
    assert verl.__version__ == CHECKED and differs == [], (
        f"verl {verl.__version__} is installed, botgrpo-verl's dense path was checked against verl {CHECKED}; "
        f"code that differs: {differs}. Check the new verl as docs/verl.md's 'The next verl' says, then record "
        "its fingerprints in botgrpo_verl/agent_loop.py KNOWN_CODE (or pin verl==0.9.1 in the Makefile)"
    )
    assert agent_loop.active(), "the entry point installed the dense path in this process"


def test_the_consumers_of_rm_scores_are_fingerprinted() -> None:
    """Issue 39 item 13: where verl's trainers turn ``rm_scores`` into ``token_level_scores`` is checked."""
    known = agent_loop.KNOWN_CODE[CHECKED]
    for name in CONSUMERS:
        assert name in known and len(known[name]) == 64, name
    # they read rm_scores there, in verl 0.9.1's code (so the fingerprint covers the right functions)
    for name in ("PPOTrainer._compute_advantage", "extract_reward"):
        module, qualname = agent_loop.WHERE[name]
        assert '.batch["rm_scores"]' in agent_loop._file_source(module, qualname), name
    module, qualname = agent_loop.WHERE["RayPPOTrainer.fit"]
    assert 'batch.batch["token_level_scores"] = reward_tensor' in agent_loop._file_source(module, qualname)


def _edited_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, old: str, new: str) -> None:
    """Point ``WHERE[name]`` at a copy of its verl module with ``old`` replaced by ``new`` (not imported)."""
    module, qualname = agent_loop.WHERE[name]
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin
    text = Path(spec.origin).read_text()
    assert text.count(old) >= 1, (name, old)
    copy = tmp_path / f"edited_{module.replace('.', '_')}.py"
    copy.write_text(text.replace(old, new, 1))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(agent_loop.WHERE, name, (copy.stem, qualname))


@pytest.mark.parametrize(
    ("name", "old", "new"),
    [
        # the default trainer drops the dense rows after the agent loop wrote them
        (
            "PPOTrainer._compute_advantage",
            'data.batch["token_level_scores"] = data.batch["rm_scores"]',
            'data.batch["token_level_scores"] = data.batch["rm_scores"] * 0',
        ),
        # the legacy trainer keeps only each row's sum
        (
            "extract_reward",
            'reward_tensor = batch.batch["rm_scores"]',
            'reward_tensor = batch.batch["rm_scores"].sum(-1, keepdim=True)',
        ),
        (
            "RayPPOTrainer.fit",
            'batch.batch["token_level_scores"] = reward_tensor',
            'batch.batch["token_level_scores"] = reward_tensor.clamp(max=0)',
        ),
    ],
)
def test_an_edit_of_a_consumer_turns_the_dense_path_off(
    name: str,
    old: str,
    new: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture,
) -> None:
    """Issue 39 item 13: an edit where rm_scores become token_level_scores is noticed: no wrappers, a warning."""
    from botgrpo_verl import reward_manager

    assert agent_loop.unrecognised(CHECKED, agent_loop.code_fingerprints()) == []
    _edited_copy(tmp_path, monkeypatch, name, old, new)
    assert agent_loop.unrecognised(CHECKED, agent_loop.code_fingerprints()) == [name]
    agent_loop.uninstall()
    try:
        reward_manager._warned.clear()
        assert agent_loop.install(version=CHECKED) is False
        assert f"differs: {name}" in capsys.readouterr().err
        assert not agent_loop.active()
    finally:
        monkeypatch.undo()
        assert agent_loop.install() is True


def _zeroing(original: Any) -> Any:
    """A ``functools.wraps`` monkeypatch: verl's ``as_dict``, then ``rm_scores`` zeroed."""

    @functools.wraps(original)
    def as_dict(self: Any) -> dict[str, Any]:
        out = original(self)
        out["rm_scores"] = out["rm_scores"] * 0
        return out

    return as_dict


def test_a_wraps_monkeypatch_is_not_verls_code(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    """Issue 39 item 14: ``inspect.getsource`` unwraps a ``functools.wraps`` patch, the fingerprint does not."""
    from botgrpo_verl import reward_manager

    agent_loop.uninstall()
    try:
        verls = AgentLoopOutput.__dict__["as_dict"]
        monkeypatch.setattr(AgentLoopOutput, "as_dict", _zeroing(verls))
        assert AgentLoopOutput.as_dict.__wrapped__ is verls  # looks like verl's to inspect.getsource
        assert agent_loop.unrecognised(CHECKED, agent_loop.code_fingerprints()) == ["AgentLoopOutput.as_dict"]
        reward_manager._warned.clear()
        assert agent_loop.install(version=CHECKED) is False
        assert "differs: AgentLoopOutput.as_dict" in capsys.readouterr().err
        # a patch put around botgrpo-verl's own wrapper (copying its mark with functools.wraps) is seen too
        monkeypatch.undo()
        assert agent_loop.install() is True
        ours = AgentLoopOutput.__dict__["as_dict"]
        monkeypatch.setattr(AgentLoopOutput, "as_dict", _zeroing(ours))
        assert getattr(AgentLoopOutput.as_dict, agent_loop.MARK, False)
        assert agent_loop.unrecognised(CHECKED, agent_loop.code_fingerprints()) == ["AgentLoopOutput.as_dict"]
    finally:
        monkeypatch.undo()
        agent_loop.uninstall()
        assert agent_loop.install() is True


def test_rays_actor_wrapping_is_not_a_change() -> None:
    """``ray.remote`` wraps an actor class's methods (tracing, ``functools.wraps``); verl's agent-loop workers are
    actors, so that wrapper is looked through: the trainer modules loaded and wrapped still fingerprint as
    checked, read live or from their files."""
    import ray

    from_files = agent_loop.code_fingerprints()
    importlib.import_module("verl.trainer.ppo.v1.agent_loop_tq")
    for module in (
        "verl.trainer.ppo.reward",
        "verl.trainer.ppo.ray_trainer",
        "verl.trainer.ppo.v1.trainer_base",
    ):
        importlib.import_module(module)
    tq = sys.modules["verl.trainer.ppo.v1.agent_loop_tq"]
    assert isinstance(tq.AgentLoopWorkerTQ, ray.actor.ActorClass)  # its methods carry Ray's tracing wrapper
    assert agent_loop.code_fingerprints() == from_files
    assert agent_loop.unrecognised(CHECKED, from_files) == []


def test_a_copy_of_the_checked_file_fingerprints_as_checked(tmp_path: Path, monkeypatch) -> None:
    """Reading a module's file (not loaded) and reading the loaded code give the same digest."""
    name = "extract_reward"
    _edited_copy(tmp_path, monkeypatch, name, "def extract_reward(", "def extract_reward(")
    assert agent_loop.code_fingerprints()[name] == agent_loop.KNOWN_CODE[CHECKED][name]
    shutil.rmtree(tmp_path)
