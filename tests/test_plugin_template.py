"""The plugin template as a real distribution: pip-installed into this environment, discovered through its
entry point by a fresh ``botgrpo`` process, validated in a run file and used by ``botgrpo score``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "examples" / "plugin-template"
DISTRIBUTION = "botgrpo-template"
BOTGRPO = Path(sys.executable).with_name("botgrpo")

RUN = """
rewards:
  alpha: 1.0
  beta: 0.5
  signals:
    - name: template.keyword_coverage
      weight: 2.0
    - name: template.banned_word
      params: {words: [um, basically], penalty: -0.5}
"""


def _pip(*args: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pip", *args, "--quiet", "--disable-pip-version-check"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"pip {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"


def _previous_install() -> list[str] | None:
    """pip arguments that restore a botgrpo-template installed before this test (a developer's), or None."""
    try:
        dist = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return None
    origin = json.loads(dist.read_text("direct_url.json") or "{}")
    url = origin.get("url", "")
    if not url.startswith("file://"):
        return [f"{DISTRIBUTION}=={dist.version}"]
    path = url[len("file://") :]
    if not Path(
        path
    ).exists():  # installed from a folder that is gone (another run's copy): nothing to restore
        return None
    return ["-e", path] if origin.get("dir_info", {}).get("editable") else [path]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The template pip-installed (not editable) from a copy, so no build files land in the repository."""
    copy = tmp_path_factory.mktemp("template") / "plugin-template"
    shutil.copytree(TEMPLATE, copy, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build"))
    previous = _previous_install()
    _pip("install", "--no-deps", "--no-build-isolation", "--no-compile", str(copy))
    try:
        yield copy
    finally:
        _pip("uninstall", "--yes", DISTRIBUTION)
        if previous is not None:
            _pip("install", "--no-deps", "--no-build-isolation", *previous)


def _botgrpo(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("BOTGRPO_LOAD_PLUGINS", "FORCE_COLOR")}
    env.update(HF_HUB_OFFLINE="1", HF_HUB_DISABLE_TELEMETRY="1", TOKENIZERS_PARALLELISM="false")
    return subprocess.run(
        [str(BOTGRPO), *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=120
    )


def test_installed_template_plugin_end_to_end(installed: Path, tmp_path: Path) -> None:
    dist = metadata.distribution(DISTRIBUTION)
    assert not (dist.read_text("direct_url.json") and "editable" in dist.read_text("direct_url.json"))
    assert [ep.value for ep in dist.entry_points if ep.group == "botgrpo"] == ["botgrpo_template.plugin"]

    listed = _botgrpo("plugins", "--json", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    plugins = {p["name"]: p for p in json.loads(listed.stdout)["plugins"]}
    template = plugins["template"]
    assert template["distribution"] == DISTRIBUTION and template["version"] == "0.1.0"
    assert template["hooks"] == ["botgrpo_register_signals"]
    kinds = {s["name"]: (s["kind"], s["bounds"]) for s in template["signals"]}
    assert kinds == {
        "template.banned_word": ("local", "depends on params"),
        "template.keyword_coverage": ("global", [0.0, 1.0]),
    }

    run_file = tmp_path / "run.yaml"
    run_file.write_text(RUN, encoding="utf-8")
    validated = _botgrpo("validate", str(run_file), cwd=tmp_path)
    assert validated.returncode == 0, validated.stderr
    assert (
        "template.keyword_coverage x2" in validated.stdout and "template.banned_word x1" in validated.stdout
    )

    scored = _botgrpo(
        "score",
        str(run_file),
        "--input",
        str(installed / "samples.jsonl"),
        "--json",
        "--tokenizer",
        "tiny",
        cwd=tmp_path,
    )
    assert scored.returncode == 0, scored.stderr
    rows = [
        json.loads(line) for line in (installed / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    samples = json.loads(scored.stdout)["samples"]
    assert len(samples) == len(rows)
    found = []
    for row in rows:
        text = row["completion"]
        coverage = float(all(k.lower() in text.lower() for k in row["keywords"]))  # one keyword per row
        spans = []  # whole-word, case-insensitive occurrences, found with str.find
        for word in ("um", "basically"):
            start = text.lower().find(word)
            while start >= 0:
                end = start + len(word)
                if (start == 0 or not text[start - 1].isalnum()) and (
                    end == len(text) or not text[end].isalnum()
                ):
                    spans.append((start, end, text[start:end]))
                start = text.lower().find(word, start + 1)
        banned = [0.0] * len(text)
        covered = [False] * len(text)
        for start, end, _ in spans:
            banned[start:end] = [-0.5] * (end - start)
            covered[start:end] = [True] * (end - start)
        found.append((coverage, spans, banned, covered))
    # uncovered: group_mean (the default): a token no banned word covers gets its group's (same prompt's)
    # length-weighted mean verdict over covered tokens, m_g = sum_i (1/L_i) sum_t C S / sum_i (1/L_i) sum_t C
    fill: dict[str, float] = {}
    for prompt in {r["prompt"] for r in rows}:
        mine = [f for r, f in zip(rows, found) if r["prompt"] == prompt]
        num = sum(sum(b for b, c in zip(f[2], f[3]) if c) / len(f[2]) for f in mine)
        den = sum(sum(f[3]) / len(f[2]) for f in mine)
        fill[prompt] = num / den if den else 0.0
    for sample, row, (coverage, spans, banned, covered) in zip(samples, rows, found):
        local = [b if c else fill[row["prompt"]] for b, c in zip(banned, covered)]
        expected = [1.0 * 2.0 * coverage + 0.5 * v for v in local]
        assert sample["signals"]["template.keyword_coverage"]["value"] == coverage
        assert sample["token_rewards"] == pytest.approx(expected, abs=1e-6)
        got = [
            (s["start"], s["end"], s["meta"]["word"])
            for s in sample["signals"]["template.banned_word"]["spans"]
        ]
        assert got == sorted(spans)
    assert any(s["signals"]["template.banned_word"]["spans"] for s in samples)
