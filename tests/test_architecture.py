"""The import rules of docs/architecture.md, enforced.

The table of allowed room-to-room imports is read from the doc itself (its one home); every import in
``botgrpo_core`` (lazy ones inside functions included) is checked against it, and the torch-free rooms
and the plugins' entry points are imported in a fresh interpreter to see that no torch/TRL comes along.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "botgrpo_core"
DOC = ROOT / "docs" / "architecture.md"
PLUGIN_PACKAGES = ("botgrpo_jsx", "botgrpo_sympy", "botgrpo_judge", "botgrpo_bench", "botgrpo_template")
HEAVY = ("torch", "transformers", "trl", "accelerate", "vllm")
# The two documented exceptions to the table (see the doc's paragraph under it).
SIGNALS_MAY_USE = {
    "rewards": "botgrpo_core.signals.testing",
    "estimators": "botgrpo_core.estimators.registry",
}


def allowed_imports() -> dict[str, set[str]]:
    """``room -> rooms it may import``, parsed from the doc's "Import rules" table."""
    section = DOC.read_text().split("## Import rules", 1)[1].split("\n## ", 1)[0]
    table: dict[str, set[str]] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 2 and cells[0].startswith("`"):
            table[cells[0].strip("`")] = set(re.findall(r"`([^`]+)`", cells[1]))
    return table


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def room_of(module: str) -> str:
    parts = module.split(".")
    return "__init__" if len(parts) == 1 else parts[1]


def imports_of(path: Path) -> list[tuple[int, str]]:
    """Every imported module name with its line, at any depth (function-level imports count)."""
    out: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "botgrpo_core":  # `from botgrpo_core import x`: x may be a room
                out += [
                    (node.lineno, f"botgrpo_core.{a.name}") for a in node.names if (CORE / a.name).is_dir()
                ]
                out.append((node.lineno, "botgrpo_core"))
            else:
                out.append((node.lineno, node.module))
    return out


def core_files() -> list[Path]:
    return sorted(CORE.rglob("*.py"))


def test_the_doc_names_every_room_once() -> None:
    table = allowed_imports()
    rooms = {p.name for p in CORE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    rooms |= {p.stem for p in CORE.glob("*.py") if p.stem != "__init__"} | {"__init__"}
    assert set(table) == rooms, "docs/architecture.md's import table must list every room of botgrpo_core"
    assert table["estimators"] == set() and table["loss"] == set(), "the math imports no other room"


def test_every_core_import_follows_the_table() -> None:
    table = allowed_imports()
    problems = []
    for path in core_files():
        me = module_name(path)
        mine = room_of(me)
        for line, target in imports_of(path):
            top = target.split(".")[0]
            where = f"{path.relative_to(ROOT)}:{line} imports {target}"
            if top in PLUGIN_PACKAGES:
                problems.append(f"{where}: the core never imports a plugin")
            if top != "botgrpo_core" or room_of(target) == mine:
                continue
            other = room_of(target)
            if other not in table[mine]:
                problems.append(f"{where}: room {mine!r} may not import {other!r}")
            elif mine == "signals" and other in SIGNALS_MAY_USE:
                allowed = SIGNALS_MAY_USE[other]
                if not (me == allowed or target.startswith(allowed)):
                    problems.append(f"{where}: signals may use {other!r} only through {allowed}")
    assert not problems, "\n".join(problems)


def test_the_math_imports_no_framework() -> None:
    problems = [
        f"{p.relative_to(ROOT)}:{line} imports {target}"
        for p in [*sorted((CORE / "estimators").glob("*.py")), CORE / "loss.py"]
        for line, target in imports_of(p)
        if target.split(".")[0] in {"trl", "transformers", "accelerate", "pydantic", "pluggy", "yaml"}
    ]
    assert not problems, "\n".join(problems)


def shipped_plugin_files() -> list[Path]:
    files = []
    for plugin in sorted((ROOT / "plugins").iterdir()):
        for package in plugin.glob("botgrpo_*"):
            if package.is_dir():
                files += sorted(package.rglob("*.py"))
    return files


#: What a plugin's shipped package may import from the core (docs/architecture.md, "Plugins load without torch").
PLUGIN_MAY_IMPORT = ("botgrpo_core.signals", "botgrpo_core.rewards.pool", "botgrpo_core.rewards.alignment")
#: An engine adapter (botgrpo-verl: a verl plugin, loaded by `import verl`, torch already there) runs the core's
#: estimators and mixture inside another trainer, as engine/ does inside TRL's; still never the engine or the CLI.
# verl's adapter also reuses the vLLM-on-CPU weight-sync helpers (one home: engine/vllm_engine.py).
ADAPTER_MAY_IMPORT = {
    "botgrpo_verl": ("botgrpo_core.estimators", "botgrpo_core.rewards", "botgrpo_core.engine.vllm_engine")
}


def test_plugins_import_only_the_contract() -> None:
    """Never the engine or the CLI: the top level, ``signals.*`` and the pool / alignment helpers."""
    files = shipped_plugin_files()
    assert len({f.parts[len(ROOT.parts) + 1] for f in files}) >= 3, "expected the three plugins' packages"
    problems = [
        f"{p.relative_to(ROOT)}:{line} imports {target}"
        for p in files
        for line, target in imports_of(p)
        if target.startswith("botgrpo_core.")
        and not any(
            target == allowed or target.startswith(allowed + ".")
            for allowed in PLUGIN_MAY_IMPORT + ADAPTER_MAY_IMPORT.get(p.parts[len(ROOT.parts) + 2], ())
        )
    ]
    assert not problems, "\n".join(problems)


def _heavy_modules_after(code: str) -> list[str]:
    probe = f"import sys\n{code}\nprint(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT)
    return [m for m in out.stdout.strip().split(",") if m]


TORCH_FREE = [
    "botgrpo_core",
    "botgrpo_core.signals",
    "botgrpo_core.signals.hookspecs",
    "botgrpo_core.signals.manager",
    "botgrpo_core.signals.builtins",
    "botgrpo_core.signals.answers",
    "botgrpo_core.signals.steps",
    "botgrpo_core.config.loading",
    "botgrpo_core.config.checks",
    "botgrpo_core.config.presets",
    "botgrpo_core.estimators.registry",
    "botgrpo_core.tasks",
    "botgrpo_core.cli.main",
]


def test_torch_free_rooms_import_no_torch() -> None:
    code = "\n".join(f"import {m}" for m in TORCH_FREE)
    code += "\nfrom botgrpo_core.signals.manager import PluginManager\nPluginManager().signals()"
    assert _heavy_modules_after(code) == []


@pytest.mark.parametrize(
    "entry_point",
    sorted(
        (ep for ep in metadata.entry_points(group="botgrpo") if ep.module.split(".")[0] in PLUGIN_PACKAGES),
        key=lambda ep: ep.name,
    ),
    ids=lambda ep: ep.name,
)
def test_plugin_entry_points_load_without_torch(entry_point: metadata.EntryPoint) -> None:
    code = f"import importlib\nimportlib.import_module({entry_point.module!r})"
    assert _heavy_modules_after(code) == [], f"importing {entry_point.module} pulls in a heavy library"
