"""Parameters of the ``jsx.*`` signals (validated when a run file is loaded; ``extra="forbid"``)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from botgrpo_jsx.extract import DEFAULT_LANGUAGES


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


#: A batch deadline in seconds: finite and above 0 (each signal's field gives its default and scope).
BatchTimeout = Annotated[float, Field(gt=0, allow_inf_nan=False)]


class CommonParams(_Params):
    """Extraction, limits and isolation shared by every ``jsx.*`` signal."""

    languages: tuple[str, ...] = Field(
        DEFAULT_LANGUAGES, description="fence languages that hold React code ('' = unlabelled fence)"
    )
    block: Literal["largest", "first", "last"] = Field(
        "largest", description="which fenced block to score when there are several"
    )
    max_chars: int = Field(
        100_000, gt=0, description="longer extracted code is not parsed (compiles -> 0; local -> error)"
    )
    parse_timeout_s: float = Field(0.5, gt=0, description="tree-sitter parse deadline per grammar")
    timeout_s: float = Field(5.0, gt=0, description="hard per-sample limit: the worker is killed past it")
    workers: int | Literal["auto"] = Field(
        "auto",
        description="worker processes for tree-sitter work (0 = in-process; auto = 2, or 0 inside a worker)",
    )
    memory_mb: int = Field(1024, gt=0, description="address-space headroom per worker process")
    batch_timeout_s: BatchTimeout = Field(
        60.0,
        description="deadline of one batch's samples as a whole (tree-sitter and esprima work; jsx.compiles' "
        "esbuild and TypeScript checks in the Node worker, whose clock starts once it is up; renders): "
        "samples still running then are killed (a busy Node worker with them, restarted for the next batch) "
        "and those not started are skipped; both time out, so slow samples cost at most this per batch, "
        "not timeout_s x samples / workers (or / parallel)",
    )


class CompilesParams(CommonParams):
    """``jsx.compiles``: 1.0 when the extracted code compiles, else 0.0."""

    backend: Literal["auto", "esbuild", "tree-sitter", "esprima"] = Field(
        "auto",
        description="auto = esbuild when Node and the pinned packages are installed, else tree-sitter validity",
    )
    loader: Literal["auto", "tsx", "jsx"] = Field(
        "auto",
        description="esbuild loader; auto = tsx, then jsx for code TSX rejects (e.g. `<T>x` casts in JS)",
    )
    strict: bool = Field(
        False, description="also require no TypeScript 5 errors of the kinds strict_checks names"
    )
    strict_checks: Literal["names", "types"] = Field(
        "names",
        description="names: undefined or misspelt names and imports only (reliable on partial code); "
        "types: every TypeScript error (fails code whose types live in files the completion imports)",
    )
    strict_ignore_codes: tuple[int, ...] = Field(
        (2307, 2792, 7016),
        description="TypeScript diagnostics ignored in strict mode (default: unresolvable imports)",
    )
    strict_timeout_s: float = Field(
        30.0, gt=0, description="per-sample TypeScript check limit (typ. 0.1-1.5 s)"
    )
    node_memory_mb: int = Field(1024, gt=0, description="V8 heap limit of the Node worker")
    max_nesting: int = Field(
        2000,
        gt=0,
        description="code nested deeper (brackets, counted lexically) is not sent to esbuild: compiles -> 0",
    )


class SyntaxParams(CommonParams):
    """``jsx.syntax``: a negative value on each syntax error's span."""

    error_value: float = Field(-1.0, le=0, description="value on each syntax error span")
    valid_prefix_value: float = Field(
        0.0, ge=0, description="value on well-formed top-level statements before the first error (0 = off)"
    )
    max_errors: int = Field(20, gt=0, description="at most this many error spans per completion")
    parser: Literal["tree-sitter", "esprima"] = Field(
        "tree-sitter", description="esprima: pure Python, ES2017 + JSX only, first error only (see README)"
    )


class RuleWeights(_Params):
    """Weight of each rule; a violation's span gets ``-weight``; 0 turns a rule off."""

    missing_key: float = Field(1.0, ge=0)
    hooks: float = Field(1.0, ge=0)
    undefined_component: float = Field(1.0, ge=0)
    unclosed_tag: float = Field(1.0, ge=0)
    class_attribute: float = Field(0.5, ge=0)
    missing_export: float = Field(1.0, ge=0)


class RulesParams(CommonParams):
    """``jsx.rules``: React rule violations as negative spans."""

    weights: RuleWeights = Field(default_factory=RuleWeights)
    require_export: Literal["auto", "any", "default", "never"] = Field(
        "auto",
        description="auto: the row field `require_export` if present, else whether the prompt asks for an export",
    )
    export_field: str = Field("require_export", description="row field that overrides the prompt for exports")


class UnitsParams(RulesParams):
    """``jsx.units``: a verdict per top-level unit (section, hook, function, JSX child of the root)."""

    pass_value: float = Field(
        1.0, ge=0, le=1, description="value on a unit that parses in context and breaks no rule"
    )
    fail_value: float = Field(
        -1.0, ge=-1, le=0, description="value on a unit with a syntax error or a rule violation"
    )
    rules: bool = Field(
        True,
        description="rule violations (rules with weight > 0) fail their unit; false: only what esbuild "
        "rejects too (syntax errors, unclosed or mismatched tags)",
    )


class RendersParams(CommonParams):
    """``jsx.renders`` / ``jsx.render_errors``: render the component with React in a sandbox."""

    memory_mb: int = Field(
        1024, ge=768, description="address-space limit of each render process (Node needs ~700 MB to start)"
    )
    max_nesting: int = Field(2000, gt=0, description="code nested deeper is not compiled (renders -> 0)")
    parallel: int = Field(2, gt=0, description="render processes at once (one fresh process per sample)")
    props_field: str = Field(
        "props", description="row field with the props to render with (else synthesised)"
    )
    max_html: int = Field(100_000, gt=0, description="characters of rendered HTML kept")
    error_value: float = Field(-1.0, le=0, description="jsx.render_errors: value on the line that threw")
    warning_value: float = Field(-0.5, le=0, description="jsx.render_errors: value on a React warning")


class VisualParams(RendersParams):
    """``jsx.visual``: a vision model scores a screenshot of the rendered component."""

    model: str = Field(..., description="the vision model's name on the OpenAI-compatible server")
    base_url: str = Field("http://127.0.0.1:8000/v1", description="OpenAI-compatible server URL up to /v1")
    api_key_env: str | None = Field(None, description="environment variable holding the server's API key")
    spec_field: str | None = Field(
        "spec", description="row field with the spec (the rubric); else the prompt"
    )
    width: int = Field(800, gt=0, le=4096, description="screenshot width in pixels")
    height: int = Field(600, gt=0, le=4096, description="screenshot height in pixels")
    screenshot_timeout_s: float = Field(30.0, gt=0, description="Chromium's limit per screenshot")
    batch_timeout_s: BatchTimeout = Field(
        600.0,
        description="deadline of one batch as a whole: renders, screenshots (one at a time) and the vision "
        "model's requests; samples not done by then time out, so a batch costs at most this, "
        "not screenshot_timeout_s x samples",
    )
    judge_timeout_s: float = Field(60.0, gt=0, description="per-request limit of the vision model")
    max_new_tokens: int = Field(64, gt=0, description="tokens the vision model may answer with")


class ChecksParams(RendersParams):
    """``jsx.checks``: the share of a row's behaviour checks the rendered component passes."""

    field: str = Field(
        "checks", description="row field with the checks (botgrpo_jsx.checks_schema.CheckSuite)"
    )
    all_or_none: bool = Field(
        False, description="1.0 only when every check passes, else 0.0 (default: the share passed)"
    )
    check_timeout_s: float = Field(
        2.0,
        gt=0,
        description="limit per check (its steps and expectations); the rest of the page's checks "
        "then do not run and fail",
    )
    timeout_s: float = Field(
        10.0, gt=0, description="hard limit per page: the render and all its checks (the process is killed)"
    )
