"""A run that says when it is being gamed: per-step ``gaming/*`` metrics and warnings (``training.gaming_monitor``).

A reward a policy can game is gamed quietly: round 4's SmolLM2 runs ran to the length cap repeating a paid line,
or shrank to pages of ~20 tokens, while the reward curve rose (docs/results.md). :func:`gaming_metrics` measures,
per generation batch, what such runs change (this process's rollouts):

- ``gaming/length_mean``, ``gaming/cut_frac``: mean completion length (tokens) and the share the cap cut;
- ``gaming/repeat_frac``: the share of rollouts that say a line twice (a line of >= 8 characters or with an
  ``=``, compared without spaces and case) or hold an n-gram run (the same 1-4 words 4 times in a row);
- ``gaming/<signal>/uncovered_frac``: per local signal, the share of tokens none of its spans covers;
- ``gaming/<signal>/against_outcome_frac``: per local signal, among groups whose outcome has spread, the share
  where the rollouts of the best outcome have a lower mean of that signal than the rest: the local signal
  pulls against the outcome there; ``gaming/<signal>/outcome_spread_groups``: how many groups that share is of;
- the monitor also reads ``reward/outcome_mean - success_rate`` where the task defines success: an outcome
  reward that rises while the task's success does not pays a shortcut.

:class:`GamingMonitor` reads the logged metrics step by step (live in the trainer, or replayed from a run's
``metrics.jsonl``: :func:`replay`) and warns once per cause when a rule (:data:`RULES`) holds for
``patience`` steps in a row, naming the likely cause and the setting that usually fixes it. Thresholds compare a
step with the mean of the run's first ``baseline_steps`` steps. "Local against outcome" is a test instead: a step
has few groups with outcome spread (often 1-4), and a signal that knows nothing of the outcome puts the best
rollouts below the rest in half of them, so a share of 0.5 three steps running is what chance gives
(docs/gaming.md has the rates). The monitor pools the groups of the last ``patience`` steps, and the rule holds
when at least :data:`MIN_POOLED_GROUPS` of them give a fair coin's one-sided binomial p below :data:`AGAINST_P`.
It warns, never stops, unless ``training.gaming_monitor: stop`` (then the run ends at that step boundary, its
outputs written).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from botgrpo_core.rewards.mixture import MixtureOutput

#: Steps in a row a rule must hold before it warns; steps whose mean is the baseline.
PATIENCE = 3
BASELINE_STEPS = 3
#: A line shorter than this (characters, spaces removed) and without "=" is not counted as a repeat ("}", "</div>").
MIN_REPEAT_LINE = 8
_WORD = re.compile(r"\S+")
#: "Local against outcome": the fewest pooled groups with outcome spread it judges, and its one-sided p.
MIN_POOLED_GROUPS = 8
AGAINST_P = 0.01


# --- per-batch metrics -------------------------------------------------------------------------------------------
def repeats(text: str) -> bool:
    """Whether ``text`` says a line twice or runs one 4-gram 4 times in a row (linear in the text)."""
    seen: set[str] = set()
    for line in text.splitlines():
        key = "".join(line.split()).lower()
        if len(key) < MIN_REPEAT_LINE and "=" not in key:  # a short claim (3 + 4 = 7) still counts
            continue
        if key in seen:
            return True
        seen.add(key)
    words = _WORD.findall(text.lower())
    for n in (1, 2, 3, 4):  # a run of one n-gram repeated 4 times: a_1..a_n a_1..a_n ...
        run = 0
        for i in range(n, len(words)):
            run = run + 1 if words[i] == words[i - n] else 0
            if run >= 3 * n:
                return True
    return False


def gaming_metrics(
    completions: Sequence[str], truncated: Sequence[bool], mix: MixtureOutput, group_size: int
) -> dict[str, float]:
    """``gaming/*`` of one generation batch (module docstring); ``mix`` before the uncovered fill."""
    import torch

    mask = mix.mask.bool()  # (B, T)
    B = mask.shape[0]
    if B == 0:
        return {}
    lengths = mask.sum(dim=1).double()  # (B,)
    out = {
        "gaming/length_mean": float(lengths.mean()),
        "gaming/cut_frac": sum(bool(c) for c in truncated) / B,
        "gaming/repeat_frac": sum(repeats(t) for t in completions) / B,
    }
    outcome = mix.outcome.double()  # (B,)
    groups = B // group_size if group_size > 0 else 0
    for name, signal in mix.signals.items():
        if signal.kind != "local":
            continue
        values = signal.values.double()  # (B, T)
        covered = signal.covered if signal.covered is not None else values != 0
        total = float(mask.sum())
        out[f"gaming/{name}/uncovered_frac"] = float((mask & ~covered).sum()) / total if total else 0.0
        local_mean = (values * mask).sum(dim=1) / lengths.clamp(min=1)  # (B,)
        against = spread = 0
        for g in range(groups):
            rows = slice(g * group_size, (g + 1) * group_size)
            o, s = outcome[rows], local_mean[rows]
            if not bool(torch.isfinite(o).all()) or float(o.max() - o.min()) <= 1e-9:
                continue
            spread += 1
            best = o >= o.max() - 1e-9
            if float(s[best].mean()) < float(s[~best].mean()) - 1e-9:
                against += 1
        out[f"gaming/{name}/against_outcome_frac"] = against / spread if spread else 0.0
        out[f"gaming/{name}/outcome_spread_groups"] = float(spread)
    return out


def coin_p(hits: int, n: int) -> float:
    """One-sided binomial p of at least ``hits`` heads in ``n`` tosses of a fair coin."""
    return sum(math.comb(n, k) for k in range(hits, n + 1)) / 2**n


# --- rules and the monitor -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Rule:
    """A sign of gaming: ``holds(value, baseline)`` on one metric (a ``*`` stands for a signal's name)."""

    cause: str
    metric: str
    holds: Callable[[float, float | None], bool]
    says: str  # what happened, with {value}, {baseline}, {signal}
    fix: str  # the setting that usually fixes it
    fallback: str | None = None  # an older metric with the same meaning (replaying earlier runs)
    pooled: bool = False  # the metric already pools the last ``patience`` steps: fire the first step it holds


def _rel(floor: float, rise: float) -> Callable[[float, float | None], bool]:
    return lambda v, b: v >= max(floor, (b or 0.0) + rise)


RULES: tuple[Rule, ...] = (
    Rule(
        "runs to the cap",
        "gaming/cut_frac",
        _rel(0.30, 0.25),
        "{value:.0%} of rollouts are cut by the length cap (first steps: {baseline:.0%})",
        "a signal pays for length or for repeating a paid line: run `botgrpo probe` on this run file; give a cut "
        "completion no outcome credit, keep sympy.steps' repeat and truncated_cut defaults, or set "
        "training.mask_truncated_completions: true",
        fallback="completions/clipped_ratio",
    ),
    Rule(
        "shrinks",
        "gaming/length_mean",
        lambda v, b: b is not None and b > 0 and v < 0.25 * b,
        "rollouts shrank to {value:.0f} tokens, under a quarter of the first steps' {baseline:.0f}",
        "saying less pays: a local signal that only takes reward away leaves short rollouts less blame; keep its "
        "uncovered: group_mean (the default) and make the outcome pay only for substance (React: jsx.checks; "
        "math: a stated answer); run `botgrpo probe`",
        fallback="completions/mean_length",
    ),
    Rule(
        "repeats",
        "gaming/repeat_frac",
        _rel(0.30, 0.25),
        "{value:.0%} of rollouts say a line twice or loop (first steps: {baseline:.0%})",
        "a repeated claim is paid again: check the local signal credits a claim once (sympy.steps does by "
        "default); run `botgrpo probe`",
    ),
    Rule(
        "unscored text",
        "gaming/*/uncovered_frac",
        lambda v, b: b is not None and v >= max(0.5, b + 0.3),
        "{value:.0%} of tokens are outside every span of {signal} (first steps: {baseline:.0%})",
        "the policy writes what {signal} does not judge: set uncovered: group_mean on it (the default)",
    ),
    Rule(
        "local against outcome",
        "gaming/*/against_outcome_p",  # derived by the monitor from the two metrics below (module docstring)
        lambda v, b: v < AGAINST_P,
        "{signal} ranked the best-outcome rollouts below the rest in {against} of {groups} groups with outcome "
        "spread over the last {steps} steps (a coin does that with p = {value:.4f})",
        "{signal} pays what the outcome does not: measure its precision on the model's text (`botgrpo score`), "
        "lower rewards.beta or its weight",
        pooled=True,
    ),
    Rule(
        "reward without success",
        "gaming/outcome_over_success",
        lambda v, b: v >= max(0.4, (b or 0.0) + 0.35),
        "the outcome reward is {value:.2f} above the task's success rate (first steps: {baseline:.2f}): the reward "
        "pays for something that does not succeed",
        "the outcome pays a shortcut (round 4's React outcome paid a trivial page 0.75): gate it on what success "
        "needs (React: bench.react_cascade), and run `botgrpo probe` with the task's own gamed variants",
    ),
    Rule(
        "entropy collapse",
        "entropy",
        lambda v, b: b is not None and b > 0 and v < 0.1 * b,
        "policy entropy fell to {value:.3f}, a tenth of the first steps' {baseline:.3f}",
        "the policy writes one answer: lower the learning rate, or check with `botgrpo probe` that a narrow "
        "output is not what is paid",
    ),
)


@dataclass
class GamingWarning:
    """One warning: the step it fired at, its cause and its line."""

    step: int
    cause: str
    metric: str
    message: str


@dataclass
class GamingMonitor:
    """Reads each training step's logged metrics; warns once per cause (and signal) after ``patience`` steps."""

    patience: int = PATIENCE
    baseline_steps: int = BASELINE_STEPS
    log: Callable[[str], None] | None = None
    rules: Sequence[Rule] = RULES
    warnings: list[GamingWarning] = field(default_factory=list)
    _history: dict[str, list[float]] = field(default_factory=dict)
    _streak: dict[str, int] = field(default_factory=dict)
    _fired: set[str] = field(default_factory=set)
    _last_step: int = -1
    #: ``gaming/<signal>`` -> ``(against, groups)`` of each of the last ``patience`` steps
    _against: dict[str, list[tuple[int, int]]] = field(default_factory=dict)

    def _pool_against(self, logs: Mapping[str, Any]) -> dict[str, float]:
        """``gaming/<signal>/against_outcome_p`` of the last ``patience`` steps' pooled groups, where they number
        at least :data:`MIN_POOLED_GROUPS` (runs logged before ``outcome_spread_groups`` existed get none)."""
        derived = {}
        for key, share in logs.items():
            if not key.endswith("/against_outcome_frac"):
                continue
            head = key[: -len("/against_outcome_frac")]
            groups = logs.get(f"{head}/outcome_spread_groups")
            if not isinstance(share, (int, float)) or not isinstance(groups, (int, float)):
                continue
            window = self._against.setdefault(head, [])
            window.append((round(float(share) * float(groups)), round(float(groups))))
            del window[: -self.patience]
            against, n = sum(a for a, _ in window), sum(g for _, g in window)
            if n >= MIN_POOLED_GROUPS:
                derived[f"{head}/against_outcome_p"] = coin_p(against, n)
        return derived

    def _pooled_counts(self, key: str) -> dict[str, int]:
        """The counts behind a pooled ``.../against_outcome_p`` (for its warning's message); ``{}`` for others."""
        window = self._against.get(key.removesuffix("/against_outcome_p"))
        if not key.endswith("/against_outcome_p") or not window:
            return {}
        return {
            "against": sum(a for a, _ in window),
            "groups": sum(g for _, g in window),
            "steps": len(window),
        }

    def _metrics_of(self, rule: Rule, logs: Mapping[str, Any]) -> list[tuple[str, str, float]]:
        """``(key, signal, value)`` of each metric the rule reads in ``logs`` (its fallback where absent)."""
        if "*" not in rule.metric:
            for key in (rule.metric, rule.fallback):
                if key and isinstance(logs.get(key), (int, float)):
                    return [(rule.metric, "", float(logs[key]))]
            return []
        head, tail = rule.metric.split("*")
        return [
            (k, k[len(head) : -len(tail)], float(v))
            for k, v in logs.items()
            if k.startswith(head) and k.endswith(tail) and isinstance(v, (int, float))
        ]

    def observe(self, step: int, logs: Mapping[str, Any]) -> list[GamingWarning]:
        """One training step's metrics; returns (and logs) the warnings that fire at it."""
        if step <= self._last_step:
            return []
        self._last_step = step
        outcome, success = logs.get("reward/outcome_mean"), logs.get("success_rate")
        if isinstance(outcome, (int, float)) and isinstance(success, (int, float)):
            logs = {**logs, "gaming/outcome_over_success": float(outcome) - float(success)}
        logs = {**logs, **self._pool_against(logs)}
        fired = []
        for rule in self.rules:
            for key, signal, value in self._metrics_of(rule, logs):
                history = self._history.setdefault(key, [])
                history.append(value)
                if len(history) <= self.baseline_steps and not rule.pooled:
                    continue
                base = history[: self.baseline_steps]
                baseline = sum(base) / len(base) if base else None
                self._streak[key] = self._streak.get(key, 0) + 1 if rule.holds(value, baseline) else 0
                if self._streak[key] < (1 if rule.pooled else self.patience) or key in self._fired:
                    continue
                self._fired.add(key)
                says = rule.says.format(
                    value=value, baseline=baseline or 0.0, signal=signal, **self._pooled_counts(key)
                )
                fix = rule.fix.format(signal=signal)
                held = "" if rule.pooled else f", for {self.patience} steps in a row"
                message = (
                    f"warning: the reward may be gamed ({rule.cause}) at step {step}{held}: {says}. "
                    f"Likely fix: {fix} (docs/gaming.md)"
                )
                fired.append(GamingWarning(step, rule.cause, key, message))
        self.warnings.extend(fired)
        if self.log is not None:
            for w in fired:
                self.log(w.message)
        return fired


def replay(rows: Iterable[Mapping[str, Any]], **options: Any) -> list[GamingWarning]:
    """The warnings a run's logged metrics (``metrics.jsonl`` rows; ``kind: train`` ones are read) would have
    raised, in step order."""
    monitor = GamingMonitor(**options)
    for row in rows:
        if row.get("kind", "train") == "train" and isinstance(row.get("step"), int):
            monitor.observe(row["step"], row)
    return monitor.warnings
