"""The priority semaphore: order, bound, cancellation safety."""

from __future__ import annotations

import asyncio

import pytest

from kgrag.llm.limiter import Limits, PriorityLimiter


async def test_never_more_than_limit_in_use() -> None:
    limiter = PriorityLimiter(3)
    active = peak = 0

    async def work() -> None:
        nonlocal active, peak
        async with limiter.slot():
            active += 1
            peak = max(peak, active)
            await asyncio.sleep(0.01)
            active -= 1

    await asyncio.gather(*(work() for _ in range(12)))
    assert peak == 3 and limiter.max_in_use == 3 and limiter.in_use == 0


async def test_lower_priority_number_first_then_fifo() -> None:
    limiter = PriorityLimiter(1)
    await limiter.acquire()
    order: list[str] = []

    async def wait(name: str, priority: int) -> None:
        async with limiter.slot(priority):
            order.append(name)

    tasks = []
    for name, priority in [("x1", 10), ("k1", 5), ("x2", 10), ("s1", 8), ("k2", 5)]:
        tasks.append(asyncio.create_task(wait(name, priority)))
        await asyncio.sleep(0)  # queue them in this order
    assert limiter.waiting == 5
    limiter.release()
    await asyncio.gather(*tasks)
    assert order == ["k1", "k2", "s1", "x1", "x2"]


async def test_cancelled_waiter_is_skipped() -> None:
    limiter = PriorityLimiter(1)
    await limiter.acquire()
    doomed = asyncio.create_task(limiter.acquire(1))
    survivor = asyncio.create_task(limiter.acquire(5))
    await asyncio.sleep(0)
    doomed.cancel()
    await asyncio.sleep(0)
    limiter.release()
    await asyncio.wait_for(survivor, 1)
    assert limiter.in_use == 1
    limiter.release()
    assert limiter.in_use == 0


async def test_slot_granted_then_cancelled_is_passed_on() -> None:
    limiter = PriorityLimiter(1)
    await limiter.acquire()
    first = asyncio.create_task(limiter.acquire(1))
    second = asyncio.create_task(limiter.acquire(2))
    await asyncio.sleep(0)
    limiter.release()  # grants the slot to `first`...
    first.cancel()  # ...which is cancelled before it runs
    await asyncio.wait_for(second, 1)
    assert first.cancelled() and limiter.in_use == 1


async def test_slot_released_when_the_body_raises() -> None:
    limiter = PriorityLimiter(1)
    with pytest.raises(ValueError):
        async with limiter.slot():
            raise ValueError("boom")
    assert limiter.in_use == 0


def test_extra_release_is_an_error() -> None:
    with pytest.raises(RuntimeError):
        PriorityLimiter(1).release()


def test_limits_are_fresh_unless_passed_on() -> None:
    a, b = Limits(chat=2, embed=3), Limits(chat=5)
    assert (a.chat.limit, a.embed.limit, b.chat.limit) == (2, 3, 5)
    assert a.chat is not b.chat and a.chat is not a.embed
    assert Limits(chat=a.chat).chat is a.chat
