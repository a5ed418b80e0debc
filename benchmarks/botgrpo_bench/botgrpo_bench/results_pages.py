"""The published results: ``docs/results.md`` (an index) and one page per study under ``docs/results/``.

``python -m botgrpo_bench.results_pages`` writes them all from the committed record folders
(``docs/results/<name>/``: each bench folder's ``summary.md``, ``runs.jsonl``, plots). :data:`STUDIES` is the one
list of studies: each entry names its page, the preface that opens it (``benchmarks/results_prefaces/<slug>.md``, the
measured prose), the record folders whose bench reports the page carries, and the index's row: task, model,
seeds, the primary statistic (computed from the records by its ``statistic`` function, or fixed text where the
folders keep no run table) and the verdict. The index (``docs/results.md``) is
``benchmarks/results_prefaces/index.md`` with the summary table and the figures put in at ``<!-- studies -->``;
the README's headline table (between ``<!-- results:start -->`` and ``<!-- results:end -->``) is written too.

To add a study: write its preface, ``benchmarks/results_prefaces/<slug>.md``, add a :class:`Study` to :data:`STUDIES`,
and run ``python -m botgrpo_bench.results_pages``;
``benchmarks/botgrpo_bench/tests/test_results_page.py`` checks that every page is what this command writes.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from botgrpo_bench.regimes import compare_steps, read_regimes_jsonl, speedup_profile
from botgrpo_bench.report import write_doc

if TYPE_CHECKING:
    from botgrpo_bench.paired import Paired

#: where a preface lives, relative to the repository root
PREFACES = Path("benchmarks/results_prefaces")
#: the index page and the folder of the study pages and their records
INDEX = Path("docs/results.md")
PAGES = Path("docs/results")
#: where the index's table goes in its preface
MARK = "<!-- studies -->"
#: where a paired study's figures and tables go in its preface (the page opens with them)
HEADLINE = "<!-- headline -->"
#: where a page's navigation line (the index, then every study by its ``short`` name) goes in its preface
NAV = "<!-- nav -->"
#: the README's block of headline results, between these lines
README = Path("README.md")
README_START, README_END = "<!-- results:start -->", "<!-- results:end -->"


@dataclass(frozen=True)
class Study:
    """One study: its page ``docs/results/<slug>.md`` and its row in the index.

    :ivar short: its name in every page's navigation line.
    :ivar folders: record folders (``docs/results/<name>``) whose bench reports (``summary.md``) follow the
        preface on the page; their plots are linked in place.
    :ivar regimes: join these folders' ``regimes.jsonl`` into ``docs/results/regimes.jsonl`` and put the
        combined regime section (speed-up by level) after the preface.
    :ivar drop_regimes: leave out each report's own regime section (another page's combined one has it).
    :ivar assets: where the folders live, relative to the root (default: ``docs/results``).
    :ivar statistic: the primary statistic's value, computed from the records under the root; a string is
        fixed text (folders without a run table).
    :ivar figure: a PNG (relative to ``docs/``) the index shows for this study.
    :ivar headline: the README's one-line verdict (default: ``verdict``).
    :ivar reports: record folders (``docs/results/<name>``) whose bench reports the page links to (not copied
        in: a record folder that is still filling does not change the page).
    :ivar comparisons: a paired study's comparisons, computed from the records each time the pages are written;
        each one's figure and table go where the preface has :data:`HEADLINE`.
    """

    slug: str
    title: str
    short: str
    task: str
    model: str
    seeds: str
    statistic_label: str
    statistic: Callable[[Path], str] | str
    verdict: str
    folders: tuple[str, ...] = ()
    regimes: tuple[str, ...] = ()
    drop_regimes: bool = False
    assets: str | None = None
    figure: str | None = None
    reports: tuple[str, ...] = ()
    headline: str = ""
    comparisons: tuple[Comparison, ...] = ()

    @property
    def page(self) -> Path:
        return PAGES / f"{self.slug}.md"

    @property
    def preface(self) -> Path:
        return PREFACES / f"{self.slug}.md"


# --- the primary statistics, from the committed records ----------------------------------------------------------
def _ratio_text(
    steps: dict[str, dict[int, int | None]], run_steps: dict[int, int], ref: str, cand: str
) -> str:
    """Per seed ``ref`` steps / ``cand`` steps (a miss counted at the run's length: a bound), then the ratio of the
    seed-mean steps (``>=`` when it is a bound, n/a when the candidate missed)."""
    parts = []
    for seed in sorted(set(steps.get(ref, {})) & set(steps.get(cand, {}))):
        r, c = steps[ref][seed], steps[cand][seed]
        if r is not None and c is not None:
            parts.append(f"{r / c:.2f}")
        elif c is not None:
            parts.append(f">= {run_steps[seed] / c:.2f}")
        elif r is not None:
            parts.append(f"<= {r / run_steps[seed]:.2f}")
        else:
            parts.append("n/a")
    if not parts:
        return "n/a (no paired runs)"
    cmp = compare_steps(steps, ref, cand, run_steps)
    whole = (
        f"{cmp['ratio']:.2f}"
        if cmp["ratio"] is not None
        else f">= {cmp['ratio_at_least']:.2f}"
        if cmp["ratio_at_least"] is not None
        else "n/a"
    )
    return f"{whole} (per seed {', '.join(parts)})"


def runs_ratio(folder: str, ref: str = "grpo", cand: str = "bot-grpo") -> Callable[[Path], str]:
    """GRPO / BoT-GRPO steps to the level's target, from ``docs/results/<folder>/runs.jsonl``."""

    def compute(root: Path) -> str:
        rows = [
            json.loads(line)
            for line in (root / PAGES / folder / "runs.jsonl").read_text().splitlines()
            if line
        ]
        steps: dict[str, dict[int, int | None]] = {}
        for r in rows:
            if r.get("status") == "ok":
                steps.setdefault(r["method"], {})[r["seed"]] = r["steps_to_target"]
        run_steps = {r["seed"]: r["steps"] for r in rows if r["method"] == ref}
        return _ratio_text(steps, run_steps, ref, cand)

    return compute


def _runs_by_method(root: Path, folder: str, key: str) -> dict[str, dict[int, dict]]:
    """``method -> seed -> run row`` of the finished runs (status ok, ``key`` recorded) in
    ``docs/results/<folder>/runs.jsonl`` under ``root`` (empty while the folder has no run table)."""
    runs_file = root / PAGES / folder / "runs.jsonl"
    rows = [json.loads(x) for x in runs_file.read_text().splitlines() if x] if runs_file.is_file() else []
    by: dict[str, dict[int, dict]] = {}
    for r in rows:
        if r.get("status") == "ok" and r.get(key) is not None:
            by.setdefault(r["method"], {})[r["seed"]] = r
    return by


@dataclass(frozen=True)
class Comparison:
    """A paired comparison of a level: ``cand - ref`` of ``key`` (the held-out metric averaged over the
    evaluations after step 0) paired by seed, with the paired t-test and the sign test (:mod:`botgrpo_bench.paired`).

    :ivar folder: the candidate's record folder (``docs/results/<folder>``); ``ref_folder`` the reference's
        (default: the same; a control compares with the headline's arm).
    :ivar planned: the level's number of paired seeds (a level still running says how many are in).
    :ivar smallest: the smallest difference worth reporting, fixed with the level's settings.
    :ivar finals: ``(metric, label)`` of the secondary measures shown per run, at step 0 and at the last
        evaluation (``initial_<metric>`` / ``final_<metric>`` of ``runs.jsonl``), beside the primary metric's.
    :ivar figure: open the page with this comparison's figure (mean held-out curve per arm, band over seeds; the
        paired differences beside it), written to ``docs/results/<folder>/paired.png``.
    """

    label: str
    folder: str
    planned: int
    smallest: float
    metric: str
    cand: str = "bot-grpo"
    ref: str = "grpo"
    ref_folder: str | None = None
    key: str = "curve_mean"
    figure: bool = False
    finals: tuple[tuple[str, str], ...] = ()

    def runs(self, root: Path) -> tuple[dict[int, dict], dict[int, dict]]:
        """The candidate's and the reference's finished runs by seed."""
        cand = _runs_by_method(root, self.folder, self.key).get(self.cand, {})
        ref = _runs_by_method(root, self.ref_folder or self.folder, self.key).get(self.ref, {})
        return cand, ref

    def result(self, root: Path) -> Paired | None:
        """The paired comparison over the seeds both arms finished; None before the first pair."""
        from botgrpo_bench.paired import paired

        cand, ref = self.runs(root)
        if not set(cand) & set(ref):
            return None
        return paired({s: r[self.key] for s, r in cand.items()}, {s: r[self.key] for s, r in ref.items()})

    def statistic(self, root: Path) -> str:
        """The primary statistic in one line: mean difference, per seed, seeds in, t and p, signs."""
        result = self.result(root)
        if result is None:
            return f"n/a (0 of {self.planned} paired seeds in)"
        per_seed = ", ".join(f"{d:+.3f}" for d in result.differences)
        t = "" if result.t is None else f"; t = {result.t:.2f}, p = {result.p_t:.2f}"
        return (
            f"{result.mean:+.3f} (per seed {per_seed}; {len(result.seeds)} of {self.planned} paired seeds{t}; "
            f"higher in {result.positive}, lower in {result.negative})"
        )

    @property
    def png(self) -> Path:
        return PAGES / self.folder / "paired.png"

    def block(self, root: Path, out: Path) -> str:
        """The page's section for this comparison: its figure (written under ``out``) and its paired table."""
        from botgrpo_bench.paired import paired_table

        name = f"{self.cand} - {self.ref}"
        if self.ref_folder and self.ref_folder != self.folder:
            name = f"{self.cand} (`{self.folder}`) - {self.ref} (`{self.ref_folder}`)"
        head = f"### {self.label}: {name}, {self.metric} averaged over the evaluations after step 0"
        result = self.result(root)
        if result is None:
            return f"{head}\n\nNo paired seed has finished yet (0 of {self.planned}).\n"
        parts = [head, ""]
        if self.figure:
            from botgrpo_bench.plots import plot_paired

            cand, ref = self.runs(root)
            path = out / self.png
            path.parent.mkdir(parents=True, exist_ok=True)
            plot_paired(
                {s: cand[s].get("curve") or [] for s in result.seeds},
                {s: ref[s].get("curve") or [] for s in result.seeds},
                result,
                path,
                cand=self.cand,
                ref=self.ref,
                metric=self.metric,
                smallest=self.smallest,
                title=f"{self.label} ({len(result.seeds)} of {self.planned} paired seeds)",
            )
            parts += [f"![{self.label}]({self.png.relative_to(PAGES).as_posix()})", ""]
        seeds_in = f"{len(result.seeds)} of {self.planned} paired seeds in"
        parts += [
            paired_table(result, candidate=self.cand, reference=self.ref),
            "",
            f"Smallest difference worth reporting, fixed before the runs: {self.smallest:g}. {seeds_in}.",
        ]
        if self.finals:
            parts += ["", self._finals_table(root, result.seeds)]
        return "\n".join(parts) + "\n"

    def _finals_table(self, root: Path, seeds: Sequence[int]) -> str:
        """Each paired run's step 0 -> last evaluation: the primary metric and every :attr:`finals` measure."""

        def span(run: dict, metric: str | None) -> str:
            a, b = (run.get(f"{x}_{metric}" if metric else x) for x in ("initial", "final"))
            if a is None or b is None:
                return "n/a"
            digits = 0 if max(abs(a), abs(b)) >= 10 else 3  # lengths in tokens, shares to 3 places
            return f"{a:.{digits}f} -> {b:.{digits}f}"

        cand, ref = self.runs(root)
        head = ["run", self.metric, *(label for _, label in self.finals)]
        lines = [
            "Each run, held-out at step 0 -> the last evaluation:",
            "",
            "| " + " | ".join(head) + " |",
            "|" + "---|" * len(head),
        ]
        for seed in seeds:
            for name, run in ((self.cand, cand[seed]), (self.ref, ref[seed])):
                cells = [f"{name} seed {seed}", span(run, None), *(span(run, m) for m, _ in self.finals)]
                lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines)


def regimes_ratio(levels: Sequence[tuple[str, str]], fraction: float | None = None) -> Callable[[Path], str]:
    """GRPO / BoT-GRPO steps per level (``(bench_task, label)``) of ``docs/results/regimes.jsonl``: to the level's
    target, or with ``fraction`` to ``fraction`` of the gap from the start to a perfect score."""

    def compute(root: Path) -> str:
        records = read_regimes_jsonl(root / PAGES / "regimes.jsonl")
        out = []
        for task, label in levels:
            recs = [r for r in records if r.get("bench_task") == task]
            level = speedup_profile(recs, [fraction] if fraction is not None else [])["levels"][0]
            cmp = level["profile"][0] if fraction is not None else level["at_target"]
            run_steps = {r["seed"]: r["steps"] for r in recs if r["method"] == "grpo"}
            out.append(f"{label}: {_ratio_text(cmp['steps'], run_steps, 'grpo', 'bot-grpo')}")
        return "; ".join(out)

    return compute


REAL = "SmolLM2-135M-Instruct, LoRA r16, vLLM rollouts, 2-core CPU"
TOY = "~160K-parameter toy model (built in code), 2-core CPU"
TOY_REACT = (
    "regimes-react3",
    "regimes-react3-short",
    "regimes-react3-medium",
    "regimes-react3-centred",
    "regimes-react-cold",
    "regimes-react-cold-tail",
    "regimes-react-cold-ablations",
    "regimes-react-cold-control",
    "regimes-react-cold-lr",
    "regimes-react-cold-tuned",
    "regimes-react-cold-tuned-ablations",
    "regimes-react-cold-tuned-control",
    "regimes-react-cold-lr05",
    "regimes-react-cold-tuned-ablations-s12",
)

#: issue 57's levels (benchmarks/bench_multistep.yaml, bench_multistep45.yaml): multi23, its two controls, multi45
MULTISTEP = (
    Comparison(
        "Level multi23 (2-3 operations)",
        "real-multi23",
        planned=8,
        smallest=0.03,
        metric="held-out answer accuracy",
        figure=True,
        finals=(("sampled/refuted_rate", "refuted-line rate"), ("sampled/length", "mean length (tokens)")),
    ),
    Comparison(
        "Control: spans shuffled within each completion",
        "real-multi23-shuffled",
        planned=4,
        smallest=0.03,
        metric="held-out answer accuracy",
        ref="bot-grpo",
        ref_folder="real-multi23",
    ),
    Comparison(
        "Control: PURE",
        "real-multi23-pure",
        planned=4,
        smallest=0.03,
        metric="held-out answer accuracy",
        cand="pure",
        ref="bot-grpo",
        ref_folder="real-multi23",
    ),
    Comparison(
        "Level multi45 (4-5 operations)",
        "real-multi45",
        planned=8,
        smallest=0.03,
        metric="held-out answer accuracy",
        figure=True,
        finals=(("sampled/refuted_rate", "refuted-line rate"), ("sampled/length", "mean length (tokens)")),
    ),
)

#: issue 58's level react-checks (benchmarks/bench_react_checks.yaml)
REACT_CHECKS = (
    Comparison(
        "Level react-checks",
        "real-react-checks",
        planned=6,
        smallest=0.01,
        metric="held-out check rate",
        figure=True,
        finals=(
            ("sampled/compile_rate", "compile"),
            ("sampled/trivial_rate", "trivial share"),
            ("sampled/checks_all_rate", "all checks passed"),
            ("sampled/length", "mean length (tokens)"),
        ),
    ),
)

#: every study, in the index's order (the real model first)
STUDIES: tuple[Study, ...] = (
    Study(
        slug="real-react",
        title="The real model: React pages",
        short="real model: React",
        task="React component requests (`react-requests`); outcome: compiles, renders, has substance",
        model=REAL,
        seeds="3 paired (BoT-GRPO, GRPO); 1 (DAPO, GSPO, PURE, centred arm)",
        statistic_label="GRPO / BoT-GRPO steps to 80% held-out compile, seed means",
        statistic=runs_ratio("real-react-tuned"),
        headline="misses the paper's 1.9x; most pages that get there are trivial",
        verdict="Misses the paper's 1.9x, and the pages that reach the target are mostly trivial (5 of 6 runs): "
        "compile as the outcome rewards unlearning React",
        figure="results/real-react-tuned/curves_react-tuned.png",
        reports=(
            "real-react-lr5e-5",
            "real-react-lr2e-4",
            "real-react-centred",
            "real-react-tuned",
            "real-react-tuned-others",
        ),
    ),
    Study(
        slug="real-math",
        title="The real model: word problems",
        short="real model: word problems",
        task="grade-school word problems (easy set, one-shot prompt); outcome: `sympy.answer`, local: `sympy.steps`",
        model=REAL,
        seeds="3 paired (BoT-GRPO, GRPO); 1 (DAPO)",
        statistic_label="GRPO / BoT-GRPO steps to 30% held-out answer accuracy, seed means",
        statistic=runs_ratio("real-math-lr2e-4"),
        headline="not resolved: GRPO first on 2 of 3 seeds; BoT-GRPO's run-ons gamed the step signal",
        verdict="Not resolved: GRPO first on 2 of 3 seeds of one-operation problems, DAPO (1 seed) fastest of all; "
        "BoT-GRPO's run-ons were verified lines said again, a hole in `sympy.steps` that a param did not close and "
        "issue 56 did",
        figure="results/real-math-lr2e-4/curves_math-lr2e-4.png",
        reports=(
            "real-math-lr5e-5",
            "real-math-lr2e-4",
            "real-math-lr2e-4-others",
            "real-math-lr2e-4-cutfix",
        ),
    ),
    Study(
        slug="real-multistep",
        title="The real model: multi-step word problems (the powered study)",
        short="real model: multi-step",
        task="word problems of 2-3 operations (`multi23` set) and 4-5 (`multi45`), one-shot; outcome: "
        "`sympy.answer`, local: `sympy.steps` with the repaired defaults",
        model=REAL,
        seeds="8 paired planned per level (BoT-GRPO, GRPO); 4 each for multi23's controls (shuffled spans, "
        "PURE)",
        statistic_label="multi23: held-out accuracy averaged over steps 5-15, BoT-GRPO - GRPO, paired by seed",
        statistic=MULTISTEP[0].statistic,
        headline="running: settings and statistic fixed before any run",
        verdict="Running: settings, seeds and the primary statistic fixed before any run (3105118); the pilot "
        "(an excluded seed) did not diverge",
        reports=(
            "real-multi23-pilot",
            "real-multi23",
            "real-multi23-shuffled",
            "real-multi23-pure",
            "real-multi45-pilot",
            "real-multi45",
        ),
        figure="results/real-multi23/paired.png",
        comparisons=MULTISTEP,
    ),
    Study(
        slug="real-react-checks",
        title="The real model: React pages that do what was asked (checks in the browser)",
        short="real model: React checks",
        task="React component requests with per-request checks run in the DOM (`jsx.checks`); outcome: a gate "
        "cascade (substance, compile, render, then the share of checks passed); local: `jsx.syntax`, `jsx.rules`",
        model=REAL,
        seeds="6 paired planned (BoT-GRPO, GRPO)",
        statistic_label="held-out check rate averaged over steps 5-30, BoT-GRPO - GRPO, paired by seed",
        statistic=REACT_CHECKS[0].statistic,
        headline="running: settings and statistic fixed before any run",
        verdict="Running: settings, seeds and the primary statistic fixed before any run (8c17db9); the checks "
        "pass 77 of 77 correct pages and fail 77 of 77 wrong twins",
        reports=("real-react-checks-pilot", "real-react-checks"),
        figure="results/real-react-checks/paired.png",
        comparisons=REACT_CHECKS,
    ),
    Study(
        slug="toy-length",
        title="The toy model: speed-up by reasoning length (math)",
        short="toy: reasoning length",
        task="step-by-step arithmetic at 2-4, 4-6 and 6-8 operands",
        model=TOY,
        seeds="3",
        statistic_label="GRPO / BoT-GRPO steps to each level's target, seed means",
        statistic=regimes_ratio(
            [("math-short", "2-4 operands"), ("math-medium", "4-6"), ("math-long", "6-8")]
        ),
        headline="pays, more on longer chains, at the same step time",
        verdict="Token credit pays, and more on longer chains (2.0x at 4-6 operands, 2.8x at 6-8), at the same "
        "step time; DAPO sits with GRPO, the token-pool ablation with BoT-GRPO",
        folders=("regimes",),
        regimes=("regimes", *TOY_REACT),
        figure="results/regimes_speedup.png",
    ),
    Study(
        slug="toy-react",
        title="The toy model: React pages of 2-6 sections",
        short="toy: React",
        task="React view pages from specs (2, 4 and 6 sections; a cold start at 4)",
        model=TOY,
        seeds="3 (some arms 1)",
        statistic_label="cold start, tuned learning rate: GRPO / BoT-GRPO steps to 10% of the gap",
        statistic=regimes_ratio([("react-cold-tuned", "4 sections, cold")], fraction=0.1),
        headline="80% never reached; BoT-GRPO first to 10% of the gap in 3 of 3 seeds",
        verdict="No method reaches 80% at 6 sections; from a cold start BoT-GRPO is first to 10% of the gap in 3 "
        "of 3 seeds; a blame-only local signal collapsed into blank pages until `uncovered: group_mean`",
        folders=TOY_REACT,
        drop_regimes=True,
        figure="results/regimes-react-cold-tuned/curves_react-cold-tuned.png",
    ),
    Study(
        slug="grid",
        title="The toy model: eight presets on short tasks (the grid)",
        short="toy: the grid",
        task="short arithmetic (2-4 operands) and single React components",
        model=TOY,
        seeds="3",
        statistic_label="math: run-mean accuracy, BoT-GRPO - GRPO; React: GRPO / BoT-GRPO steps to 80% compile",
        statistic="math +0.026 (higher in 3 of 3 seeds); React 0.89 (0.80-1.00) (from the page: these folders "
        "keep no run table)",
        headline="math: modest gain in every seed; React: no win",
        verdict="Math: modestly faster in every seed, from pooling the step rewards; React: no win",
        folders=("grid/full", "grid/react-checks", "grid/react-syntax-only"),
        assets="docs/results/grid",
    ),
)


# --- writing --------------------------------------------------------------------------------------------------
def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def summary_table(root: Path, studies: Sequence[Study] = STUDIES) -> str:
    """The index's table: one row per study, its primary statistic computed from the records under ``root``."""
    lines = [
        "| study | task | model | seeds | primary statistic | verdict |",
        "|---|---|---|---|---|---|",
    ]
    for s in studies:
        value = s.statistic if isinstance(s.statistic, str) else s.statistic(root)
        lines.append(
            f"| [{_cell(s.title)}]({s.page.relative_to(INDEX.parent).as_posix()}) | {_cell(s.task)} | "
            f"{_cell(s.model)} | {_cell(s.seeds)} | {_cell(s.statistic_label)}: **{_cell(value)}** | "
            f"{_cell(s.verdict)} |"
        )
    return "\n".join(lines) + "\n"


def figures(roots: Sequence[Path], studies: Sequence[Study] = STUDIES) -> str:
    """The studies' figures, one under another (each is a strip of panels), each titled with its study's link; a
    figure under none of ``roots`` yet (a paired level before its first pair) is left out."""
    parts = []
    for s in studies:
        if s.figure and any((r / "docs" / s.figure).is_file() for r in roots):
            link = s.page.relative_to(INDEX.parent).as_posix()
            parts.append(f"[{s.title}]({link}):\n\n![{s.title}]({s.figure})\n")
    return "\n".join(parts)


def nav(studies: Sequence[Study] = STUDIES) -> str:
    """The navigation line every study page carries: the index, then each study by its short name."""
    links = [f"[{s.short}]({s.page.relative_to(PAGES).as_posix()})" for s in studies]
    return " · ".join(["[Results index](../results.md)", *links])


def _reports(root: Path, folders: Sequence[str]) -> str:
    """The page's list of its levels' bench reports (``docs/results/<name>/summary.md``), with each one's runs."""
    lines = ["## The bench's own reports", ""]
    for name in folders:
        runs_file = root / PAGES / name / "runs.jsonl"
        rows = [json.loads(x) for x in runs_file.read_text().splitlines() if x] if runs_file.is_file() else []
        done = ", ".join(f"{r['method']} seed {r['seed']}" for r in rows if r.get("status") == "ok")
        lines.append(f"- [`{name}`]({name}/summary.md): {done or 'no finished run yet'}")
    return "\n".join(lines) + "\n"


def readme_table(root: Path, studies: Sequence[Study] = STUDIES) -> str:
    """The README's headline table: each study's model, primary statistic and verdict, linked to its page."""
    lines = [
        "| study | model | primary statistic | verdict |",
        "|---|---|---|---|",
    ]
    for s in studies:
        value = s.statistic if isinstance(s.statistic, str) else s.statistic(root)
        model = (
            "SmolLM2-135M-Instruct" if s.model == REAL else "toy, ~160K params" if s.model == TOY else s.model
        )
        lines.append(
            f"| [{_cell(s.title)}](docs/{s.page.relative_to(INDEX.parent).as_posix()}) | {_cell(model)} | "
            f"{_cell(s.statistic_label)}: **{_cell(value)}** | {_cell(s.headline or s.verdict)} |"
        )
    return "\n".join(lines) + "\n"


def with_readme_table(text: str, table: str) -> str:
    """``text`` (the README) with its block between :data:`README_START` and :data:`README_END` replaced."""
    if README_START not in text or README_END not in text:
        raise ValueError(f"{README}: no {README_START} ... {README_END} block for the results table")
    head, rest = text.split(README_START, 1)
    _, tail = rest.split(README_END, 1)
    return f"{head}{README_START}\n{table}{README_END}{tail}"


def write_pages(root: Path, out: Path | None = None, studies: Sequence[Study] = STUDIES) -> list[Path]:
    """Write every study's page and the index from the records under ``root`` into ``out`` (default: ``root``;
    another root receives copies of the records, so its pages can be written again from it)."""
    out = root if out is None else out
    written = []
    for s in studies:
        preface = (root / s.preface).read_text(encoding="utf-8")
        assets = out / (s.assets or PAGES)
        page = out / s.page
        page.parent.mkdir(parents=True, exist_ok=True)
        if NAV in preface:
            preface = preface.replace(NAV, nav(studies))
        if s.comparisons:
            if HEADLINE not in preface:
                raise ValueError(f"{s.preface}: no {HEADLINE} line where the paired figures and tables go")
            blocks = "\n".join(c.block(root, out) for c in s.comparisons)
            preface = preface.replace(HEADLINE, blocks.rstrip("\n"))
        if s.reports:
            preface = preface.rstrip("\n") + "\n\n" + _reports(root, s.reports)
        write_doc(
            [root / PAGES / f for f in s.folders],
            page,
            preface=preface,
            regimes=out / PAGES / "regimes.jsonl" if s.regimes else None,
            assets=assets,
            regime_dirs=[root / PAGES / f for f in s.regimes] if s.regimes else None,
            drop_regimes=s.drop_regimes or bool(s.regimes),
        )
        written.append(page)
    index = (root / PREFACES / "index.md").read_text(encoding="utf-8")
    if MARK not in index:
        raise ValueError(f"{PREFACES / 'index.md'}: no {MARK} line where the summary table goes")
    body = summary_table(root, studies) + "\n" + figures((root, out), studies)
    (out / INDEX).write_text(index.replace(MARK, body.rstrip("\n")), encoding="utf-8")
    if (root / README).is_file() and README_START in (root / README).read_text(encoding="utf-8"):
        readme = with_readme_table((root / README).read_text(encoding="utf-8"), readme_table(root, studies))
        (out / README).write_text(readme, encoding="utf-8")
        written.append(out / README)
    return [out / INDEX, *written]


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m botgrpo_bench.results_pages [--root DIR]``: write docs/results.md, every study page and the
    README's results table."""
    import argparse

    parser = argparse.ArgumentParser(description="write docs/results.md and the study pages from the records")
    parser.add_argument("--root", type=Path, default=Path("."), help="the repository root (default: here)")
    args = parser.parse_args(argv)
    for path in write_pages(args.root):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
