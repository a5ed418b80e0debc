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


def test_a_completion_cut_mid_number_is_not_refuted_on_held_out_problems() -> None:
    """Issue 60 item 8: held-out refuted_rate ignored `truncated` (and the prompt), so a completion the length cap
    cut mid-number ('9 + 10 = 1' of 19) counted as refuted on held-out problems and not in training. The run's
    evaluation passes both (engine.evaluation.task_metrics); the task reads them as the training signal does."""
    from botgrpo_core.engine.evaluation import task_metrics

    task = WordProblemsTask(WordProblemsParams(problem_set="easy"))
    try:
        row = {"answer": "15"}
        cut = "2 * 5 = 10\n9 + 10 = 1"  # the cap cut '19'
        prompt = "Problem: Maya has 9 shells. She buys 2 bags of 5. She gives 4 away.\nSolution:"
        assert task.check([row], [cut])[0]["refuted"]  # read as a finished line: refuted
        assert not task.check([row], [cut], prompts=[prompt], truncated=[True])[0]["refuted"]
        metrics = task_metrics(
            task, [row, row], [cut, "9 + 10 = 20\nThe answer is 20."], [prompt] * 2, [True, False]
        )
        assert metrics == {"answer_accuracy": 0.0, "refuted_rate": 0.5}

        class TwoArguments:  # a task with the older evaluate(rows, completions) still gets those
            def evaluate(self, rows, completions):
                return {"n": float(len(completions))}

        assert task_metrics(TwoArguments(), [row], [cut], [prompt], [True]) == {"n": 1.0}
    finally:
        task.close()
