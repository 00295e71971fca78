"""Reading a large plain file in parts, each in a process of its own: the command line's way.

The reader's pool of threads shares Python's lock, which NumPy takes back between any two calls of a
block's parsing. On msmarco's 243 MB run (2 CPUs, 2026-11-29) the pool took 0.82-0.95 s of wall time
and 1.25-1.44 s of CPU time, where two processes, each parsing one half of the file on one thread,
took 0.43-0.49 s and 0.93 s together. So the command line, which owns its process, turns this on
(:func:`enable`): a file of :data:`PARTS_FROM` bytes or more is cut at line ends into one part per
usable CPU. One memory file per column is made first, as long as the file's data lines can be (only
the pages written take memory); then a child is forked for each part but the first, which the
calling process reads itself, straight into those columns. Each child reads its part on its own,
says how many rows and lines it holds, and once the parts before it are counted copies its rows
into the columns, after theirs, with its line numbers made the file's. The command then evaluated
msmarco in 1.16 s instead of 1.25 s, with a peak of 252 MB instead of 298 MB (medians of 7 rounds
alternating with the code before; the build after the reading lost some of the gain: see
docs/performance.md).

Only the usual case takes this path: Linux, a plain file (not gzip, no byte order mark at a part's
start), parts that each read without a problem, a warning or ids kept as ``bytes`` objects, ids no
wider in a later part than in the first, and children that finish. Anything else returns None, and
the caller reads the whole file as usual, which reports the problem with its line number, in file
order: the outcome is the usual reader's, always."""

from __future__ import annotations

import io
import itertools
import mmap
import os
import pickle
import select
import signal
import stat
import sys
import time
import warnings
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Any, cast

import numpy as np

from ..engine.threads import usable_cpus
from ._source import _BOM, _GZIP_MAGIC

if TYPE_CHECKING:  # numpy.typing costs milliseconds of start-up: types only
    import numpy.typing as npt

#: Files smaller than this are read as usual: the reader's own pool starts at the same size.
PARTS_FROM = 32 << 20
#: Seconds a child may take beyond the calling process's own part (at least; ten times that part's time
#: if longer) before it is taken for stuck.
_PATIENCE = 30.0

_enabled = False


def enable() -> None:
    """Read large files in forked parts from now on: for a process that is the command line's own (a
    library call should not fork its caller's process, which may hold a GPU or a notebook's kernel)."""
    global _enabled
    _enabled = True


class _Part(io.RawIOBase):
    """Bytes ``start`` to ``end`` of an open file, named as the file, read with ``pread`` (no shared
    file position between the processes)."""

    def __init__(self, fd: int, start: int, end: int, name: str) -> None:
        super().__init__()
        self._fd, self._at, self._end, self.name = fd, start, end, name

    def readable(self) -> bool:
        return True

    def readinto(self, view: Any) -> int:
        n = min(len(view), self._end - self._at)
        if n <= 0:
            return 0
        got = os.preadv(self._fd, [memoryview(view).cast("B")[:n]], self._at)
        self._at += got
        return got


#: What reading one part gives: its columns (each as long as its data lines), the last value of its
#: last data line's field the caller asked for (a run's id), and the lines of the part (data or not).
PartColumns = tuple[dict[str, "npt.NDArray[Any]"], bytes, int]
#: Makes a column: ``allocate(name, dtype)``, an array as long as the file's data lines can be.
Allocate = Callable[[str, "np.dtype[Any]"], "npt.NDArray[Any]"]
#: Reads a part (a binary stream named as the file) of ``size`` bytes on the calling thread, its
#: columns made by ``allocate`` when given; raises on anything the usual reader would report or warn
#: about, or where a column would grow or change its type.
PartReader = Callable[[IO[bytes], int, "Allocate | None"], PartColumns]


def read_in_parts(path: str, read_part: PartReader, names: tuple[str, ...], line_bytes: int,
                  ) -> tuple[dict[str, npt.NDArray[Any]], bytes] | None:
    """The file's columns ``names`` and last id, read in parts on several processes; None to read it
    as usual. A data line takes at least ``line_bytes`` bytes (which bounds the rows).

    The columns are those the usual reader gives (a ``lines`` column numbering the file's lines from
    1), each a view of a block of memory the processes share.
    """
    if not _enabled or not sys.platform.startswith("linux") or not hasattr(os, "memfd_create"):
        return None
    try:  # (a pipe is not even opened: opening and closing it would lose what its writer gave it)
        status = os.stat(path)
        size = status.st_size
        parts = min(usable_cpus(), size // (PARTS_FROM // 2))
        if not stat.S_ISREG(status.st_mode) or size < PARTS_FROM or parts < 2:
            return None
        handle = open(path, "rb")  # noqa: SIM115 - closed below
    except OSError:
        return None
    with handle:
        fd = handle.fileno()
        if os.pread(fd, 2, 0) == _GZIP_MAGIC:
            return None
        bounds = _line_bounds(fd, size, parts)
        if bounds is None:
            return None
        shared = _Shared(names, size // line_bytes + 1)
        try:
            return _read_parts(fd, path, bounds, read_part, shared)
        finally:
            shared.close()


def _line_bounds(fd: int, size: int, parts: int) -> list[int] | None:
    """Where each part starts (and the file ends): just past a newline near each ``size / parts``;
    None when a part would be empty or start with a byte order mark (the usual reader drops one at
    the file's start only, with a warning)."""
    bounds = [0]
    for i in range(1, parts):
        at = max(size * i // parts, bounds[-1])
        newline = os.pread(fd, 1 << 20, at).find(b"\n")
        if newline < 0:
            return None
        bounds.append(at + newline + 1)
    bounds.append(size)
    if any(end <= start for start, end in itertools.pairwise(bounds)):
        return None
    if any(os.pread(fd, len(_BOM), start) == _BOM for start in bounds[:-1]):
        return None
    return bounds


class _Shared:
    """One memory file per column, made before the children are forked (so that they hold it too),
    each as long as the file's data lines can be; only the pages written take memory."""

    def __init__(self, names: tuple[str, ...], most_rows: int) -> None:
        self.most_rows = most_rows
        self.fds = {name: os.memfd_create(f"retrieval_eval-{name}", os.MFD_CLOEXEC) for name in names}
        self.made: dict[str, npt.NDArray[Any]] = {}  # the columns allocate() made, whole

    def allocate(self, name: str, dtype: np.dtype[Any]) -> npt.NDArray[Any]:
        """Column ``name`` of type ``dtype`` (made once: its memory file is sized for it)."""
        if dtype.kind == "O" or name not in self.fds:
            raise _Declined  # bytes objects cannot be shared
        os.ftruncate(self.fds[name], self.most_rows * dtype.itemsize)
        self.made[name] = self.column(name, dtype)
        return self.made[name]

    def column(self, name: str, dtype: np.dtype[Any]) -> npt.NDArray[Any]:
        """Column ``name`` of type ``dtype``, mapped into this process (the whole memory file)."""
        return np.frombuffer(mmap.mmap(self.fds[name], self.most_rows * dtype.itemsize), dtype=dtype)

    def close(self) -> None:
        for fd in self.fds.values():
            os.close(fd)  # (the columns keep their mappings)


class _Declined(Exception):
    """A part that the usual reader must read: it holds a problem to report, or something unusual."""


def _read_one(fd: int, path: str, start: int, end: int, read_part: PartReader,
              allocate: Allocate | None) -> PartColumns:
    """One part's columns, or _Declined."""
    try:
        columns, last, lines = read_part(cast(IO[bytes], _Part(fd, start, end, path)), end - start, allocate)
    except Exception as exc:  # a problem in the part (or a column that cannot be shared): read as usual
        raise _Declined from exc
    if any(column.dtype.kind == "O" for column in columns.values()):
        raise _Declined
    return columns, last, lines


def _read_parts(fd: int, path: str, bounds: list[int], read_part: PartReader, shared: _Shared,
                ) -> tuple[dict[str, npt.NDArray[Any]], bytes] | None:
    children: list[_Child] = []
    try:
        for start, end in itertools.pairwise(bounds[1:]):
            children.append(_Child.forked(fd, path, start, end, read_part, shared, children))
        started = time.monotonic()
        try:  # the first part, straight into the shared columns
            first = _read_one(fd, path, bounds[0], bounds[1], read_part, shared.allocate)
        except _Declined:
            return None  # (the children are stopped at once, below)
        # A child far slower than this process's own part is stuck (a lock another thread held when it
        # was forked): it is stopped, and the file read as usual.
        deadline = time.monotonic() + max(_PATIENCE, 10 * (time.monotonic() - started))
        found = [child.header(deadline) for child in children]
        if any(header is None for header in found):
            return None
        headers = [_header(first), *(h for h in found if h is not None)]
        dtypes = headers[0]["dtypes"]
        rows = [h["rows"] for h in headers]
        lines = [h["lines"] for h in headers]
        # The first part's columns are the file's: every other part must fit them as they are (ids no
        # wider, so none that the usual reader would have kept as bytes objects).
        if (any(h["dtypes"].keys() != dtypes.keys() for h in headers) or sum(rows) > shared.most_rows
                or not sum(rows) or sum(lines) >= 2**31
                or any(not np.can_cast(h["dtypes"][name], dtypes[name], "safe") for h in headers for name in dtypes)):
            return None
        for index, child in enumerate(children, start=1):
            child.go(dtypes, sum(rows[:index]), sum(lines[:index]))
        if not all(child.done(deadline) for child in children):
            return None
        last = next((h["last"] for h in reversed(headers) if h["rows"]), b"")  # the last data line's
        return {name: shared.made[name][: sum(rows)] for name in first[0]}, last
    finally:
        for child in children:
            child.end()


def _header(part: PartColumns) -> dict[str, Any]:
    columns, last, lines = part
    return {"dtypes": {name: column.dtype for name, column in columns.items()},
            "rows": len(next(iter(columns.values()))) if columns else 0, "last": last, "lines": lines}


class _Child:
    """A forked process reading one part: its header (or None), then its copy into the shared columns."""

    def __init__(self, pid: int, results: int, orders: int) -> None:
        self.pid, self._results, self._orders = pid, os.fdopen(results, "rb"), os.fdopen(orders, "wb")
        self._ended = self._finished = False

    @classmethod
    def forked(cls, fd: int, path: str, start: int, end: int, read_part: PartReader, shared: _Shared,
               earlier: list[_Child]) -> _Child:
        results_r, results_w = os.pipe()
        orders_r, orders_w = os.pipe()
        with warnings.catch_warnings():  # Python 3.12 warns of forking a process with threads: the child
            warnings.simplefilter("ignore", DeprecationWarning)  # runs only its own reading, no lock of theirs
            pid = os.fork()
        if pid == 0:  # the child: never returns
            code = 1
            try:
                # Only the parent may hold the other children's pipes: each must see their end when it does.
                for fd_held in [results_r, orders_w, *(f for c in earlier for f in c.pipe_ends())]:
                    os.close(fd_held)
                _child_main(fd, path, start, end, read_part, shared, results_w, orders_r)
                code = 0
            finally:
                os._exit(code)
        os.close(results_w)
        os.close(orders_r)
        return cls(pid, results_r, orders_w)

    def header(self, deadline: float) -> dict[str, Any] | None:
        """What the child read (its columns' types, rows, lines and last id), or None: it declined,
        died, or said nothing by ``deadline`` (``time.monotonic()``)."""
        if not self._ready(deadline):
            return None
        try:
            header: dict[str, Any] | None = pickle.load(self._results)
        except (EOFError, pickle.UnpicklingError, OSError):  # the child died
            return None
        return header

    def pipe_ends(self) -> tuple[int, int]:
        """This process's ends of the child's two pipes."""
        return self._results.fileno(), self._orders.fileno()

    def _ready(self, deadline: float) -> bool:
        """Whether the child wrote (or ended) by ``deadline``."""
        ready, _, _ = select.select([self._results], [], [], max(deadline - time.monotonic(), 0.0))
        return bool(ready)

    def go(self, dtypes: dict[str, np.dtype[Any]], first_row: int, lines_before: int) -> None:
        pickle.dump((dtypes, first_row, lines_before), self._orders)
        self._orders.flush()

    def done(self, deadline: float) -> bool:
        """Whether the child copied its part by ``deadline`` (it then exits by itself)."""
        try:
            self._finished = self._ready(deadline) and self._results.read(1) == b"\x01"
        except OSError:
            self._finished = False
        return self._finished

    def end(self) -> None:
        """Reap the child, stopped first unless it reported its copy done (the parent gave up early)."""
        if self._ended:
            return
        self._ended = True
        if not self._finished:
            os.kill(self.pid, signal.SIGKILL)
        for stream in (self._orders, self._results):
            try:
                stream.close()
            except OSError:
                pass
        os.waitpid(self.pid, 0)


def _child_main(fd: int, path: str, start: int, end: int, read_part: PartReader, shared: _Shared, results: int,
                orders: int) -> None:
    with os.fdopen(results, "wb") as out, os.fdopen(orders, "rb") as given:
        try:
            with warnings.catch_warnings(record=True) as caught:  # (this process has one thread)
                warnings.simplefilter("always")
                columns, last, lines = _read_one(fd, path, start, end, read_part, None)
            if caught:
                raise _Declined
        except _Declined:
            pickle.dump(None, out)
            return
        pickle.dump(_header((columns, last, lines)), out)
        out.flush()
        try:
            dtypes, first_row, lines_before = pickle.load(given)
        except (EOFError, pickle.UnpicklingError):  # the parent gave up on the parts
            return
        for name, column in columns.items():
            target = shared.column(name, dtypes[name])[first_row : first_row + len(column)]
            target[:] = column
            if name == "lines":
                target += lines_before
        out.write(b"\x01")
