"""The ``word-problems`` task: rows from the right split in the chosen prompt, held-out metrics from the sympy
plugin's checkers on hand-written completions, and errors that name the key."""

from __future__ import annotations

import pytest

from botgrpo_bench.word_problems import PROMPTS, SHIPPED, WordProblemsParams, WordProblemsTask, load_problems


def test_rows_come_from_their_split_in_the_chosen_prompt() -> None:
    task = WordProblemsTask(WordProblemsParams(problem_set="easy", prompt="one_shot"))
    heldout = task.eval_rows(64)
    train = task.train_rows(300, seed=1)
    assert {r["id"] for r in heldout} == {r["id"] for r in load_problems("easy", "heldout")}
    assert not {r["id"] for r in train} & {r["id"] for r in heldout}
    assert len(train) == 300 and len({r["id"] for r in train}) == 256  # past the file's size: new shuffles
    assert train == task.train_rows(300, seed=1) and train != task.train_rows(300, seed=2)
    first = load_problems("easy", "heldout")[0]
    story = first["prompt"][0]["content"].removesuffix(" " + SHIPPED)
    content = heldout[0]["prompt"][0]["content"]
    assert content.endswith(f"Problem: {story}\nSolution:") and "The answer is 10." in content
    assert heldout[0]["answer"] == first["answer"]
    shipped = WordProblemsTask(WordProblemsParams(problem_set="grade", prompt="shipped")).eval_rows(3)
    assert [r["prompt"] for r in shipped] == [r["prompt"] for r in load_problems("grade", "heldout")[:3]]
    assert set(PROMPTS) == {"shipped", "one_shot"}


def test_evaluate_reads_answers_and_refuted_lines() -> None:
    task = WordProblemsTask(WordProblemsParams(problem_set="easy"))
    try:
        row = {"answer": "18", "prompt": []}
        completions = [
            "15 + 3 = 18\nThe answer is 18.",  # right, every line true
            "15 + 3 = 19\nThe answer is 19.",  # wrong, a refuted line
            "15 + 3 = 18\nThe answer is N.",  # the letter: not an answer
        ]
        assert task.evaluate([row] * 3, completions) == {
            "answer_accuracy": pytest.approx(1 / 3),
            "refuted_rate": pytest.approx(1 / 3),
        }
        assert task.success(row, completions[0]) and not task.success(row, completions[2])
    finally:
        task.close()


def test_bad_requests_name_the_key() -> None:
    with pytest.raises(ValueError, match="data.eval_size 65 is above the 64 held-out problems"):
        WordProblemsTask().eval_rows(65)
    with pytest.raises(ValueError, match="no demonstrations"):
        WordProblemsTask().demonstrations([])
    with pytest.raises(ValueError, match="prompt"):
        WordProblemsParams(prompt="few_shot")


def test_the_task_is_registered() -> None:
    from botgrpo_core.tasks import get_task

    task = get_task("word-problems", {"problem_set": "grade", "prompt": "shipped"})
    assert isinstance(task, WordProblemsTask) and task.params.problem_set == "grade"
