"""Resolve each published extra with ``pip install --dry-run --report`` and check the versions pip picks
against TRL 1.16's supported ranges (TRL's own ``Requires-Dist``, read from the installed ``trl``).

    python3 -m venv /tmp/pip-new && /tmp/pip-new/bin/pip install -U pip setuptools   # a pip >= 24
    .venv/bin/python scripts/check_extras.py --python /tmp/pip-new/bin/python   # writes benchmarks/results/extras_resolution.json
    .venv/bin/python scripts/check_extras.py --python /tmp/pip-new/bin/python --case judge-vllm

pip reaches PyPI (metadata only: nothing is installed), so a run takes minutes; tests/test_packaging.py
re-checks the recorded file against the installed TRL in milliseconds, and checks every pyproject's
bounds without the network. The local packages are given by path, so pip never looks up a ``botgrpo-*``
name on an index.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
RESULT = ROOT / "benchmarks" / "results" / "extras_resolution.json"

#: every published extra that pulls a package TRL constrains, as ``pip install`` arguments (paths from ROOT)
CASES: dict[str, list[str]] = {
    "core-trl": [".[trl]"],
    "core-trl-vllm": [".[trl,vllm]"],
    "core-trl-peft": [".[trl,peft]"],
    "judge-vllm": ["./plugins/botgrpo-judge[vllm]", "."],
    "core-trl-judge-vllm": [".[trl,vllm]", "./plugins/botgrpo-judge[vllm]"],
    "bench": ["./benchmarks/botgrpo_bench", ".[trl]", "./plugins/botgrpo-jsx", "./plugins/botgrpo-sympy"],
}
#: extras of TRL whose ranges apply when the package is present (vllm: trl.import_utils.is_vllm_available)
TRL_EXTRAS = ("vllm", "peft", "deepspeed")


def trl_ranges(dist: str = "trl") -> dict[str, SpecifierSet]:
    """``package -> specifier`` from TRL's ``Requires-Dist``: its dependencies and :data:`TRL_EXTRAS`."""
    ranges: dict[str, SpecifierSet] = {}
    for line in metadata.requires(dist) or []:
        req = Requirement(line)
        marker = str(req.marker) if req.marker else ""
        name = canonicalize_name(req.name)
        if marker and not any(f'extra == "{e}"' in marker and name == e for e in TRL_EXTRAS):
            continue  # an extra's own package only (its deepspeed extra also excludes transformers 5.1.0)
        if not req.specifier:
            continue
        ranges[name] = ranges.get(name, SpecifierSet()) & req.specifier
    ranges[canonicalize_name("trl")] = SpecifierSet(f"=={metadata.version(dist)}")
    return ranges


def resolved_versions(report: dict[str, Any]) -> dict[str, str]:
    """``package -> version`` of a ``pip install --report`` file."""
    return {
        canonicalize_name(item["metadata"]["name"]): item["metadata"]["version"]
        for item in report.get("install", [])
    }


def out_of_range(versions: dict[str, str], ranges: dict[str, SpecifierSet]) -> list[str]:
    """One line per resolved package outside TRL's range (local segments such as ``+cu129`` dropped)."""
    bad = []
    for name, version in sorted(versions.items()):
        spec = ranges.get(name)
        if spec is not None and not spec.contains(Version(Version(version).base_version), prereleases=True):
            bad.append(f"{name} {version} is outside TRL's {spec}")
    return bad


def dry_run(args: list[str], python: str) -> tuple[dict[str, str], float]:
    """The versions ``pip install --dry-run`` resolves for ``args`` (run from ROOT) and its wall seconds.

    pip runs as a user's would: PyPI only, no pip configuration files or ``PIP_*`` variables of this machine
    (its constraints and local wheel folders would pin what a user's install does not).
    """
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        cmd = [python, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet"]
        cmd += ["--no-build-isolation", "--report", str(report), *args]
        env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
        env.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1")
        if os.environ.get("PIP_CERT"):
            env["PIP_CERT"] = os.environ["PIP_CERT"]
        start = time.perf_counter()
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env)
        wall = time.perf_counter() - start
        if done.returncode:
            raise RuntimeError(f"{' '.join(cmd)} failed:\n{done.stderr[-3000:]}")
        return resolved_versions(json.loads(report.read_text())), wall


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", action="append", choices=sorted(CASES), help="default: every case")
    parser.add_argument("--output", type=Path, default=RESULT)
    parser.add_argument(
        "--python",
        default=sys.executable,
        help="the Python whose pip resolves (pip >= 24 reads PyPI's metadata files instead of downloading "
        "every wheel; it needs setuptools for the local packages)",
    )
    args = parser.parse_args(argv)
    ranges = trl_ranges()
    watched = sorted(ranges)
    cases, failed = {}, 0
    for name in args.case or list(CASES):
        versions, wall = dry_run(CASES[name], args.python)
        bad = out_of_range(versions, ranges)
        failed += bool(bad)
        cases[name] = {
            "pip_args": CASES[name],
            "wall_s": round(wall, 1),
            "watched": {k: versions[k] for k in watched if k in versions},
            "torch": versions.get("torch"),
            "outside_trl_ranges": bad,
            "resolved": versions,
        }
        print(
            f"{name:<22} {'OK ' if not bad else 'BAD'} {wall:6.1f} s  "
            + ", ".join(f"{k} {v}" for k, v in cases[name]["watched"].items())
            + (f"  torch {versions.get('torch')}" if versions.get("torch") else "")
        )
        for line in bad:
            print(f"    {line}")
    record = {
        "command": "python scripts/check_extras.py" + "".join(f" --case {c}" for c in args.case or []),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "pip": subprocess.run(
            [args.python, "-m", "pip", "--version"], capture_output=True, text=True
        ).stdout.split(" from ")[0],
        "pip_config": "none (PIP_CONFIG_FILE=/dev/null, no PIP_* variables): PyPI as a user sees it",
        "trl": metadata.version("trl"),
        "trl_ranges": {k: str(v) for k, v in sorted(ranges.items())},
        "cases": cases,
    }
    if args.case and args.output.is_file():  # a rerun of some cases keeps the others' records
        earlier = json.loads(args.output.read_text(encoding="utf-8"))
        record["cases"] = {**earlier.get("cases", {}), **cases}
        record["command"] = "python scripts/check_extras.py (cases recorded over several runs)"
    record["cases_not_recorded"] = sorted(set(CASES) - set(record["cases"]))
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.output}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
