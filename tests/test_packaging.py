"""What the published distributions carry and which versions they resolve to.

- every distribution (core, plugins, bench, plugin template) has the Apache-2.0 LICENSE its metadata names;
- built with setuptools' own PEP 517 hooks from a copy of the source: the sdist carries no tests (they need
  the repository's conftest files and fixtures), the wheel carries ``py.typed`` and the LICENSE, and no
  test-only module (botgrpo-jsx's mutations live in ``tests/jsx_testing``);
- every pyproject's bound on a package TRL 1.16 constrains (vLLM, accelerate, datasets, transformers,
  peft, deepspeed) admits no version outside TRL's range (read from the installed ``trl``'s metadata);
- the recorded ``pip install --dry-run --report`` of each published extra (``scripts/check_extras.py``,
  1.5-26 minutes a case with the network; ``benchmarks/results/extras_resolution.json``) resolved inside
  those ranges.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path
from types import ModuleType

import pytest
import tomllib
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
DISTRIBUTIONS = {
    "botgrpo-core": ROOT,
    "botgrpo-jsx": ROOT / "plugins" / "botgrpo-jsx",
    "botgrpo-sympy": ROOT / "plugins" / "botgrpo-sympy",
    "botgrpo-judge": ROOT / "plugins" / "botgrpo-judge",
    "botgrpo-verl": ROOT / "plugins" / "botgrpo-verl",
    "botgrpo-bench": ROOT / "benchmarks" / "botgrpo_bench",
    "botgrpo-template": ROOT / "examples" / "plugin-template",
}
RECORD = ROOT / "benchmarks" / "results" / "extras_resolution.json"


def _check_extras() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_extras", ROOT / "scripts" / "check_extras.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _pyproject(folder: Path) -> dict:
    return tomllib.loads((folder / "pyproject.toml").read_text(encoding="utf-8"))


def _package(folder: Path) -> str:
    return _pyproject(folder)["tool"]["setuptools"]["packages"]["find"]["include"][0].rstrip("*")


@pytest.mark.parametrize("name", DISTRIBUTIONS)
def test_license_and_py_typed(name: str) -> None:
    folder = DISTRIBUTIONS[name]
    project = _pyproject(folder)
    assert project["project"]["license"] == {"text": "Apache-2.0"}
    text = (folder / "LICENSE").read_text(encoding="utf-8")
    assert (
        "Apache License" in text
        and "Version 2.0, January 2004" in text
        and "END OF TERMS AND CONDITIONS" in text
    )
    package = _package(folder)
    assert (folder / package / "py.typed").is_file(), f"{name}: {package}/py.typed is missing"
    assert "py.typed" in project["tool"]["setuptools"].get("package-data", {}).get(package, [])


def _build(folder: Path, tmp: Path) -> tuple[Path, Path]:
    """``(sdist, wheel)`` built by setuptools' PEP 517 hooks from a copy of ``folder`` (the checkout stays
    untouched: no build/ or egg-info written there). The core's copy holds what its sdist could pick up:
    the package, its metadata files and tests/ (the other top-level folders are other distributions)."""
    source = tmp / "src"
    ignore = shutil.ignore_patterns(
        "build", "dist", "*.egg-info", "__pycache__", "node_modules", ".botgrpo-cache"
    )
    if folder == ROOT:
        source.mkdir()
        for name in ("pyproject.toml", "README.md", "LICENSE", "MANIFEST.in"):
            shutil.copy2(ROOT / name, source / name)
        for name in ("botgrpo_core", "tests"):
            shutil.copytree(ROOT / name, source / name, ignore=ignore)
    else:
        shutil.copytree(folder, source, ignore=ignore)
    out = tmp / "dist"
    for hook in ("build_sdist", "build_wheel"):  # one process each: in one, setuptools reuses the sdist's dir
        code = f"import sys, setuptools.build_meta as b; b.{hook}(sys.argv[1])"
        done = subprocess.run(
            [sys.executable, "-c", code, str(out)], cwd=source, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stderr[-3000:]
    return next(out.glob("*.tar.gz")), next(out.glob("*.whl"))


@pytest.mark.slow
@pytest.mark.parametrize("name", DISTRIBUTIONS)
def test_built_distributions(name: str, tmp_path: Path) -> None:
    folder = DISTRIBUTIONS[name]
    assert any((folder / "tests").glob("test_*.py")), f"{name} has tests, so the sdist rule matters"
    sdist, wheel = _build(folder, tmp_path)
    with tarfile.open(sdist) as tar:
        members = [m.split("/", 1)[1] for m in tar.getnames() if "/" in m]
    tests = [m for m in members if m.startswith("tests/")]
    assert not tests, f"{name}'s sdist ships tests without the repository's fixtures: {tests[:5]}"
    assert "LICENSE" in members
    with zipfile.ZipFile(wheel) as whl:
        files = whl.namelist()
    package = _package(folder)
    assert f"{package}/py.typed" in files
    assert any(f.endswith(".dist-info/licenses/LICENSE") or f.endswith(".dist-info/LICENSE") for f in files)
    assert all(f.split("/")[0].startswith(package) for f in files), "only the package and its dist-info"
    assert not [f for f in files if Path(f).name.startswith(("test_", "conftest"))]
    assert f"{package}/mutations.py" not in files  # botgrpo-jsx: test support lives in tests/jsx_testing


# --- versions -------------------------------------------------------------------------------------------------
def _requirements(folder: Path) -> list[tuple[str, Requirement]]:
    """``(where, requirement)`` of a pyproject's dependencies and every extra."""
    project = _pyproject(folder)["project"]
    out = [("dependencies", Requirement(r)) for r in project.get("dependencies", [])]
    for extra, reqs in project.get("optional-dependencies", {}).items():
        out += [(f"[{extra}]", Requirement(r)) for r in reqs]
    return out


#: versions probed against each bound: every minor of the range the packages have published, and around it
_PROBES = [f"0.{m}.{p}" for m in range(10, 40) for p in (0, 1, 9)] + [
    f"{a}.{b}.{c}" for a in (1, 2, 3, 4, 5, 6) for b in range(0, 60) for c in (0, 1, 2, 9)
]


def test_every_bound_on_a_trl_constrained_package_lies_inside_trls_range() -> None:
    ranges = _check_extras().trl_ranges()
    problems = []
    watched = {"vllm", "accelerate", "datasets", "transformers", "peft", "deepspeed"}  # the list
    for name, folder in DISTRIBUTIONS.items():
        for where, req in _requirements(folder):
            trl = ranges.get(canonicalize_name(req.name))
            if trl is None or canonicalize_name(req.name) not in watched:
                continue
            outside = [v for v in _PROBES if req.specifier.contains(v) and not trl.contains(v)]
            if outside:
                problems.append(f"{name} {where}: {req} admits {outside[0]} (TRL 1.16: {req.name}{trl})")
    assert not problems, "\n".join(problems)


def test_vllm_is_bounded_in_every_extra_that_pulls_it() -> None:
    pulls = [
        (name, where, req)
        for name, folder in DISTRIBUTIONS.items()
        for where, req in _requirements(folder)
        if canonicalize_name(req.name) == "vllm"
    ]
    assert {(n, w) for n, w, _ in pulls} >= {("botgrpo-core", "[vllm]"), ("botgrpo-judge", "[vllm]")}
    for name, where, req in pulls:
        assert req.specifier.contains("0.31.0") and not req.specifier.contains("0.33.0"), (name, where, req)


def test_recorded_dry_runs_resolved_inside_trls_ranges() -> None:
    """The recorded ``pip install --dry-run --report`` of every case of ``scripts/check_extras.py`` (rerun it
    after changing a bound), re-checked against the installed TRL's ranges. A case takes 1.5-26 minutes here
    (pip downloads the wheels whose metadata it cannot read: torch's CUDA build, vLLM), so this reads the
    record instead of resolving."""
    checker = _check_extras()
    record = json.loads(RECORD.read_text(encoding="utf-8"))
    assert record["trl"] == checker.metadata.version("trl")
    assert set(record["cases"]) == set(checker.CASES), "rerun scripts/check_extras.py: the cases changed"
    assert record["cases_not_recorded"] == []
    ranges = checker.trl_ranges()
    for name, case in record["cases"].items():
        assert case["pip_args"] == checker.CASES[name], "rerun scripts/check_extras.py: the case changed"
        assert not checker.out_of_range(case["resolved"], ranges), name
        assert "vllm" in case["resolved"] or "vllm" not in name
    judge = record["cases"]["judge-vllm"]["resolved"]
    assert Version("0.22") <= Version(Version(judge["vllm"]).base_version) <= Version("0.31.0")


def test_out_of_range_reads_a_pip_report() -> None:
    """The checker itself, on a report shaped as pip writes it (the issue's unbounded resolution)."""
    checker = _check_extras()
    report = {
        "install": [
            {"metadata": {"name": "vLLM", "version": "0.33.0+cu129"}},
            {"metadata": {"name": "accelerate", "version": "1.9.0"}},
            {"metadata": {"name": "datasets", "version": "4.7.0"}},
        ]
    }
    bad = checker.out_of_range(checker.resolved_versions(report), checker.trl_ranges())
    assert len(bad) == 2 and bad[0].startswith("accelerate 1.9.0") and bad[1].startswith("vllm 0.33.0+cu129")


def test_every_distribution_of_the_repository_is_checked() -> None:
    found = {p.parent for p in ROOT.glob("plugins/*/pyproject.toml")}
    found |= {ROOT, ROOT / "benchmarks" / "botgrpo_bench", ROOT / "examples" / "plugin-template"}
    assert found == set(DISTRIBUTIONS.values()), "add the new distribution to DISTRIBUTIONS"
