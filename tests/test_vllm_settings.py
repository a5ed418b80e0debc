"""``engine.use_vllm`` on a CPU: colocate mode with vLLM's CPU build (tests_vllm/ runs it); what cannot work says so
before any model is loaded, naming the key and the fix."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

from botgrpo_core.config.models import RunConfig
from botgrpo_core.engine.setup import TrainingSetupError
from botgrpo_core.engine.trl_args import _use_cpu


def config(**engine: Any) -> RunConfig:
    return RunConfig.model_validate(
        {
            "engine": {"device": "cpu", "use_vllm": True, **engine},
            "rewards": {"signals": [{"name": "core.length"}]},
        }
    )


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vLLM is installed here")
def test_missing_vllm_names_the_environment_that_has_it() -> None:
    with pytest.raises(TrainingSetupError, match=r"engine.use_vllm: .*make install-vllm"):
        _use_cpu(config())


def test_server_mode_on_cpu_is_refused_with_the_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: object() if name == "vllm" else real(name, *a)
    )
    with pytest.raises(TrainingSetupError, match=r"engine.vllm_mode: server .*NCCL.*colocate"):
        _use_cpu(config(vllm_mode="server"))


def test_policy_compute_dtype_follows_mixed_precision_then_the_weights() -> None:
    import torch

    from botgrpo_core.engine.vllm_engine import policy_compute_dtype

    class Args:
        bf16 = False
        fp16 = False
        model_init_kwargs = None

    module = torch.nn.Linear(2, 2)
    assert policy_compute_dtype(module, Args()) == "float32"
    assert policy_compute_dtype(module.to(torch.bfloat16), Args()) == "bfloat16"
    mixed = Args()
    mixed.bf16 = True
    assert policy_compute_dtype(torch.nn.Linear(2, 2), mixed) == "bfloat16"
    named = Args()
    named.model_init_kwargs = {"dtype": "float16"}
    assert policy_compute_dtype("some/model", named) == "float16"
    assert policy_compute_dtype("some/model", Args()) == "float32"
