"""retrieval_eval._threads.in_order: work on threads, results in order, memory bounded, errors in place."""

from __future__ import annotations

import threading
import time

import pytest

from retrieval_eval._threads import in_order, usable_cpus


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_results_come_in_the_order_of_the_items(threads: int) -> None:
    def slow_square(i: int, pause: float) -> int:
        time.sleep(pause)
        return i * i

    items = [(i, 0.004 * ((7 * i) % 5)) for i in range(20)]  # later items often finish first
    assert list(in_order(slow_square, items, threads)) == [i * i for i in range(20)]


def test_one_thread_runs_on_the_calling_thread() -> None:
    seen = list(in_order(lambda: threading.get_ident(), [(), ()], threads=1))
    assert seen == [threading.get_ident()] * 2


def test_several_threads_run_side_by_side_but_never_far_ahead() -> None:
    running, most, started = 0, 0, []
    lock = threading.Lock()

    def work(i: int) -> int:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
            started.append(i)
        time.sleep(0.01)
        with lock:
            running -= 1
        return i

    results = in_order(work, [(i,) for i in range(12)], threads=2)
    assert next(results) == 0
    time.sleep(0.05)  # the caller holds back: no more than 2 running and 1 queued beyond what it took
    assert len(started) <= 4
    assert list(results) == list(range(1, 12)) and most == 2


def test_an_error_is_raised_at_its_item_and_later_items_are_dropped() -> None:
    started = []

    def work(i: int) -> int:
        started.append(i)
        if i == 3:
            raise ValueError("item 3")
        time.sleep(0.002)
        return i

    results = in_order(work, [(i,) for i in range(50)], threads=2)
    assert [next(results) for _ in range(3)] == [0, 1, 2]
    with pytest.raises(ValueError, match="item 3"):
        next(results)
    assert max(started) < 10


def test_usable_cpus_follows_the_affinity() -> None:
    import os

    if hasattr(os, "sched_getaffinity"):
        assert usable_cpus() == len(os.sched_getaffinity(0))
    assert usable_cpus() >= 1
