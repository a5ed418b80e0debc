"""The arithmetic task: generator, held-out split, flawed demonstrations, grading."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from botgrpo_core.tasks import get_task
from botgrpo_core.tasks.arithmetic import ArithmeticTask, Problem, forgetful, needs_carry


def _fold(nums, ops):
    """Independent reference: evaluate left to right."""
    acc = nums[0]
    for op, x in zip(ops, nums[1:]):
        acc = acc + x if op == "+" else acc - x
    return acc


@given(a=st.integers(0, 99), b=st.integers(1, 9), op=st.sampled_from("+-"))
def test_carry_and_forgetful_digitwise(a, b, op):
    exact = a + b if op == "+" else a - b
    carry = (a % 10 + b >= 10) if op == "+" else (a % 10 < b)
    assert needs_carry(a, op, b) == carry
    if carry:
        assert abs(forgetful(a, op, b) - exact) == 10  # a forgotten carry/borrow is off by ten
    else:
        assert forgetful(a, op, b) == exact


@settings(max_examples=50)
@given(seed=st.integers(0, 10_000))
def test_problems_respect_the_ranges(seed):
    task = ArithmeticTask()
    prob = task.sample_problem(random.Random(seed))
    assert 2 <= len(prob.operands) <= 4 and 1 <= prob.operands[0] <= 20
    assert all(1 <= x <= 9 for x in prob.operands[1:])
    assert all(0 <= v <= 99 for v in prob.running_values())
    assert prob.answer == _fold(prob.operands, prob.ops)
    assert prob.prompt == f"Q: {prob.expression}=\n"


def test_format_of_the_example():
    prob = Problem((17, 5, 8), ("+", "-"))
    assert prob.prompt == "Q: 17+5-8=\n"
    assert ArithmeticTask.solution(prob) == "17+5=22\n22-8=14\nA: 14"


def test_held_out_split_is_fixed_distinct_and_disjoint():
    task = get_task("arithmetic")
    ev = task.eval_rows(300)
    assert ev == task.eval_rows(300)
    assert len({r["expression"] for r in ev}) == 300
    train = task.train_rows(3000, seed=1, exclude=ev)
    assert not {r["expression"] for r in train} & {r["expression"] for r in ev}
    assert train != task.train_rows(3000, seed=2, exclude=ev)
    for r in ev[:20]:
        nums = [int(x) for x in r["expression"].replace("-", "+").split("+")]
        ops = [c for c in r["expression"] if c in "+-"]
        assert r["answer"] == str(_fold(nums, ops))


def test_grading_against_solutions_and_mistakes():
    task = ArithmeticTask()
    row = task.row(Problem((17, 5, 8), ("+", "-")))
    assert task.grade(row, "17+5=22\n22-8=14\nA: 14") == (True, 0, 2)
    assert task.grade(row, "17+5=12\n12-8=4\nA: 4") == (False, 1, 2)  # one forgotten carry, carried forward
    assert task.grade(row, "17+5=22\n22-8=14\nA: 15") == (False, 0, 2)
    assert task.grade(row, "17+5=22\nA: 22") == (False, 1, 2)  # a missing step is a wrong step
    assert task.grade(row, "17+6=23\n23-8=15\nA: 15") == (False, 1, 2)  # wrong operand copied
    assert task.grade(row, "") == (False, 2, 2)
    assert task.evaluate([row, row], ["17+5=22\n22-8=14\nA: 14", "17+5=12\n12-8=4\nA: 4"]) == {
        "answer_accuracy": 0.5,
        "step_error_rate": 0.25,
    }
    assert task.success(row, "17+5=22\n22-8=14\nA: 14")


def test_step_lines_locate_each_graded_line():
    task = ArithmeticTask()
    row = task.row(Problem((17, 5, 8), ("+", "-")))
    text = "\n17+5=12\n12-8=5\nA: 5"  # a leading blank line; a forgotten carry, then a wrong subtraction
    steps = task.step_lines(row, text)
    assert [(text[a:b], wrong) for a, b, wrong in steps] == [("17+5=12", True), ("12-8=5", True)]
    short = "17+5=22"  # the second step is missing: not a line, but a wrong step for grade()
    assert [(short[a:b], w) for a, b, w in task.step_lines(row, short)] == [("17+5=22", False)]
    assert task.grade(row, short)[1:] == (1, 2)
    for r, demo in zip(rows := task.train_rows(200, seed=3), task.demonstrations(rows, seed=3)):
        lines = task.step_lines(r, demo)
        assert [demo[a:b] for a, b, _ in lines] == demo.split("\n")[: len(lines)]


@pytest.mark.parametrize("rate", [0.0, 0.6, 1.0])
def test_demonstrations_forget_carries_at_the_configured_rate(rate):
    task = get_task("arithmetic", {"error_rate": rate})
    rows = task.train_rows(1500, seed=0)
    demos = task.demonstrations(rows, seed=0)
    carry_steps = wrong_carry = wrong_other = 0
    for row, demo in zip(rows, demos):
        prob = task.parse_row(row)
        lines = demo.split("\n")
        acc = prob.operands[0]
        for line, op, x in zip(lines, prob.ops, prob.operands[1:]):
            value = int(line.split("=")[1])
            exact = acc + x if op == "+" else acc - x
            if needs_carry(acc, op, x):
                carry_steps += 1
                wrong_carry += value != exact
            else:
                wrong_other += value != exact
            acc = value  # the wrong value is carried forward
        assert lines[-1] == f"A: {acc}"
    assert wrong_other == 0  # errors are systematic: only at carries and borrows
    assert carry_steps > 500
    assert abs(wrong_carry / carry_steps - rate) < 0.05
    if rate == 0.0:
        assert all(task.grade(r, d)[0] for r, d in zip(rows, demos))


def test_unknown_task_and_bad_params():
    with pytest.raises(ValueError, match="unknown task 'nope'"):
        get_task("nope")
    with pytest.raises(ValueError, match="error_rate"):
        get_task("arithmetic", {"error_rate": 2})
