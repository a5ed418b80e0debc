"""The React task: disjoint deterministic splits, its alphabet and length budget, the demonstrations' error
rate, and injected errors that break compilation exactly where ``ERRORS`` says (checked by the jsx plugin)."""

from __future__ import annotations

import math

from botgrpo_bench.react import ERRORS, REACT_CHARS, ReactTask, _render
from botgrpo_core.tasks import get_task


def test_react_splits_are_disjoint_and_deterministic() -> None:
    task = ReactTask()
    n_train, n_held = task.num_specs
    assert n_held > 300 and n_train > 3 * n_held // 2
    held = {r["spec"] for r in task.eval_rows(n_held)}
    assert len(held) == n_held
    train = task.train_rows(3000, seed=1)
    assert not held & {r["spec"] for r in train}
    assert task.eval_rows(50, seed=0) == task.eval_rows(50, seed=0)
    assert get_task("react", {"error_rate": 0.2}).params.error_rate == 0.2


def test_react_text_fits_the_alphabet_and_the_length_budget() -> None:
    from botgrpo_core.engine.tiny import char_tokenizer

    task = ReactTask()
    rows = task.train_rows(400)
    demos = task.demonstrations(rows)
    texts = [r["prompt"] for r in rows] + demos
    assert set("".join(texts)) <= set(REACT_CHARS)
    tok = char_tokenizer(task.chars)
    ids = tok(texts, add_special_tokens=False)["input_ids"]
    assert all(len(i) == len(t) for i, t in zip(ids, texts, strict=True))  # one token per character
    assert tok.unk_token_id not in {x for seq in ids for x in seq}
    longest = max(
        len(_render(task.parse_row(r), e.lstrip("*"))) for r in rows for e in ERRORS[r["spec"].split()[0]]
    )
    assert longest <= task.max_completion_chars


def test_react_demonstrations_carry_errors_at_the_configured_rate() -> None:
    task = get_task("react", {"error_rate": 0.4})
    rows = task.train_rows(3000, seed=2)
    demos = task.demonstrations(rows, seed=2)
    flawed = sum(d != task.solution(task.parse_row(r)) for r, d in zip(rows, demos, strict=True)) / len(rows)
    assert abs(flawed - 0.4) < 4 * math.sqrt(0.4 * 0.6 / len(rows))


def test_react_solutions_compile_and_injected_errors_are_caught() -> None:
    """Correct components compile and break no rule; each injected error breaks compilation exactly when
    ERRORS marks it with '*', and otherwise breaks a React rule (what jsx.rules must see)."""
    task = ReactTask()
    rows = task.eval_rows(40) + task.train_rows(20)
    solutions = [task.solution(task.parse_row(r)) for r in rows]
    assert task.evaluate(rows, solutions) == {"compile_rate": 1.0, "rule_clean_rate": 1.0}
    cases = []
    for kind, errors in ERRORS.items():
        spec = ReactTask.parse_key(
            next(r["spec"] for r in task.train_rows(500) if r["spec"].startswith(kind)), True
        )
        for error in errors:
            cases.append((task.row(spec), _render(spec, error.lstrip("*")), error.startswith("*")))
    results = task.check([c[0] for c in cases], [c[1] for c in cases])
    for (_row, code, breaks), (compiles, clean) in zip(cases, results, strict=True):
        assert compiles == (not breaks), code
        assert not clean, code
