"""Malformed run files through ``botgrpo validate`` (and ``train``): exit code 2, the key named, no traceback.

Each row is one of the battery's findings (issue 17) or its neighbours: values that validated and then
trained with loss 0 or crashed after start-up (NaN, inf, YAML booleans as numbers, huge ints, an output
folder that cannot exist), YAML that costs far more than its size (alias bombs, deep nesting), keys that
silently replaced each other, and ``--set`` paths that gave raw tracebacks.
"""

from __future__ import annotations

import re
import time
import tracemalloc
from pathlib import Path

import pytest

from botgrpo_core.cli.main import main
from botgrpo_core.config.yaml_text import MAX_DEPTH, MAX_FILE_BYTES, MAX_NODES

BASE = """\
model:
  name_or_path: tiny
rewards:
  alpha: 1.0
  beta: 0.5
  strict: false
  signals:
    - name: core.exact_answer
      weight: 1.0
      timeout_s: 10.0
      memory_mb: 1024
      workers: 1
    - name: core.regex
      params: {pattern: "sorry", value: -1.0}
algorithm:
  preset: bot-grpo
training:
  steps: 10
  learning_rate: 1.0e-4
  temperature: 1.0
  top_p: 1.0
  seed: 0
  plots: true
  output_dir: runs/x
  warm_start:
    seed: 0
engine:
  vllm_gpu_memory_utilization: 0.3
"""


def _with(old: str, new: str, text: str = BASE) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def _alias_bomb(levels: int = 9, width: int = 9) -> str:
    """``width ** levels`` values from a few hundred bytes: each anchor lists the previous one ``width`` times."""
    lines = ["bomb0: &a0 [" + ", ".join(["x"] * width) + "]"]
    for k in range(1, levels):
        lines.append(f"bomb{k}: &a{k} [" + ", ".join([f"*a{k - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


_LAST = f"a{8}"
CASES: list[tuple[str, str | bytes, list[str], str]] = [
    # (id, file text, --set overrides, a regex the message must match: the key named)
    ("weight-nan", _with("weight: 1.0", "weight: .nan"), [], r"rewards\.signals\[0\]\.weight: .*finite"),
    ("weight-inf", _with("weight: 1.0", "weight: .inf"), [], r"rewards\.signals\[0\]\.weight: .*finite"),
    ("weight-minus-inf", _with("weight: 1.0", "weight: -.inf"), [], r"rewards\.signals\[0\]\.weight"),
    ("alpha-inf", _with("alpha: 1.0", "alpha: .inf"), [], r"rewards\.alpha: .*finite"),
    ("beta-nan", _with("beta: 0.5", "beta: .NaN"), [], r"rewards\.beta: .*finite"),
    ("lr-inf", _with("learning_rate: 1.0e-4", "learning_rate: .inf"), [], r"training\.learning_rate"),
    ("alpha-yes", _with("alpha: 1.0", "alpha: yes"), [], r"rewards\.alpha: expected a number, got the bool"),
    ("weight-on", _with("weight: 1.0", "weight: on"), [], r"rewards\.signals\[0\]\.weight: .*boolean"),
    ("steps-true", _with("steps: 10", "steps: true"), [], r"training\.steps: .*boolean"),
    ("plots-int", _with("plots: true", "plots: 1"), [], r"training\.plots: expected true or false"),
    ("strict-string", _with("strict: false", 'strict: "no"'), [], r"rewards\.strict: expected true or false"),
    ("alpha-huge-int", _with("alpha: 1.0", f"alpha: {10**400}"), [], r"rewards\.alpha"),
    ("seed-2**70", _with("seed: 0\n  plots", f"seed: {2**70}\n  plots"), [], r"training\.seed: .*too large"),
    ("seed-2**32", _with("seed: 0\n  plots", f"seed: {2**32}\n  plots"), [], r"training\.seed: .*4294967295"),
    ("seed-negative", _with("seed: 0\n  plots", "seed: -1\n  plots"), [], r"training\.seed: .*greater"),
    ("warm-seed-huge", _with("    seed: 0", f"    seed: {2**40}"), [], r"training\.warm_start\.seed"),
    ("timeout-inf", _with("timeout_s: 10.0", "timeout_s: .inf"), [], r"rewards\.signals\[0\]\.timeout_s"),
    ("timeout-year", _with("timeout_s: 10.0", "timeout_s: 3.2e+7"), [], r"rewards\.signals\[0\]\.timeout_s"),
    ("memory-1e20", _with("memory_mb: 1024", "memory_mb: 1e20"), [], r"rewards\.signals\[0\]\.memory_mb"),
    ("memory-float", _with("memory_mb: 1024", "memory_mb: 1.0e+20"), [], r"rewards\.signals\[0\]\.memory_mb"),
    ("memory-int", _with("memory_mb: 1024", f"memory_mb: {10**30}"), [], r"rewards\.signals\[0\]\.memory_mb"),
    ("workers-huge", _with("workers: 1", "workers: 1000000"), [], r"rewards\.signals\[0\]\.workers"),
    (
        "eps-low-nan",
        _with("preset: bot-grpo", "preset: bot-grpo\n  eps_low: .nan"),
        [],
        r"algorithm\.eps_low",
    ),
    ("kl-inf", _with("preset: bot-grpo", "preset: bot-grpo\n  kl_coef: .inf"), [], r"algorithm\.kl_coef"),
    ("top-p-nan", _with("top_p: 1.0", "top_p: .nan"), [], r"training\.top_p"),
    (
        "gpu-util-nan",
        _with("utilization: 0.3", "utilization: .nan"),
        [],
        r"engine\.vllm_gpu_memory_utilization",
    ),
    ("gap-inf", _with("strict: false", "strict: false\n  outcome_gap: .inf"), [], r"rewards\.outcome_gap"),
    (
        "output-dev-null",
        _with("output_dir: runs/x", "output_dir: /dev/null/x"),
        [],
        r"training\.output_dir: .*/dev/null",
    ),
    (
        "output-under-file",
        _with("output_dir: runs/x", "output_dir: a_file/run"),
        [],
        r"training\.output_dir: .*a_file",
    ),
    (
        "duplicate-key",
        _with("beta: 0.5", "beta: 0.5\n  alpha: 2.0"),
        [],
        r"line 6: key 'alpha' is given twice .*first at line 4",
    ),
    ("duplicate-section", BASE + "rewards:\n  signals: []\n", [], r"line \d+: key 'rewards' is given twice"),
    ("non-utf8", BASE.encode() + b"# caf\xe9\n", [], r"line 29: the run file is not UTF-8 text \(byte 0xe9"),
    ("utf16", BASE.encode("utf-16"), [], r"line 1: the run file is not UTF-8"),
    ("nul-byte", BASE + 'x: "\0"\n', [], r"unacceptable character"),
    ("too-large", BASE + "#" * MAX_FILE_BYTES + "\n", [], r"over 16 MiB"),
    (
        "deep-flow",
        _with("steps: 10", "steps: " + "[" * 5000 + "]" * 5000),
        [],
        r"line 18: the YAML nests over 64 levels",
    ),
    ("deep-block", "rewards:\n" + "".join("  " * k + f"k{k}:\n" for k in range(1, 200)), [], r"nests over"),
    (
        "deep-via-aliases",
        "d0: &d0 [[[[[[[[[[1]]]]]]]]]]\n"
        + "".join(f"d{k}: &d{k} [[[[[[[[[[*d{k - 1}]]]]]]]]]]\n" for k in range(1, 8))
        + BASE,
        [],
        r"d7.*nests \d+ levels deep",
    ),
    (
        "alias-bomb-steps",
        _alias_bomb() + _with("steps: 10", f"steps: *{_LAST}"),
        [],
        r"training\.steps.*alias bomb",
    ),
    (
        "alias-bomb-params",
        _alias_bomb() + _with('pattern: "sorry"', f"pattern: *{_LAST}"),
        [],
        r"rewards\.signals\[1\]\.params\.pattern.*alias",
    ),
    (
        "alias-cycle",
        "rewards: &r\n  signals:\n    - *r\n",
        [],
        r"line 3: an alias refers to a node that contains it",
    ),
    ("tab-indent", _with("  beta: 0.5", "\tbeta: 0.5"), [], r"YAML syntax error at line 5"),
    ("top-level-list", "- rewards\n- training\n", [], r"must be a mapping of sections"),
    ("empty-file", "", [], r"rewards: required key is missing"),
    ("no-namespace", _with("name: core.regex", "name: regex"), [], r"rewards\.signals\[1\]\.name"),
    ("typo", _with("steps: 10", "stpes: 10"), [], r"training\.stpes: unknown key; did you mean 'steps'"),
    (
        "plugin-param-nan",
        _with("value: -1.0}", "value: .nan}"),
        [],
        r"rewards\.signals\[1\]\.params\.value: expected a finite number, got nan \(signal 'core\.regex'",
    ),
    (
        "plugin-param-inf",
        _with("value: -1.0}", "value: -1.0, timeout_s: .inf}"),
        [],
        r"rewards\.signals\[1\]\.params\.timeout_s: expected a finite number",
    ),
    (
        "plugin-param-yes",
        _with("value: -1.0}", "value: yes}"),
        [],
        r"rewards\.signals\[1\]\.params\.value: expected a number, got the boolean true",
    ),
    (
        "set-index-99",
        BASE,
        ["rewards.signals.99.weight=1"],
        r"rewards\.signals has 2 item\(s\), so there is no \[99\]",
    ),
    ("set-bracket-99", BASE, ["rewards.signals[99].weight=1"], r"no \[99\] \(indices 0-1\)"),
    (
        "set-dotted-name",
        BASE,
        ["rewards.signals.core.regex.weight=2"],
        r"write rewards\.signals\[core\.regex\]\.weight",
    ),
    (
        "set-unknown-name",
        BASE,
        ["rewards.signals[core.nope].weight=2"],
        r"no item 'core\.nope'.*core\.exact_answer, core\.regex",
    ),
    ("set-bad-path", BASE, ["rewards.signals[0.weight=1"], r"is not a key path"),
    ("set-into-scalar", BASE, ["training.steps.deeper=1"], r"training\.steps is not a section"),
    ("set-nan", BASE, ["rewards.signals[0].weight=.nan"], r"rewards\.signals\[0\]\.weight: .*finite"),
    ("set-duplicate", BASE, ["rewards.signals[0].params={a: 1, a: 2}"], r"key 'a' is given twice"),
    (
        "set-alias-bomb",
        BASE,
        ["training.steps=" + _alias_bomb().replace("\n", ", ").join("{}")],
        r"alias bomb",
    ),
    ("set-no-equals", BASE, ["training.steps"], r"expected key\.path=value"),
]


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a_file").write_text("not a folder")
    return tmp_path


def _validate(path: Path, sets: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    rc = main(["validate", str(path), *(f"--set={s}" for s in sets)])
    out = capsys.readouterr()
    return rc, out.out + out.err


def test_the_base_file_is_valid(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = in_tmp / "run.yaml"
    path.write_text(BASE)
    rc, text = _validate(path, [], capsys)
    assert rc == 0, text
    assert "OK" in text


@pytest.mark.parametrize(("text", "sets", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_malformed_run_file_is_a_clear_error(
    in_tmp: Path, capsys: pytest.CaptureFixture[str], text: str | bytes, sets: list[str], message: str
) -> None:
    path = in_tmp / "run.yaml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    start = time.perf_counter()
    rc, output = _validate(path, sets, capsys)
    assert rc == 2, output
    assert "Traceback" not in output and len(output) < 2000, output
    assert re.search(message, output), output
    assert time.perf_counter() - start < 10, "validation must stay cheap"


def test_alias_bomb_is_refused_in_bounded_memory(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The battery's 2.3 GB ``validate``: now refused before any Python object is built."""
    path = in_tmp / "run.yaml"
    path.write_text(_alias_bomb(levels=12) + _with("steps: 10", "steps: *a11"))
    tracemalloc.start()
    try:
        rc, output = _validate(path, [], capsys)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert rc == 2 and f"over the limit of {MAX_NODES:,}" in output
    assert peak < 50 * 2**20, f"peak {peak / 2**20:.0f} MiB"


def test_aliases_and_merge_keys_within_the_limits_still_work(in_tmp: Path, capsys) -> None:
    """An anchor merged into a second signal (``<<: *first``, its ``name`` overridden, as YAML intends) is
    neither a duplicate key nor a bomb."""
    text = _with("    - name: core.exact_answer\n", "    - &first\n      name: core.exact_answer\n")
    text = _with("    - name: core.regex\n", "    - <<: *first\n      name: core.regex\n", text)
    path = in_tmp / "run.yaml"
    path.write_text(text)
    rc, output = _validate(path, [], capsys)
    assert rc == 0, output
    assert "core.exact_answer x1, core.regex x1" in output


@pytest.mark.parametrize(("lists", "refused"), [(MAX_DEPTH - 3, False), (MAX_DEPTH - 2, True)])
def test_nesting_limit(in_tmp: Path, capsys, lists: int, refused: bool) -> None:
    """engine -> trl_args -> model_init_kwargs -> ``lists`` nested lists: the document is ``3 + lists`` levels deep."""
    path = in_tmp / "run.yaml"
    nested = "[" * lists + "]" * lists
    path.write_text(_with("engine:\n", "engine:\n  trl_args: {model_init_kwargs: " + nested + "}\n"))
    rc, output = _validate(path, [], capsys)
    assert (rc == 2 and f"nests over {MAX_DEPTH} levels" in output) if refused else rc == 0, output


def test_train_refuses_before_start_up(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``weight: .nan`` trained "successfully" with loss 0: now ``train`` stops at the run file."""
    path = in_tmp / "run.yaml"
    path.write_text(_with("weight: 1.0", "weight: .nan"))
    rc = main(["train", str(path)])
    err = capsys.readouterr().err
    assert rc == 2 and "rewards.signals[0].weight" in err and "Traceback" not in err
    assert not (in_tmp / "runs").exists()  # nothing was started


@pytest.mark.parametrize("source", ["base", "quickstart"])
def test_a_resolved_config_round_trips(in_tmp: Path, capsys, source: str) -> None:
    """What a run writes as config.yaml (every key spelled out) validates again under the strict rules."""
    import yaml

    from botgrpo_core.config.loading import load_config

    path = in_tmp / "run.yaml"
    if source == "base":
        path.write_text(BASE)
    else:
        path = Path(__file__).resolve().parents[2] / "examples" / "quickstart.yaml"
        pytest.importorskip("botgrpo_sympy")
    resolved = in_tmp / "config.yaml"
    resolved.write_text(yaml.safe_dump(load_config(path).model_dump(mode="json"), sort_keys=False))
    rc, output = _validate(resolved, [], capsys)
    assert rc == 0, output
