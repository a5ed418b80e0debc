"""The ``react-requests`` task: the project's own React requests for a real chat model (issue 37)."""

from __future__ import annotations

import pytest

from botgrpo_bench.react_prompts import load_react_prompts
from botgrpo_bench.react_requests import MIN_ELEMENTS, ReactRequestsParams, ReactRequestsTask

GOOD = (
    "Here it is:\n```jsx\nimport React, { useState } from 'react';\n"
    "export default function Counter() {\n  const [n, setN] = useState(0);\n"
    "  return <div><p>{n}</p><button onClick={() => setN(n + 1)}>+</button></div>;\n}\n```"
)
BROKEN = "```jsx\nfunction A() { return <div><p>hi</div>; }\n```"
NULL_PAGE = "```jsx\nexport default function A() { return null; }\n```"
ONE_DIV = "```jsx\nexport default function A() { return <div />; }\n```"


def test_rows_are_chat_prompts_and_the_held_out_set_never_trains() -> None:
    task = ReactRequestsTask()
    heldout = task.eval_rows(50)
    train = task.train_rows(700, seed=3)
    assert len(heldout) == 50 and len(train) == 700
    assert {r["id"] for r in heldout} == {r["id"] for r in load_react_prompts("heldout")}
    assert not {r["id"] for r in heldout} & {r["id"] for r in train}
    assert {r["id"] for r in train} == {r["id"] for r in load_react_prompts("train")}  # every one, repeated
    turn = train[0]["prompt"]
    assert turn[0]["role"] == "user" and turn[0]["content"].endswith(
        "Return the full code in one ```jsx code block."
    )
    assert task.train_rows(20, seed=3) == train[:20] and task.train_rows(20, seed=4) != train[:20]
    system = ReactRequestsTask(ReactRequestsParams(system_prompt="You write React."))
    assert system.eval_rows(1)[0]["prompt"][0] == {"role": "system", "content": "You write React."}
    with pytest.raises(ValueError, match="data.eval_size 51"):
        task.eval_rows(51)
    with pytest.raises(ValueError, match="no demonstrations"):
        task.demonstrations(train[:1])


def test_evaluation_rates_and_the_trivial_rule() -> None:
    from botgrpo_jsx import nodeenv

    if nodeenv.unavailable_reason() is not None:  # make test installs it (python -m botgrpo_jsx.setup)
        pytest.skip(f"jsx.renders needs Node: {nodeenv.unavailable_reason()}")
    task = ReactRequestsTask()
    try:
        pages = [GOOD, BROKEN, NULL_PAGE, ONE_DIV, "I cannot write that.", ""]
        verdicts = task.check(pages)
        assert [v["compiles"] for v in verdicts] == [True, False, True, True, False, False]
        assert [v["renders"] for v in verdicts][:4] == [True, False, True, True]
        # trivial: compiles with fewer than MIN_ELEMENTS elements, or no code at all; a broken page is a failure
        assert MIN_ELEMENTS == 2
        assert [v["trivial"] for v in verdicts] == [False, False, True, True, False, True]
        assert [v["code"] for v in verdicts] == [True, True, True, True, False, False]
        rates = task.evaluate([{}] * len(pages), pages)
        assert rates == {
            "compile_rate": 3 / 6,
            "render_rate": 3 / 6,
            "trivial_rate": 3 / 6,
            "code_rate": 4 / 6,
            "substantive_rate": 1 / 6,
        }
        # held-out substance is the rollout success: compiles and not trivial
        assert [task.success({}, p) for p in pages] == [True, False, False, False, False, False]
        assert [v["substantive"] for v in verdicts] == [task.success({}, p) for p in pages]
    finally:
        task.close()


def test_the_substance_guard_counts_elements_compiling_or_not() -> None:
    from botgrpo_bench.react_requests import SubstanceScorer
    from botgrpo_core.signals import Sample

    broken_late = "```jsx\nfunction A() { return <div><p>hi</p><b>x</b></div>; }}\n```"  # a stray brace
    pages = [GOOD, broken_late, NULL_PAGE, ONE_DIV, "I cannot write that."]
    assert SubstanceScorer().score([Sample(prompt="", completion=p) for p in pages]) == [
        1.0,
        1.0,
        0.0,
        0.0,
        0.0,
    ]


def test_self_closing_elements_count_as_elements() -> None:
    """Issue 60 item 7: ``<div><input/><button/></div>`` is three elements, not one."""
    from botgrpo_bench.react_requests import SubstanceScorer, element_count, is_trivial
    from botgrpo_core.signals import Sample

    form = "```jsx\nexport default function F() {\n  return <div><input /><button /></div>;\n}\n```"
    image = "```jsx\nexport default function A({ src }) {\n  return <img src={src} alt='' />;\n}\n```"
    assert element_count(form) == 3 and element_count(image) == 1
    assert not is_trivial(form, True) and is_trivial(image, True)
    assert SubstanceScorer().score([Sample(prompt="", completion=form)]) == [1.0]
    # member-expression tags count too, and an element keeps its tag
    from botgrpo_bench.react_verdict import page_facts

    facts = page_facts("const a = <Stack.Navigator><Stack.Screen name='x' /><br/></Stack.Navigator>;")
    assert [e.tag for e in facts.elements] == ["Stack.Navigator", "Stack.Screen", "br"]
    assert [e.parent for e in facts.elements] == [-1, 0, 0]
