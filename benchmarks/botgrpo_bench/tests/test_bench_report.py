"""The report's numbers against hand-computed values and enumeration: Pass@k, steps to target, the paired
ratio with censoring; the summary's header; and the docs page built from results folders."""

from __future__ import annotations

import random
from itertools import combinations
from pathlib import Path

import pytest

from botgrpo_bench.aggregate import ratio_summary
from botgrpo_bench.evals import pass_at_k
from botgrpo_bench.runs import steps_to_target


def test_pass_at_k_matches_enumeration() -> None:
    rng = random.Random(0)
    for _ in range(30):
        n = rng.randint(1, 8)
        c = rng.randint(0, n)
        k = rng.randint(1, n)
        outcomes = [1] * c + [0] * (n - c)
        subsets = list(combinations(range(n), k))
        expected = sum(any(outcomes[i] for i in s) for s in subsets) / len(subsets)
        assert pass_at_k(n, c, k) == pytest.approx(expected)


def test_steps_to_target_is_the_first_crossing() -> None:
    points = [(0, {"m": 0.5}), (10, {"m": 0.79}), (20, {"m": 0.81}), (30, {"m": 0.7}), (40, {"m": 0.9})]
    assert steps_to_target(points, "m", 0.8) == 20
    assert steps_to_target(points, "m", 0.95) is None
    assert steps_to_target([(0, {"err": 0.4}), (5, {"err": 0.1})], "err", 0.2, higher=False) == 5


def _run(method: str, seed: int, steps_to: int | None, s_per_step: float = 1.0) -> dict:
    return {
        "group": "grid",
        "task": "t",
        "method": method,
        "seed": seed,
        "status": "ok",
        "steps": 100,
        "steps_to_target": steps_to,
        "s_per_step": s_per_step,
    }


def test_ratio_pairs_seeds_and_flags_censoring() -> None:
    runs = [
        _run("grpo", 0, 60, 1.0),
        _run("bot-grpo", 0, 30, 1.2),
        _run("grpo", 1, 40),
        _run("bot-grpo", 1, 40, 1.2),
    ]
    r = ratio_summary(runs, "t", "grpo", "bot-grpo")
    assert r is not None
    mean, lo, hi, n = r["ratio"]
    assert (mean, lo, hi, n) == (pytest.approx(1.5), 1.0, 2.0, 2)
    assert r["wins"] == 1 and not r["censored"] and r["bound"] is None
    assert r["step_time_ratio"] == pytest.approx(1.2)
    # the reference never reaches the target: its run length (100) stands in, and the ratio is flagged
    runs = [_run("grpo", 0, None), _run("bot-grpo", 0, 50), _run("grpo", 1, None), _run("bot-grpo", 1, None)]
    r = ratio_summary(runs, "t", "grpo", "bot-grpo")
    assert r is not None and r["ratio"][0] == pytest.approx(2.0) and r["ratio"][3] == 1 and r["censored"]
    # no run reaches the target: no ratio, but the curve means are still compared per seed
    runs = [
        {**_run(m, seed, None), "curve_mean": c}
        for m, seed, c in [("grpo", 0, 0.5), ("bot-grpo", 0, 0.6), ("grpo", 1, 0.5), ("bot-grpo", 1, 0.45)]
    ]
    r = ratio_summary(runs, "t", "grpo", "bot-grpo")
    assert r is not None and r["ratio"] is None
    mean, lo, hi, n = r["curve_mean_diff"]
    assert (mean, lo, hi, n) == (pytest.approx(0.025), pytest.approx(-0.05), pytest.approx(0.1), 2)
    assert r["curve_mean_better"] == 1


def test_the_step_time_line_says_whether_the_runs_shared_the_machine() -> None:
    from botgrpo_bench.summary import _comparison_lines

    runs = [_run("grpo", 0, 60, 1.0), _run("bot-grpo", 0, 30, 1.5)]
    ratio = ratio_summary(runs, "t", "grpo", "bot-grpo")
    together = " ".join(_comparison_lines(ratio, "grpo", "bot-grpo", "m", side_by_side=True))
    apart = " ".join(_comparison_lines(ratio, "grpo", "bot-grpo", "m", side_by_side=False))
    assert "**1.50**" in together and "start side by side" in together
    assert "**1.50**" in apart and "one at a time" in apart and "side by side" not in apart


def test_a_censored_ratio_says_which_way_it_bounds() -> None:
    from botgrpo_bench.summary import _comparison_lines

    def line(runs: list[dict]) -> tuple[str | None, str]:
        r = ratio_summary(runs, "t", "grpo", "bot-grpo")
        return r["bound"], _comparison_lines(r, "grpo", "bot-grpo", "m")[0]

    # the reference missed (100 steps stand in for >= 100): the true ratio is at least 100 / 50
    bound, text = line([_run("grpo", 0, None), _run("bot-grpo", 0, 50)])
    assert bound == ">=" and "**Steps to target, grpo / bot-grpo: >= 2.00**" in text and "lower bound" in text
    # the candidate missed: the true ratio is at most 50 / 100 (react-lr2e-4's seed 0: grpo 50, bot-grpo > 50)
    bound, text = line([_run("grpo", 0, 50), _run("bot-grpo", 0, None)])
    assert bound == "<=" and "<= 0.50**" in text and "bot-grpo missed" in text and "upper bound" in text
    # each missed in one seed: the mean bounds nothing
    bound, text = line(
        [_run("grpo", 0, None), _run("bot-grpo", 0, 50), _run("grpo", 1, 50), _run("bot-grpo", 1, None)]
    )
    assert bound == "mixed" and "**Steps to target, grpo / bot-grpo: 1.25**" in text and "no bound" in text
    bound, text = line([_run("grpo", 0, 60), _run("bot-grpo", 0, 30)])
    assert bound is None and "censored" not in text


def test_docs_page_collects_summaries_and_plots(tmp_path: Path) -> None:
    from botgrpo_bench.report import main

    for name in ("full", "checks"):
        d = tmp_path / name
        d.mkdir()
        (d / "summary.md").write_text(f"# Bench `{name}`\n\n## Task\n\n![curve](curves.png)\n")
        (d / "curves.png").write_bytes(b"\x89PNG\r\n\x1a\n" + name.encode())
    (tmp_path / "pre.md").write_text("# Results\n\nIntro.\n")
    doc = tmp_path / "docs" / "results.md"
    doc.parent.mkdir()
    assert (
        main(
            [
                "--doc",
                str(doc),
                "--preface",
                str(tmp_path / "pre.md"),
                str(tmp_path / "full"),
                str(tmp_path / "checks"),
            ]
        )
        == 0
    )
    text = doc.read_text()
    assert text.startswith("# Results") and "## Bench `full`" in text and "### Task" in text
    assert "](results/checks/curves.png)" in text
    assert (doc.parent / "results" / "checks" / "curves.png").read_bytes().endswith(b"checks")


def test_invocation_line_says_when_the_runs_predate_the_history() -> None:
    """A folder whose runs were made before invocations were logged has only report-only entries: the
    line says so rather than that nothing ran."""
    from botgrpo_bench.config import load_bench
    from botgrpo_bench.summary import _header

    bench = load_bench(Path(__file__).resolve().parents[3] / "benchmarks" / "bench_full.yaml")
    report_only = {"date": "d", "runs_started": 0, "runs_s": 0.0, "load_average": [1.0, 1.0, 1.0]}
    meta = {"history": [report_only, report_only], "parallel": 2}
    run = {"run_dir": "r", "wall_s": 60.0, "status": "ok"}
    line = next(x for x in _header(bench, [run], meta) if x.startswith("- Invocations"))
    assert line == (
        "- Invocations that ran something: not logged: the runs predate this history; "
        "2 more only rewrote this report from the finished runs"
    )
    line = next(x for x in _header(bench, [], meta) if x.startswith("- Invocations"))
    assert line.startswith("- Invocations that ran something: none;")
