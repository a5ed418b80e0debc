"""The multi-step word problems (issue 57): the families make stories whose reference solution has one line per
operation and ends on the answer, and the line reference of scripts/multistep_truth.py labels arithmetic claims
exactly (checked against hand-computed lines and against the generator's own solutions)."""

from __future__ import annotations

import importlib.util
import random
import re
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[3]


def _script(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


make = _script("make_word_problems")
truth = _script("multistep_truth")


@pytest.mark.parametrize(
    ("line", "label"),
    [
        ("2 * 5 = 10", 1),
        ("9 + 10 = 19 shells.", 1),
        ("19 - 4 = 16", -1),
        ("1. 19 - 4 = 15", 1),
        ("$3 x 4 = $12", 1),
        ("3 × 4 = 13", -1),
        ("12 ÷ 4 = 3", 1),
        ("(2 + 3) * 4 = 20 = 21", -1),
        ("1,000 + 5 = 1,005", 1),
        ("10 / 3 = 3.33", 1),  # rounded to its own digits
        ("10 / 3 = 3.4", -1),  # neither rounded nor cut
        ("Total cost = 3 * 4 = 13", -1),
        ("7 = 7", 1),  # true, whatever credit the checker gives it
        ("Elena has 17 + 7 = 24 marbles.", 1),  # a run in prose
        ("Hugo has 15 - 6 = 8 more stamps", -1),
        ("She has 3 + 4 = 7. Then 7 - 2 = 6.", -1),  # one false run of two
        ("Omar has twice as many (2 * 8 = 16), so 2 * 8 = 16 pencils.", 1),
        ("12 / 2 = 6 / 3 = 2", -1),  # a run-on chain is read as written
        ("2 pages + 2 pages = 4 pages", None),  # words between the numbers: not read
        ("24 - 2 days * 3.5 = 2 pages", None),  # a run cut by words
        ("Max = 5", None),  # a name given a value: no claim
        ("Pia has 23 stickers + 1 = 24 stickers", None),  # a run cut by words: its first operand unread
        ("So, Omar has 10 cards - 1 = 9 more cards.", None),
        ("The answer is 15.", None),
        ("x = 5", None),
        ("2 ** 5 = 32", None),  # outside the grammar
        ("__import__('os') = 1", None),  # never evaluated
        ("5 / 0 = 1", None),
    ],
)
def test_the_reference_labels_lines_exactly(line: str, label: int | None) -> None:
    assert truth.label_line(line)[0] == label


def test_answer_lines_are_read_against_the_problem() -> None:
    assert truth.answer_right("The answer is 1,005.", "1005") == 1
    assert truth.answer_right("So the final answer is $12", "13") == -1
    assert truth.answer_right("12 + 1 = 13", "13") is None


def test_the_reference_parses_only_its_grammar() -> None:
    with pytest.raises(truth.Unreadable):
        truth.side_value("2 ** 900000")  # a power would be evaluated by eval; here it is refused
    assert truth.side_value("-(3 + 4) / 2") == truth.Fraction(-7, 2)


@pytest.mark.parametrize("level", ["multi23", "multi45"])
def test_each_family_solves_its_story_in_its_operations(level: str) -> None:
    ops, numbers = make.MULTI[level]
    rng = random.Random(3)
    for name, family in make.FAMILIES.items():
        for k in range(40):
            n = rng.choice(make.NAMES)
            want = ops[k % len(ops)]
            text, answer, steps, lines = family(rng, n, want, numbers)
            assert steps == want == len(lines), (name, text, lines)
            assert all(truth.label_line(line)[0] == 1 for line in lines), (name, lines)
            assert int(lines[-1].rsplit("=", 1)[1]) == answer > 0, (name, text, lines)
            stated = {int(x) for x in re.findall(r"\d+", text)}
            operands = {int(x) for line in lines for x in re.findall(r"\d+", line.split("=")[0])}
            results = {int(line.rsplit("=", 1)[1]) for line in lines}
            assert operands <= stated | results | {2}, (name, text, lines)  # "twice": 2 is in the words


def test_a_corrupted_solution_line_is_false() -> None:
    rng = random.Random(5)
    _, _, _, lines = make.FAMILIES["shop"](rng, "Ava", 4, make.MULTI["multi45"][1])
    left, right = lines[-1].rsplit("=", 1)
    assert truth.label_line(f"{left}= {int(right) + 1}")[0] == -1


def test_line_verdicts_take_the_worst_span_of_a_line() -> None:
    from botgrpo_core.signals import Span

    text = "2 * 5 = 10\n9 + 10 = 20\nThe answer is 20."
    spans = [Span(0, 10, 1.0), Span(11, 22, -1.0), Span(11, 16, 1.0), Span(23, 40, 0.0)]
    assert truth.line_verdicts(text, spans) == {0: 1, 1: -1, 2: 0}


@pytest.mark.parametrize("level", ["multi23", "multi45"])
def test_the_shipped_multi_sets_are_the_generators(level: str) -> None:
    import json

    _, stem = make.LEVELS[level]
    rows = make.level_rows(level)
    data = ROOT / "benchmarks/botgrpo_bench/botgrpo_bench/data"
    for split in ("train", "heldout"):
        expected = "".join(json.dumps(r) + "\n" for r in rows if r["split"] == split)
        assert (data / f"{stem}_{split}.jsonl").read_text() == expected
    heldout = [r for r in rows if r["split"] == "heldout"]
    assert len(heldout) >= 128 and len(rows) - len(heldout) >= 256


def test_the_task_shows_a_multi_step_example() -> None:
    from botgrpo_bench.word_problems import WordProblemsParams, WordProblemsTask, load_problems

    task = WordProblemsTask(WordProblemsParams(problem_set="multi23", prompt="one_shot"))
    row = task.eval_rows(128)[0]
    content = row["prompt"][0]["content"]
    assert "2 * 5 = 10\n9 + 10 = 19\n19 - 4 = 15\nThe answer is 15." in content
    assert row["answer"] == load_problems("multi23", "heldout")[0]["answer"]


def test_a_multi45_row_shows_a_worked_example_of_its_own_family_and_operations() -> None:
    """The multi45 prompt's example is a story of the row's family with the row's number of operations (the
    variant m45-addsub-matched measured on training problems); its lines are true and it is not the row's story."""
    from botgrpo_bench.word_problems import WordProblemsParams, WordProblemsTask, load_problems, story

    start = _script("multistep_start")
    task = WordProblemsTask(WordProblemsParams(problem_set="multi45", prompt="one_shot"))
    rows = task.eval_rows(128)
    shipped = load_problems("multi45", "heldout")
    numbers = make.MULTI["multi45"][1]
    assert {(r["template"], r["steps"]) for r in rows} == {
        (f, k) for f in ("inventory", "shop", "relations", "days") for k in (4, 5)
    }
    for row, source in zip(rows, shipped, strict=True):
        want = start.matched_prompt(make, row["template"], row["steps"], numbers).format(story=story(source))
        assert row["prompt"][0]["content"] == want
        example = source["example"]
        lines = example.split("Solution:\n", 1)[1].splitlines()
        assert len(lines) == row["steps"] + 1 and all(truth.label_line(x)[0] == 1 for x in lines[:-1])
        assert story(source) not in example


def test_a_row_without_the_example_its_prompt_shows_is_refused() -> None:
    from botgrpo_bench.word_problems import WordProblemsParams, WordProblemsTask, load_problems

    task = WordProblemsTask(WordProblemsParams(problem_set="multi45", prompt="one_shot"))
    row = dict(load_problems("multi45", "train")[0])
    del row["example"]
    with pytest.raises(ValueError, match="no worked example.*make_word_problems.py"):
        task._row(row)
    shipped = WordProblemsTask(WordProblemsParams(problem_set="multi45", prompt="shipped"))
    assert "Example" not in shipped._row(row)["prompt"][0]["content"]  # the shipped instruction needs none
