"""Independent pieces of work spread over threads, their results taken in order.

NumPy releases the GIL inside its array loops, so pieces made of large array operations (a block of
queries' measures) run side by side on several CPUs.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from concurrent.futures import Future

_R = TypeVar("_R")


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity, which ``taskset`` and containers narrow)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def idle_cpus() -> int:
    """The CPUs this process may run on that nothing else wants at this moment, at least 1: the
    :func:`usable_cpus` less the threads of other processes now running or ready to run (of a
    process allowed a share of the machine's CPUs, that share of them).

    On a busy machine a second thread of ours costs more than it gives: whenever the one holding
    the GIL is preempted, the other waits for it. On 2 CPUs under a load average of about 5, the
    robust shape took 0.69 s with threads against 0.53 s on the calling thread alone, and a million
    one-document queries 0.72 against 0.57 s. So work goes to threads only on CPUs found idle
    (but for the parsing of large files, whose long loops gain from threads even then).
    """
    cpus = usable_cpus()
    if cpus < 2:
        return cpus
    elsewhere = _runnable_elsewhere()  # counted over the whole machine
    machine = os.cpu_count() or cpus
    if machine > cpus:  # a share of the machine (a cpuset, taskset): as many busy ones among ours, pro rata
        elsewhere = elsewhere * cpus // machine
    return max(1, cpus - elsewhere)


#: Linux's load figures; its 4th field is ``running/total``, the threads running or ready to run now.
_LOADAVG = "/proc/loadavg"


def _runnable_elsewhere() -> int:
    """Threads of other processes running or ready to run now, as the kernel counts them; 0 where it
    does not say. Our own threads are counted in that figure, and subtracted (all of those alive:
    an idle one of ours may be taken for another process's, never the other way round). The least
    of a few looks, a few microseconds apart: a process that runs for a moment is not a busy core."""
    try:
        looks = []
        with open(_LOADAVG, "rb", buffering=0) as loadavg:  # unbuffered: each read is a fresh look
            for _ in range(3):
                loadavg.seek(0)
                looks.append(int(loadavg.read().split()[3].split(b"/")[0]))
        running = min(looks)
    except (OSError, ValueError, IndexError):
        return 0
    import threading  # (the command line has imported it already)

    return max(0, running - threading.active_count())


def workers(rows: int | None = None) -> int:
    """Threads for independent pieces of work: none (the calling thread) on one idle CPU, else one
    per idle CPU (:func:`idle_cpus`), at most :data:`MAX_WORKERS`. With ``rows``, the rows of a pass
    cut in chunks: none under :data:`THREADED_ROWS` of them, where starting threads costs more than
    they save."""
    if rows is not None and rows < THREADED_ROWS:  # decided without reading the machine's load
        return 0
    cpus = idle_cpus()
    return 0 if cpus < 2 else min(cpus, MAX_WORKERS)


#: Rows from which :func:`workers` gives threads for a pass (NumPy's loops must be long to run side by side).
THREADED_ROWS = 1 << 21
#: The most threads :func:`workers` gives, whatever the CPU count: each piece in flight holds its
#: temporaries. A block of queries holds its per-query caches and values, some 130 MB for a block of
#: sessions of one document, so with one block per CPU the peak grew by that much per CPU (2.0 GB
#: with 8, 4.2 GB with 40, against 1.2 GB with 2).
MAX_WORKERS = 4


def in_order(function: Callable[..., _R], items: Sequence[tuple[Any, ...]], workers: int) -> Iterator[_R]:
    """``function(*item)`` for each of ``items``, in their order.

    With ``workers`` threads (at least 1) and several items, the calls run on those threads, at most
    ``workers`` results ahead of the one taken, so memory stays bounded; with 0 workers, or one item,
    they run one after the other on the calling thread. An exception is raised where its item's
    result would have been taken; the calls not started then never start.
    """
    if workers < 1 or len(items) < 2:
        for item in items:
            yield function(*item)
        return
    # Imported here: only work of several pieces needs it, and it costs start-up time.
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(workers, thread_name_prefix="retrieval_eval")
    pending: deque[Future[_R]] = deque()
    try:
        for item in items:
            pending.append(pool.submit(function, *item))
            if len(pending) > workers:  # every thread busy, and one more queued
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        # Stopped early (an error, Ctrl-C, or the caller stopped taking results): the calls not started
        # never start, and the caller does not wait for those running (a run of 243 MB being read
        # ahead, when the one before it failed).
        pool.shutdown(wait=not pending, cancel_futures=True)
