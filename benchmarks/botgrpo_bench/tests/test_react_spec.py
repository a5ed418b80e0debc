"""React view pages (``grammar: spec``, the regime levels' task) and their outcome.

The grammar: disjoint deterministic splits, keys that parse back, the alphabet and the length bound, the
per-section error rate, per-prompt errors (the wrong tag or field differs from page to page). The outcome
(``bench.react_spec``, checked with the jsx plugin's real esbuild and tree-sitter): solutions succeed;
each injected error fails it, breaking compilation exactly where ``SECTION_ERRORS`` marks ``*`` and
otherwise missing exactly its own section; degenerate pages (empty, ``return null``, one section copied)
score below an honest page with one error, alone and in the bench's mixture; ``bench.react_trivial``
flags exactly the degenerate ones.
"""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest

from botgrpo_bench.react import REACT_CHARS, ReactParams, ReactTask
from botgrpo_bench.react_spec import (
    SECTION_ERRORS,
    SectionError,
    ViewSection,
    ViewSpec,
    draw_error,
    render_view,
    section_line,
)
from botgrpo_bench.react_verdict import (
    ReactSpecScorer,
    ReactTrivialScorer,
    SpecParams,
    code_facts,
    implemented,
    is_trivial,
)
from botgrpo_core.signals import Sample, SampleError
from botgrpo_core.tasks import get_task


def _task(n: int, error_rate: float = 0.3) -> ReactTask:
    return ReactTask(ReactParams(grammar="spec", sections=(n, n), error_rate=error_rate))


def _errors(spec: ViewSpec, seed: int = 0) -> list[tuple[int, SectionError]]:
    """Every error kind of every section of ``spec``, with a wrong value drawn as the demonstrations do."""
    rng = random.Random(seed)
    out = []
    for i, s in enumerate(spec.sections):
        for name in SECTION_ERRORS[s.kind]:
            drawn = draw_error(s, spec, rng)
            while drawn.name != name.lstrip("*"):
                drawn = draw_error(s, spec, rng)
            out.append((i, drawn))
    return out


def test_view_splits_are_disjoint_deterministic_and_keys_parse_back() -> None:
    task = get_task("react", {"grammar": "spec", "sections": [2, 6]})
    held = task.eval_rows(200, seed=0)
    assert held == task.eval_rows(200, seed=0)
    assert len({r["spec"] for r in held}) == 200
    train = task.train_rows(2000, seed=1)
    assert train == task.train_rows(2000, seed=1)
    assert not {r["spec"] for r in held} & {r["spec"] for r in train}
    assert {len(task.parse_row(r).sections) for r in train} == {2, 3, 4, 5, 6}
    for r in train[:200]:
        spec = task.parse_row(r)
        assert isinstance(spec, ViewSpec) and spec.key == r["spec"] and spec.prompt == r["prompt"]
        assert len({s.field for s in spec.sections}) == len(spec.sections)  # a field names one section
        assert sum(s.kind == "list" for s in spec.sections) <= 1
    # the tags and fields vary from prompt to prompt: no page-independent pattern to learn
    tags = Counter(s.tag for r in train for s in task.parse_row(r).sections)
    assert len(tags) >= 14 and max(tags.values()) < 0.15 * sum(tags.values())


def test_view_text_fits_the_alphabet_and_the_length_bound() -> None:
    for n in (1, 6):
        task = _task(n)
        rows = task.train_rows(200)
        texts = [r["prompt"] for r in rows]
        for r in rows:
            spec = task.parse_row(r)
            texts += [render_view(spec)] + [render_view(spec, {i: e}) for i, e in _errors(spec)]
        assert set("".join(texts)) <= set(REACT_CHARS)
        longest = max(len(t) for t in texts if not t.startswith("S: "))
        assert longest <= task.max_completion_chars < 1.3 * longest


def test_each_section_carries_its_own_error_at_the_configured_rate() -> None:
    task = get_task("react", {"grammar": "spec", "error_rate": 0.4, "sections": [3, 3]})
    rows = task.train_rows(1000, seed=2)
    demos = task.demonstrations(rows, seed=2)
    assert demos == task.demonstrations(rows, seed=2)
    flawed = 0
    for r, d in zip(rows, demos, strict=True):
        good = render_view(task.parse_row(r)).splitlines()[2:-2]  # the section lines
        flawed += sum(line not in d.splitlines() for line in good)
    n = 3 * len(rows)
    assert abs(flawed / n - 0.4) < 4 * math.sqrt(0.4 * 0.6 / n)


def test_solutions_succeed_and_every_error_fails_the_outcome_where_it_says() -> None:
    """A correct page compiles, breaks no rule and implements its spec; each injected error breaks
    compilation exactly when SECTION_ERRORS marks it '*', and otherwise leaves exactly its own section
    unimplemented (what only the outcome sees); either way the task's success fails."""
    task = _task(5)
    rows = task.eval_rows(8) + task.train_rows(8)
    solutions = [task.solution(task.parse_row(r)) for r in rows]
    assert task.evaluate(rows, solutions) == {
        "compile_rate": 1.0,
        "rule_clean_rate": 1.0,
        "spec_rate": 1.0,
        "trivial_rate": 0.0,
    }
    for row in rows[:3]:
        spec = task.parse_row(row)
        cases = _errors(spec, seed=len(row["spec"]))
        codes = [render_view(spec, {i: e}) for i, e in cases]
        checked = task.check([row] * len(codes), codes)
        for (i, error), code, (compiles, _clean) in zip(cases, codes, checked, strict=True):
            breaking = f"*{error.name}" in SECTION_ERRORS[spec.sections[i].kind]
            assert compiles == (not breaking), code
            done = implemented(spec, code_facts(code))
            if not breaking:
                assert done == [j != i for j in range(len(done))], code
            assert not task.success(row, code), code


def test_check_is_per_prompt_not_a_fixed_pattern() -> None:
    """A page that is right for one spec is wrong for the same spec with another tag or field."""
    spec = ViewSpec("Todo", (ViewSection("text", "h3", "title"), ViewSection("nest", "b", "price", "nav")))
    code = render_view(spec)
    assert all(implemented(spec, code_facts(code)))
    for other in (
        ViewSpec("Todo", (ViewSection("text", "h4", "title"), spec.sections[1])),
        ViewSpec("Todo", (ViewSection("text", "h3", "name"), spec.sections[1])),
        ViewSpec("Todo", (spec.sections[0], ViewSection("nest", "b", "price", "aside"))),
        ViewSpec("Todo", (spec.sections[0], ViewSection("cond", "b", "price"))),
    ):
        assert not all(implemented(other, code_facts(code))), other.key


def _degenerate_and_honest(spec: ViewSpec) -> tuple[dict[str, str], dict[str, str]]:
    """Degenerate pages (empty, ``return null``, the first section copied once per section) and honest
    pages with one error (each error kind of the first section)."""
    name = spec.component
    copied = "\n".join(
        [f"function {name}({{{spec.sections[0].field}, items, show}}) {{", "  return <div>"]
        + ["    " + section_line(spec.sections[0])] * len(spec.sections)
        + ["  </div>;", "}"]
    )
    degenerate = {
        "empty": "",
        "whitespace": " " * 40,
        "return null": f"function {name}() {{\n  return null;\n}}",
        "empty div": f"function {name}() {{\n  return <div></div>;\n}}",
        "one section copied": copied,
    }
    honest = {e.name: render_view(spec, {0: e}) for i, e in _errors(spec) if i == 0}
    return degenerate, honest


@pytest.mark.parametrize("sections", [2, 4, 6])
def test_degenerate_pages_score_below_an_honest_page_with_one_error(sections: int) -> None:
    task = _task(sections)
    scorer = ReactSpecScorer(SpecParams())
    trivial = ReactTrivialScorer(SpecParams())
    try:
        for row in task.eval_rows(4, seed=sections):
            spec = task.parse_row(row)
            degenerate, honest = _degenerate_and_honest(spec)
            pages = {**degenerate, **honest, "solution": render_view(spec)}
            samples = [Sample(prompt=row["prompt"], completion=c, row=row) for c in pages.values()]
            value = dict(zip(pages, scorer.score(samples), strict=True))
            flag = dict(zip(pages, trivial.score(samples), strict=True))
            assert value["solution"] == 1.0 and flag["solution"] == 0.0
            best_degenerate = max(value[k] for k in degenerate)
            assert best_degenerate < min(value[k] for k in honest), (spec.key, value)
            assert all(flag[k] == 1.0 for k in degenerate), flag
            assert all(flag[k] == 0.0 for k in honest), flag
            # what the outcome-only reward would have said: the copied page compiles
            assert task.check([row], [degenerate["one section copied"]])[0][0]
    finally:
        scorer.close()


def test_degenerate_pages_lose_in_the_bench_mixture_too() -> None:
    """The react-long mixture (outcome + jsx.syntax + jsx.rules at the bench's beta): every degenerate page's
    mean token reward is below every honest one-error page's."""
    import yaml

    from botgrpo_bench.config import load_bench
    from botgrpo_core.engine.tiny import char_tokenizer
    from botgrpo_core.rewards.mixture import RewardMixture
    from botgrpo_core.rewards.samples import decode_samples

    bench = load_bench("benchmarks/bench_regimes.yaml")
    rewards = yaml.safe_load(yaml.safe_dump(bench.tasks["react-long"].run["rewards"]))
    mixture = RewardMixture.from_dict(rewards)
    task = _task(6)
    tokenizer = char_tokenizer(task.chars)
    try:
        for row in task.eval_rows(2, seed=11):
            spec = task.parse_row(row)
            degenerate, honest = _degenerate_and_honest(spec)
            pages = {**degenerate, **honest}
            ids = [tokenizer(c, add_special_tokens=False)["input_ids"] for c in pages.values()]
            ids = [[*i, tokenizer.eos_token_id] for i in ids]
            samples = decode_samples(tokenizer, [row["prompt"]] * len(ids), ids, [row] * len(ids))
            out = mixture.score_batch(samples)
            mean = (out.token_rewards.nan_to_num(0.0).sum(1) / out.mask.sum(1).clamp(min=1)).tolist()
            reward = dict(zip(pages, mean, strict=True))
            assert max(reward[k] for k in degenerate) < min(reward[k] for k in honest), (spec.key, reward)
    finally:
        mixture.close()


def test_outcome_signals_refuse_rows_without_a_view_spec() -> None:
    scorer = ReactTrivialScorer(SpecParams())
    (result,) = scorer.score(
        [Sample(prompt="S: list Todo title\n", completion="x", row={"spec": "list Todo"})]
    )
    assert isinstance(result, SampleError) and "data.task_params.grammar: spec" in str(result)


def test_bad_view_sections_name_the_key_and_the_fix() -> None:
    with pytest.raises(ValueError, match=r"sections: .*grammar: spec; e\.g\. sections: \[4, 4\]"):
        ReactParams(grammar="spec", sections=(1, 9))


def test_trivial_is_about_the_spec_fields_shown() -> None:
    spec = ViewSpec("Todo", tuple(ViewSection("text", "p", f) for f in ("title", "name", "date", "city")))
    two = "function TodoView({title, name}) {\n  return <div><p>{title}</p><p>{name}</p></div>;\n}"
    one = "function TodoView({title}) {\n  return <div><p>{title}</p><b>{title}</b></div>;\n}"
    assert not is_trivial(spec, code_facts(two)) and is_trivial(spec, code_facts(one))
    # a failed attempt (every tag wrong, every field there) is not trivial, though it implements nothing
    wrong = render_view(ViewSpec("Todo", tuple(ViewSection("text", "b", s.field) for s in spec.sections)))
    assert not any(implemented(spec, code_facts(wrong))) and not is_trivial(spec, code_facts(wrong))
