"""Parsing a source's blocks into columns: on the calling thread or on a pool, always in file order.

A reader gives a ``parse(block)`` function (tokenize, check, convert: see :mod:`._tokens`);
:func:`_parsed_blocks` applies it to every block of the source, on a few threads once the file is
large enough (NumPy releases the GIL in its loops), and takes the results back in file order, so
that lines are numbered exactly and the first problem in the file is the one reported.
:class:`_Columns` then copies each block's part into columns sized for the whole file.
"""

from __future__ import annotations

import itertools
import os
import stat
import threading
import warnings
from collections import deque
from collections.abc import Callable, Iterator
from functools import partial
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

import numpy as np

from ..engine.threads import usable_cpus
from ..model import BoolArray, FloatArray, IntArray, TrecFormatError
from ._source import _FRONT, _GZIP_MAGIC, Source, _Block, _blocks, _Unreadable, file_starts_with
from ._tokens import _BadLine, _tokenize, _Tokens, _widens_too_far

if TYPE_CHECKING:  # numpy.typing costs milliseconds of start-up: types only
    import numpy.typing as npt


_ScalarT = TypeVar("_ScalarT", bound=np.generic)

#: Bytes parsed at a time on the calling thread: bounds the temporary arrays of the tokenizer whatever
#: the file size. 512 KiB rather than 1 or 4 MiB: a block's temporaries stay in the caches, and fewer
#: fresh pages are touched (reading robust04's files took 5 ms less, msmarco's run 2-5% less; 4 MiB took
#: a third more peak memory on a run of long ids). A read that may go to the thread pool uses blocks
#: twice as large: each block costs the pool hand-overs between threads (msmarco's run took 0.75 s
#: on the pool with 1 MiB blocks, 1.0 s with 512 KiB ones).
_BLOCK = 1 << 19


def _threads() -> int:
    """Threads parsing blocks: one more than the CPUs this process may use (NumPy releases the GIL
    in its loops but not between calls, so one spare thread keeps every CPU busy); on one CPU a
    single worker, which only overlaps parsing with reading.

    Busy or not: unlike the shorter pieces of work that go to threads only on idle CPUs
    (:func:`..engine.threads.idle_cpus`), a block is a few milliseconds of long NumPy loops, and on a
    busy machine more threads win a larger share of the CPUs. The msmarco run under a load average
    of 6 on 2 CPUs: 1.8 s with the pool, 3.2 s without it."""
    cpus = usable_cpus()
    return cpus + 1 if cpus > 1 else 1


_Parsed: TypeAlias = "tuple[_Tokens, dict[str, npt.NDArray[Any]]]"


def _parsed_blocks(source: Source, parse: Callable[[_Block], _Parsed], threads: int | None = None) -> Iterator[_Parsed]:
    """``parse(block)`` for every block of the source, in file order.

    A file smaller than :data:`_POOL_FROM` bytes (or the first ``_POOL_FROM`` bytes of a stream,
    whose size is not known), and any file on one CPU, is parsed on the calling thread: there a
    thread pool only adds its start-up and hand-overs, and uses more CPU time for no less wall
    time. Otherwise the blocks are parsed on a few threads (NumPy releases the GIL in its array
    loops, so parsing one block overlaps with reading and parsing the next), with only a few blocks
    in flight at once, so memory stays bounded. Lines are numbered here, in file order, as each
    block's result is taken: a malformed line is reported with its number, and before any problem
    further on in the file. ``threads`` 1 keeps every block on the calling thread (a part of a file
    read in a process of its own: :mod:`._forked`).
    """
    numbered = _Numbering()
    threads = _threads() if threads is None else threads
    known_size = (_plain_file_size(source) or 0) if threads > 1 else 0  # 0 for a stream or gzip data
    may_pool = threads > 1 and (known_size == 0 or known_size >= _POOL_FROM)
    blocks = _blocks(source, 2 * _BLOCK if may_pool else _BLOCK)
    read = 0
    try:
        for block in blocks:
            if threads > 1 and max(read, known_size) >= _POOL_FROM:
                rest = itertools.chain([block], blocks)
                del block  # held by ``rest`` only, so that its buffer is freed once it is parsed
                yield from _parsed_on_threads(rest, parse, numbered, threads)
                return
            read += block.end - _FRONT
            yield numbered(partial(parse, block))
    except _Unreadable as unreadable:
        raise unreadable.error(numbered.lines_before) from None


#: Bytes of a file parsed on the calling thread before the thread pool starts (a known file size at
#: least this large starts it at once). On robust04- and DL-sized files (8-10 MB) the pool took as
#: much wall time as the calling thread alone and 40% more CPU time; at 36 MB (the skewed shape) about
#: the same wall time; on msmarco's 243 MB run 10% less.
_POOL_FROM = 32 << 20


class _Numbering:
    """Numbers the lines of parsed blocks taken in file order, and turns a bad line into its error."""

    def __init__(self) -> None:
        self.lines_before = 0  # lines of the file in the blocks taken so far

    def __call__(self, result: Callable[[], _Parsed]) -> _Parsed:
        try:
            tokens, columns = result()
        except _BadLine as bad:
            raise bad.located(self.lines_before) from None
        tokens.lines_before = self.lines_before
        self.lines_before += tokens.n_lines
        # 32 bits are plenty (2**31 lines would be a file of tens of GB) and halve this column.
        dtype = np.int32 if self.lines_before < 2**31 else np.int64
        first = tokens.lines_before + 1
        if len(tokens.line_index) == tokens.n_lines:  # every line holds data (the usual block): one pass
            columns["lines"] = np.arange(first, first + tokens.n_lines, dtype=dtype)
        else:
            columns["lines"] = (tokens.line_index + first).astype(dtype)
        return tokens, columns


def _parsed_on_threads(blocks: Iterator[_Block], parse: Callable[[_Block], _Parsed], numbered: _Numbering,
                       threads: int) -> Iterator[_Parsed]:
    """:func:`_parsed_blocks` on a pool of ``threads`` threads."""
    # Imported here: only files of several blocks need it. (Not concurrent.futures: its logging and
    # traceback imports cost more start-up than the few lines of this pool.)
    from queue import SimpleQueue

    work: SimpleQueue[_Parsing | None] = SimpleQueue()
    stopping = False

    def worker() -> None:
        while (task := work.get()) is not None:
            if not stopping:
                task.run(parse)
            task.done.set()

    pool = [threading.Thread(target=worker, name=f"retrieval_eval reader {i}", daemon=True) for i in range(threads)]
    for thread in pool:
        thread.start()
    pending: deque[_Parsing] = deque()
    try:
        while True:
            try:
                block = next(blocks)
            except StopIteration:
                break
            except _Unreadable as unreadable:  # a malformed line before the bad data is reported first
                while pending:
                    numbered(pending.popleft().result)
                raise unreadable.error(numbered.lines_before) from None
            pending.append(_Parsing(block))
            work.put(pending[-1])
            if len(pending) >= threads:  # at most `threads` blocks parsed or waiting at once
                yield numbered(pending.popleft().result)
        while pending:
            yield numbered(pending.popleft().result)
    finally:
        stopping = True  # stopped early (an error): the blocks not started yet are dropped
        for _ in pool:
            work.put(None)
        for thread in pool:
            thread.join()


class _Parsing:
    """One block handed to a reader thread, and what parsing it gave (a result, or an exception)."""

    def __init__(self, block: _Block) -> None:
        self.block: _Block | None = block
        self.done = threading.Event()
        self.parsed: _Parsed | None = None
        self.error: BaseException | None = None

    def run(self, parse: Callable[[_Block], _Parsed]) -> None:
        assert self.block is not None
        try:
            self.parsed = parse(self.block)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread, which raises it in file order
            self.error = exc
        self.block = None  # its buffer is freed as soon as the parsed columns are taken

    def result(self) -> _Parsed:
        """The parsed block, once a thread has parsed it (re-raising what parsing raised)."""
        self.done.wait()
        if self.error is not None:
            raise self.error
        assert self.parsed is not None
        parsed, self.parsed = self.parsed, None
        return parsed


class _Columns:
    """The columns of a file, filled block by block in file order.

    Each column is one array sized for the whole file from the first block's bytes per line, so
    every block's part is copied in and freed as soon as it is parsed: nothing is held for a final
    concatenation, and the heap does not fill with parts. An array grows (by copying) if the
    estimate falls short, or widens if a longer id turns up; what is never written is never
    touched, so an estimate that is too high costs address space, not memory.
    """

    def __init__(self, source: Source, allocate: Callable[[str, np.dtype[Any]], npt.NDArray[Any]] | None = None,
                 ) -> None:
        self.size_on_disk = _plain_file_size(source)
        #: Where each column is made instead, when given (``allocate(name, dtype)``, an array as long as it
        #: may ever need: :mod:`._forked`'s shared memory); then a column that would grow or change its
        #: type raises ``_ColumnMoved``.
        self.allocate = allocate
        self.arrays: dict[str, npt.NDArray[Any]] = {}
        self.rows = 0
        self.bytes_read = 0

    def add(self, tokens: _Tokens, part: dict[str, npt.NDArray[Any]]) -> None:
        end = self.rows + len(tokens.line_index)
        self.bytes_read += tokens.block.end - _FRONT
        for key, values in part.items():
            array = self.arrays.get(key)
            if array is not None and _widens_too_far(array.dtype, values.dtype):
                # A long id in a block of few lines (the last one) would widen every row of the
                # column to its size: the column holds bytes objects from here on instead.
                array = array[: self.rows].astype(object)
            if array is not None and array.dtype.kind == "O" and values.dtype.kind == "S":
                values = values.astype(object)
            if array is None or end > len(array) or not np.can_cast(values.dtype, array.dtype):
                dtype = values.dtype if array is None else np.promote_types(array.dtype, values.dtype)
                if self.allocate is not None:
                    if array is not None:
                        raise _ColumnMoved(key)
                    self.arrays[key] = array = self.allocate(key, dtype)
                    if end > len(array):
                        raise _ColumnMoved(key)
                    array[self.rows : end] = values
                    continue
                grown = np.empty(self._room(tokens, dtype, end, 0 if array is None else len(array)), dtype=dtype)
                if array is not None:
                    grown[: self.rows] = array[: self.rows]
                array = grown
            array[self.rows : end] = values
            self.arrays[key] = array
        self.rows = end

    def _room(self, tokens: _Tokens, dtype: np.dtype[Any], needed: int, allocated: int) -> int:
        """Rows to allocate: the whole file's worth, judging by this block's bytes per line (more
        when that fell short; as many when an id is wider), but never more bytes than twice the
        input's size (a column of very long ids gets only the rows it needs)."""
        if needed <= allocated:
            wanted = allocated
        elif self.size_on_disk is None:  # compressed or a stream: double as it fills
            wanted = max(2 * allocated, 64 * len(tokens.line_index))
        else:
            whole_file = int(self.size_on_disk * 1.05 * len(tokens.line_index) / (tokens.block.end - _FRONT)) + 64
            wanted = max(whole_file, allocated * 3 // 2)
        input_bytes = max(self.size_on_disk or 0, self.bytes_read)
        return max(needed, min(wanted, 2 * input_bytes // dtype.itemsize))

    def pop(self, key: str) -> npt.NDArray[Any]:
        return self.arrays.pop(key)[: self.rows]


class _ColumnMoved(Exception):
    """A column made by :attr:`_Columns.allocate` would have to grow or change its type."""


def _plain_file_size(source: Source) -> int | None:
    """The size of a regular, uncompressed file; None for anything else (a pipe has no size)."""
    if not isinstance(source, (str, bytes, os.PathLike)):
        return None
    try:
        status = os.stat(source)
    except OSError:
        return None
    if not stat.S_ISREG(status.st_mode) or file_starts_with(os.fsdecode(source), _GZIP_MAGIC):
        return None
    return status.st_size


def _check_field_count(tokens: _Tokens, bad: BoolArray, expected: str) -> None:
    if bad.any():
        row = int(np.argmax(bad))
        raise tokens.fail(row, f"{int(tokens.n_tokens[row])} fields", expected)


def _numbers(tokens: _Tokens, field: int, dtype: type[_ScalarT], problem: str, expected: str,
             rows: IntArray | None = None) -> npt.NDArray[_ScalarT]:
    """Field ``field`` converted to ``dtype`` (of the data lines ``rows``, default all of them)."""
    text = tokens.strings(field, rows)
    rows = np.arange(len(text)) if rows is None else rows
    # NumPy, like Python, reads "1_0" as 10; in a TREC file that is a typo, not a number.
    if tokens.contains(b"_"):
        underscore = np.char.find(text, b"_") >= 0
        if underscore.any():
            raise tokens.fail(int(rows[np.argmax(underscore)]), problem, expected)
    try:
        return text.astype(dtype)
    except (ValueError, OverflowError):
        for row, item in zip(rows, text):  # error path only: find the offending line
            try:
                np.asarray(item).astype(dtype)
            except (ValueError, OverflowError):
                raise tokens.fail(int(row), problem, expected) from None
        raise


def _floats(tokens: _Tokens, field: int, problem: str, expected: str) -> tuple[FloatArray, IntArray]:
    """Field ``field`` as floats (plain decimals vectorised, anything else through NumPy's parser),
    and the rows whose value was written as a number but overflowed to infinity."""
    values, plain = tokens.decimals(field)
    if plain.all():
        return values, np.zeros(0, dtype=np.int64)
    other = np.flatnonzero(~plain)
    values[other] = _numbers(tokens, field, np.float64, problem, expected, other)
    infinite = other[np.isinf(values[other])]
    if len(infinite):
        text = np.char.lower(tokens.strings(field, infinite))
        return values, infinite[np.char.find(text, b"inf") < 0]  # not written as "inf"
    return values, infinite


def _overflow_warning(tokens: _Tokens, rows: IntArray) -> str:
    row = int(rows[0])
    more = f" and {len(rows) - 1} more such lines nearby" if len(rows) > 1 else ""
    return (f"{tokens.name}:{tokens.line_number(row)}: score too large for a double, read as infinity "
            f"(as trec_eval's atof does); got {tokens.line_text(row)}{more}")


def first_line_fields(path: str) -> int | None:
    """Fields on the first data line of the file at ``path`` (gzip or plain), or None when there is none
    in its first block or the file cannot be read: a cheap look, for hints in error messages."""
    fields = first_line(path)
    return None if fields is None else len(fields)


def first_line(path: str) -> list[bytes] | None:
    """The fields of the first data line of the file at ``path`` (gzip or plain), or None when there is
    none in its first block or the file cannot be read: a cheap look, to choose a reader or a hint."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            blocks = _blocks(path, _BLOCK)
            try:
                for block in blocks:
                    tokens = _tokenize(block)
                    if len(tokens.n_tokens):
                        return [tokens.field(0, i) for i in range(int(tokens.n_tokens[0]))]
                    return None
            finally:
                blocks.close()
    except (TrecFormatError, _Unreadable, _BadLine, OSError):
        return None
    return None
