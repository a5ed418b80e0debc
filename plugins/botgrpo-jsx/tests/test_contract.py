"""The plugin as the core sees it: entry point, registration, and the signal contract."""

from __future__ import annotations

from importlib import metadata

import pytest

from botgrpo_core.signals.testing import check_signal_contract, make_samples
from botgrpo_jsx.plugin import SIGNALS

COMPLETIONS = [
    "```tsx\nexport default function A() { const [n] = useState(0); return <ul>{[n].map(i => <li>{i}</li>)}</ul>; }\n```",
    "Here: ```jsx\nconst B = () => <div class='x'><Missing/></div>\n```",
    "function C() {\n  if (a) {\n    return (<div>é\n",
    "",
    "plain prose with 🎉 and no code",
]


def test_entry_point_declares_the_namespace() -> None:
    points = [ep for ep in metadata.entry_points(group="botgrpo") if ep.name == "jsx"]
    assert points and points[0].value == "botgrpo_jsx.plugin"


@pytest.mark.parametrize("spec", SIGNALS, ids=lambda s: s.name)
def test_check_signal_contract(spec) -> None:
    params = {"workers": 0}
    if spec.name == "jsx.visual":
        pytest.skip("needs a vision server: tests/test_visual.py checks its contract against a local one")
    rows = None
    if spec.name.startswith("jsx.render") or spec.name == "jsx.checks":
        _need_sandbox()
    if spec.name == "jsx.checks":  # the row's checks: a list without items, for the first completion
        rows = {"checks": [{"name": "items", "expect": [{"exists": {"role": "listitem"}}]}]}
    if spec.name == "jsx.compiles":
        params["backend"] = "auto"
    samples = make_samples(COMPLETIONS, prompt="Write and export a component", rows=rows)
    results = check_signal_contract(spec, samples, params)
    assert len(results) == len(COMPLETIONS)
    if spec.kind == "local":
        assert any(results), f"{spec.name} found nothing wrong in completions with violations"


def _need_sandbox() -> None:
    from botgrpo_jsx import nodeenv
    from botgrpo_jsx.sandbox import SandboxUnavailable, check_boundary

    reason = nodeenv.unavailable_reason()
    node = nodeenv.find_node()
    if reason is not None or node is None:
        pytest.skip(reason or "no Node.js")
    try:
        check_boundary(node.node)
    except SandboxUnavailable as exc:
        pytest.skip(str(exc))


def test_plugin_shows_in_the_manager() -> None:
    from botgrpo_core.signals.manager import get_plugin_manager

    manager = get_plugin_manager()
    names = (
        {name for name in getattr(manager, "signal_names", lambda: [])()}
        if hasattr(manager, "signal_names")
        else set()
    )
    spec = manager.get_signal("jsx.rules") if hasattr(manager, "get_signal") else None
    assert names or spec is not None
