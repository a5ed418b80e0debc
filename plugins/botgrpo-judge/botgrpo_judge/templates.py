"""Jinja templates of the judge prompts, and their defaults.

Templates come from the run file; the values put into them (question, completion, steps) are model
output and dataset text, so rendering runs in Jinja's sandbox: a value is only ever inserted as text,
never evaluated. Undefined variables are errors (a typo in a template fails at start-up, not as a
silently empty prompt).

Variables every template sees: ``question``, ``reference`` (the row's reference field or ``None``),
``row`` (the dataset row), ``completion``. Step templates also see ``steps`` (texts of the steps so far,
or of all steps), ``step`` (the current step's text), ``step_index`` (1-based) and ``num_steps``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import jinja2
from jinja2.sandbox import SandboxedEnvironment

# ---- logprob mode: the judge reads prompt + completion so far + verdict; the score is read after it ----
STEP_PROMPT = "Question: {{ question }}\nSolution:\n"
STEP_VERDICT = "\nIs the step above correct? Answer:"
OUTCOME_PROMPT = "Question: {{ question }}\nSolution:\n"
OUTCOME_VERDICT = (
    "{% if reference is not none %}\nReference answer: {{ reference }}{% endif %}"
    "\nIs the solution's final answer correct? Answer:"
)

# ---- generate mode: the judge writes a verdict that verdict.py parses ----
GENERATE_STEPS_ALL = (
    "You are grading a solution step by step.\n"
    "Question: {{ question }}\n"
    "{% for s in steps %}Step {{ loop.index }}: {{ s }}\n{% endfor %}"
    'For every step write one line "Step k: correct" or "Step k: incorrect".\n'
)
GENERATE_STEP_ONE = (
    "Question: {{ question }}\n"
    "Solution so far:\n{% for s in steps %}{{ s }}\n{% endfor %}"
    "Is the last step (step {{ step_index }}) correct? Reply yes or no.\n"
)
GENERATE_OUTCOME = (
    "Question: {{ question }}\n"
    "Solution:\n{{ completion }}\n"
    "{% if reference is not none %}Reference answer: {{ reference }}\n{% endif %}"
    "Is the solution's final answer correct? Reply yes or no.\n"
)

# Dummy values used to check at start-up that a template only uses known variables.
_PROBE: dict[str, Any] = {
    "question": "q",
    "reference": "r",
    "row": {},
    "completion": "c",
    "steps": ["s"],
    "step": "s",
    "step_index": 1,
    "num_steps": 1,
}


@lru_cache(maxsize=1)
def _environment() -> SandboxedEnvironment:
    return SandboxedEnvironment(
        undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False, auto_reload=False
    )


@lru_cache(maxsize=256)
def compile_template(source: str) -> jinja2.Template:
    """Parse a template; raises ``ValueError`` with Jinja's message (syntax errors, bad variables)."""
    try:
        template = _environment().from_string(source)
        template.render(**_PROBE)
    except jinja2.TemplateError as exc:
        raise ValueError(
            f"invalid Jinja template ({exc}); known variables: {', '.join(sorted(_PROBE))}"
        ) from exc
    return template


def render(source: str, **variables: Any) -> str:
    """Render the template ``source`` with ``variables`` (sandboxed, strict)."""
    return compile_template(source).render(**variables)
