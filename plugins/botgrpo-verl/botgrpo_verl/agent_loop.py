"""Dense token rewards in verl's default reward path (the agent loop), for verl 0.9.1.

With no reward model (the usual rule-based setup) verl scores each response in its agent loop and keeps one
float per response, ``AgentLoopOutput.reward_score``, which it writes on the response's last token of
``rm_scores`` (then ``token_level_scores``/``token_level_rewards``). verl 0.9.1 offers no way for a reward
manager to hand over a per-token row there: ``_compute_score`` keeps only ``reward_score`` (a float) and
``reward_extra_info`` (its values become ``non_tensor_batch`` columns and metrics), and the one hook into the
agent loop, ``actor_rollout_ref.rollout.agent.agent_loop_manager_class``, would be a third setting to change.

So the ``verl.plugins`` entry point (loaded by ``import verl`` in every Ray process) wraps the functions that
build ``rm_scores`` from an agent-loop output, when, and only when, it recognises their code:

- ``AgentLoopOutput.as_dict`` (the default trainer, ``trainer.use_v1=true``: ``AgentLoopWorkerTQ`` stores
  its result in TransferQueue and the trainer reads ``rm_scores`` as ``token_level_scores``);
- ``AgentLoopWorker._agent_loop_postprocess`` and ``AgentLoopWorker._postprocess`` (the legacy trainer,
  ``trainer.use_v1=false``): the first keeps the reward object verl's pydantic model turns into a plain
  float, the second writes the rows.

Each wrapper calls verl's own function first and changes a response's row only when its ``reward_score`` is a
:class:`~botgrpo_verl.reward_manager.TokenRewards` (the ``botgrpo`` manager's float carrying its token
rewards) whose length is the response's: every other reward manager's output is verl's, untouched. The token
rewards are the manager's own (its span-to-token alignment with verl's tokenizer), copied as they are.

A verl whose version or code differs from what is recorded here gets no wrapper and a warning on stderr
naming the version and the fix; the ``botgrpo`` manager then refuses to start in verl's agent-loop reward path
(or, with ``reward_kwargs.botgrpo_scalar_fallback=true``, works as verl does: token-mean on the last token).
docs/verl.md, "The next verl", is the plan for the releases after 0.9.1.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import inspect
import sys
import types
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import torch

from botgrpo_verl.reward_manager import TokenRewards, warn_once

#: verl function -> (its module, its qualified name): every function the wrappers wrap or rely on, and the
#: trainer's consumers of ``rm_scores`` (where they become ``token_level_scores``; an edit there could drop or
#: reshape the dense rows after the wrappers wrote them).
WHERE: dict[str, tuple[str, str]] = {
    "AgentLoopOutput.as_dict": ("verl.experimental.agent_loop.agent_loop", "AgentLoopOutput.as_dict"),
    "AgentLoopWorker._compute_score": (
        "verl.experimental.agent_loop.agent_loop",
        "AgentLoopWorker._compute_score",
    ),
    "AgentLoopWorker._agent_loop_postprocess": (
        "verl.experimental.agent_loop.agent_loop",
        "AgentLoopWorker._agent_loop_postprocess",
    ),
    "AgentLoopWorker._postprocess": (
        "verl.experimental.agent_loop.agent_loop",
        "AgentLoopWorker._postprocess",
    ),
    "AgentLoopWorkerTQ._agent_loop_postprocess": (
        "verl.trainer.ppo.v1.agent_loop_tq",
        "AgentLoopWorkerTQ._agent_loop_postprocess",
    ),
    # the default trainer (use_v1): rm_scores -> token_level_scores -> token_level_rewards -> the estimator
    "PPOTrainer._compute_advantage": ("verl.trainer.ppo.v1.trainer_base", "PPOTrainer._compute_advantage"),
    # the legacy trainer: extract_reward reads rm_scores, fit makes them token_level_scores
    "extract_reward": ("verl.trainer.ppo.reward", "extract_reward"),
    "RayPPOTrainer.fit": ("verl.trainer.ppo.ray_trainer", "RayPPOTrainer.fit"),
}

#: verl version -> sha256 of the source of every function in :data:`WHERE`.
KNOWN_CODE: dict[str, dict[str, str]] = {
    "0.9.1": {
        "AgentLoopOutput.as_dict": "1d98e658b0e8de417dfecc3fea8bac01af4a825f40b732453d5d11b9f26b2e8f",
        "AgentLoopWorker._compute_score": "cf4b57719ad3c1b236e49fb99dddc4f6cf05bc0fb125e1475ce5c2534af2b742",
        "AgentLoopWorker._agent_loop_postprocess": "0673c29ea3dbbbecc8b42274244afb73f7befd9d6d605654eaf4c149b4259bf6",
        "AgentLoopWorker._postprocess": "d55eabeea2dc52a69666bfccaeee1c2c381d732ee8cd183e57cd6744733f12bf",
        "AgentLoopWorkerTQ._agent_loop_postprocess": "523edacbff73640dee470baf8c1f09fb3450e4095c05d5d2226f9ef706604b5b",
        "PPOTrainer._compute_advantage": "2a4a2aa4a475b228d401959818e0b9019276ce27961c133961de217baa387da7",
        "extract_reward": "ddd43dc6fb025020d9e9cecaa38719b966d315cbe63f77a0be14233c20284daf",
        "RayPPOTrainer.fit": "2cd5b737f76215aad3a1be94404c7a7d1d6a4cf9d6c16f44bc4841b871498ed7",
    }
}
#: The mark on a wrapper (installing twice wraps once).
MARK = "__botgrpo_dense__"

_state = {"active": False}


def active() -> bool:
    """Whether this process writes the ``botgrpo`` manager's dense token rewards in verl's agent loop."""
    return _state["active"]


def _digest(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()


def _file_source(module: str, qualname: str) -> str:
    """The source of ``qualname`` as written in ``module``'s file, read without importing the module (the
    trainer modules need TransferQueue and Ray, and this runs at ``import verl`` in every process); "" if
    absent."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.origin:
        return ""
    text = Path(spec.origin).read_text()
    nodes: list[ast.AST] = [ast.parse(text)]
    for part in qualname.split("."):
        found = [
            n
            for parent in nodes
            for n in getattr(parent, "body", [])
            if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == part
        ]
        if not found:
            return ""
        nodes = found[:1]
    node = nodes[0]
    first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    # inspect's own block rule, so that a file's text hashes as inspect.getsource of the loaded code does
    return "".join(inspect.getblock(text.splitlines(keepends=True)[first - 1 :]))


def _known_wrapper(obj: Any) -> bool:
    """Whether ``obj`` is a wrapper whose code is known to call what it wraps unchanged: botgrpo-verl's own
    (:data:`_WRAPPER_CODES`) or Ray's tracing wrapper, which ``ray.remote`` puts around an actor class's
    methods (verl's agent-loop workers are actors). A copied ``MARK`` or ``__wrapped__`` is not enough."""
    code = getattr(obj, "__code__", None)
    if code is None or not hasattr(obj, "__wrapped__"):
        return False
    if code in _WRAPPER_CODES:
        return True
    tracing = sys.modules.get("ray.util.tracing.tracing_helper")
    return tracing is not None and code.co_filename == getattr(tracing, "__file__", None)


def _live_code(module: str, qualname: str) -> Any:
    """The code object verl will run for ``qualname`` when ``module`` is loaded (None when it is not).

    Known wrappers (:func:`_known_wrapper`) are looked through, nothing else: a ``functools.wraps``
    monkeypatch shows its own code, where ``inspect.getsource`` would unwrap it and show verl's."""
    loaded = sys.modules.get(module)
    if loaded is None:
        return None
    obj: Any = loaded
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    while _known_wrapper(obj):
        obj = obj.__wrapped__
    return getattr(obj, "__code__", obj)


def code_fingerprints() -> dict[str, str]:
    """sha256 of the source of every verl function in :data:`WHERE`, as installed ("" if missing).

    For a module already loaded, the source of the code object that will run (see :func:`_live_code`); a
    function replaced by anything but its own code, or a wrapper other than botgrpo-verl's, then differs. For a
    module not loaded yet, the source in its file.
    """
    import verl.experimental.agent_loop.agent_loop  # noqa: F401  (the wrapped functions: always checked live)

    out = {}
    for name, (module, qualname) in WHERE.items():
        code = _live_code(module, qualname)
        try:
            text = inspect.getsource(code) if code is not None else _file_source(module, qualname)
        except (OSError, TypeError, SyntaxError):
            text = ""
        out[name] = _digest(text) if text else ""
    return out


def unrecognised(version: str, fingerprints: Mapping[str, str]) -> list[str]:
    """The functions whose code differs from what is recorded for verl ``version`` (all when unknown)."""
    known = KNOWN_CODE.get(version)
    if known is None:
        return sorted(KNOWN_CODE[next(iter(KNOWN_CODE))])
    return [name for name, digest in known.items() if fingerprints.get(name) != digest]


def dense_row(score: Any, length: int) -> torch.Tensor | None:
    """The ``(length,)`` float32 token rewards ``score`` carries, or None (verl's own row stays).

    None when ``score`` is not the ``botgrpo`` manager's :class:`TokenRewards`, or when it was scored on a
    response of another length (an agent loop that copies its last output's score onto earlier outputs).
    """
    if not isinstance(score, TokenRewards):
        return None
    if len(score.tokens) != int(length):
        warn_once(
            f"a response of {int(length)} tokens carries {len(score.tokens)} token rewards (an agent loop that "
            "copies one trajectory's score onto several outputs): that response keeps verl's row, its "
            "token-mean reward on its last token"
        )
        return None
    return torch.tensor(score.tokens, dtype=torch.float32)


def _wrap(original: Callable[..., Any], wrapper: Callable[..., Any]) -> Callable[..., Any]:
    functools.update_wrapper(wrapper, original)
    setattr(wrapper, MARK, True)
    return wrapper


def _as_dict(original: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    def as_dict(self: Any) -> dict[str, Any]:
        out = original(self)
        row = dense_row(self.reward_score, out["responses"].numel())
        if row is not None and "rm_scores" in out:
            out["rm_scores"] = row.to(out["rm_scores"].device)
        return out

    return _wrap(original, as_dict)


def _agent_loop_postprocess(original: Callable[..., Any]) -> Callable[..., Any]:
    async def _agent_loop_postprocess(self: Any, output: Any, validate: Any, **kwargs: Any) -> Any:
        internal = await original(self, output, validate, **kwargs)
        if isinstance(output.reward_score, TokenRewards) and not isinstance(
            internal.reward_score, TokenRewards
        ):
            internal.reward_score = output.reward_score  # verl's pydantic model made it a plain float
        return internal

    return _wrap(original, _agent_loop_postprocess)


def _postprocess(original: Callable[..., Any]) -> Callable[..., Any]:
    def _postprocess(self: Any, inputs: list[Any], *args: Any, **kwargs: Any) -> Any:
        out = original(self, inputs, *args, **kwargs)
        dense = [i for i, x in enumerate(inputs) if isinstance(x.reward_score, TokenRewards)]
        if not dense or "rm_scores" not in out.batch.keys():  # noqa: SIM118 (a TensorDict)
            return out
        prompt_length = out.batch["prompts"].size(1)
        lengths = out.batch["attention_mask"][:, prompt_length:].sum(dim=1).tolist()
        rm_scores = out.batch["rm_scores"]
        for i in dense:
            row = dense_row(inputs[i].reward_score, lengths[i])
            if row is not None:
                rm_scores[i] = 0.0
                rm_scores[i, : row.numel()] = row.to(rm_scores.device)
        return out

    return _wrap(original, _postprocess)


#: The code of botgrpo-verl's own wrappers (the functions the three factories above return): only these are
#: looked through when fingerprinting; a copied ``MARK`` on another function is not enough.
_WRAPPER_CODES = frozenset(
    const
    for factory in (_as_dict, _agent_loop_postprocess, _postprocess)
    for const in factory.__code__.co_consts
    if isinstance(const, types.CodeType)
)


def unsupported_message(version: str, names: list[str]) -> str:
    """The warning for a verl whose agent loop this plugin does not recognise."""
    from botgrpo_verl import __version__

    supported = ", ".join(sorted(KNOWN_CODE))
    return (
        f"verl {version}'s agent loop is not the code botgrpo-verl {__version__} was checked against (verl "
        f"{supported}; differs: {', '.join(names)}): the reward manager 'botgrpo' cannot write its dense token "
        "rewards in verl's default reward path (no reward model), so each response gets its token-mean reward on "
        f"its last token and the token-level estimators see that. Fix: pip install 'verl=={supported}', or a "
        "botgrpo-verl release that supports this verl; see docs/verl.md, 'What is not supported'."
    )


def install(version: str | None = None) -> bool:
    """Wrap verl's agent-loop functions (see the module doc) if their code is recognised; returns whether the
    dense path is active. On unrecognised code: a warning on stderr, verl left as it is, False."""
    from verl.experimental.agent_loop import agent_loop as al

    if version is None:
        import verl

        version = str(getattr(verl, "__version__", "unknown"))
    differs = unrecognised(version, code_fingerprints())
    if differs:
        warn_once(unsupported_message(version, differs))
        return False
    targets: list[tuple[type, str, Callable[[Callable[..., Any]], Callable[..., Any]]]] = [
        (al.AgentLoopOutput, "as_dict", _as_dict),
        (al.AgentLoopWorker, "_agent_loop_postprocess", _agent_loop_postprocess),
        (al.AgentLoopWorker, "_postprocess", _postprocess),
    ]
    for owner, name, make in targets:
        current = owner.__dict__[name]
        if not getattr(current, MARK, False):
            setattr(owner, name, make(current))
    _state["active"] = True
    return True


def uninstall() -> None:
    """Put verl's own functions back (tests)."""
    from verl.experimental.agent_loop import agent_loop as al

    for owner, name in (
        (al.AgentLoopOutput, "as_dict"),
        (al.AgentLoopWorker, "_agent_loop_postprocess"),
        (al.AgentLoopWorker, "_postprocess"),
    ):
        current = owner.__dict__[name]
        if getattr(current, MARK, False):
            setattr(owner, name, current.__wrapped__)
    _state["active"] = False
