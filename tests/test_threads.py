"""retrieval_eval.engine.threads.in_order: work on threads, results in order, memory bounded, errors in place."""

from __future__ import annotations

import threading
import time

import pytest

from retrieval_eval.engine.threads import in_order, usable_cpus


@pytest.mark.parametrize("workers", [0, 1, 2, 3])
def test_results_come_in_the_order_of_the_items(workers: int) -> None:
    def slow_square(i: int, pause: float) -> int:
        time.sleep(pause)
        return i * i

    items = [(i, 0.004 * ((7 * i) % 5)) for i in range(20)]  # later items often finish first
    assert list(in_order(slow_square, items, workers)) == [i * i for i in range(20)]


def test_no_workers_run_on_the_calling_thread_and_one_worker_off_it() -> None:
    seen = list(in_order(lambda: threading.get_ident(), [(), ()], workers=0))
    assert seen == [threading.get_ident()] * 2
    seen = list(in_order(lambda: threading.get_ident(), [(), ()], workers=1))
    assert threading.get_ident() not in seen


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

    results = in_order(work, [(i,) for i in range(12)], workers=2)
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

    results = in_order(work, [(i,) for i in range(50)], workers=2)
    assert [next(results) for _ in range(3)] == [0, 1, 2]
    with pytest.raises(ValueError, match="item 3"):
        next(results)
    assert max(started) < 10


def test_usable_cpus_follows_the_affinity() -> None:
    import os

    if hasattr(os, "sched_getaffinity"):
        assert usable_cpus() == len(os.sched_getaffinity(0))
    assert usable_cpus() >= 1


def _cli_runs(tmp_path, capsys, monkeypatch, cpus: int, runs: list[str]) -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    import retrieval_eval.engine.threads as threads_module
    from retrieval_eval.cli import main

    monkeypatch.setattr(threads_module, "usable_cpus", lambda: cpus)
    paths = []
    for i, text in enumerate(runs):
        path = tmp_path / f"run{i}"
        path.write_bytes(text.encode())
        paths.append(str(path))
    (tmp_path / "qrels").write_text("q1 0 a 1\nq1 0 b 0\nq2 0 c 2\nq3 0 d 1\n")
    code = main(["evaluate", "-m", "map", "-m", "P_5", str(tmp_path / "qrels"), *paths])
    out, err = capsys.readouterr()
    return code, out, err


RUNS = [
    "q1 Q0 a 1 2 r1\nq1 Q0 b 2 1 r1\nq9 Q0 z 1 1 r1\n",  # a query without judgments: a note
    "\ufeffq1 Q0 b 1 1e999 r2\nq2 Q0 c 1 1 r2\n",  # a byte order mark and an overflowing score: warnings
    "q1 Q0 a 1 2 r3\nq2 Q0 c 1 1 r3\n",
]


@pytest.mark.parametrize("broken", [False, True])
def test_runs_read_ahead_print_the_same_as_runs_read_in_turn(tmp_path, capsys, monkeypatch, broken: bool) -> None:  # type: ignore[no-untyped-def]
    """evaluate with several runs reads the next run on a thread (several CPUs): its warnings wait for
    their turn, and a broken run stops the command at the same point, with the same messages."""
    import retrieval_eval.cli._runs as cli_module
    import retrieval_eval.io.formats as formats_module

    runs = [*RUNS, "q1 Q0 a 1 high r4\n"] if broken else RUNS
    in_turn = _cli_runs(tmp_path, capsys, monkeypatch, 1, runs)
    # Run 1's notes wait until run 2 is read ahead, so that its warnings come first unless held back.
    second_read, reads, real_read, real_check = threading.Event(), [], formats_module.read_run_columns, cli_module._check_overlap

    def read(*args, **kwargs):  # type: ignore[no-untyped-def]
        try:
            return real_read(*args, **kwargs)
        finally:
            reads.append(1)
            if len(reads) == 2:
                second_read.set()

    def check(*args, **kwargs):  # type: ignore[no-untyped-def]
        assert second_read.wait(10)
        return real_check(*args, **kwargs)

    monkeypatch.setattr(formats_module, "read_run_columns", read)
    monkeypatch.setattr(cli_module, "_check_overlap", check)
    ahead = _cli_runs(tmp_path, capsys, monkeypatch, 2, runs)
    assert ahead == in_turn
    code, out, err = ahead
    assert err.index("q9") < err.index("byte order mark") < err.index("too large")
    assert (code, out == "") == ((2, True) if broken else (0, False))
    if broken:
        assert err.rstrip().splitlines()[-1].startswith("retrieval-eval: error: ") and "run3:1" in err


def _threads_calling(monkeypatch, module, name: str) -> list[int]:  # type: ignore[no-untyped-def]
    """``module.name`` replaced by itself, noting the thread of each call; the list of those threads."""
    threads: list[int] = []
    real = getattr(module, name)

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        threads.append(threading.get_ident())
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, spy)
    return threads


def test_the_next_run_is_read_on_another_thread(tmp_path, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import retrieval_eval.io.formats as formats_module

    readers = _threads_calling(monkeypatch, formats_module, "read_run_columns")
    assert _cli_runs(tmp_path, capsys, monkeypatch, 2, RUNS[::2])[0] == 0
    assert len(readers) == 2 and threading.get_ident() not in readers
    readers.clear()
    assert _cli_runs(tmp_path, capsys, monkeypatch, 1, RUNS[::2])[0] == 0
    assert readers == [threading.get_ident()] * 2


@pytest.mark.parametrize("run", [RUNS[2], "q1 Q0 a 1 high r\n"])
def test_judgments_prepared_meanwhile_fail_as_when_prepared_by_the_build(tmp_path, capsys, monkeypatch, run: str) -> None:  # type: ignore[no-untyped-def]
    """A repeated judgment is reported when the first run is built, after that run is read: a run that
    cannot be read is reported instead, whether the judgments were prepared on a thread or not."""
    import retrieval_eval.engine.threads as threads_module
    from retrieval_eval.cli import main

    (tmp_path / "qrels").write_text("q1 0 a 1\nq1 0 a 0\nq2 0 c 2\n")
    (tmp_path / "run").write_text(run)
    seen = []
    for cpus in (1, 2):
        monkeypatch.setattr(threads_module, "usable_cpus", lambda cpus=cpus: cpus)
        seen.append((main(["evaluate", str(tmp_path / "qrels"), str(tmp_path / "run")]), capsys.readouterr()))
    assert seen[0] == seen[1] and seen[0][0] == 2
    err = seen[0][1].err
    assert ("duplicate judgment" in err) == (run == RUNS[2]) and ("run:1" in err) == (run != RUNS[2])


def test_judgments_are_prepared_once_off_the_main_thread(tmp_path, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import retrieval_eval.engine.judgments as judgments_module

    preparers = _threads_calling(monkeypatch, judgments_module, "_prepare_qrels")
    assert _cli_runs(tmp_path, capsys, monkeypatch, 2, RUNS)[0] == 0
    assert len(preparers) == 1 and preparers[0] != threading.get_ident()
    preparers.clear()
    assert _cli_runs(tmp_path, capsys, monkeypatch, 1, RUNS)[0] == 0
    assert preparers == [threading.get_ident()]


@pytest.mark.parametrize("cpus", [1, 2])
def test_a_run_read_is_held_by_its_handoff_alone(tmp_path, monkeypatch, cpus: int) -> None:  # type: ignore[no-untyped-def]
    """The build frees each column of a run once it is used, only if nothing else holds the run: the
    runs read (ahead or not) come in a RunHandoff, and nothing else keeps them."""
    import argparse
    import gc
    import weakref

    import retrieval_eval.engine.threads as threads_module
    from retrieval_eval.cli._runs import _runs_read

    monkeypatch.setattr(threads_module, "usable_cpus", lambda: cpus)
    paths = []
    for i, text in enumerate(RUNS[::2]):  # runs without warnings
        (tmp_path / f"run{i}").write_text(text)
        paths.append(str(tmp_path / f"run{i}"))
    for run, handoff in _runs_read(argparse.Namespace(order="score"), paths):
        taken = weakref.ref(handoff.take())
        gc.collect()
        assert taken() is None, run  # the handoff held the only reference


def test_an_error_does_not_wait_for_the_work_running_ahead() -> None:
    """When an item fails, the caller gets the error at once, not after the slow item being worked on
    ahead (a large run read ahead, when the run before it failed)."""
    release = threading.Event()

    def work(i: int) -> int:
        if i == 0:
            raise ValueError("item 0")
        release.wait(5)  # the slow item ahead
        return i

    start = time.perf_counter()
    with pytest.raises(ValueError, match="item 0"):
        for _ in in_order(work, [(0,), (1,), (2,)], workers=2):
            pass
    assert time.perf_counter() - start < 2
    release.set()


def _worker_counts(monkeypatch, module) -> list[int]:  # type: ignore[no-untyped-def]
    """The workers asked of each call of ``module.in_order`` from now on (the calls still run)."""
    counts: list[int] = []
    real = module.in_order

    def spy(function, items, count):  # type: ignore[no-untyped-def]
        counts.append(count)
        return real(function, items, count)

    monkeypatch.setattr(module, "in_order", spy)
    return counts


def test_blocks_use_at_most_a_few_threads(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Each block in flight holds its caches: on a machine of many CPUs, the blocks still run on at most
    MAX_WORKERS threads, so the peak memory does not grow with the CPU count."""
    import numpy as np

    import retrieval_eval.engine.threads as threads_module
    import retrieval_eval.evaluators.blocks as evaluator_module
    from retrieval_eval import SetEvaluator

    monkeypatch.setattr(threads_module, "usable_cpus", lambda: 40)
    monkeypatch.setattr(evaluator_module, "QUERIES_PER_THREAD_BLOCK", 2)
    workers = _worker_counts(monkeypatch, threads_module)
    runs = SetEvaluator.from_dict({f"q{i}": {"a": 1} for i in range(20)}, {f"q{i}": {"a": 1.0} for i in range(20)})
    assert np.array_equal(runs.array("AP"), np.ones(20))
    assert workers == [threads_module.MAX_WORKERS]


def test_the_join_of_a_long_run_compares_its_chunks_on_threads(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The scan join's chunks, on two threads, find the same judged rows as on the calling thread,
    including pairs that fall on either side of a chunk's edge."""
    import numpy as np

    import retrieval_eval.engine.judgments as judgments_module
    import retrieval_eval.engine.threads as threads_module

    rng = np.random.default_rng(7)
    n_queries = 300
    judged_per_query = rng.integers(0, 4, n_queries)
    offsets = np.concatenate(([0], np.cumsum(judged_per_query)))
    judged = np.array([f"d{rng.integers(50)}-{i}".encode() for i in range(int(offsets[-1]))])
    query_code = np.sort(rng.integers(0, n_queries, 2000))
    # Half the run's documents are judged ones of their query, the others are not judged.
    doc_ids = np.array([b"unjudged"] * len(query_code), dtype=judged.dtype)
    for row, query in enumerate(query_code.tolist()):
        if judged_per_query[query] and row % 2:
            doc_ids[row] = judged[offsets[query] + row % judged_per_query[query]]
    monkeypatch.setattr(judgments_module, "_FIND_CHUNK", 7)  # chunks end mid-query

    def found(cpus: int) -> set[tuple[int, int]]:
        monkeypatch.setattr(threads_module, "usable_cpus", lambda: cpus)
        result = judgments_module._scan_join(offsets, judged, query_code, doc_ids, np.arange(len(judged)))
        assert result is not None
        return {(row, at) for row, at in enumerate(result.tolist()) if at >= 0}

    on_threads = _worker_counts(monkeypatch, judgments_module)
    monkeypatch.setattr(threads_module, "THREADED_ROWS", 100)
    expected = {(row, int(offsets[q] + row % judged_per_query[q]))
                for row, q in enumerate(query_code.tolist()) if judged_per_query[q] and row % 2}
    assert found(1) == expected
    assert found(2) == expected
    assert on_threads == [0, 2]


@pytest.mark.parametrize(("loadavg", "alive", "expected"), [
    (b"4.49 4.94 2.83 5/126 21038\n", 1, 4), (b"0.1 0.1 0.1 1/90 7\n", 1, 0), (b"0.1 0.1 0.1 3/90 7\n", 3, 0),
    (b"1 1 1 2/90 7\n", 3, 0), (b"garbled\n", 1, 0), (None, 1, 0)])
def test_runnable_elsewhere_reads_the_kernels_count_less_our_threads(
        tmp_path, monkeypatch, loadavg: bytes | None, alive: int, expected: int) -> None:  # type: ignore[no-untyped-def]
    import threading

    import retrieval_eval.engine.threads as threads_module

    monkeypatch.undo()  # the real reader, not the quiet machine of conftest
    path = tmp_path / "loadavg"
    if loadavg is not None:
        path.write_bytes(loadavg)
    monkeypatch.setattr(threads_module, "_LOADAVG", str(path))
    monkeypatch.setattr(threading, "active_count", lambda: alive)
    assert threads_module._runnable_elsewhere() == expected


@pytest.mark.parametrize(("cpus", "elsewhere", "idle", "pool"), [
    (1, 0, 1, 0), (2, 0, 2, 2), (2, 1, 1, 0), (2, 5, 1, 0), (4, 1, 3, 3), (8, 3, 5, 4)])
def test_threads_go_to_idle_cpus_but_the_parsing_pool_to_all(monkeypatch, cpus: int, elsewhere: int, idle: int, pool: int) -> None:  # type: ignore[no-untyped-def]
    import os

    import retrieval_eval.engine.threads as threads_module
    from retrieval_eval.io import _parse

    monkeypatch.setattr(os, "cpu_count", lambda: cpus)  # the whole machine is ours
    monkeypatch.setattr(threads_module, "usable_cpus", lambda: cpus)
    monkeypatch.setattr(_parse, "usable_cpus", lambda: cpus)
    monkeypatch.setattr(threads_module, "_runnable_elsewhere", lambda: elsewhere)
    assert threads_module.idle_cpus() == idle
    assert threads_module.workers() == pool
    assert _parse._threads() == (cpus + 1 if cpus > 1 else 1)  # the parsing pool's long loops take any CPU


@pytest.mark.parametrize("elsewhere", [0, 1])
def test_a_busy_machine_prints_what_a_quiet_one_prints(tmp_path, capsys, monkeypatch, elsewhere: int) -> None:  # type: ignore[no-untyped-def]
    """Threads or not (the qrels prepared beside the read, runs read ahead), the output is the same."""
    import retrieval_eval.engine.threads as threads_module

    monkeypatch.setattr(threads_module, "_runnable_elsewhere", lambda: elsewhere)
    busy = _cli_runs(tmp_path, capsys, monkeypatch, 2, RUNS)
    monkeypatch.setattr(threads_module, "_runnable_elsewhere", lambda: 0)
    assert busy == _cli_runs(tmp_path, capsys, monkeypatch, 2, RUNS)


@pytest.mark.parametrize(("ours", "machine", "elsewhere", "idle"), [
    (2, 64, 40, 1), (2, 64, 20, 2), (4, 16, 8, 2), (2, 2, 1, 1), (2, None, 1, 1)])
def test_a_share_of_the_machine_counts_its_share_of_the_busy_threads(
        monkeypatch, ours: int, machine: int | None, elsewhere: int, idle: int) -> None:  # type: ignore[no-untyped-def]
    """The kernel counts runnable threads over the whole machine: a process that may use 2 of 64
    CPUs counts 2/64 of them as busy on its own CPUs."""
    import os

    import retrieval_eval.engine.threads as threads_module

    monkeypatch.setattr(threads_module, "usable_cpus", lambda: ours)
    monkeypatch.setattr(os, "cpu_count", lambda: machine)
    monkeypatch.setattr(threads_module, "_runnable_elsewhere", lambda: elsewhere)
    assert threads_module.idle_cpus() == idle
