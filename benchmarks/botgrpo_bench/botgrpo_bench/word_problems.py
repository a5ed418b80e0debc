"""Grade-school word problems for a real chat model: the ``word-problems`` task (``data.task: word-problems``).

Rows come from the project's own problem sets (``scripts/make_word_problems.py``: stories written here from
templates, Apache-2.0): ``easy`` (one operation on numbers up to 20, 256 train and 64 held out), ``grade`` (one
to three operations, 280 and 70), ``multi23`` (two or three operations from five families of story shapes, 520
and 130; issue 57) or ``multi45`` (four or five operations, adding and taking away only, on numbers up to 12, from
the four families that need no multiplication, 512 and 128; issue 57). Training rows come from a set's ``train`` file only, evaluation rows from its
``heldout`` file only. Each row is a TRL conversational prompt (one user turn) plus ``id``, ``answer``
(the number, the field ``sympy.answer`` reads), ``steps`` and ``template``.

The user turn is the story in one of two :data:`PROMPTS` (``data.task_params.prompt``):

- ``shipped``: the story, then "Solve step by step, one calculation per line, then give the final answer as 'The
  answer is N.'" (as the files hold it);
- ``one_shot``: the same request led by one worked example in that format, on a story of neither set; for a
  multi-step set the example has as many operations as its hardest problems (:data:`SET_PROMPTS`), and for
  ``multi45`` it is a story of the row's own family with the row's own number of operations (the row's
  ``example``, written by the generator). SmolLM2-135M
  writes "The answer is N" with the letter itself after the shipped instruction (37 of 256 held-out easy
  solutions); ``scripts/math_prompt_pilot.py`` compared the two on training problems only.

Held-out metrics (:meth:`WordProblemsTask.evaluate`), each a share of the completions: ``answer_accuracy``
(``sympy.answer`` is 1 against the row's answer) and ``refuted_rate`` (``sympy.steps`` puts a -1 on some line).
Success of one rollout: its answer is right.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from botgrpo_bench.rows import shuffled_repeats

DATA = Path(__file__).resolve().parent / "data"
#: the instruction every story of the shipped files ends with
SHIPPED = "Solve step by step, one calculation per line, then give the final answer as 'The answer is N.'"
#: the user turn per prompt style, with ``{story}`` for the story
PROMPTS = {
    "shipped": "{story} " + SHIPPED,
    "one_shot": (
        "Solve the problem step by step, one calculation per line, then write 'The answer is' and the number.\n\n"
        "Example:\nProblem: Maya collects 9 shells on Monday and 5 shells on Tuesday. She gives 4 shells to her "
        "brother. How many shells does she have left?\nSolution:\n9 + 5 = 14\n14 - 4 = 10\nThe answer is 10.\n\n"
        "Problem: {story}\nSolution:"
    ),
}
#: the one-shot prompt of a multi-step set (issue 57): the same request led by a worked example with as many
#: operations as the set's hardest problems, on a story of neither set; other sets use PROMPTS
SET_PROMPTS = {
    ("multi23", "one_shot"): (
        "Solve the problem step by step, one calculation per line, then write 'The answer is' and the number.\n\n"
        "Example:\nProblem: Maya has 9 shells. She buys 2 bags with 5 shells in each bag. She gives 4 shells to "
        "her brother. How many shells does she have now?\nSolution:\n2 * 5 = 10\n9 + 10 = 19\n19 - 4 = 15\n"
        "The answer is 15.\n\nProblem: {story}\nSolution:"
    ),
    # the worked example is the row's own (``example``: a story of its family with as many operations)
    ("multi45", "one_shot"): (
        "Solve the problem step by step, one calculation per line, then write 'The answer is' and the number.\n\n"
        "Example:\n{example}\n\nProblem: {story}\nSolution:"
    ),
}
#: the files of each problem set, by split
SETS = {
    "easy": "easy_problems_{split}.jsonl",
    "grade": "word_problems_{split}.jsonl",
    "multi23": "multi23_problems_{split}.jsonl",
    "multi45": "multi45_problems_{split}.jsonl",
}


def prompt_template(problem_set: str, style: str) -> str:
    """The user turn's template (``{story}`` for the story) of a set in a prompt style."""
    return SET_PROMPTS.get((problem_set, style), PROMPTS[style])


class WordProblemsParams(BaseModel):
    """``data.task_params`` of ``word-problems``."""

    model_config = ConfigDict(extra="forbid")

    problem_set: Literal["easy", "grade", "multi23", "multi45"] = Field(
        "easy", description="which of the project's problem sets"
    )
    prompt: Literal["shipped", "one_shot"] = Field("one_shot", description="the user turn's form (PROMPTS)")


def story(row: dict[str, Any]) -> str:
    """A shipped row's story: its user turn without the shipped instruction."""
    text = row["prompt"][-1]["content"]
    if not text.endswith(SHIPPED):
        raise ValueError(f"word-problems: row {row.get('id')!r} does not end with the shipped instruction")
    return text[: -len(SHIPPED)].strip()


def load_problems(problem_set: str, split: str) -> list[dict[str, Any]]:
    """The rows of one set's ``train`` or ``heldout`` file, as shipped."""
    path = DATA / SETS[problem_set].format(split=split)
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


class WordProblemsTask:
    """The ``word-problems`` task: the project's word problems, checked by the sympy plugin's own scorers."""

    name = "word-problems"

    def __init__(self, params: WordProblemsParams | None = None) -> None:
        self.params = params or WordProblemsParams()

    def _row(self, source: dict[str, Any]) -> dict[str, Any]:
        template = prompt_template(self.params.problem_set, self.params.prompt)
        if "{example}" in template and not source.get("example"):
            raise ValueError(
                f"word-problems: row {source.get('id')!r} of the {self.params.problem_set!r} set has no worked "
                "example, which its one-shot prompt shows; make the set again with scripts/make_word_problems.py"
            )
        content = template.format(story=story(source), example=source.get("example", ""))
        return {
            "prompt": [{"role": "user", "content": content}],
            "id": source["id"],
            "answer": source["answer"],
            "steps": source["steps"],
            "template": source["template"],
        }

    def eval_rows(self, n: int, seed: int = 0) -> list[dict[str, Any]]:
        """The first ``n`` held-out problems in file order (``seed`` unused: the held-out set is fixed).

        :raises ValueError: ``n`` above the held-out set's size (``data.eval_size``).
        """
        heldout = load_problems(self.params.problem_set, "heldout")
        if n > len(heldout):
            raise ValueError(
                f"word-problems: data.eval_size {n} is above the {len(heldout)} held-out problems of the "
                f"{self.params.problem_set!r} set; set data.eval_size <= {len(heldout)}"
            )
        return [self._row(r) for r in heldout[:n]]

    def train_rows(
        self, n: int, seed: int = 0, exclude: Sequence[dict[str, Any]] = ()
    ) -> list[dict[str, Any]]:
        """``n`` training problems: the train file shuffled by ``seed``, repeated in new shuffles past its size.
        Held-out problems are never returned (``exclude`` is implied by the split)."""
        return shuffled_repeats(load_problems(self.params.problem_set, "train"), n, seed, self._row)

    def demonstrations(self, rows: Sequence[dict[str, Any]], seed: int = 0) -> list[str]:
        """No supervised warm start: the task is for pretrained chat models."""
        raise ValueError(
            "word-problems has no demonstrations: use a pretrained chat model (model.name_or_path) and no "
            "training.warm_start"
        )

    # ---- evaluation ------------------------------------------------------------------------------
    @cached_property
    def _checkers(self) -> tuple[Any, Any]:
        # The sympy plugin's own scorers, one bounded worker each: the model's text is parsed under a time and
        # memory limit, as in training.
        from botgrpo_sympy.params import AnswerParams, StepsParams
        from botgrpo_sympy.plugin import make_answer_scorer, make_steps_scorer

        return (
            make_answer_scorer(AnswerParams(workers=1)),
            make_steps_scorer(StepsParams(workers=1, step_split="lines")),
        )

    def check(
        self,
        rows: Sequence[dict[str, Any]],
        completions: Sequence[str],
        *,
        prompts: Sequence[str] | None = None,
        truncated: Sequence[bool] | None = None,
    ) -> list[dict[str, bool]]:
        """Per completion: ``right`` (its answer equals the row's) and ``refuted`` (a line scored -1).

        ``prompts`` and ``truncated`` (the length cap cut the completion) reach the scorers as in training, so a
        completion cut mid-number is read as training reads it (its unfinished end is no claim), not as refuted.
        """
        from botgrpo_core.signals import Sample, SampleError

        if len(rows) != len(completions):
            raise ValueError("word-problems: rows and completions differ in length")
        texts = list(prompts) if prompts is not None else [""] * len(rows)
        cut = list(truncated) if truncated is not None else [False] * len(rows)
        if len(texts) != len(rows) or len(cut) != len(rows):
            raise ValueError("word-problems: prompts, truncated and rows differ in length")
        samples = [
            Sample(prompt=p, completion=c, row=dict(r), truncated=bool(t))
            for r, c, p, t in zip(rows, completions, texts, cut, strict=True)
        ]
        answer, steps = self._checkers
        right = answer.score(samples)
        spans = steps.score(samples)
        return [
            {
                "right": not isinstance(a, SampleError) and a == 1.0,
                "refuted": not isinstance(s, SampleError) and any(sp.value < 0 for sp in s),
            }
            for a, s in zip(right, spans, strict=True)
        ]

    def evaluate(
        self,
        rows: Sequence[dict[str, Any]],
        completions: Sequence[str],
        *,
        prompts: Sequence[str] | None = None,
        truncated: Sequence[bool] | None = None,
    ) -> dict[str, float]:
        """``answer_accuracy`` and ``refuted_rate`` of ``completions`` (each a share); ``prompts`` and ``truncated``
        as in :meth:`check` (the run's held-out evaluation passes both)."""
        verdicts = self.check(rows, completions, prompts=prompts, truncated=truncated)
        n = max(len(verdicts), 1)
        return {
            "answer_accuracy": sum(v["right"] for v in verdicts) / n,
            "refuted_rate": sum(v["refuted"] for v in verdicts) / n,
        }

    def success(self, row: dict[str, Any], completion: str) -> bool:
        """One rollout's success: its answer is right."""
        return self.check([row], [completion])[0]["right"]

    def close(self) -> None:
        """Close the scorers (when evaluation made them)."""
        if "_checkers" in self.__dict__:
            for scorer in self._checkers:
                getattr(scorer, "close", lambda: None)()
