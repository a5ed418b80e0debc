"""Judge backends: ``transformers`` (in-process), ``vllm`` (offline engine), ``openai`` (HTTP).

Each is imported only when chosen, so a run that uses the HTTP backend never imports torch or vLLM.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from botgrpo_judge.backends.base import Backend
    from botgrpo_judge.params import JudgeParams


def make_backend(params: JudgeParams) -> Backend:
    """Build the backend named by ``params.backend``."""
    if params.backend == "transformers":
        from botgrpo_judge.backends.hf import TransformersBackend

        return TransformersBackend(params)
    if params.backend == "vllm":
        from botgrpo_judge.backends.vllm_engine import VLLMBackend

        return VLLMBackend(params)
    if params.backend == "openai":
        from botgrpo_judge.backends.openai_http import OpenAIBackend

        return OpenAIBackend(params)
    raise ValueError(
        f"judge params.backend: unknown backend {params.backend!r}; use transformers, vllm or openai"
    )
