"""Parameters of ``judge.steps`` and ``judge.outcome`` (pydantic, checked when the run file is loaded).

Plain pydantic and Jinja: importing this module is cheap (no torch), so the plugin entry point stays light.
Secrets never live here: ``openai.api_key_env`` names an environment variable, and only that name is
part of the params (and so of the run's config dump).
"""

from __future__ import annotations

import json
import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from botgrpo_core.signals.steps import PATTERN_MODES, compile_pattern
from botgrpo_judge import templates


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TransformersOptions(_Section):
    """The in-process Hugging Face backend."""

    device: str = Field("cpu", description="torch device of the judge model ('cpu', 'cuda', 'cuda:1')")
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = Field("float32", description="weights dtype")
    batch_size: int = Field(8, gt=0, description="chains (logprob) or prompts (generate) per forward pass")
    max_batch_tokens: int = Field(32768, gt=0, description="padded tokens per forward pass, at most")
    attn_implementation: str | None = Field(
        None, description="transformers attention kernel; 'sdpa' or 'eager' allow one-pass tree scoring"
    )
    trust_remote_code: bool = Field(False, description="let transformers run the model repo's own code")


class VLLMOptions(_Section):
    """The offline vLLM engine (GPU)."""

    dtype: Literal["auto", "float32", "bfloat16", "float16"] = Field("auto", description="engine dtype")
    gpu_memory_utilization: float = Field(0.9, gt=0, le=1, description="share of GPU memory vLLM may take")
    colocate: bool = Field(
        False,
        description="share a GPU that already holds the policy; set gpu_memory_utilization to leave it room",
    )
    tensor_parallel_size: int = Field(1, gt=0)
    max_model_len: int | None = Field(None, gt=0)
    enable_prefix_caching: bool = Field(
        True, description="reuse the KV cache of shared judge-prompt prefixes"
    )
    top_logprobs: int = Field(20, gt=0, description="top-k logprobs read at the verdict position")
    enforce_eager: bool = Field(False, description="disable CUDA graphs (faster start, slower steps)")
    seed: int = 0


class OpenAIOptions(_Section):
    """Any OpenAI-compatible server (vLLM serve, SGLang, TGI, llama.cpp server, hosted APIs)."""

    base_url: str = Field("http://127.0.0.1:8000/v1", description="server URL up to and including /v1")
    api_key_env: str | None = Field(
        None,
        description="NAME of the environment variable holding the API key (the key itself never goes here)",
    )
    concurrency: int = Field(16, gt=0, description="requests in flight at once")
    timeout_s: float = Field(
        60.0,
        gt=0,
        allow_inf_nan=False,
        description="deadline of one request attempt (body included), seconds",
    )
    max_retries: int = Field(
        4, ge=0, description="retries after a 429, 5xx, timeout, dropped connection or bad JSON"
    )
    backoff_base_s: float = Field(
        0.5, ge=0, allow_inf_nan=False, description="first retry waits about this long, doubling each time"
    )
    backoff_max_s: float = Field(30.0, ge=0, allow_inf_nan=False, description="longest wait between retries")
    batch_timeout_s: float = Field(
        600.0,
        gt=0,
        allow_inf_nan=False,
        description="deadline of one batch's requests as a whole, retries included; requests still "
        "running then are cancelled and their samples time out",
    )
    breaker_failures: int = Field(
        5,
        ge=0,
        description="attempts in a row without an answer (timeout, failed connection) that open the circuit "
        "breaker: the server is then not called for breaker_cooldown_s (0 turns the breaker off)",
    )
    breaker_cooldown_s: float = Field(
        30.0,
        gt=0,
        allow_inf_nan=False,
        description="how long an open circuit breaker refuses requests (their samples fail at once); "
        "then one probe request decides",
    )
    max_response_bytes: int = Field(
        1 << 20,
        ge=1024,
        description="longest answer read, in bytes; a longer one is cut off and its sample is an error",
    )
    top_logprobs: int = Field(20, gt=0, description="top-k logprobs read at the verdict position")
    extra_body: dict[str, Any] = Field(
        default_factory=dict, description="extra JSON fields sent with every request"
    )

    @field_validator("base_url")
    @classmethod
    def _strip_slash(cls, url: str) -> str:
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"openai.base_url must start with http:// or https://, got {url!r}")
        return url.rstrip("/")

    @field_validator("extra_body")
    @classmethod
    def _plain_json(cls, body: dict[str, Any]) -> dict[str, Any]:
        try:
            json.dumps(body, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"openai.extra_body must be plain JSON (no NaN or Infinity): {exc}") from None
        return body


class JudgeParams(_Section):
    """Parameters shared by ``judge.steps`` and ``judge.outcome``."""

    model: str = Field(
        ..., description="judge model: a local folder or hub id (transformers, vllm) or served name"
    )
    tokenizer: str | None = Field(None, description="tokenizer folder when it differs from the model's")
    backend: Literal["transformers", "vllm", "openai"] = "transformers"
    mode: Literal["logprob", "generate"] = Field(
        "logprob", description="read P(yes)-P(no), or parse a verdict"
    )
    range: tuple[float, float] = Field(
        (-1.0, 1.0), description="[low, high] the raw score in [-1, 1] maps onto"
    )
    question_field: str | None = Field(
        None, description="row field holding the question (default: the prompt)"
    )
    reference_field: str | None = Field(
        None, description="row field with a reference answer, as {{ reference }}"
    )
    prompt_template: str = Field(
        templates.STEP_PROMPT, description="logprob: Jinja text before the completion"
    )
    verdict_template: str = Field(templates.STEP_VERDICT, description="logprob: Jinja text after each step")
    yes_tokens: list[str] = Field(
        [" yes", " Yes"], min_length=1, description="tokens whose probability is P(yes)"
    )
    no_tokens: list[str] = Field(
        [" no", " No"], min_length=1, description="tokens whose probability is P(no)"
    )
    normalize: bool = Field(
        False, description="score (P(yes)-P(no)) / (P(yes)+P(no)) instead of P(yes)-P(no)"
    )
    chat: bool = Field(
        False, description="send judge prompts as one user chat message (generate; openai logprob)"
    )
    generate_template: str | None = Field(
        None, description="generate: Jinja judge prompt (a default per signal)"
    )
    max_new_tokens: int = Field(64, gt=0, description="generate: verdict length limit")
    score_range: tuple[float, float] = Field((0.0, 1.0), description="generate: scale of numeric verdicts")
    unparsed_value: float | None = Field(
        None, description="value of an unparseable verdict; 0 (or the range midpoint if 0 is outside it)"
    )
    max_length: int = Field(
        4096, gt=0, description="tokens of one judge forward pass; later steps are dropped"
    )
    cache_size: int = Field(100_000, ge=0, description="cached judge answers per run (0 disables the cache)")
    transformers: TransformersOptions = Field(default_factory=TransformersOptions)
    vllm: VLLMOptions = Field(default_factory=VLLMOptions)
    openai: OpenAIOptions = Field(default_factory=OpenAIOptions)

    @field_validator("prompt_template", "verdict_template", "generate_template")
    @classmethod
    def _valid_template(cls, source: str | None) -> str | None:
        if source is not None:
            templates.compile_template(source)
        return source

    @field_validator("range", "score_range")
    @classmethod
    def _valid_range(cls, bounds: tuple[float, float]) -> tuple[float, float]:
        low, high = bounds
        if not (math.isfinite(low) and math.isfinite(high) and low < high):
            raise ValueError(f"must be [low, high] with finite low < high, got {list(bounds)}")
        return bounds

    @model_validator(mode="after")
    def _check(self) -> JudgeParams:
        low, high = self.range
        if self.unparsed_value is not None and not (low <= self.unparsed_value <= high):
            raise ValueError(f"unparsed_value {self.unparsed_value} lies outside range {list(self.range)}")
        if self.mode == "logprob" and self.chat and self.backend != "openai":
            raise ValueError(
                "chat: true in logprob mode needs backend 'openai'; for transformers/vllm put the chat "
                "markup into prompt_template and verdict_template"
            )
        return self

    def bounds(self) -> tuple[float, float]:
        """Declared value bounds of the signal."""
        return float(self.range[0]), float(self.range[1])

    def unparsed(self) -> float:
        """Value given to an unparseable verdict."""
        if self.unparsed_value is not None:
            return self.unparsed_value
        low, high = self.range
        return 0.0 if low <= 0.0 <= high else (low + high) / 2

    def to_value(self, raw: float) -> float:
        """Map a raw score in ``[-1, 1]`` onto ``range`` (clamped, so rounding never leaves the bounds)."""
        low, high = self.range
        raw = min(1.0, max(-1.0, raw))
        return min(high, max(low, low + (raw + 1.0) * 0.5 * (high - low)))


class StepsParams(JudgeParams):
    """``judge.steps``: one score per step of the completion."""

    split: Literal["auto", "lines", "markers", "regex", "separator"] = Field(
        "lines",
        description="how the completion is cut into steps (botgrpo_core.signals.steps): 'lines', 'markers' "
        "('Step k:' blocks), 'auto' (markers when present, else lines), 'regex' (each match is a step), "
        "'separator' (matches separate steps)",
    )
    pattern: str | None = Field(
        None,
        description="markers/auto: the marker regex; regex: the step regex; separator: the separator regex",
    )
    max_steps: int = Field(64, gt=0, description="steps scored per completion; later ones get no span")
    layout: Literal["prefix", "tagged"] = Field(
        "prefix",
        description="logprob: judge sees the solution so far (prefix) or PRM-style tags after each step",
    )
    generate_per: Literal["completion", "step"] = Field(
        "completion", description="generate: one judge answer per completion (Step k: lines) or per step"
    )
    split_timeout_s: float = Field(
        1.0, gt=0, allow_inf_nan=False, description="time limit of the split regex on one completion"
    )

    @field_validator("pattern")
    @classmethod
    def _valid_pattern(cls, pattern: str | None) -> str | None:
        if pattern is not None:
            compile_pattern(pattern)
        return pattern

    @model_validator(mode="after")
    def _check_split(self) -> StepsParams:
        if self.split in PATTERN_MODES and not self.pattern:
            example = "'\\n\\s*\\n'" if self.split == "separator" else "'(?s)Step \\d+:.*?(?=Step \\d+:|\\Z)'"
            raise ValueError(f"split: {self.split} needs a pattern (e.g. pattern: {example})")
        if self.generate_template is None:
            self.generate_template = (
                templates.GENERATE_STEPS_ALL
                if self.generate_per == "completion"
                else templates.GENERATE_STEP_ONE
            )
        return self


class OutcomeParams(JudgeParams):
    """``judge.outcome``: one score for the whole solution (optionally against a reference answer)."""

    prompt_template: str = Field(
        templates.OUTCOME_PROMPT, description="logprob: Jinja text before the completion"
    )
    verdict_template: str = Field(
        templates.OUTCOME_VERDICT, description="logprob: Jinja text after the completion"
    )

    @model_validator(mode="after")
    def _default_generate(self) -> OutcomeParams:
        if self.generate_template is None:
            self.generate_template = templates.GENERATE_OUTCOME
        return self
