"""``botgrpo probe``: the gamed variants, the push each rollout gets, the verdict and its exit codes, bad input.

Real scorers throughout (the core's ``core.exact_answer`` and ``core.regex`` through the mixture, the run's
estimator); the pushes are checked against hand-computed GRPO advantages. The sympy mixtures of round 4 and
of today's defaults are probed in plugins/botgrpo-sympy/tests/test_sympy_probe.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from botgrpo_core.cli.main import main
from botgrpo_core.cli.probe import VARIANTS, Cut, probe_rows
from botgrpo_core.cli.score import load_tokenizer
from botgrpo_core.config.loading import load_config

HONEST = "Let me add the apples: 3 + 4 = 7\nThe answer is 7."
WRONG = "Let me add the apples: 3 + 4 = 8\nThe answer is 8."
ROWS = [
    {"prompt": "Q: 3 apples and 4 apples?", "completion": HONEST, "answer": "7"},
    {"prompt": "Q: 5 pears and 2 pears?", "completion": "Add: 5 + 2 = 7\nThe answer is 7.", "answer": "7"},
]

# A mixture that pays for repeating a paid line: +1 on every equation, silence at 0 (round 4's mistakes).
GAMEABLE = """
model: {name_or_path: tiny}
algorithm: {preset: bot-grpo}
rewards:
  alpha: 1.0
  beta: 0.2
  signals:
    - name: core.exact_answer
      params: {pattern: 'answer is (\\d+)'}
    - name: core.regex
      params: {pattern: '\\d+ \\+ \\d+ = \\d+', value: 1.0}
      uncovered: zero
training: {max_new_tokens: 120}
"""
# The outcome alone (GRPO, beta 0, as the bench's outcome-only arms run): nothing but the answer is paid.
OUTCOME_ONLY = GAMEABLE.replace("bot-grpo", "grpo").replace("beta: 0.2", "beta: 0.0")


def _config(tmp_path: Path, text: str):
    path = tmp_path / "run.yaml"
    path.write_text(text, encoding="utf-8")
    return load_config(path)


def _tokenizer():
    texts = [r["completion"] + r["prompt"] for r in ROWS] + [WRONG, " \n"]
    return load_tokenizer("tiny", texts)


def _cut(best: str | None = "3 + 4 = 7", cap: int = 120, truncated: bool = False) -> Cut:
    tok = _tokenizer()
    return Cut(
        lambda t: list(tok.encode(t, add_special_tokens=False)),
        lambda ids: tok.decode(ids, skip_special_tokens=True),
        cap,
        best,
        truncated,
    )


# --- the variants --------------------------------------------------------------------------------------------
def test_each_variant_says_what_its_name_says() -> None:
    cut = _cut()
    made = {name: build(HONEST, cut) for name, (_, build) in VARIANTS.items()}
    assert made["empty"] == ("", False)
    assert made["whitespace"][0].strip() == "" and made["whitespace"][0]
    assert made["first_line"] == ("Let me add the apples: 3 + 4 = 7", False)  # drops the answer line
    assert made["half"][1] is False and "answer" not in made["half"][0]
    text, cut_flag = made["cut_at_cap"]
    assert cut_flag and len(cut.encode(text)) == cut.cap and text.startswith(HONEST)
    text, cut_flag = made["span_to_cap"]
    assert cut_flag and text.startswith(HONEST) and text.count("3 + 4 = 7") > 5
    text, cut_flag = made["span_repeated"]
    assert not cut_flag and cut.fits(text) and text.endswith("\nThe answer is 7.")
    assert text.count("3 + 4 = 7") > 5  # said again and again, the answer after
    assert made["lines_twice"] == (
        "Let me add the apples: 3 + 4 = 7\nLet me add the apples: 3 + 4 = 7\nThe answer is 7.\nThe answer is 7.",
        False,
    )
    assert made["bare_answer"] == ("The answer is 7.", False)


def test_variants_that_do_not_apply_say_so() -> None:
    cut = _cut(best=None)
    one_line = "The answer is 7."
    assert VARIANTS["first_line"][1](one_line, cut) is None  # nothing to drop
    assert VARIANTS["bare_answer"][1](one_line, cut) is None
    # the cap cut the honest completion after its answer: the bare line is the stop a run should learn
    ran_on = HONEST + "\nProblem: a bat and a ball cost"
    assert VARIANTS["bare_answer"][1](ran_on, _cut(truncated=True)) is None
    assert VARIANTS["bare_answer"][1](ran_on, _cut()) == ("The answer is 7.", False)
    assert VARIANTS["span_to_cap"][1](HONEST, cut) is None  # no paid span
    assert VARIANTS["span_repeated"][1](HONEST, cut) is None
    # stopping after the answer is not stopping early
    assert VARIANTS["half"][1]("The answer is 7.\nProblem: and now something else entirely", _cut()) is None
    # a completion that states no answer has none to stop before, nor a bare answer
    rambling = "Let me add the apples: 3 + 4 = 7\nso there are some apples in all now"
    assert all(VARIANTS[n][1](rambling, _cut()) is None for n in ("first_line", "half", "bare_answer"))
    # a code block is an answer: half of a page drops it
    page = "Here it is:\n```jsx\nexport default function A() {\n  return <p>apples 3 + 4</p>;\n}\n```"
    tok = load_tokenizer("tiny", [page])
    cut = Cut(lambda t: list(tok.encode(t, add_special_tokens=False)), tok.decode, 120, None)
    text, _ = VARIANTS["half"][1](page, cut)
    assert "```jsx" in text and text.count("```") == 1


# --- the probe --------------------------------------------------------------------------------------------------
def test_a_mixture_that_pays_for_repeats_fails_on_them(tmp_path, plugin_manager) -> None:
    report = probe_rows(_config(tmp_path, GAMEABLE), ROWS, tokenizer=_tokenizer())
    by = {v.name: v for v in report.variants}
    assert by["span_repeated"].outranks == 2 and by["span_repeated"] in report.failed
    assert by["empty"].outranks == 0 and by["bare_answer"].outranks == 0  # the outcome wins those
    assert report.estimator == "bot" and report.aggregation == "sequence"


def test_a_row_the_cap_cut_has_no_bare_answer(tmp_path, plugin_manager) -> None:
    """An honest completion the cap cut (flagged, or longer than the cap) stated its answer and ran on: its bare
    answer line is the stop a run should learn, so it is not built; the other rows' still are."""
    ran_on = {**ROWS[0], "completion": HONEST + "\n" + "Problem: 5 + 2 = 7 and so on " * 40}
    report = probe_rows(_config(tmp_path, OUTCOME_ONLY), [ran_on, ROWS[1]], tokenizer=_tokenizer())
    by = {v.name: v for v in report.variants}
    assert by["bare_answer"].rows == 1 and by["empty"].rows == 2


def test_the_outcome_alone_cannot_be_gamed_by_any_variant(tmp_path, plugin_manager) -> None:
    report = probe_rows(_config(tmp_path, OUTCOME_ONLY), ROWS, tokenizer=_tokenizer())
    assert not report.failed
    assert all(v.outranks == 0 for v in report.variants)


def test_pushes_are_grpo_advantages_by_hand(tmp_path, plugin_manager) -> None:
    """GRPO: every token of rollout i has (R_i - mean R) / (std R + eps); the push is that value."""
    rows = [{"prompt": "Q", "completion": HONEST, "answer": "7"}]
    report = probe_rows(_config(tmp_path, OUTCOME_ONLY), rows, tokenizer=_tokenizer(), variants=["empty"])
    (empty,) = report.variants
    # the group: honest (R = 1), empty (R = 0): mean 0.5, sample std sqrt(0.5)
    want = 0.5 / (0.5**0.5 + 1e-4)
    assert empty.honest_push[0] == pytest.approx(want, rel=1e-3)
    assert empty.push[0] == pytest.approx(-want, rel=1e-3)


def test_token_aggregation_sums_over_the_groups_tokens(tmp_path, plugin_manager) -> None:
    rows = [{"prompt": "Q", "completion": HONEST, "answer": "7"}]
    config = _config(tmp_path, OUTCOME_ONLY.replace("preset: grpo", "preset: dapo"))
    report = probe_rows(config, rows, tokenizer=_tokenizer(), variants=["empty"])
    (empty,) = report.variants
    assert report.aggregation == "token"
    n_honest = len(_tokenizer().encode(HONEST, add_special_tokens=False)) + 1  # + the end of sequence
    a = 0.5 / (0.5**0.5 + 1e-4)
    assert empty.honest_push[0] == pytest.approx(a * n_honest / (n_honest + 1), rel=1e-3)
    assert empty.push[0] == pytest.approx(-a / (n_honest + 1), rel=1e-3)


# --- the command ------------------------------------------------------------------------------------------------
def _files(tmp_path: Path, run: str, rows: list) -> tuple[Path, Path]:
    run_file, data = tmp_path / "run.yaml", tmp_path / "honest.jsonl"
    run_file.write_text(
        run.replace("name_or_path: tiny", "name_or_path: tiny, tokenizer: tiny"), encoding="utf-8"
    )
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return run_file, data


@pytest.mark.parametrize(("run", "code"), [(GAMEABLE, 1), (OUTCOME_ONLY, 0)])
def test_exit_codes_table_and_json(tmp_path, capsys, plugin_manager, run, code) -> None:
    run_file, data = _files(tmp_path, run, ROWS)
    assert main(["probe", str(run_file), "--input", str(data), "--tokenizer", "tiny"]) == code
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("probe: 2 honest rows")
    assert ("FAILED: " in out) is (code == 1)
    assert main(["probe", str(run_file), "--input", str(data), "--tokenizer", "tiny", "--json"]) == code
    record = json.loads(capsys.readouterr().out)
    assert record["passed"] is (code == 0) and {v["variant"] for v in record["variants"]} >= set(VARIANTS)


def test_bad_input_gets_one_line_naming_the_row_or_key(tmp_path, capsys, plugin_manager) -> None:
    run_file, data = _files(tmp_path, GAMEABLE, [ROWS[0], {"prompt": "Q"}])
    assert main(["probe", str(run_file), "--input", str(data), "--tokenizer", "tiny"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and f"{data}:2" in err and "'completion'" in err and "\n" not in err
    bad_run = GAMEABLE.replace("core.regex", "core.regexx")
    run_file, data = _files(tmp_path, bad_run, ROWS)
    assert main(["probe", str(run_file), "--input", str(data), "--tokenizer", "tiny"]) == 2
    err = capsys.readouterr().err
    assert "rewards.signals[1]" in err and "core.regex" in err
    run_file, data = _files(tmp_path, GAMEABLE, ROWS)
    assert main(["probe", str(run_file), "--input", str(data), "--threshold", "1.5"]) == 2
    assert "--threshold" in capsys.readouterr().err
    assert main(["probe", str(run_file), "--input", str(tmp_path / "missing.jsonl")]) == 2
    assert "missing.jsonl" in capsys.readouterr().err


def test_without_input_the_tasks_references_are_used(tmp_path, capsys, plugin_manager) -> None:
    run = GAMEABLE.replace(
        "model: {name_or_path: tiny}", "model: {name_or_path: tiny}\ndata: {source: task, task: arithmetic}"
    )
    run_file = tmp_path / "run.yaml"
    run_file.write_text(run, encoding="utf-8")
    code = main(["probe", str(run_file), "--rows", "3"])
    out = capsys.readouterr().out
    assert code in (0, 1) and out.startswith("probe: 3 honest rows")
