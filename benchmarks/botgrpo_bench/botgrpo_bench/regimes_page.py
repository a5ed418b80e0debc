"""The regime section of a results page and its speed-up plot, from a profile that
:func:`botgrpo_bench.regimes.speedup_profile` computed: a headline table (one row per level), the
target-rule check, whether each target was committed before its runs, then per level its speed-up profile
table (:func:`render_regime_section`); the speed-up reference / candidate against level
(:func:`plot_speedup`). Nothing here computes a ratio: it only writes what the profile holds.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from botgrpo_bench.aggregate import fmt
from botgrpo_bench.regimes import CLAIM, level_index
from botgrpo_bench.target_provenance import provenance_lines


# --- the section -----------------------------------------------------------------------------------------------
def describe_params(params: dict[str, Any]) -> str:
    """A level's length from its task params: ``min_X``/``max_X`` pairs (``2-4 operands``) and keys that
    name a length (``sections: [2, 3]`` -> ``2-3 sections``; chain, steps, lines); ``""`` when there is
    none."""
    parts = []
    for key, lo in params.items():
        if key.startswith("min_") and f"max_{key[4:]}" in params:
            hi = params[f"max_{key[4:]}"]
            name = key[4:].replace("_", " ")
            parts.append(f"{lo}-{hi} {name}" if lo != hi else f"{lo} {name}")
        elif not key.startswith(("min_", "max_")) and any(
            w in key for w in ("section", "chain", "steps", "lines", "length")
        ):
            parts.append(_length(key.replace("_", " "), params[key]))
    return ", ".join(parts)


def _length(name: str, value: Any) -> str:
    """``sections: [2, 3]`` -> ``2-3 sections``, ``[1, 1]`` -> ``1 section``, ``steps: 4`` -> ``4 steps``."""
    if isinstance(value, (list, tuple)) and len(value) == 2:
        lo, hi = value
        value = lo if lo == hi else f"{lo}-{hi}"
    if isinstance(value, (list, tuple)):
        value = ", ".join(map(str, value))
    return f"{value} {name[:-1] if value == 1 and name.endswith('s') else name}"


def _steps_cell(cmp: dict[str, Any], method: str) -> str:
    """``mean (min-max)`` over the seeds that reached, with ``k/n`` when not all did."""
    n, k = cmp["runs"].get(method, 0), cmp["reached"].get(method, 0)
    if not n:
        return "-"
    if not k:
        return f"not reached (0/{n})"
    cell = fmt(cmp["mean_steps"][method], integer=True)
    return cell if k == n else f"{cell} [{k}/{n}]"


def _ratio_cell(cmp: dict[str, Any]) -> str:
    """The ratio of seed-mean steps with its per-seed range, or the per-seed ratios with their count."""
    per = cmp["ratio_per_seed"]
    if cmp["ratio"] is not None:
        spread = f" (per seed {per[1]:.2f}-{per[2]:.2f})" if per and per[3] > 1 and per[1] != per[2] else ""
        return f"**{cmp['ratio']:.2f}**{spread}"
    bound = cmp.get("ratio_at_least")
    at_least = f"; >= {bound:.2f} with the misses at the run's length" if bound is not None else ""
    if per is not None:
        lo_hi = f" ({per[1]:.2f}-{per[2]:.2f})" if per[3] > 1 and per[1] != per[2] else ""
        return f"n/a; per seed {per[0]:.2f}{lo_hi} ({per[3]} of {cmp['paired']} seeds){at_least}"
    return f"n/a{at_least}"


def _censoring(cmp: dict[str, Any], reference: str, candidate: str) -> str:
    notes = []
    if cmp["candidate_only"]:
        notes.append(f"{cmp['candidate_only']} seed(s) only {candidate} reached")
    if cmp["reference_only"]:
        notes.append(f"{cmp['reference_only']} seed(s) only {reference} reached")
    return "; ".join(notes)


def render_regime_section(
    profile: dict[str, Any],
    *,
    plot: str | None = None,
    curves: dict[str, str] | None = None,
    heading: str = "##",
    title: str = "Regimes: speed-up by reasoning length",
) -> str:
    """The markdown regime section: a headline table (one row per level), the target-rule check, whether
    each target was committed before its runs, then per level its speed-up profile table; ``plot`` is the
    speed-up plot's path, ``curves`` maps a level's ``bench_task`` to its curves plot's path, ``heading`` is
    the section's heading marks."""
    ref, cand = profile["reference"], profile["candidate"]
    levels = profile["levels"]
    lines = [f"{heading} {title}", ""]
    if not levels:
        return "\n".join([*lines, "No levelled runs.", ""])
    lines += [
        f"Each task comes at three reasoning lengths (levels). Ratios are {ref} steps / {cand} steps to "
        "first reach a success level (higher: the candidate is faster); the run mean is the success "
        "averaged over every evaluation after step 0, a target-free summary, and its difference is paired "
        "by seed. Steps are counted at the evaluation points, so the evaluation interval is the resolution.",
        "",
        f"| task | level | length | initial | target | steps to target {ref} | steps to target {cand} | "
        f"ratio {ref} / {cand} | run mean {cand} - {ref} (per seed) | step time {cand} / {ref} |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for lv in levels:
        t = lv["at_target"]
        d = lv["run_mean_diff"]
        if d["stat"] is not None:
            mean, lo, hi, n = d["stat"]
            spread = f"{lo:+.3f}..{hi:+.3f}" if n > 1 else "1 seed"
            diff = f"{mean:+.3f} ({spread}; higher in {d['positive']}/{n})"
        else:
            diff = "n/a"
        st = lv["step_time_ratio"]["median"]
        lines.append(
            "| "
            + " | ".join(
                [
                    lv["domain"],
                    lv["level"],
                    describe_params(lv["task_params"]) or "-",
                    _num(lv["initial"]),
                    f"{lv['target']:g}",
                    _steps_cell(t, ref),
                    _steps_cell(t, cand),
                    _ratio_cell(t),
                    diff,
                    f"{st:.2f}" if st is not None else "n/a",
                ]
            )
            + " |"
        )
    lines += [
        "",
        "Steps: mean (min-max) over the seeds that reached the level; `[k/n]` when only k of n seeds did "
        "(the others are censored at the run's length and left out). The ratio is of the seed-mean steps and "
        "is given only when both methods reached in every seed; otherwise the per-seed ratios of the seeds "
        "where both reached are shown, with their count, and, when the candidate reached in every seed, a "
        "lower bound (`>=`) with each of the reference's misses counted at its run's length. Step time: "
        "median over seeds of the per-seed ratio of median step times.",
        "",
    ]
    censored = [
        f"{lv['domain']} {lv['level']}: {note}"
        for lv in levels
        if (note := _censoring(lv["at_target"], ref, cand))
    ]
    if censored:
        lines += ["Censored at the target: " + "; ".join(censored) + ".", ""]
    lines += _rule_lines(levels)
    lines += provenance_lines(levels)
    if plot:
        lines += [f"![speed-up {ref} / {cand} vs level]({plot})", ""]
    for lv in levels:
        lines += _level_lines(lv, profile, heading + "#", (curves or {}).get(lv["bench_task"]))
    return "\n".join(lines)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _num(x: float | None, digits: int = 3) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def _rule_lines(levels: Sequence[dict[str, Any]]) -> list[str]:
    """The target-rule check: the levels whose file target differs from the rule applied to the warm start."""
    checked = [lv for lv in levels if lv["rule"] is not None and lv["rule"]["matches"] is not None]
    if not checked:
        return []
    bad = [lv for lv in checked if not lv["rule"]["matches"]]
    if not bad:
        return [
            f"Target rule: every level's target ({len(checked)} checked) equals the rule applied to its warm "
            "start's measured success.",
            "",
        ]
    items = [
        f"{lv['domain']} {lv['level']}: file target {lv['target']:g}, warm success "
        f"{lv['rule']['warm_success']:.3f} gives {lv['rule']['rule_target']:g}"
        for lv in bad
    ]
    return [f"Target rule mismatches ({len(bad)} of {len(checked)} levels): " + "; ".join(items) + ".", ""]


def _level_lines(lv: dict[str, Any], profile: dict[str, Any], heading: str, curves: str | None) -> list[str]:
    """One level's profile table, its initial success, no-spread shares and curves plot."""
    ref, cand = profile["reference"], profile["candidate"]
    methods = lv["methods"]
    length = describe_params(lv["task_params"])
    lines = [
        f"{heading} {lv['domain']} {lv['level']} (`{lv['bench_task']}`{', ' + length if length else ''})",
        "",
    ]
    lo_hi = lv["initial_range"]
    if lv["initial"] is None:
        lines += ["No step-0 evaluation: no profile.", ""]
    else:
        same = lo_hi is not None and lo_hi[0] == lo_hi[1]
        lines.append(
            f"Initial success {lv['initial']:.3f} (step-0 evaluation"
            + (
                ", the same for every run: shared warm start and evaluation seed)."
                if same
                else f"; the runs differ, {lo_hi[0]:.3f}-{lo_hi[1]:.3f}, so the mean is used)."  # type: ignore[index]
            )
            + f" {_count(len(lv['seeds']), 'seed')}, {lv['steps']} steps, evaluation every "
            f"{lv['eval_every']} steps."
        )
        lines.append("")
        header = ["share of the gap", "threshold"] + [f"steps {m}" for m in methods]
        header += [f"ratio {ref} / {cand}", f"seeds reached ({ref}, {cand})"]
        lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        for row in lv["profile"]:
            cells = [f"{row['fraction']:g}", f"{row['threshold']:.3f}"]
            cells += [_steps_cell(row, m) for m in methods]
            cells += [
                _ratio_cell(row),
                f"{row['reached'].get(ref, 0)}/{row['runs'].get(ref, 0)}, "
                f"{row['reached'].get(cand, 0)}/{row['runs'].get(cand, 0)}",
            ]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    means = ", ".join(f"{m} {fmt(lv['run_mean'][m])}" for m in methods)
    spread = ", ".join(f"{m} {fmt(lv['no_spread'][m], 2)}" for m in methods)
    lines += [
        f"Run mean: {means}. Groups without an outcome spread (share, mean over training): {spread}.",
        "",
    ]
    if curves:
        lines += [f"![{lv['bench_task']}: success vs step]({curves})", ""]
    return lines


# --- the plot --------------------------------------------------------------------------------------------------
def plot_speedup(profile: dict[str, Any], path: str | Path, *, fraction: float | None = None) -> Path:
    """Speed-up reference / candidate vs level (short, medium, long) per domain: the ratio of seed-mean
    steps (line; where a method missed in a seed, the mean of the per-seed ratios, hollow marker) and each
    seed's ratio (dots), at the file's target or, with ``fraction``, at that profile fraction; dashed lines
    at 1.0 and at the published 1.9. matplotlib, Agg backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = Path(path)
    ref, cand = profile["reference"], profile["candidate"]
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    domains = list(dict.fromkeys(lv["domain"] for lv in profile["levels"]))
    colors = dict(zip(domains, plt.get_cmap("tab10").colors, strict=False))
    # one slot per level that has runs (a bench of one or two levels draws no empty slot)
    levels = sorted({lv["level"] for lv in profile["levels"]}, key=level_index)
    for i, domain in enumerate(domains):
        offset = (i - (len(domains) - 1) / 2) * 0.08
        xs, ys = [], []
        for lv in (lv for lv in profile["levels"] if lv["domain"] == domain):
            cmp = _at(lv, fraction)
            if cmp is None:
                continue
            x = levels.index(lv["level"]) + offset
            seeds = list(cmp["per_seed"].values())
            jitter = [0.025 * (j - (len(seeds) - 1) / 2) for j in range(len(seeds))]  # ties stay visible
            ax.scatter([x + j for j in jitter], seeds, s=14, color=colors[domain], alpha=0.5, linewidths=0)
            if cmp["ratio"] is not None:
                xs.append(x)
                ys.append(cmp["ratio"])
            elif cmp["ratio_per_seed"] is not None:
                ax.scatter(
                    [x], [cmp["ratio_per_seed"][0]], s=40, facecolors="none", edgecolors=colors[domain]
                )
        ax.plot(xs, ys, "o-", color=colors[domain], label=domain)
    ax.axhline(1.0, color="black", linestyle="--", linewidth=0.8, label="1.0 (no speed-up)")
    ax.axhline(CLAIM, color="tab:red", linestyle="--", linewidth=0.8, label=f"{CLAIM:g} (published claim)")
    ax.set_xticks(range(len(levels)), levels)
    ax.set_xlim(-0.5, len(levels) - 0.5)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("reasoning length (level)")
    at = "each level's target" if fraction is None else f"initial + {fraction:g} of the gap to 1.0"
    ax.set_ylabel(f"steps {ref} / steps {cand}")
    seeds = max((len(lv["seeds"]) for lv in profile["levels"]), default=0)
    what = "line: seed means; dots: seeds" if seeds > 1 else "one seed"
    ax.set_title(f"speed-up at {at} ({what})", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _at(lv: dict[str, Any], fraction: float | None) -> dict[str, Any] | None:
    """A level's comparison at the file's target (``fraction`` None) or at a profile fraction."""
    if fraction is None:
        return lv["at_target"]
    return next((row for row in lv["profile"] if abs(row["fraction"] - fraction) < 1e-9), None)
