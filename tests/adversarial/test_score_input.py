"""Issue 39 findings 15-17 and issue 36's chat rows and ``truncated`` in ``botgrpo score``: odd or big input is
refused with the row named (exit 2) or scored in bounded chunks; the ``--html`` page stays bounded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from botgrpo_core.cli.main import main
from botgrpo_core.rewards.mixture import RewardMixture

RUN = {
    "rewards": {
        "alpha": 1.0,
        "beta": 0.5,
        "signals": [
            {"name": "core.exact_answer", "params": {"pattern": "A: (\\d+)"}},
            {"name": "core.regex", "params": {"pattern": "x+", "value": -1.0}},
        ],
    }
}


def _files(tmp_path: Path, rows: list, run: dict = RUN) -> tuple[str, str]:
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(run), encoding="utf-8")
    lines = [r if isinstance(r, str) else json.dumps(r) for r in rows]
    (tmp_path / "in.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(tmp_path / "run.yaml"), str(tmp_path / "in.jsonl")


def _score(capsys, run: str, data: str, *extra: str) -> tuple[int, str, str]:
    code = main(["score", run, "--input", data, "--tokenizer", "tiny", *extra])
    out, err = capsys.readouterr()
    return code, out, err


# --- 15: a lone surrogate -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("row", "where"),
    [
        ('{"prompt": "Q", "completion": "A: 1 \\ud800", "answer": "1"}', "row.completion"),
        ('{"prompt": "Q \\udfff", "completion": "A: 1", "answer": "1"}', "row.prompt"),
        (
            '{"prompt": [{"role": "user", "content": "\\ud83d"}], "completion": "A: 1"}',
            "row.prompt[0].content",
        ),
        ('{"prompt": "Q", "completion": "A: 1", "answer": "\\ud800"}', "row.answer"),
    ],
)
def test_a_lone_surrogate_is_refused_naming_the_row(tmp_path, capsys, row, where) -> None:
    """Was: a tokenizer TypeError traceback, exit 1."""
    run, data = _files(tmp_path, ['{"prompt": "Q", "completion": "A: 2", "answer": "1"}', row])
    code, out, err = _score(capsys, run, data, "--json")
    assert code == 2 and out == "" and "Traceback" not in err
    assert err.startswith(f"error: {data}:2: {where} (character ")
    assert "is not valid Unicode (a lone surrogate); fix what wrote the file" in err


# --- 16: one huge row in --html -----------------------------------------------------------------------------------
def test_a_long_completion_is_cut_on_the_page_not_multiplied(tmp_path, capsys) -> None:
    """Was: 150x the input (a 177 MB page for 1 MB); now a row shows its first MAX_HTML_TOKENS tokens."""
    from botgrpo_core.cli.html_view import MAX_HTML_TOKENS

    completion = ("x1 " * 40_000) + "A: 1"  # 120 KB, 120k character tokens
    run, data = _files(tmp_path, [{"prompt": "Q", "completion": completion, "answer": "1"}])
    page = tmp_path / "p.html"
    code, out, err = _score(capsys, run, data, "--html", str(page), "--json")
    assert code == 0, err
    assert page.stat().st_size < 3_000_000  # was about 20 MB for this row
    assert f"show their first {MAX_HTML_TOKENS}" in err and "--json has every token" in err
    assert f"showing the first {MAX_HTML_TOKENS} of {len(completion)} tokens" in page.read_text(
        encoding="utf-8"
    )
    assert len(json.loads(out)["samples"][0]["tokens"]) == len(completion)  # --json keeps them all
    code, out, err = _score(capsys, run, data, "--color", "never")  # the terminal view is bounded too
    assert (
        code == 0
        and f"(showing the first {MAX_HTML_TOKENS} of {len(completion)} tokens; --json has all)" in out
    )
    assert len(out) < 1_000_000


def test_the_page_has_a_size_budget(tmp_path) -> None:
    from botgrpo_core.cli.html_view import HtmlPage
    from botgrpo_core.cli.records import summary
    from botgrpo_core.cli.score import score_rows
    from botgrpo_core.config.loading import parse_config

    rows = [{"prompt": f"Q{i}", "completion": "x" * 200 + " A: 1", "answer": "1"} for i in range(40)]
    report = score_rows(parse_config(RUN), rows, tokenizer="tiny")
    page = HtmlPage(max_bytes=200_000)
    page.add(report)
    text = page.render(summary(report))
    assert 0 < len(page.records) < 40 and len(text) < 400_000
    assert page.left_out == 40 - len(page.records)
    assert f"{page.left_out} later row(s) are not on it" in " ".join(page.notes)


# --- 17: a big file is streamed in chunks of whole groups ----------------------------------------------------------
def test_a_big_input_is_scored_in_bounded_chunks_of_whole_groups(tmp_path, capsys, monkeypatch) -> None:
    """Was: the whole file in one batch (75k rows: 7.4 GB, then MemoryError). The advantages are the same as
    scoring each group alone (whole groups per chunk)."""
    from botgrpo_core.cli import score_input

    monkeypatch.setattr(score_input, "CHUNK_ROWS", 10)
    import botgrpo_core.cli.score as score

    monkeypatch.setattr(score, "CHUNK_ROWS", 10)
    batches: list[int] = []
    original = RewardMixture.score_batch

    def spy(self, samples):
        batches.append(len(samples))
        return original(self, samples)

    monkeypatch.setattr(RewardMixture, "score_batch", spy)
    rows = [
        {"prompt": f"Q{i % 7}", "completion": f"{'x' * (i % 3)} A: {i % 2}", "answer": "1"} for i in range(63)
    ]  # 7 interleaved groups of 9
    run, data = _files(tmp_path, rows)
    code, out, err = _score(capsys, run, data, "--json")
    assert code == 0, err
    assert max(batches) <= 10 and sum(batches) == 63  # was one batch of 63
    result = json.loads(out)
    assert sorted(s["index"] for s in result["samples"]) == list(range(63))
    assert result["summary"]["rows"] == 63 and result["summary"]["groups"] == 7
    batches.clear()
    alone = tmp_path / "alone"
    alone.mkdir()
    run, data = _files(alone, [r for r in rows if r["prompt"] == "Q3"])
    code, out_alone, _ = _score(capsys, run, data, "--json")
    mine = [s["advantages"] for s in result["samples"] if s["prompt"] == "Q3"]
    assert mine == [s["advantages"] for s in json.loads(out_alone)["samples"]]


def test_the_first_pass_keeps_a_few_bytes_a_row(tmp_path) -> None:
    from botgrpo_core.cli import score_input

    rows = [json.dumps({"prompt": f"Q{i}", "completion": "y" * 2000}) for i in range(3000)]
    (tmp_path / "in.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    plan = score_input.plan_input(tmp_path / "in.jsonl", None)
    held = sum(a.itemsize * len(a) for a in (plan.offsets, plan.numbers, plan.groups))
    assert plan.rows == 3000 and held <= 3000 * 24  # the 6 MB of text is not kept


# --- issue 36: chat rows and truncated ----------------------------------------------------------------------------
CHAT = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "What is 1+0?"}]


def test_chat_prompts_and_assistant_completions_score_like_text(tmp_path, capsys) -> None:
    rows = [
        {"prompt": CHAT, "completion": [{"role": "assistant", "content": "A: 1"}], "answer": "1"},
        {"prompt": CHAT, "completion": "xx A: 2", "answer": "1"},
        {"prompt": "What is 1+0?", "completion": "A: 1", "answer": "1"},
    ]
    run, data = _files(tmp_path, rows)
    code, out, err = _score(capsys, run, data, "--json")
    assert code == 0, err
    samples = json.loads(out)["samples"]
    assert [s["prompt"] for s in samples] == [
        "What is 1+0?"
    ] * 3  # the trainer's prompt_text: last user message
    assert [s["group"] for s in samples] == [0, 0, 1]  # a chat prompt groups by its whole message list
    assert samples[0]["completion"] == "A: 1" and samples[0]["signals"]["core.exact_answer"]["value"] == 1.0


@pytest.mark.parametrize(
    ("prompt", "completion", "message"),
    [
        ([{"role": "user"}], "A", r"in.jsonl:1: prompt\[0\].content must be a string"),
        ([{"content": "hi"}], "A", r"in.jsonl:1: prompt\[0\].role must be a string"),
        (["hi"], "A", r"in.jsonl:1: prompt\[0\] must be a message object"),
        ([], "A", r"in.jsonl:1: 'prompt' is an empty list"),
        (
            "Q",
            [{"role": "user", "content": "A"}],
            r"in.jsonl:1: 'completion' as chat messages must be one assistant",
        ),
        ("Q", [{"role": "assistant", "content": 3}], r"in.jsonl:1: completion\[0\].content must be a string"),
        (
            {"role": "user"},
            "A",
            r"in.jsonl:1: 'prompt' must be a string or a list of chat messages, got dict",
        ),
    ],
)
def test_malformed_chat_rows_name_the_row_and_field(tmp_path, capsys, prompt, completion, message) -> None:
    import re

    run, data = _files(tmp_path, [{"prompt": prompt, "completion": completion}])
    code, _, err = _score(capsys, run, data)
    assert code == 2 and "Traceback" not in err and re.search(message, err), err


def test_truncated_reaches_the_signals_and_the_output(tmp_path, capsys) -> None:
    (tmp_path / "cut.py").write_text(
        "def score(samples):\n    return [1.0 if s.truncated else 0.0 for s in samples]\n", encoding="utf-8"
    )
    run = {"rewards": {"beta": 0.0, "signals": [{"name": "mine.cut", "path": f"{tmp_path / 'cut.py'}:score",
                                                   "kind": "global", "bounds": [0, 1]}]}}  # fmt: skip
    rows = [{"prompt": "Q", "completion": "1 + 1 = ", "truncated": True}, {"prompt": "Q", "completion": "2"}]
    run_file, data = _files(tmp_path, rows, run)
    code, out, err = _score(capsys, run_file, data, "--json", "--html", str(tmp_path / "p.html"))
    assert code == 0, err
    result = json.loads(out)
    assert [s["truncated"] for s in result["samples"]] == [True, False]
    assert [s["signals"]["mine.cut"]["value"] for s in result["samples"]] == [1.0, 0.0]
    assert result["summary"]["truncated"] == 1 and "truncated" not in result["samples"][0]["tokens"][0]
    assert "truncated (cut by the length cap)" in (tmp_path / "p.html").read_text(encoding="utf-8")
    code, out, err = _score(capsys, run_file, data, "--color", "never")
    assert code == 0 and "TRUNCATED (cut by the length cap)" in out and "1 truncated" in out


@pytest.mark.parametrize("value", ['"yes"', "1", "null", "[true]"])
def test_a_truncated_that_is_not_a_bool_names_the_row(tmp_path, capsys, value) -> None:
    run, data = _files(
        tmp_path,
        [
            '{"prompt": "Q", "completion": "A"}',
            '{"prompt": "Q", "completion": "B", "truncated": ' + value + "}",
        ],
    )
    code, _, err = _score(capsys, run, data)
    assert code == 2 and "in.jsonl:2: 'truncated' must be true or false" in err
