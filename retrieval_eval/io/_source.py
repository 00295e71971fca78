"""Reading a source into blocks of whole lines: the first step of the text readers.

A source (a path, a binary or text file, stdin) is opened and its format recognised by its first
bytes: gzip is decompressed, bzip2, xz, zstd and Parquet streams are refused by name, and a UTF-8
byte order mark is dropped with a warning. Its data is then read in blocks of whole lines, each
straight into a padded buffer of its own (:class:`_Block`), ready for :mod:`._tokens`. A
non-blocking stream is waited for, a line longer than the limit stops the reading, and an error
after some lines is raised once those lines are counted (:class:`_Unreadable`).
"""

from __future__ import annotations

import gzip
import io
import os
import stat
import time
import warnings
import zlib
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from functools import partial
from typing import IO, Any, TypeVar, Union, cast

from attrs import define

from ..model import InputFormatError, InputTypeError, InputWarning, TrecFormatError

Source = Union[str, bytes, "os.PathLike[str]", IO[bytes], IO[str]]

_R = TypeVar("_R")


#: Bytes of the first block (a small file should not cost a whole block's buffer).
_FIRST_BLOCK = 1 << 16

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
            try:
                # An id that is not UTF-8 is held as a str by its surrogate escapes (as the readers return
                # it): encoded back, it is the same bytes.
                return text.encode("utf-8", "surrogateescape")
            except UnicodeEncodeError as exc:
                raise OSError(f"the text holds {text[exc.start:exc.start + 1]!r}, a lone surrogate that stands for "
                              "no byte; expected text, or surrogate escapes of bytes that are not UTF-8 "
                              "('\\udc80' to '\\udcff')") from None

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
    if _looks_like_parquet(head):  # a path is dispatched to the Parquet reader before it gets here
        raise TrecFormatError(f"{name}: a Parquet file, which can be read from a path but not from a stream or "
                              "standard input; give its path (pyarrow needs to seek to its footer)")
    stream = io.BufferedReader(_Prefixed(head, handle))
    if head.startswith(_GZIP_MAGIC):
        return _chunked_filler(gzip.GzipFile(fileobj=stream, mode="rb"))
    return _chunked_filler(stream)


def _looks_like_parquet(head: bytes) -> bool:
    """Whether a stream's first bytes are Parquet's: ``PAR1`` and then a binary byte (Parquet's first
    page header starts with 0x15), not the rest of a text id such as ``PAR1-7`` or ``PAR1 Q0``."""
    return head.startswith(b"PAR1") and len(head) > 4 and head[4] < 0x20 and head[4:5] not in b"\t\n\v\f\r"


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


#: Bytes before and after each block, so that 8-byte reads ending or starting anywhere in it (the
#: 16 bytes up to a field's end, or the words from its start) stay in bounds. The front ones are
#: zero: the last of them is the separator before the block's first field.
_FRONT, _PAD = 16, 8


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


def _blocks(source: Source, largest: int) -> Generator[_Block, None, None]:
    """The source's data in blocks of whole lines, each read straight into its own padded buffer;
    blocks grow from _FIRST_BLOCK bytes to ``largest`` (the parser's choice: :data:`._parse._BLOCK`).

    Raises :class:`_Unreadable` when compressed data is corrupt (the caller knows how many lines
    were complete before it).
    """
    limit = max_line_bytes()
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


def _snippet(raw: bytes | bytearray) -> str:
    text = bytes(raw).rstrip(b"\r\n").decode("utf-8", "backslashreplace")
    return repr(text if len(text) <= 120 else text[:117] + "...")


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


def file_looks_like_parquet(path: str) -> bool:
    """Whether the regular file at ``path`` has Parquet's magic bytes at both ends, the first followed by
    a binary byte (see :func:`_looks_like_parquet`); an unreadable file or a pipe does not."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        with open(path, "rb") as handle:
            if not _looks_like_parquet(handle.read(_MAGIC_LENGTH)):
                return False
            handle.seek(-4, os.SEEK_END)
            return handle.read(4) == b"PAR1"
    except OSError:
        return False


def _short_repr(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _source_name(source: Source) -> str:
    if isinstance(source, (str, bytes, os.PathLike)):
        return os.fsdecode(source)
    return str(getattr(source, "name", "<stream>"))
