"""A circuit breaker for the HTTP judge: stop calling a server that does not answer, for a while.

``failures`` attempts in a row without an answer (a timeout or a failed connection) *open* the circuit:
for ``cooldown_s`` every attempt is refused at once (its sample fails fast instead of waiting out
``timeout_s`` and its retries). After the cooldown one attempt goes through as a probe while the others
wait for its outcome: an answer closes the circuit, another failure opens it for a new cooldown. Any
HTTP answer counts as an answer (a 500 says the server is up); only silence and dead connections count
against it.

It lives on the backend's event loop (one thread): :meth:`admit` is a coroutine, the rest are plain calls.
Every admitted attempt ends with exactly one of :meth:`answered`, :meth:`failed` or :meth:`abandoned`,
given the :class:`Admission` it got.
"""

from __future__ import annotations

import asyncio
import enum
import time
from collections.abc import Callable


class Admission(enum.Enum):
    """What :meth:`CircuitBreaker.admit` decided for one attempt."""

    ADMITTED = "admitted"  # the circuit is closed
    PROBE = "probe"  # the one attempt that tests a server after the cooldown
    REFUSED = "refused"  # the circuit is open: fail fast


class CircuitBreaker:
    """Consecutive-failure breaker with a cooldown and a single half-open probe.

    :param failures: failed attempts in a row that open the circuit; ``0`` disables the breaker.
    :param cooldown_s: how long an open circuit refuses attempts.
    :param clock: monotonic seconds (tests pass their own).
    """

    def __init__(self, failures: int, cooldown_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.threshold = failures
        self.cooldown_s = cooldown_s
        self._clock = clock
        self._streak = 0
        self._open_until: float | None = None  # None: closed
        self._probe: asyncio.Event | None = None  # set when the probe in flight ends
        self.times_opened = 0

    @property
    def is_open(self) -> bool:
        """Whether attempts are refused now (open, cooldown not over)."""
        return self._open_until is not None and self._clock() < self._open_until

    async def admit(self) -> Admission:
        """Whether an attempt may go to the server now (waits while a probe decides)."""
        while True:
            if self.threshold == 0 or self._open_until is None:
                return Admission.ADMITTED
            if self._clock() < self._open_until:
                return Admission.REFUSED
            if self._probe is None:  # cooldown over: this attempt is the probe
                self._probe = asyncio.Event()
                return Admission.PROBE
            await self._probe.wait()

    def answered(self, admission: Admission) -> None:
        """The server answered (any HTTP status): the circuit closes."""
        self._streak = 0
        self._open_until = None
        self._end_probe(admission)

    def failed(self, admission: Admission) -> None:
        """No answer (timeout, connection failure): opens the circuit after ``failures`` in a row.

        A failed probe opens it again; a late failure of an attempt admitted before the circuit
        opened changes nothing while it is open.
        """
        self._streak += 1
        probe = admission is Admission.PROBE
        closed = self._open_until is None
        if self.threshold and (probe or (closed and self._streak >= self.threshold)):
            self.times_opened += 1
            self._open_until = self._clock() + self.cooldown_s
        self._end_probe(admission)

    def abandoned(self, admission: Admission) -> None:
        """The attempt was cancelled (batch deadline): no evidence either way; a later attempt probes."""
        self._end_probe(admission)

    def _end_probe(self, admission: Admission) -> None:
        if admission is Admission.PROBE and self._probe is not None:
            probe, self._probe = self._probe, None
            probe.set()
