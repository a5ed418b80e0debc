"""Step-by-step arithmetic: a task small enough to learn on one CPU core in minutes.

A problem is a chain of additions and subtractions, ``Q: 17+5-8=`` followed by one step per line::

    Q: 17+5-8=
    17+5=22
    22-8=14
    A: 14

The first operand is 1..20, the others 1..9, with 2..4 operands, and every running value stays in 0..99.
The prompt is ``"Q: 17+5-8=\\n"``; the completion is the step lines and the answer line (then EOS).

Demonstrations for the supervised warm start contain *systematic* step errors: at a step that needs a
carry (addition) or a borrow (subtraction) the demonstration forgets it with probability
``error_rate`` (``17+5=12``, ``14-8=16``) and carries the wrong value forward. Because the error is
tied to a condition rather than spread at random, a model that imitates it is wrong under greedy
decoding too (when ``error_rate > 0.5``), so an RL phase that rewards correct steps moves greedy
accuracy, not only sampled accuracy. Rows are generated in pure Python (no torch).
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

_STEP = re.compile(r"^(\d{1,3})([+-])(\d{1,3})=(-?\d{1,4})$")
_ANSWER = re.compile(r"^A: (-?\d{1,4})$")


class ArithmeticParams(BaseModel):
    """Parameters of the arithmetic task (``data.task_params`` in a run file)."""

    model_config = ConfigDict(extra="forbid")

    min_operands: int = Field(2, ge=2, description="fewest operands in a problem")
    max_operands: int = Field(4, ge=2, description="most operands in a problem")
    first_max: int = Field(20, ge=1, description="largest first operand")
    operand_max: int = Field(9, ge=1, description="largest later operand")
    value_max: int = Field(99, ge=1, description="running values stay within 0..value_max")
    error_rate: float = Field(
        0.6, ge=0.0, le=1.0, description="probability that a demonstration forgets a carry or borrow"
    )


@dataclass(frozen=True)
class Problem:
    """``operands[0] op[0] operands[1] op[1] ...``; ``ops`` are ``'+'`` or ``'-'``."""

    operands: tuple[int, ...]
    ops: tuple[str, ...]

    @property
    def expression(self) -> str:
        parts = [str(self.operands[0])]
        for op, x in zip(self.ops, self.operands[1:], strict=True):
            parts += [op, str(x)]
        return "".join(parts)

    @property
    def prompt(self) -> str:
        return f"Q: {self.expression}=\n"

    def running_values(self) -> list[int]:
        """Correct value after each step (length ``len(ops)``)."""
        values, acc = [], self.operands[0]
        for op, x in zip(self.ops, self.operands[1:], strict=True):
            acc = acc + x if op == "+" else acc - x
            values.append(acc)
        return values

    @property
    def answer(self) -> int:
        return self.running_values()[-1]


def needs_carry(a: int, op: str, b: int) -> bool:
    """Whether ``a op b`` with a one-digit ``b`` needs a carry (``+``) or a borrow (``-``)."""
    return (a % 10 + b % 10 >= 10) if op == "+" else (a % 10 < b % 10)


def forgetful(a: int, op: str, b: int) -> int:
    """``a op b`` computed digit-wise without the carry/borrow (the systematic error)."""
    ones = (a % 10 + b) % 10 if op == "+" else (a % 10 - b) % 10
    return (a // 10) * 10 + ones


def apply(a: int, op: str, b: int) -> int:
    return a + b if op == "+" else a - b


class ArithmeticTask:
    """Generator, held-out split, demonstrations and evaluation for step-by-step arithmetic."""

    name = "arithmetic"
    #: row fields besides the prompt: the reference answer, the expression, and the correct steps.
    row_fields = ("answer", "expression")

    def __init__(self, params: ArithmeticParams | None = None) -> None:
        self.params = params or ArithmeticParams()
        if self.params.max_operands < self.params.min_operands:
            raise ValueError("data.task_params: max_operands must be >= min_operands")

    # ---- problems --------------------------------------------------------------------------------
    def sample_problem(self, rng: random.Random) -> Problem:
        """One problem with every running value within ``0..value_max`` (rejection sampling)."""
        p = self.params
        while True:
            n = rng.randint(p.min_operands, p.max_operands)
            operands = [rng.randint(1, p.first_max)]
            ops: list[str] = []
            acc, ok = operands[0], True
            for _ in range(n - 1):
                op, x = rng.choice("+-"), rng.randint(1, p.operand_max)
                acc = apply(acc, op, x)
                if not 0 <= acc <= p.value_max:
                    ok = False
                    break
                operands.append(x)
                ops.append(op)
            if ok:
                return Problem(tuple(operands), tuple(ops))

    def row(self, problem: Problem) -> dict[str, Any]:
        return {"prompt": problem.prompt, "answer": str(problem.answer), "expression": problem.expression}

    def eval_rows(self, n: int, seed: int = 0) -> list[dict[str, Any]]:
        """``n`` distinct held-out problems (fixed by ``seed``; disjoint from :meth:`train_rows`)."""
        rng = random.Random(f"arithmetic-eval-{seed}")
        seen: dict[str, Problem] = {}
        while len(seen) < n:
            prob = self.sample_problem(rng)
            seen.setdefault(prob.expression, prob)
        return [self.row(p) for p in seen.values()]

    def train_rows(
        self, n: int, seed: int = 0, exclude: Sequence[dict[str, Any]] = ()
    ) -> list[dict[str, Any]]:
        """``n`` training problems (repeats allowed), none of whose expressions is in ``exclude``."""
        rng = random.Random(f"arithmetic-train-{seed}")
        banned = {r["expression"] for r in exclude}
        rows = []
        while len(rows) < n:
            prob = self.sample_problem(rng)
            if prob.expression not in banned:
                rows.append(self.row(prob))
        return rows

    @staticmethod
    def parse_row(row: dict[str, Any]) -> Problem:
        nums = [int(x) for x in re.findall(r"\d+", row["expression"])]
        ops = tuple(re.findall(r"[+-]", row["expression"]))
        return Problem(tuple(nums), ops)

    # ---- demonstrations --------------------------------------------------------------------------
    def demonstration(self, problem: Problem, rng: random.Random) -> str:
        """A step-by-step completion where each carry/borrow is forgotten with probability ``error_rate``."""
        lines, acc = [], problem.operands[0]
        for op, x in zip(problem.ops, problem.operands[1:], strict=True):
            if needs_carry(acc, op, x) and rng.random() < self.params.error_rate:
                value = forgetful(acc, op, x)
            else:
                value = apply(acc, op, x)
            lines.append(f"{acc}{op}{x}={value}")
            acc = value
        lines.append(f"A: {acc}")
        return "\n".join(lines)

    def demonstrations(self, rows: Sequence[dict[str, Any]], seed: int = 0) -> list[str]:
        rng = random.Random(f"arithmetic-demo-{seed}")
        return [self.demonstration(self.parse_row(r), rng) for r in rows]

    def reference_rows(self, n: int, seed: int = 0) -> list[dict[str, Any]]:
        """``botgrpo probe``'s honest rows: ``n`` held-out problems, each with a demonstration as its completion
        (worked honestly, a carry forgotten with probability ``error_rate``: right and wrong answers both)."""
        rows = self.eval_rows(n, seed)
        return [{**r, "completion": c} for r, c in zip(rows, self.demonstrations(rows, seed), strict=True)]

    @staticmethod
    def solution(problem: Problem) -> str:
        """The correct completion."""
        lines, acc = [], problem.operands[0]
        for op, x in zip(problem.ops, problem.operands[1:], strict=True):
            value = apply(acc, op, x)
            lines.append(f"{acc}{op}{x}={value}")
            acc = value
        lines.append(f"A: {acc}")
        return "\n".join(lines)

    # ---- evaluation ------------------------------------------------------------------------------
    def step_lines(self, row: dict[str, Any], completion: str) -> list[tuple[int, int, bool]]:
        """``(start, end, wrong)`` for each step line the completion has (at most one per operation).

        Line ``k`` is right when it reads ``prev op x = v`` with ``prev`` the value the completion itself
        reached at step ``k-1`` (or the first operand), ``op x`` the problem's ``k``-th operation, and
        ``v`` the correct result of that line; a malformed line is wrong. So an early mistake costs one
        step, not every step after it. ``start``/``end`` index ``completion`` (blank lines around the
        solution are skipped, as :meth:`grade` does).
        """
        problem = self.parse_row(row)
        body = completion.strip("\n")
        pos = len(completion) - len(completion.lstrip("\n"))
        out, prev = [], problem.operands[0]
        for line, op, x in zip(body.split("\n"), problem.ops, problem.operands[1:]):
            m = _STEP.match(line)
            wrong = m is None
            if m is not None:
                a, line_op, b, v = int(m[1]), m[2], int(m[3]), int(m[4])
                wrong = a != prev or line_op != op or b != x or v != apply(a, op, b)
                prev = v
            out.append((pos, pos + len(line), wrong))
            pos += len(line) + 1
        return out

    def grade(self, row: dict[str, Any], completion: str) -> tuple[bool, int, int]:
        """``(answer correct, wrong steps, expected steps)`` for one completion.

        A step is wrong by :meth:`step_lines`; a missing step line is wrong too.
        """
        problem = self.parse_row(row)
        lines = completion.strip("\n").split("\n")
        expected = len(problem.ops)
        steps = self.step_lines(row, completion)
        wrong = sum(w for _, _, w in steps) + expected - len(steps)
        answer_line = next((ln for ln in lines if ln.startswith("A:")), None)
        m = _ANSWER.match(answer_line) if answer_line is not None else None
        correct = m is not None and int(m[1]) == problem.answer
        return correct, wrong, expected

    def evaluate(self, rows: Sequence[dict[str, Any]], completions: Sequence[str]) -> dict[str, float]:
        """``answer_accuracy`` and ``step_error_rate`` (wrong steps / expected steps) over a set."""
        if len(rows) != len(completions):
            raise ValueError("evaluate: rows and completions differ in length")
        correct = wrong = expected = 0
        for row, completion in zip(rows, completions, strict=True):
            ok, w, e = self.grade(row, completion)
            correct += ok
            wrong += w
            expected += e
        return {
            "answer_accuracy": correct / max(len(rows), 1),
            "step_error_rate": wrong / max(expected, 1),
        }

    def success(self, row: dict[str, Any], completion: str) -> bool:
        """Task success of one rollout (the training log's success rate): the answer is correct."""
        return self.grade(row, completion)[0]
