"""Both signals end to end through their worker pools: contract, injections, bombs, registration.

Injection proof, in three parts:
1. positive control: each payload really runs code when given to ``sympy.sympify`` (in a throwaway
   subprocess), i.e. it would create the canary file;
2. the checker processes run with ``eval``/``exec``/``compile`` replaced and an audit hook that logs
   to a tripwire file (the pool initializer installs them, so they reach the worker processes);
   a control task shows the tripwire fires inside a worker;
3. every payload goes through both signals in every position (step line, ``$...$``, ``\\boxed{}``,
   answer line, reference): the canary file does not exist afterwards and the tripwire log is empty.
"""

from __future__ import annotations

import importlib.metadata
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from botgrpo_core.rewards.pool import WorkerPool
from botgrpo_core.signals import Sample, SampleError, Span
from botgrpo_core.signals.testing import check_signal_contract, make_samples
from botgrpo_sympy import worker
from botgrpo_sympy.params import AnswerParams, StepsParams
from botgrpo_sympy.plugin import ANSWER, STEPS
from botgrpo_sympy.scorers import TRIPWIRE_ENV

PROSE = Path(__file__).resolve().parent / "data" / "prose_corpus.jsonl"


def _payloads(canary: Path) -> list[str]:
    c = str(canary)
    return [
        f"__import__('os').system('touch {c}')",
        f"(lambda: __import__('os').system('touch {c}'))()",
        f"open('{c}', 'w').write('x')",
        f"exec(\"open('{c}', 'w')\")",
        f"eval(\"__import__('os').system('touch {c}')\")",
        f"getattr(__import__('os'), 'system')('touch {c}')",
        "[k for k in ().__class__.__base__.__subclasses__() if k.__name__ == 'catch_warnings'][0]()"
        f"._module.__builtins__['__import__']('os').system('touch {c}')",
        f"().__class__.__mro__[1].__subclasses__()[0].__init__.__globals__['__builtins__']['open']('{c}','w')",
        f"globals()['__builtins__']['__import__']('os').system('touch {c}')",
        f"'\\x5f\\x5fimport\\x5f\\x5f'; __builtins__.__dict__['\\x5f\\x5fimport\\x5f\\x5f']('os').system('touch {c}')",
        f"Symbol('x').__class__.__init__.__globals__['os'].system('touch {c}')",
        f"2 + __import__('os').system('touch {c}') = 2",
        f"\\operatorname{{__import__}}('os').system('touch {c}')",
        f"\\text{{__import__('os').system('touch {c}')}} = 1",
        f"\\mathrm{{exec}}(open('{c}','w'))",
        f"import os; os.system('touch {c}')",
        f"f\"{{__import__('os').system('touch {c}')}}\" = 0",
    ]


def _positions(payload: str) -> str:
    return f"{payload}\n{payload} = 1\n$ {payload} = 1 $\n\\[{payload}\\]\nx = {payload}\nAnswer: {payload}"


@pytest.fixture(scope="module")
def tripwire(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("tripwire") / "tripwire.log"


@pytest.fixture(scope="module")
def scorers(tripwire: Path):
    mp = pytest.MonkeyPatch()
    mp.setenv(TRIPWIRE_ENV, str(tripwire))
    steps = STEPS.make_scorer(StepsParams(workers=1))
    answer = ANSWER.make_scorer(AnswerParams(workers=1))
    mp.undo()
    yield steps, answer
    steps.close()
    answer.close()


def test_payloads_are_live_ammunition(tmp_path: Path) -> None:
    """Control: sympify (what a naive checker would call) runs them and creates the canary."""
    canary = tmp_path / "canary"
    script = (
        "import sys, sympy\n"
        "for p in sys.argv[1:]:\n"
        "    try:\n"
        "        sympy.sympify(p)\n"
        "    except Exception:\n"
        "        pass\n"
    )
    payloads = _payloads(canary)[:3]  # three suffice as a control; each one alone creates the file
    subprocess.run([sys.executable, "-c", script, *payloads], check=True, timeout=120, capture_output=True)
    assert canary.exists()


def test_tripwires_reach_the_worker_processes(tripwire: Path) -> None:
    """Control: a task that calls eval inside a checker process is blocked and logged."""
    log = tripwire.parent / "control.log"
    params = StepsParams().model_dump()
    with WorkerPool(
        worker.guard_selftest, workers=1, initializer=worker.init_worker, initargs=("steps", params, str(log))
    ) as pool:
        assert pool.map([None]) == ["blocked"]
    assert "\teval\t'1 + 1'" in log.read_text()
    assert worker.guard_selftest() == "unguarded"  # this (test) process has no guard, and evaluates nothing


def test_injection_battery_runs_no_code(scorers, tripwire: Path, tmp_path: Path) -> None:
    steps, answer = scorers
    canary = tmp_path / "canary"
    payloads = _payloads(canary)
    step_samples = [Sample(prompt=p, completion=_positions(p)) for p in payloads]
    answer_samples = [
        Sample(prompt="", completion=c, row={"answer": ref})
        for p in payloads
        for c, ref in ((f"\\boxed{{{p}}}", "1"), (f"Answer: {p}", p), (f"The answer is {p}.", "2"))
    ]
    step_results = steps.score(step_samples)
    answer_results = answer.score(answer_samples)
    assert not canary.exists()
    assert not tripwire.exists() or tripwire.read_text() == ""
    for result in step_results:
        assert not isinstance(result, SampleError), result
        for span in result:
            # Only plain arithmetic next to a payload ("... = 2 = 1" has the claim 2 = 1) is ever decided.
            decided = [c["claim"] for c in span.meta["claims"] if c["verdict"] != 0]
            assert all(re.fullmatch(r"[\d\s=+*/().-]+", claim) for claim in decided), decided
    for result in answer_results:
        # 1.0 only where the reference is the payload itself: an unparsable reference is compared as text.
        assert result in (0.0, 1.0), result
    assert sum(answer_results) <= len(payloads)


BOMBS = [
    "9^9^9 = 1",
    "2^(10^(10^10)) = 1",
    "$9^{9^{9}} = 1$",
    "100000! = 1",
    "$1000000! = 2$",
    "factorial(10^7) = 1",
    "(x+1)^(100000) = x^100000 + 1",
    "$(x+1)^{100000} = 1$",
    " + ".join(f"x^{k}" for k in range(100_000)) + " = 0",
    "(" * 100_000 + "1" + ")" * 100_000 + " = 1",
    "$" + "{" * 100_000 + "1" + "}" * 100_000 + " = 1$",
    "1" * 1_000_000,
    "x = 3\n" * 20_000,
]


def test_bombs_return_within_the_timeout_under_the_default_caps(scorers) -> None:
    steps, answer = scorers
    timeout = StepsParams().timeout_s
    for bomb in BOMBS:
        for scorer, sample in (
            (steps, Sample(prompt="", completion=bomb)),
            (answer, Sample(prompt="", completion=f"\\boxed{{{bomb}}}\nAnswer: {bomb}", row={"answer": "1"})),
        ):
            start = time.monotonic()
            (result,) = scorer.score([sample])
            elapsed = time.monotonic() - start
            assert elapsed < timeout, (bomb[:40], elapsed)
            assert not isinstance(result, SampleError), (bomb[:40], result)
            values = [s.value for s in result] if isinstance(result, list) else [result]
            if not bomb.startswith("x = 3"):  # that one is volume, not a hard claim: its steps are fine
                assert values == [0.0] * len(values), (bomb[:40], values)  # refused by a cap: not checkable
    assert steps.pool.restarts == 0 and answer.pool.restarts == 0


def test_with_caps_lifted_the_pool_kills_hangs_and_keeps_serving() -> None:
    """The caps are the first defence; the pool's deadline is the last one."""
    lifted = {"max_exponent": 10**12, "max_bits": 10**13, "max_factorial": 10**9, "max_chars": 10**7}
    params = StepsParams(timeout_s=1.0, workers=1, limits=lifted, soft_timeout_share=None)  # the pool's kill
    scorer = STEPS.make_scorer(params)
    try:
        good = Sample(prompt="Q: 17+5-8=", completion="17+5=22\n22-8=14\nA: 14")
        hang = Sample(prompt="", completion="9^9^9 = 1")  # 9^387420489 computed exactly: minutes
        start = time.monotonic()
        results = scorer.score([hang, good])
        elapsed = time.monotonic() - start
        # Both went to the worker in one chunk; the chunk timed out and was re-run item by item, so
        # the hang costs only its own result.
        assert isinstance(results[0], SampleError) and results[0].reason == "timeout"
        assert [s.value for s in results[1]] == [1.0, 1.0, 1.0]
        assert scorer.pool.restarts == 2
        # Each deadline (1 s) is followed by starting a replacement worker (sympy import, warm-up).
        assert elapsed < 60, elapsed
        assert [s.value for s in scorer.score([good])[0]] == [1.0, 1.0, 1.0]
    finally:
        scorer.close()


def test_missing_reference_field_is_a_sample_error_that_says_how_to_fix_it(scorers) -> None:
    _, answer = scorers
    (result,) = answer.score([Sample(prompt="", completion="A: 3", row={"solution": "3"})])
    assert isinstance(result, SampleError)
    assert "reference_field" in str(result) and "'answer'" in str(result)


CONTRACT_TEXTS = [
    "17+5=22\n22-8=14\nA: 14",
    "17+5=23\n23-8=15\nA: 15",
    "Step 1: $\\frac{1}{2} + \\frac{1}{3} = \\frac{5}{6}$\nStep 2: so \\boxed{\\frac{5}{6}}",
    "",
    "no math at all",
    "9^9^9 = 1\nAnswer: 9^9^9",
]


@pytest.mark.parametrize("spec", [STEPS, ANSWER], ids=lambda s: s.name)
def test_signal_contract(spec) -> None:
    samples = make_samples(CONTRACT_TEXTS, prompt="Q: 17+5-8=", rows={"answer": "14"})
    results = check_signal_contract(spec, samples, {"workers": 1})
    if spec is ANSWER:
        assert results == [1.0, 0.0, 0.0, -1.0, -1.0, 0.0]  # no answer stated: params.unanswered
    else:
        assert all(isinstance(span, Span) for spans in results for span in spans)
        assert [s.value for s in results[1]] == [-1.0, 1.0, 1.0]


def test_registered_as_an_entry_point_and_cheap_to_import() -> None:
    eps = {ep.name: ep.value for ep in importlib.metadata.entry_points(group="botgrpo")}
    assert eps.get("sympy") == "botgrpo_sympy.plugin"
    code = (
        "import sys, botgrpo_sympy.plugin as p\n"
        "names = []\n"
        "p.botgrpo_register_signals(names.append)\n"
        "print(sorted(s.name for s in names), 'sympy' in sys.modules, 'latex2sympy2_extended' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "['sympy.answer', 'sympy.steps'] False False"


def test_real_workload_trips_no_wire(
    scorers, tripwire: Path, labelled_steps: list[dict], answer_pairs: list[dict]
) -> None:
    """Ordinary math (the labelled sets, the prose corpus) never needs eval/exec in a guarded worker:
    no errors, empty log."""
    steps, answer = scorers
    prose = [json.loads(line) for line in PROSE.read_text(encoding="utf-8").splitlines()]
    step_results = steps.score(
        [
            Sample(prompt=r["prompt"], completion="\n".join(s["text"] for s in r["steps"]))
            for r in labelled_steps
        ]
        + [Sample(prompt=r["prompt"], completion="\n".join(x["text"] for x in r["lines"])) for r in prose]
    )
    answer_results = answer.score(
        [
            Sample(prompt="", completion=f"\\boxed{{{p['pred']}}}", row={"answer": p["gold"]})
            for p in answer_pairs[::5]
        ]
    )
    assert [r for r in step_results + answer_results if isinstance(r, SampleError)] == []
    assert not tripwire.exists() or tripwire.read_text() == ""
