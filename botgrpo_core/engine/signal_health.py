"""The run-level policy for a signal that keeps failing (``rewards.on_signal_failure``).

One bad sample costs that sample (``on_error``); a signal that fails on most of every batch (a dead judge
server, a plugin whose workers cannot start, a broken install) would leave the run learning from the
``on_error`` value alone while it reports success. After ``steps`` training steps in a row with a signal's
``signals/<name>/error_frac`` at or above ``threshold``, the run stops (``action: stop``, the default) with
:class:`SignalFailureError` naming the signal, its error share and the last error, or logs a warning
(``action: warn``). The fractions are the gathered batch metrics, the same on every process, so every
process of a distributed run stops at the same step.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from botgrpo_core.rewards.runner import SignalError
from botgrpo_core.signals import SampleError

if TYPE_CHECKING:
    from botgrpo_core.config.models import SignalFailurePolicy
    from botgrpo_core.rewards.mixture import MixtureOutput


class SignalFailureError(SignalError):
    """A signal failed on at least ``rewards.on_signal_failure.threshold`` of the rollouts for
    ``steps`` training steps in a row, under ``action: stop``."""


class SignalHealth:
    """Counts, per signal, the training steps in a row whose error share is at or above the threshold.

    :param policy: ``rewards.on_signal_failure``.
    :param log_fn: where ``action: warn`` writes.
    """

    def __init__(self, policy: SignalFailurePolicy, log_fn: Callable[[str], None]) -> None:
        self.policy = policy
        self.log_fn = log_fn
        self.streak: dict[str, int] = {}
        self._last_step: dict[str, int] = {}

    def observe(self, step: int, metrics: Mapping[str, float], mix: MixtureOutput) -> None:
        """One generation batch of training step ``step``: its gathered metrics and this process's mixture.

        A step counts once however many generation batches it has (gradient accumulation, dynamic
        sampling): at or above the threshold in any of them makes it a failing step.

        :raises SignalFailureError: a signal reached ``steps`` failing steps in a row, under ``action: stop``.
        """
        policy = self.policy
        for name in mix.signals:
            frac = metrics.get(f"signals/{name}/error_frac")
            if frac is None:
                continue
            if frac < policy.threshold:  # at the threshold fails: threshold 1 still acts (issue 39)
                if self._last_step.get(name) != step:
                    self.streak[name] = 0
                continue
            if self._last_step.get(name) == step:
                continue  # this step already counted
            self._last_step[name] = step
            self.streak[name] = self.streak.get(name, 0) + 1
            if self.streak[name] < policy.steps:
                continue
            message = self._message(name, frac, mix)
            if policy.action == "stop":
                raise SignalFailureError(message)
            if self.streak[name] % policy.steps == 0:  # once per `steps` failing steps, not every step
                self.log_fn(f"warning: {message}")

    def _message(self, name: str, frac: float, mix: MixtureOutput) -> str:
        outcome = mix.signals[name]
        first = next((r for r in outcome.results if isinstance(r, SampleError)), None)
        cause = (
            f"last error ({first.reason}): {str(first)[:500]}"
            if first is not None
            else "no failed sample on this process"
        )
        policy = self.policy
        return (
            f"signal {name!r} failed on {frac:.0%} of the rollouts for {self.streak[name]} training steps in a "
            f"row (rewards.on_signal_failure: threshold {policy.threshold:g}, steps {policy.steps}, action "
            f"{policy.action}); {cause}. Fix the signal (its plugin, server or workers) and resume, or set "
            "rewards.on_signal_failure.action: warn to train on without it"
        )
