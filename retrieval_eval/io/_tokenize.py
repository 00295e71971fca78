"""Tokenizing whitespace-separated lines into columns: blocks, a thread pool and byte-level parsing.

A source is read in blocks of whole lines, each straight into its own padded buffer; the blocks are
parsed on a few threads (NumPy releases the GIL in its loops) and taken back in file order, so that
lines are numbered exactly and the first problem in the file is the one reported. Fields are located
and converted with whole-array operations: nothing creates a Python object per line.
"""

from __future__ import annotations

import gzip
import io
import itertools
import os
import stat
import threading
import time
import warnings
import zlib
from collections import deque
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from functools import partial
from typing import IO, TYPE_CHECKING, Any, TypeAlias, TypeVar, Union, cast, overload

import numpy as np
from attrs import define

from ..engine.threads import usable_cpus
from ..model import (
    FIELD_SEPARATORS,
    BoolArray,
    FloatArray,
    InputFormatError,
    InputTypeError,
    InputWarning,
    IntArray,
    TrecFormatError,
)

if TYPE_CHECKING:  # numpy.typing costs milliseconds of start-up: types only
    import numpy.typing as npt

Source = Union[str, bytes, "os.PathLike[str]", IO[bytes], IO[str]]

#: Fixed-width bytes (``S<n>``): ids as read, compared as bytes like trec_eval's strcmp.
BytesArray: TypeAlias = "npt.NDArray[np.bytes_]"
_ScalarT = TypeVar("_ScalarT", bound=np.generic)
_R = TypeVar("_R")

#: Ids up to this width (bytes) always stay fixed-width; see :meth:`_Tokens.ids`.
_WIDE_ID = 64
#: Bytes parsed at a time on the calling thread: bounds the temporary arrays of the tokenizer whatever
#: the file size. 512 KiB rather than 1 or 4 MiB: a block's temporaries stay in the caches, and fewer
#: fresh pages are touched (reading robust04's files took 5 ms less, msmarco's run 2-5% less; 4 MiB took
#: a third more peak memory on a run of long ids). A read that may go to the thread pool uses blocks
#: twice as large: each block costs the pool hand-overs between threads (msmarco's run took 0.75 s
#: on the pool with 1 MiB blocks, 1.0 s with 512 KiB ones).
_BLOCK = 1 << 19
#: Bytes of the first block (a small file should not cost a whole block's buffer).
_FIRST_BLOCK = 1 << 16


def _threads() -> int:
    """Threads parsing blocks: one more than the CPUs this process may use (NumPy releases the GIL
    in its loops but not between calls, so one spare thread keeps every CPU busy); on one CPU a
    single worker, which only overlaps parsing with reading."""
    cpus = usable_cpus()
    return cpus + 1 if cpus > 1 else 1


#: C's isspace() in the C locale, which is how trec_eval splits fields.
_IS_SPACE = np.zeros(256, dtype=bool)
_IS_SPACE[[ord(c) for c in FIELD_SEPARATORS]] = True
_HASH = ord("#")


#: Leading bytes of compressed formats: gzip is read; the others are refused with a clear message.
_GZIP_MAGIC = b"\x1f\x8b"
_UNSUPPORTED_MAGIC = {b"BZh": "bzip2", b"\xfd7zXZ\x00": "xz", b"\x28\xb5\x2f\xfd": "zstd"}
#: The UTF-8 byte order mark, ignored (with a warning) at the start of a file.
_BOM = b"\xef\xbb\xbf"
#: Bytes looked at to recognise a format (the longest magic number above).
_MAGIC_LENGTH = 6


@contextmanager
def _open_binary(source: Source) -> Iterator[tuple[Callable[[memoryview], int], str]]:
    """A ``fill(view) -> bytes written`` function for the source (0 at the end), and its name for errors.

    Compression is recognised by the first bytes, not by the name: gzip is decompressed (a file,
    a stream or stdin, with or without ``.gz``); bzip2, xz and zstd are refused by name.
    """
    if isinstance(source, (str, bytes, os.PathLike)):
        path = os.fsdecode(source)
        try:
            handle = open(source, "rb")  # noqa: SIM115 - closed by the with below
        except OSError as exc:
            raise TrecFormatError(f"{path}: cannot open: {exc.strerror or exc}") from None
        with handle:
            yield _binary_filler(handle, path), path
        return
    if not callable(getattr(source, "read", None)):
        raise InputTypeError(
            f"the source must be a path (str, bytes or os.PathLike) or a file open for reading (an object "
            f"with a read() method); got {type(source).__name__} {_short_repr(source)}")
    name = _source_name(source)
    if isinstance(source, io.TextIOBase):
        text_source = source

        def read_text(n: int) -> bytes:
            # A character is at most 4 bytes of UTF-8, so a quarter of the view's size always fits.
            try:
                text = str(_retried(partial(text_source.read, max(n // 4, 1))))
            except UnicodeError as exc:  # a text stream opened with the wrong encoding
                encoding = getattr(text_source, "encoding", None) or "its"
                raise OSError(f"the text stream cannot be decoded with {encoding} encoding ({exc}); "
                              "expected text in that encoding, or a file opened in binary mode") from None
            newlines = getattr(text_source, "newlines", None)  # None, one of "\r", "\n", "\r\n", or a tuple
            if "\r" in (newlines if isinstance(newlines, tuple) else (newlines,)):
                # Universal newlines turned a lone \r into a line end; read by path, the same file is one
                # line of merged records. Either way the file's records are not what it seems to hold.
                raise OSError("a line ends in a carriage return (\\r) alone, which the text stream read as a "
                              "newline; expected lines ending in \\n or \\r\\n")
            return text.encode("utf-8")

        yield _filler(read_text), name
    else:
        yield _binary_filler(cast(IO[bytes], source), name), name


def _binary_filler(handle: IO[bytes], name: str) -> Callable[[memoryview], int]:
    """The fill function of a binary file or stream, decompressing gzip found by its magic bytes."""
    try:
        head = _read_head(handle)
    except OSError as exc:
        raise TrecFormatError(f"{name}: cannot read: {exc.strerror or exc}") from None
    for magic, format_name in _UNSUPPORTED_MAGIC.items():
        if head.startswith(magic):
            raise TrecFormatError(f"{name}: compressed with {format_name}, which is not supported; decompress it "
                                  f"first; expected plain text or gzip; got a file starting with {head[:len(magic)]!r}")
    if head.startswith(b"PAR1"):  # a path is dispatched to the Parquet reader before it gets here
        raise TrecFormatError(f"{name}: a Parquet file, which can be read from a path but not from a stream or "
                              "standard input; give its path (pyarrow needs to seek to its footer)")
    stream = io.BufferedReader(_Prefixed(head, handle))
    if head.startswith(_GZIP_MAGIC):
        return _chunked_filler(gzip.GzipFile(fileobj=stream, mode="rb"))
    return _chunked_filler(stream)


def _read_head(handle: IO[bytes]) -> bytes:
    """The first bytes of a stream (fewer only at its end), read without losing any."""
    head = b""
    while len(head) < _MAGIC_LENGTH:
        data = _retried(partial(handle.read, _MAGIC_LENGTH - len(head)))
        if not data:
            break
        head += data
    return head


class _Prefixed(io.RawIOBase):
    """A raw stream giving ``head`` and then the rest of ``stream`` (the bytes read to find the format)."""

    def __init__(self, head: bytes, stream: IO[bytes]) -> None:
        self._head, self._stream = head, stream
        self._readinto = getattr(stream, "readinto", None)

    def readable(self) -> bool:
        return True

    def readinto(self, view: Any) -> int:
        if self._head:
            n = min(len(view), len(self._head))
            view[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        readinto = self._readinto
        if readinto is not None:
            return int(_retried(lambda: readinto(view)))
        data = _retried(lambda: self._stream.read(len(view)))
        view[: len(data)] = data
        return len(data)


#: Longest pause (seconds) between two tries of a non-blocking stream that has no data yet.
_MAX_WAIT = 0.05


def _retried(read: Callable[[], _R | None]) -> _R:
    """``read()``, tried again while a non-blocking stream answers None (no data *yet*, which is
    not the end of the file: taking it for the end would lose the rest)."""
    wait = 0.0005
    while True:
        try:
            result = read()
        except BlockingIOError:
            result = None
        if result is not None:
            return result
        time.sleep(wait)
        wait = min(2 * wait, _MAX_WAIT)


def _chunked_filler(stream: io.BufferedIOBase) -> Callable[[memoryview], int]:
    """Fill one read at a time, so that the data before an error (corrupt compressed data, EIO) is
    kept: the error is raised on the next call, once the lines before it are counted."""
    failed: list[BaseException] = []

    def fill(view: memoryview) -> int:
        if failed:
            raise failed[0]
        total = 0
        while total < len(view):
            try:
                got = stream.readinto1(view[total:])
            except (EOFError, zlib.error, gzip.BadGzipFile, OSError) as exc:
                if not total:
                    raise
                failed.append(exc)
                break
            if not got:
                break
            total += got
        return total

    return fill


def _filler(read: Callable[[int], bytes]) -> Callable[[memoryview], int]:
    def fill(view: memoryview) -> int:
        data = read(len(view))
        view[: len(data)] = data
        return len(data)

    return fill


@define(eq=False)  # compared by identity: == on their buffers and arrays means nothing (and costs import time)
class _Block:
    """Whole lines of a file in a buffer of their own."""

    name: str
    padded: bytearray  # _FRONT zero bytes, the lines (each ending in a newline) up to ``end``, then >= _PAD bytes
    end: int
    unterminated: bool  # the file's last line had no newline: the reader added the block's last one
    #: The bytes error messages quote, when ``padded`` was rewritten for tokenizing (a CSV's commas as spaces).
    shown: bytearray | None = None

    @classmethod
    def of(cls, data: bytes, name: str = "<block>", unterminated: bool = False) -> _Block:
        """A block holding ``data`` (whole lines)."""
        return cls(name, bytearray(_FRONT) + data + bytearray(_PAD), _FRONT + len(data), unterminated)


def _blocks(source: Source, largest: int | None = None) -> Generator[_Block, None, None]:
    """The source's data in blocks of whole lines, each read straight into its own padded buffer;
    blocks grow from _FIRST_BLOCK bytes to ``largest`` (default _BLOCK).

    Raises :class:`_Unreadable` when compressed data is corrupt (the caller knows how many lines
    were complete before it).
    """
    limit = max_line_bytes()
    largest = _BLOCK if largest is None else largest
    with _open_binary(source) as (fill, name):
        carry, first = b"", True  # carry: the start of a line the previous block cut off
        size = min(_FIRST_BLOCK, largest)  # small files get small buffers; blocks double up to ``largest``
        while True:
            # A line longer than a block is read in steps that double, so it is copied O(1) times per byte.
            padded = bytearray(_FRONT + len(carry) + max(size, len(carry)) + _PAD)
            start = _FRONT + len(carry)
            padded[_FRONT:start] = carry
            size = min(2 * size, largest)
            try:
                got = fill(memoryview(padded)[start : len(padded) - _PAD])
            except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
                raise _Unreadable(name, str(exc)) from None
            except OSError as exc:  # EIO, a directory, ...: the lines before it are still counted
                raise _Unreadable(name, exc.strerror or str(exc), compressed=False) from None
            if not got:
                break
            end = start + got
            # The mark is looked for once the file's first three bytes are in, however many reads
            # brought them (a stream may give one byte at a time).
            if first and (end - _FRONT >= len(_BOM) or not _BOM.startswith(bytes(padded[_FRONT:end]))):
                end = _strip_bom(padded, end, name)
                first = False
            cut = padded.rfind(b"\n", _FRONT, end) + 1
            long_line = _long_line_start(padded, max(cut, _FRONT), limit)
            if long_line > _FRONT:  # the lines before it are read (and checked) first
                yield _Block(name, padded, long_line, False)
            if long_line >= 0:
                raise _LineTooLong(name, limit, bytes(padded[long_line : long_line + 121]))
            # Only the unfinished line is carried over, and it is at most ``limit`` bytes: no
            # block copies more than that again, however long the file's last line.
            carry = bytes(padded[max(cut, _FRONT) : end])
            if len(carry) > limit:
                if cut:
                    yield _Block(name, padded, cut, False)
                raise _LineTooLong(name, limit, carry[:121])
            if cut:
                yield _Block(name, padded, cut, False)
        if carry:  # a last line without its newline is still a line
            yield _Block.of(carry + b"\n", name, unterminated=True)


#: Longest line read, in bytes (its newline not counted), unless the environment variable
#: RETRIEVAL_EVAL_MAX_LINE_BYTES says otherwise: a line without end (a gzip bomb of one line) stops
#: the reading at once instead of filling the memory.
MAX_LINE_BYTES = 1 << 20
_MAX_LINE_VARIABLE = "RETRIEVAL_EVAL_MAX_LINE_BYTES"


def max_line_bytes() -> int:
    """The line length limit: ``RETRIEVAL_EVAL_MAX_LINE_BYTES`` when set, else :data:`MAX_LINE_BYTES`."""
    value = os.environ.get(_MAX_LINE_VARIABLE, "").strip()
    if not value:
        return MAX_LINE_BYTES
    if not value.isdigit() or int(value) < 1:
        raise InputFormatError(f"{_MAX_LINE_VARIABLE} must be a positive number of bytes; got {value!r}")
    return int(value)


def _long_line_start(padded: bytearray, end: int, limit: int) -> int:
    """Where the first line longer than ``limit`` bytes starts among the whole lines before ``end``,
    or -1. A few searches per block, not one per line: each jumps to the last newline within
    ``limit + 1`` bytes, so every line it passes over is short enough."""
    start = _FRONT
    while end - start > limit:
        newline = padded.rfind(b"\n", start, start + limit + 1)
        if newline < 0:
            return start
        start = newline + 1
    return -1


class _Unreadable(Exception):
    """Compressed data that cannot be decompressed (reported once the lines before it are counted)."""

    def __init__(self, name: str, reason: str, *, compressed: bool = True) -> None:
        self.name, self.reason, self.compressed = name, reason, compressed

    def error(self, lines: int) -> TrecFormatError:
        """The message, once the ``lines`` complete lines before the problem are counted."""
        if not self.compressed:
            return TrecFormatError(f"{self.name}: cannot read after {lines} complete lines: {self.reason}")
        if self.reason.startswith("Not a gzipped file"):  # the first stream was checked: junk follows it
            return TrecFormatError(
                f"{self.name}: trailing garbage after the gzip stream (after {lines} complete lines); expected "
                f"nothing after the end of the compressed data; got bytes that are not a gzip stream")
        return TrecFormatError(
            f"{self.name}: compressed data is truncated or corrupt after {lines} complete lines ({self.reason}); "
            "expected a complete gzip stream")


class _LineTooLong(_Unreadable):
    """A line longer than the limit: reported with its number once the lines before it are counted."""

    def __init__(self, name: str, limit: int, start: bytes) -> None:
        super().__init__(name, "line too long", compressed=False)
        self.limit, self.start = limit, start

    def error(self, lines: int) -> TrecFormatError:
        return TrecFormatError(
            f"{self.name}:{lines + 1}: line longer than {self.limit} bytes; expected lines of at most "
            f"{self.limit} bytes (set {_MAX_LINE_VARIABLE} to allow longer ones); got a line starting "
            f"{_snippet(self.start)}")


def _strip_bom(padded: bytearray, end: int, name: str) -> int:
    """Remove a leading UTF-8 byte order mark, with a warning (trec_eval would keep it as part of
    the first query id, which then matches nothing); returns the new end of the data."""
    if padded[_FRONT : _FRONT + 3] != _BOM:
        return end
    warnings.warn(f"{name}:1: UTF-8 byte order mark at the start of the file ignored", InputWarning, stacklevel=3)
    padded[_FRONT : end - 3] = padded[_FRONT + 3 : end]
    return end - 3


class _BadLine(Exception):
    """A malformed line found while parsing a block on a worker thread. Its line number is known
    only once the blocks before it are counted: :func:`_parsed_blocks` turns it into a
    :class:`TrecFormatError`."""

    def __init__(self, name: str, line_in_block: int, message: str) -> None:
        self.name, self.line_in_block, self.message = name, line_in_block, message

    def located(self, lines_before: int) -> TrecFormatError:
        return TrecFormatError(f"{self.name}:{lines_before + self.line_in_block + 1}: {self.message}")


@define(eq=False)  # (as _Block)
class _Tokens:
    """The data lines of one block: fields located by byte offsets in the block's buffer, nothing copied yet.

    Field ``i`` is the bytes strictly between ``before[i]`` and ``ends[i]`` (offsets in ``padded``).
    """

    block: _Block
    buffer: npt.NDArray[np.uint8]  # the block's padded buffer as uint8 (a view)
    line_index: IntArray  # index (in the block) of every data line
    first_token: IntArray  # index of each data line's first field in before/ends
    n_tokens: IntArray  # fields on each data line
    before: IntArray  # offset of the separator before each field
    ends: IntArray  # offset just past each field
    line_ends: IntArray  # offset of every newline in the block
    lines_before: int = 0  # lines of the file before the block: set in file order by _parsed_blocks
    #: When every line of the block is a data line of the same number of fields, that number (else 0):
    #: field ``i`` of every line is then ``before[i::uniform]``, a view instead of a gathered copy.
    uniform: int = 0

    @property
    def name(self) -> str:
        return self.block.name

    @property
    def n_lines(self) -> int:
        return len(self.line_ends)

    def line_number(self, row: int) -> int:
        return self.lines_before + int(self.line_index[row]) + 1

    def line_text(self, row: int) -> str:
        i = int(self.line_index[row])
        start = int(self.line_ends[i - 1]) + 1 if i else _FRONT
        text = self.block.padded if self.block.shown is None else self.block.shown
        return _snippet(text[start : int(self.line_ends[i])])

    def field(self, row: int, field: int) -> bytes:
        """Field ``field`` of data line ``row`` (one slice, not a whole column)."""
        index = int(self.first_token[row]) + field
        return bytes(self.block.padded[int(self.before[index]) + 1 : int(self.ends[index])])

    def contains(self, byte: bytes) -> bool:
        return self.block.padded.find(byte, _FRONT, self.block.end) >= 0

    def ids(self, field: int) -> BytesArray | npt.NDArray[np.object_]:
        """Field ``field`` of every data line as ids: :meth:`strings`, unless a few ids are much longer
        than the others. A fixed-width array is as wide as its longest id, so a handful of ids of
        5,000 bytes would make every row 5,000 bytes; such a field comes as ``bytes`` objects
        instead (one per line, but memory in proportion to the bytes read)."""
        start, length = self._extent(field)
        if len(length):
            longest = int(length.max())
            width = 8 * max(-(-longest // 8), 1)
            if width > _WIDE_ID and width > 4 * (float(length.mean()) + 8):
                data = bytes(self.block.padded)  # slices of bytes are bytes
                out = np.empty(len(length), dtype=object)
                out[:] = [data[a:b] for a, b in zip(start.tolist(), (start + length).tolist())]
                return out
            return self._fixed_width(start, length, longest)
        return self._fixed_width(start, length, 0)

    def strings(self, field: int, rows: IntArray | None = None) -> BytesArray:
        """Field ``field`` of every data line as a fixed-width bytes array (no Python object per line).

        The width is a multiple of 8: each field is copied as 64-bit words, zero-padded, which is
        what interning compares anyway (a trailing NUL does not change a NumPy bytes value). The
        words keep the bytes in memory order, so no byte swapping is needed either way.
        """
        start, length = self._extent(field, rows)
        return self._fixed_width(start, length, int(length.max()) if len(length) else 0)

    def bounds(self, field: int, rows: IntArray | None = None) -> tuple[IntArray, IntArray]:
        """``before`` and ``ends`` of field ``field`` of each data line (of ``rows``, default all)."""
        if rows is None and self.uniform > field:
            return self.before[field :: self.uniform], self.ends[field :: self.uniform]
        index = (self.first_token if rows is None else self.first_token[rows]) + field
        return self.before[index], self.ends[index]

    def _extent(self, field: int, rows: IntArray | None = None) -> tuple[IntArray, IntArray]:
        """Where field ``field`` of each data line (of ``rows``, default all) starts, and its length."""
        before, ends = self.bounds(field, rows)
        start = before + 1
        length: IntArray = ends - start  # int64: the stubs lose the width of a difference
        return start, length

    def _fixed_width(self, start: IntArray, length: IntArray, longest: int) -> BytesArray:
        """The fields at ``start`` of ``length`` bytes (the longest ``longest``) as a bytes array."""
        n_words = max(-(-longest // 8), 1)
        if n_words > 32 or n_words * len(start) > 1 << 25:  # very long ids: copy them one by one instead
            padded = self.block.padded
            return np.array([bytes(padded[a:b]) for a, b in zip(start, start + length)], dtype=f"S{8 * n_words}")
        at = self._words_at(np.uint64)
        if n_words == 1:
            return (at[start] & _FIRST_BYTES[length]).view("S8")
        out = np.empty((len(start), n_words), dtype=np.uint64)
        out[:, 0] = at[start] & _FIRST_BYTES[np.minimum(length, 8)]
        for j in range(1, n_words):  # loop over 8-byte words of the field, not over lines
            read = np.minimum(start + 8 * j, self.block.end)
            out[:, j] = at[read] & _FIRST_BYTES[np.clip(length - 8 * j, 0, 8)]
        return out.view(f"S{8 * n_words}").ravel()

    def decimals(self, field: int) -> tuple[FloatArray, BoolArray]:
        """Field ``field`` of every line read as a plain decimal, and where that worked.

        Handles ``[+-]digits[.digits]`` of at most 16 bytes whose digits, without the point, are a
        number up to 2**53 (nearly every score written with a fixed number of decimals). Then
        ``digits / 10**decimals`` is one correctly rounded IEEE division, so the value is exactly
        what ``float()`` gives. Other fields (exponents, ``inf``, long reprs, errors) are left to
        the caller: they are False in the mask.

        The field is read right-aligned into big-endian 64-bit words (a second one only when some
        field is longer than 8 bytes; otherwise the high word is the scalar '00000000') and
        processed with whole-word arithmetic: no per-byte or per-line step, and no division but
        the last one.
        """
        before, end = self.bounds(field)
        length: IntArray = end - before - 1  # int64: the stubs lose the width of a difference
        at = self._words_at()
        longest = int(length.max()) if len(length) else 0
        if 0 < longest <= 8:
            same_decimals = self._same_decimals(at, before, end, length)
            if same_decimals is not None:
                return same_decimals, np.ones(len(length), dtype=bool)
        low = _right_aligned(at[end - 8], np.minimum(length, 8))
        two_words = longest > 8
        high = _right_aligned(at[end - 16], np.clip(length - 8, 0, 8)) if two_words else _ZEROS
        digits = length
        negative = None
        if self.contains(b"-") or self.contains(b"+"):
            # A leading sign becomes '0' (the field's first byte is byte length-1 from the right).
            in_low = length <= 8
            shift = ((np.where(in_low, length, length - 8) - 1).clip(0, 7) * 8).astype(np.uint64)
            first = (np.where(in_low, low, high) >> shift) & np.uint64(0xFF)
            negative = first == ord("-")
            signed = negative | (first == ord("+"))
            to_zero = np.where(signed, np.uint64(ord("0")) - first, np.uint64(0)) << shift
            low = low + np.where(in_low, to_zero, np.uint64(0))
            high = high + np.where(in_low, np.uint64(0), to_zero)
            digits = length - signed
        # The point becomes '0' ('.' + 2), so that the digits check covers every byte, then it is
        # dropped: the bytes left of it move one byte right and a '0' comes in at the top.
        low_point, high_point = _bytes_equal(low, ord(".")), _bytes_equal(high, ord("."))
        low = low + (low_point >> np.uint64(6))
        high = high + (high_point >> np.uint64(6))
        has_point = (low_point | high_point) != 0 if two_words else low_point != 0
        ok = (digits - has_point > 0) & _all_digits(low) & _at_most_one(low_point)
        if two_words:  # (one word: every field is 8 bytes or shorter)
            ok &= (length <= 16) & _all_digits(high) & _at_most_one(high_point) & ((low_point == 0) | (high_point == 0))
        # Point position from the right (= number of decimals); 16 when there is none.
        not_in_low = (np.where(high_point != 0, 8 + _byte_index(cast("npt.NDArray[np.uint64]", high_point)), 16)
                      if two_words else 16)  # (two words: high_point is an array, one per line)
        point = np.where(low_point != 0, _byte_index(low_point), not_in_low)
        keep = _KEEP_LOW[np.minimum(point, 8)]  # the bytes of the low word right of the point
        low = (low & keep) | (((low >> np.uint64(8)) | (high << np.uint64(56))) & ~keep)
        value = _eight_digits(low - _ZEROS)
        if two_words:
            keep = _KEEP_LOW[np.clip(point - 8, 0, 8)]
            high = (high & keep) | (((high >> np.uint64(8)) | _ZERO_TOP) & ~keep)
            value += _eight_digits(high - _ZEROS) * np.uint64(10**8)
            ok &= value <= np.uint64(2**53)
        result = value.astype(np.float64)
        result /= _POW10_F[point & 15]
        if negative is not None:
            np.negative(result, out=result, where=negative)
        return result, ok

    def _same_decimals(self, at: npt.NDArray[np.uint64], before: IntArray, end: IntArray,
                       length: IntArray) -> FloatArray | None:
        """:meth:`decimals` of unsigned fields of at most 8 bytes that all have as many decimals as the
        first one (most runs: scores printed with one format), or None when some field does not (a
        sign is not a digit: a signed field is left to the general case too).

        The point is then at the same place in every right-aligned word: no search for it, and about
        half the whole-array steps of the general case. The value is the same integer divided by the
        same power of ten, so exactly the general case's (and float()'s).
        """
        first = bytes(self.block.padded[int(before[0]) + 1 : int(end[0])])
        decimals = len(first) - 1 - first.find(b".") if b"." in first else 0  # "5." has 0: not all digits below
        shortest = int(length.min())
        if shortest == int(length.max()):  # one width: masks as scalars instead of one per line
            low = (at[end - 8] & _KEEP_LOW[shortest]) | _ZERO_FILL[shortest]
        else:
            low = _right_aligned(at[end - 8], length)
        if decimals:
            shift = np.uint64(8 * decimals)
            if not bool(np.all((low >> shift) & np.uint64(0xFF) == np.uint64(ord(".")))):
                return None  # (so every field has a digit: at least ``decimals`` of them)
            keep = _KEEP_LOW[decimals]  # drop the point: the bytes left of it move right, a '0' comes in on top
            low = (low & keep) | ((low >> np.uint64(8)) & ~keep) | _ZERO_TOP
        if not bool(np.all(_all_digits(low))):  # (a second point, an exponent, letters: the general case)
            return None
        value: FloatArray = _eight_digits(low - _ZEROS).astype(np.float64)
        if decimals:
            value /= _POW10_F[decimals]
        return value

    def _words_at(self, dtype: npt.DTypeLike = ">u8") -> npt.NDArray[np.uint64]:
        """Every byte offset of the buffer read as the 8 bytes from there (a view, no copy): as a
        big-endian number by default, to compute with; as ``np.uint64`` to copy bytes in memory order."""
        return np.ndarray((len(self.buffer) - 7,), dtype=dtype, buffer=self.buffer, strides=(1,))

    def fail(self, row: int, problem: str, expected: str) -> _BadLine:
        if self.block.unterminated and row == len(self.line_index) - 1:
            problem += " (the last line, with no newline after it: the file may be truncated)"
        return _BadLine(self.name, int(self.line_index[row]), f"{problem}; expected {expected}; got {self.line_text(row)}")


_KEEP_LOW = np.array([(1 << (8 * n)) - 1 for n in range(9)], dtype=np.uint64)  # the last n bytes
_ZEROS = np.uint64(int.from_bytes(b"0" * 8, "big"))
_HIGH_BITS = np.uint64(0x8080808080808080)
_LOW_7 = np.uint64(0x7F7F7F7F7F7F7F7F)
_ZERO_FILL = _ZEROS & ~_KEEP_LOW  # '0' in all but the last n bytes
_ZERO_TOP = np.uint64(ord("0") << 56)
_POW10_F = np.array([10.0**k for k in range(16)])


def _right_aligned(words: npt.NDArray[np.uint64], length: IntArray) -> npt.NDArray[np.uint64]:
    """The last ``length`` bytes of each word, with '0' bytes left of them."""
    return (words & _KEEP_LOW[length]) | _ZERO_FILL[length]


#: 64-bit words: an array of them (one per line), or one word for every line (the high word when no
#: field is longer than 8 bytes). The helpers below take either and give back the same kind.
_Words: TypeAlias = "npt.NDArray[np.uint64] | np.uint64"


@overload
def _at_most_one(marks: npt.NDArray[np.uint64]) -> BoolArray: ...
@overload
def _at_most_one(marks: np.uint64) -> np.bool_: ...
def _at_most_one(marks: _Words) -> BoolArray | np.bool_:
    """Whether at most one byte of each word is marked."""
    at_most_one: BoolArray | np.bool_ = (marks & (marks - np.uint64(1))) == 0  # the stubs type ndarray == as Any
    return at_most_one


@overload
def _bytes_equal(words: npt.NDArray[np.uint64], byte: int) -> npt.NDArray[np.uint64]: ...
@overload
def _bytes_equal(words: np.uint64, byte: int) -> np.uint64: ...
def _bytes_equal(words: _Words, byte: int) -> _Words:
    """0x80 in every byte of ``words`` equal to ``byte``, 0 elsewhere (exact, no borrow between bytes)."""
    x = words ^ np.uint64(byte * 0x0101010101010101)
    return ~(((x & _LOW_7) + _LOW_7) | x) & _HIGH_BITS


def _byte_index(marks: npt.NDArray[np.uint64]) -> IntArray:
    """Index from the right (0 = last byte) of the single marked byte of each word (0x80 bits).

    Byte k marked is ``1 << 8k`` once shifted down: multiplying it by _BYTE_NUMBERS shifts that
    constant's byte 7 - k, which holds k, into the top byte. (A word with several marks gives
    some index up to 255: its field is not a plain decimal anyway.)
    """
    return ((marks >> np.uint64(7)) * _BYTE_NUMBERS >> np.uint64(56)).astype(np.int64)


#: Bytes 7, 6, ..., 0 (from the right) hold 0, 1, ..., 7: see :func:`_byte_index`.
_BYTE_NUMBERS = np.uint64(0x0001020304050607)


@overload
def _all_digits(words: npt.NDArray[np.uint64]) -> BoolArray: ...
@overload
def _all_digits(words: np.uint64) -> np.bool_: ...
def _all_digits(words: _Words) -> BoolArray | np.bool_:
    """Whether every byte of each word is an ASCII digit."""
    # A byte is a digit when it is ASCII, not below '0' (subtracting borrows) and not above '9'
    # (adding 0x46 reaches 0x80). A borrow may spoil the byte above, but that byte is then moot.
    bad = words | (words - _ZEROS) | (words + np.uint64(0x4646464646464646))
    all_digits: BoolArray | np.bool_ = (bad & _HIGH_BITS) == 0  # the stubs type ndarray == as Any
    return all_digits


@overload
def _eight_digits(words: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]: ...
@overload
def _eight_digits(words: np.uint64) -> np.uint64: ...
def _eight_digits(words: _Words) -> _Words:
    """The number written by 8 decimal digits (byte values 0-9, big-endian in a 64-bit word).

    Adjacent lanes are combined in three steps (pairs, quads, halves) with plain integer arithmetic
    on the whole word: no lane ever overflows into its neighbour.
    """
    pairs = ((words >> np.uint64(8)) * np.uint64(10) + words) & np.uint64(0x00FF00FF00FF00FF)
    quads = ((pairs >> np.uint64(16)) * np.uint64(100) + pairs) & np.uint64(0x0000FFFF0000FFFF)
    return (quads >> np.uint64(32)) * np.uint64(10000) + (quads & np.uint64(0xFFFFFFFF))


#: Bytes before and after each block, so that 8-byte reads ending or starting anywhere in it (the
#: 16 bytes up to a field's end, or the words from its start) stay in bounds. The front ones are
#: zero: the last of them is the separator before the block's first field.
_FRONT, _PAD = 16, 8
#: _FIRST_BYTES[n] keeps the first n bytes in memory of a 64-bit word and zeroes the rest.
_FIRST_BYTES = np.frombuffer(b"".join(b"\xff" * n + bytes(8 - n) for n in range(9)), dtype=np.uint64)


def _tokenize(block: _Block) -> _Tokens:
    padded, end = block.padded, block.end
    nul = padded.find(b"\0", _FRONT, end)
    if nul >= 0:  # C tools would cut the line there; we refuse to guess
        line_start, line_end = padded.rfind(b"\n", _FRONT, nul) + 1, padded.find(b"\n", nul, end)
        raise _BadLine(block.name, padded.count(b"\n", _FRONT, nul),
                       f"NUL byte in the line; expected text; got {_snippet(padded[max(line_start, _FRONT):line_end])}")
    buffer = np.frombuffer(padded, dtype=np.uint8)
    # Bytes up to 32 are separators or control bytes (checked below). The zero bytes in front of
    # the block count too: the last of them is a separator before the block's first field.
    low = buffer[:end] <= 32
    seps = np.flatnonzero(low)[_FRONT - 1 :]
    sep_bytes = buffer[seps[1:]]
    # The common layout: fields separated by exactly one space, tab or newline. Then the
    # separators alone locate every field (each lies between two of them), and every line has one.
    # The bytes of _IS_SPACE (32, and 9 to 13) are tested arithmetically: a table lookup costs 9x more.
    if (not bool(np.any(low[_FRONT:] & low[_FRONT - 1 : -1]))
            and bool(np.all((sep_bytes == 32) | (sep_bytes - np.uint8(9) < 5)))):
        before, ends = seps[:-1], seps[1:]
        newline = sep_bytes == 10  # the fields that end a line
        fields = _fields_per_line(newline)
        if fields:  # every line has as many fields: where lines start and end follows from that number
            line_ends = ends[fields - 1 :: fields]
            per_line = np.full(len(line_ends), fields)
            first = np.arange(0, len(newline), fields)
        else:
            last = np.flatnonzero(newline)
            line_ends = ends[last]
            per_line = np.diff(last, prepend=-1)
            first = last - per_line + 1
    else:
        text = buffer[_FRONT:end]
        space = _IS_SPACE[text].view(np.int8)
        edges = np.diff(space, prepend=np.int8(1), append=np.int8(1))
        before, ends = np.flatnonzero(edges == -1) + (_FRONT - 1), np.flatnonzero(edges == 1) + _FRONT
        line_ends = np.flatnonzero(text == 10) + _FRONT
        per_line = np.bincount(np.searchsorted(line_ends, ends), minlength=len(line_ends))
        first = np.concatenate(([0], np.cumsum(per_line)[:-1]))
    data = per_line > 0
    if padded.find(b"#", _FRONT, end) >= 0:
        # A line whose first field starts with '#' is a comment; '#' inside a field is data.
        data[data] = buffer[before[first[data]] + 1] != _HASH
    if bool(data.all()):  # no blank or comment line (the usual file): nothing to select
        fields = int(per_line[0]) if len(per_line) and int(per_line.min()) == int(per_line.max()) else 0
        return _Tokens(block, buffer, np.arange(len(data)), first, per_line, before, ends, line_ends, uniform=fields)
    lines = np.flatnonzero(data)
    return _Tokens(block, buffer, lines, first[lines], per_line[lines], before, ends, line_ends)


def _fields_per_line(newline: BoolArray) -> int:
    """The number of fields of every line, when it is the same on every line (0 otherwise), given
    which fields end a line. Counting is cheaper than locating each line's last field."""
    fields = int(np.argmax(newline)) + 1 if len(newline) else 0
    if not fields or len(newline) % fields or not bool(newline[fields - 1 :: fields].all()):
        return 0
    return fields if np.count_nonzero(newline) == len(newline) // fields else 0


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


def _snippet(raw: bytes | bytearray) -> str:
    text = bytes(raw).rstrip(b"\r\n").decode("utf-8", "backslashreplace")
    return repr(text if len(text) <= 120 else text[:117] + "...")


_Parsed: TypeAlias = "tuple[_Tokens, dict[str, npt.NDArray[Any]]]"


def _parsed_blocks(source: Source, parse: Callable[[_Block], _Parsed]) -> Iterator[_Parsed]:
    """``parse(block)`` for every block of the source, in file order.

    A file smaller than :data:`_POOL_FROM` bytes (or the first ``_POOL_FROM`` bytes of a stream,
    whose size is not known), and any file on one CPU, is parsed on the calling thread: there a
    thread pool only adds its start-up and hand-overs, and uses more CPU time for no less wall
    time. Otherwise the blocks are parsed on a few threads (NumPy releases the GIL in its array
    loops, so parsing one block overlaps with reading and parsing the next), with only a few blocks
    in flight at once, so memory stays bounded. Lines are numbered here, in file order, as each
    block's result is taken: a malformed line is reported with its number, and before any problem
    further on in the file.
    """
    numbered = _Numbering()
    threads = _threads()
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

    def __init__(self, source: Source) -> None:
        self.size_on_disk = _plain_file_size(source)
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


def _widens_too_far(column: np.dtype[Any], part: np.dtype[Any]) -> bool:
    """Whether fixed-width ids of width ``part`` would widen a column of width ``column`` past the
    point where each row costs more than a bytes object would (the rule :meth:`_Tokens.ids` applies
    within one block)."""
    if column.kind != "S" or part.kind != "S" or part.itemsize <= column.itemsize:
        return False
    return part.itemsize > _WIDE_ID and part.itemsize > 4 * (column.itemsize + 8)


def _is_gzip(path: str) -> bool:
    """Whether a file written to ``path`` is compressed (by its name: readers look at the content)."""
    return path.endswith(".gz")


def file_starts_with(path: str, magic: bytes) -> bool:
    """Whether the regular file at ``path`` starts with ``magic`` (an unreadable file does not, nor
    does a pipe such as ``<(cat run)``: looking would eat the bytes its one reading needs)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        with open(path, "rb") as handle:
            return handle.read(len(magic)) == magic
    except OSError:
        return False


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


def _short_repr(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _source_name(source: Source) -> str:
    if isinstance(source, (str, bytes, os.PathLike)):
        return os.fsdecode(source)
    return str(getattr(source, "name", "<stream>"))



def first_line_fields(path: str) -> int | None:
    """Fields on the first data line of the file at ``path`` (gzip or plain), or None when there is none
    in its first block or the file cannot be read: a cheap look, for hints in error messages."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            blocks = _blocks(path)
            try:
                for block in blocks:
                    tokens = _tokenize(block)
                    if len(tokens.n_tokens):
                        return int(tokens.n_tokens[0])
                    return None
            finally:
                blocks.close()
    except (TrecFormatError, _Unreadable, _BadLine, OSError):
        return None
    return None
