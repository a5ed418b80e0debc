"""The engine is one-way: no import cycle among ``botgrpo_core/engine`` modules, counting lazy imports inside
functions and ``TYPE_CHECKING`` ones (``report`` once read ``run``'s private ``_RunContext`` while ``run``
imported ``report`` and ``trainer`` imported ``report`` for the model card)."""

from __future__ import annotations

import ast
from pathlib import Path

ENGINE = Path(__file__).resolve().parents[1] / "botgrpo_core" / "engine"


def engine_imports() -> dict[str, set[str]]:
    """``{module: engine modules it imports anywhere in the file}``."""
    graph: dict[str, set[str]] = {}
    for path in sorted(ENGINE.glob("*.py")):
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            for name in names:
                if name.startswith("botgrpo_core.engine."):
                    found.add(name.split(".")[2])
        graph[path.stem] = found & {p.stem for p in ENGINE.glob("*.py")} - {path.stem}
    return graph


def test_engine_imports_have_no_cycle() -> None:
    graph = engine_imports()
    state: dict[str, int] = {}  # 1 on the path, 2 done

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycle = [*path[path.index(nxt) :], nxt]
                raise AssertionError(f"import cycle in botgrpo_core/engine: {' -> '.join(cycle)}")
            if nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])


def test_report_and_trainer_do_not_reach_back_into_the_run() -> None:
    graph = engine_imports()
    assert "run" not in graph["report"]
    assert "report" not in graph["trainer"] and "model_card" in graph["trainer"]
