"""The docs cannot drift from the code: hook signatures and docstrings, the generated configuration reference,
code snippets quoted from the plugin template, the run file and estimator examples, and relative links."""

from __future__ import annotations

import importlib.util
import inspect
import re
import textwrap
from pathlib import Path

import pytest
import torch
import yaml

from botgrpo_core.signals.hookspecs import TokenRewardSpec

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
TEMPLATE = ROOT / "examples" / "plugin-template"


def spec_block(fn: object) -> str:
    """A hook as docs/hooks.md shows it: ``def`` line with the spec's annotations, then its docstring."""
    sig = inspect.signature(fn)  # annotations stay strings (the module uses postponed evaluation)
    params = [
        p.name if p.annotation is p.empty else f"{p.name}: {p.annotation}" for p in sig.parameters.values()
    ]
    header = f"def {fn.__name__}({', '.join(params)}) -> {sig.return_annotation}:"
    doc = textwrap.indent('"""' + inspect.getdoc(fn) + '\n"""', "    ")
    return f"{header}\n{doc}"


def _hooks() -> dict[str, object]:
    return {
        n: f for n, f in inspect.getmembers(TokenRewardSpec, inspect.isfunction) if hasattr(f, "botgrpo_spec")
    }


def test_hooks_md_has_each_hook_with_its_exact_signature_and_docstring() -> None:
    text = (DOCS / "hooks.md").read_text(encoding="utf-8")
    hooks = _hooks()
    assert hooks, "no hooks found in TokenRewardSpec"
    for name, fn in hooks.items():
        assert f"## `{name}`" in text, f"docs/hooks.md has no section for {name}"
        block = spec_block(fn)
        assert f"```python\n{block}\n```" in text, f"docs/hooks.md: update the {name} block to:\n{block}"
    documented = set(re.findall(r"^## `(\w+)`", text, flags=re.M))
    assert documented == set(hooks), f"sections for hooks that do not exist: {documented - set(hooks)}"


def test_hooks_md_estimator_example_runs(plugin_manager) -> None:
    from types import ModuleType

    from botgrpo_core.config.models import AlgorithmConfig
    from botgrpo_core.estimators.compute import compute_advantages

    text = (DOCS / "hooks.md").read_text(encoding="utf-8")
    code = next(b for b in re.findall(r"```python\n(.*?)```", text, re.S) if "def token_centered" in b)
    namespace: dict[str, object] = {}
    exec(compile(code, "docs/hooks.md", "exec"), namespace)  # the docs' own example code, not model output
    plugin = ModuleType("docs_hooks_example")  # a plugin is a module: what an entry point loads
    plugin.botgrpo_register_estimators = namespace["botgrpo_register_estimators"]
    plugin_manager.register(plugin, name="docs-example")
    plugin_manager.register_estimators()

    config_yaml = next(b for b in re.findall(r"```yaml\n(.*?)```", text, re.S) if "token_centered" in b)
    algorithm = AlgorithmConfig.model_validate(yaml.safe_load(config_yaml)["algorithm"])
    r = torch.tensor([[1.0, 2.0, 0.0], [4.0, 0.0, 0.0], [3.0, 3.0, 3.0], [0.0, 1.0, 0.0]])
    mask = torch.tensor([[1, 1, 0], [1, 0, 0], [1, 1, 1], [1, 1, 0]], dtype=torch.bool)
    out = compute_advantages(algorithm.estimator, r, mask, group_size=2, **algorithm.estimator_options)
    # group 0 valid tokens 1, 2, 4 -> mean 7/3; group 1: 3, 3, 3, 0, 1 -> mean 2; times scale 0.5
    expected = (
        torch.tensor([[1 - 7 / 3, 2 - 7 / 3, 0], [4 - 7 / 3, 0, 0], [1.0, 1.0, 1.0], [-2.0, -1.0, 0]]) * 0.5
    )
    torch.testing.assert_close(out, expected)


def _load_generator():
    spec = importlib.util.spec_from_file_location("gen_config_docs", ROOT / "scripts" / "gen_config_docs.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


def test_configuration_md_is_generated_from_the_models() -> None:
    from botgrpo_core.config.models import RunConfig

    generator = _load_generator()
    text = generator.render()
    committed = (DOCS / "configuration.md").read_text(encoding="utf-8")
    assert committed == text, "docs/configuration.md is out of date: run python scripts/gen_config_docs.py"

    # every key of every section appears in its section's table
    def keys(model, path):
        for name, field in model.model_fields.items():
            yield path, name
            for sub, is_item in generator._nested_models(field.annotation):
                yield from keys(sub, f"{path}.{name}[]" if is_item else f"{path}.{name}")

    for section_name, field in RunConfig.model_fields.items():
        for path, key in keys(field.annotation, section_name):
            section = text.split(f"## `{path}`\n", 1)[1].split("\n## ", 1)[0]
            assert f"| `{key}` |" in section, f"{path}.{key} missing from docs/configuration.md"


def test_configuration_md_types_and_defaults_are_right() -> None:
    text = (DOCS / "configuration.md").read_text(encoding="utf-8")
    # a few rows checked against the models by hand
    assert "| `beta` | float (>= 0) | `0.5` |" in text
    assert '| `on_error` | "zero" \\| "nan" \\| "raise" | `zero` |' in text
    assert "| `signals` | list of mappings (min length 1) | **required** |" in text
    assert "| `path` | path \\| null | `null` |" in text
    assert "| `output_dir` | path | `runs/default` |" in text


def _snippets(doc: str) -> list[tuple[str, str]]:
    """``(file, code)`` for every code block preceded by ``<!-- snippet: file -->``."""
    text = (DOCS / doc).read_text(encoding="utf-8")
    return re.findall(r"<!-- snippet: (\S+) -->\n```\w*\n(.*?)```", text, re.S)


def test_writing_plugins_snippets_are_quoted_from_the_template() -> None:
    snippets = _snippets("writing-plugins.md")
    assert len(snippets) >= 6
    for path, code in snippets:
        source = (ROOT / path).read_text(encoding="utf-8")
        assert code in source, f"docs/writing-plugins.md quotes {path}, which no longer contains:\n{code}"


def test_writing_plugins_run_file_validates_with_the_template(plugin_manager, monkeypatch) -> None:
    from botgrpo_core.config.loading import parse_config
    from botgrpo_core.signals.testing import registered_plugin

    monkeypatch.syspath_prepend(str(TEMPLATE))
    from botgrpo_template import plugin

    text = (DOCS / "writing-plugins.md").read_text(encoding="utf-8")
    run = re.search(r"<!-- run-file -->\n```yaml\n(.*?)```", text, re.S).group(1)
    readme = (TEMPLATE / "README.md").read_text(encoding="utf-8")
    readme_run = next(b for b in re.findall(r"```yaml\n(.*?)```", readme, re.S) if "rewards:" in b)
    with registered_plugin(plugin, name="template", manager=plugin_manager, distribution="botgrpo-template"):
        config = parse_config(yaml.safe_load(run), source="writing-plugins.md")
        from_readme = parse_config(yaml.safe_load(readme_run), source="plugin-template/README.md")
    assert [s.name for s in config.rewards.signals] == ["template.keyword_coverage", "template.banned_word"]
    assert config.rewards.signals[1].params == {"words": ["um", "basically"], "penalty": -0.5}
    assert [s.name for s in from_readme.rewards.signals] == [s.name for s in config.rewards.signals]


@pytest.mark.parametrize("doc", ["concepts.md", "configuration.md", "hooks.md", "writing-plugins.md"])
def test_relative_links_resolve(doc: str) -> None:
    text = (DOCS / doc).read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", text):
        assert (DOCS / target).exists(), f"docs/{doc} links to {target}, which does not exist"
