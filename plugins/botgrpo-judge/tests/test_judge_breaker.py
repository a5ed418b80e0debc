"""The HTTP judge's circuit breaker, step by step on a clock the test moves (no waiting)."""

from __future__ import annotations

import asyncio

from botgrpo_judge.backends.breaker import Admission, CircuitBreaker


class Clock:
    """Monotonic seconds that move only when the test says so."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_opens_after_failures_in_a_row_and_refuses_until_the_cooldown() -> None:
    clock = Clock()
    breaker = CircuitBreaker(3, 10.0, clock)

    async def scenario() -> None:
        for _ in range(2):
            breaker.failed(await breaker.admit())
        breaker.answered(await breaker.admit())  # an answer resets the streak
        for _ in range(2):
            breaker.failed(await breaker.admit())
        assert await breaker.admit() is Admission.ADMITTED and not breaker.is_open
        breaker.failed(Admission.ADMITTED)  # the third in a row
        assert breaker.is_open and breaker.times_opened == 1
        clock.now += 9.9
        assert await breaker.admit() is Admission.REFUSED
        breaker.failed(Admission.ADMITTED)  # a late failure of an earlier attempt: no new cooldown
        clock.now += 0.2
        assert await breaker.admit() is Admission.PROBE
        assert breaker.times_opened == 1

    asyncio.run(scenario())


def test_other_attempts_wait_for_the_probe() -> None:
    clock = Clock()
    breaker = CircuitBreaker(1, 5.0, clock)

    async def scenario(probe_answers: bool) -> tuple[Admission, Admission]:
        breaker.failed(await breaker.admit())
        clock.now += 5.0
        probe = await breaker.admit()
        waiter = asyncio.ensure_future(breaker.admit())
        await asyncio.sleep(0)
        assert probe is Admission.PROBE and not waiter.done()  # held while the probe decides
        if probe_answers:
            breaker.answered(probe)
        else:
            breaker.failed(probe)
        return probe, await waiter

    assert asyncio.run(scenario(True))[1] is Admission.ADMITTED  # closed again
    assert breaker.times_opened == 1
    clock.now += 100.0
    breaker = CircuitBreaker(1, 5.0, clock)
    assert asyncio.run(scenario(False))[1] is Admission.REFUSED  # reopened for a new cooldown
    assert breaker.times_opened == 2 and breaker.is_open


def test_an_abandoned_probe_hands_over_to_the_next_attempt() -> None:
    clock = Clock()
    breaker = CircuitBreaker(1, 1.0, clock)

    async def scenario() -> Admission:
        breaker.failed(await breaker.admit())
        clock.now += 1.0
        probe = await breaker.admit()
        waiter = asyncio.ensure_future(breaker.admit())
        await asyncio.sleep(0)
        breaker.abandoned(probe)  # cancelled by the batch deadline: no evidence either way
        return await waiter

    assert asyncio.run(scenario()) is Admission.PROBE


def test_zero_failures_turns_it_off() -> None:
    breaker = CircuitBreaker(0, 1.0, Clock())

    async def scenario() -> None:
        for _ in range(50):
            breaker.failed(await breaker.admit())
        assert await breaker.admit() is Admission.ADMITTED

    asyncio.run(scenario())
    assert breaker.times_opened == 0 and not breaker.is_open
