"""What the commands write and how they fail: exit codes, the errors the commands raise, standard
output written exactly and in full, one-line notes and warnings on stderr, terminal escaping."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence, Sized
from typing import TextIO

EXIT_OK = 0
EXIT_REGRESSION = 1  #: compare --fail-if-worse found a significant regression
EXIT_OUTPUT_FAILED = 3  #: the output could not be written (a full disk, a closed stdout, an unwritable -o file)
EXIT_BAD_INPUT = 2
EXIT_UNRESOLVABLE = 4  #: a gate could not decide (too few queries to detect its tolerance) and was asked to fail
EXIT_INTERRUPTED = 130  #: Ctrl-C: 128 + SIGINT, as shells report it


class _Usage(Exception):
    """Arguments that do not go together: reported with the usage hint, exit 2."""


class _OutputFailed(Exception):
    """The results could not be written (a full disk, a closed stdout): exit 3."""


def _emit(text: str) -> None:
    """Write ``text`` to stdout and flush it, turning a write failure into :class:`_OutputFailed`.

    A broken pipe (``| head -1``) is let through: :func:`main` ends quietly on it.
    """
    out = sys.stdout
    if out is None:  # started with stdout closed (>&-)
        raise _OutputFailed("standard output is closed")
    try:
        if _is_terminal(out):  # ids shown on a terminal cannot drive it; files and pipes get the exact bytes
            text = terminal_safe(text, keep="\t\n")
        _write_exact(out, text)
        out.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        _drop_stdout()  # the buffered rest would fail again when Python flushes stdout at exit
        raise _OutputFailed(exc.strerror or str(exc)) from None
    except ValueError as exc:  # a closed file object
        raise _OutputFailed(str(exc)) from None


def _write_exact(out: TextIO, text: str) -> None:
    """Write ``text``, the bytes of ids that are not UTF-8 (kept as lone surrogates, see
    :func:`retrieval_eval.model.id_text`) exactly as they were read, whatever stdout's error handler."""
    buffer = getattr(out, "buffer", None)
    if buffer is None or not _BYTE_KEPT.search(text):
        out.writelines(text[start : start + _WRITE_CHUNK] for start in range(0, len(text), _WRITE_CHUNK))
        return
    out.flush()
    data = text.encode(out.encoding or "utf-8", "surrogateescape")
    for start in range(0, len(data), _WRITE_CHUNK):
        buffer.write(data[start : start + _WRITE_CHUNK])


#: Characters (or bytes) per write: a single write of more than 2 GiB to a pipe is cut short at
#: 2,147,479,552 bytes without an error, which would lose the rest of a large -q output.
_WRITE_CHUNK = 1 << 24


#: A byte that is not UTF-8, kept in an id's str by the surrogateescape error handler.
_BYTE_KEPT = re.compile("[\udc80-\udcff]")


def _is_terminal(stream: object) -> bool:
    try:
        return bool(getattr(stream, "isatty", lambda: False)())
    except (OSError, ValueError):
        return False


def terminal_safe(text: str, keep: str = "") -> str:
    """``text`` with every character that is not printable (escape sequences, C1 controls, ...)
    written as a backslash escape (``\\x1b``), except those in ``keep``: what the tool prints to a
    terminal cannot retitle, clear or otherwise drive it."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c in keep else _escaped(c) for c in text)


def _escaped(char: str) -> str:
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte of an id that is not UTF-8: shown as the byte
        return f"\\x{code - 0xDC00:02x}"
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _drop_stdout() -> None:
    """Point stdout at devnull, so that nothing is written (or fails to be) at exit (Python's advice for
    BrokenPipeError, https://docs.python.org/3/library/signal.html#note-on-sigpipe)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (AttributeError, OSError, ValueError):  # no file descriptor (captured in tests): nothing to flush
        pass


def _stderr_line(line: str) -> None:
    """One line on stderr; nothing when stderr is closed (``print(file=None)`` would write it to stdout)."""
    err = sys.stderr
    if err is None:
        return
    try:
        err.write(terminal_safe(_capped(line), keep="\t") + "\n")
        err.flush()
    except (OSError, ValueError):  # stderr is gone too: there is nowhere left to say it
        pass


#: The longest run of characters without a space that a message on stderr quotes whole: longer ones are
#: input echoed back (a 100 KB query id, a measure string), cut to their start and end.
MAX_ECHOED = 200

_LONG_WORD = re.compile(rf"\S{{{MAX_ECHOED + 1},}}")


def _capped(message: str) -> str:
    """``message`` with every word longer than :data:`MAX_ECHOED` characters cut in the middle: the one
    cap on input echoed in errors, notes and warnings, whichever part of the program wrote them.

    >>> _capped("unknown query 'x" + "y" * 1000 + "'")[:30]
    "unknown query 'xyyyyyyyyyyyyyy"
    >>> len(_capped("q" * 100_000)) < 250
    True
    """
    if len(message) <= MAX_ECHOED:
        return message
    return _LONG_WORD.sub(_cut, message)


def _cut(match: re.Match[str]) -> str:
    word = match.group()
    return f"{word[:150]}...[{len(word) - 190} characters]...{word[-40:]}"


def _note(message: str) -> None:
    _stderr_line(f"retrieval-eval: note: {message}")


def _warn(message: str) -> None:
    _stderr_line(f"retrieval-eval: warning: {message}")


def _preview(items: Sequence[str], limit: int = 5, total: int | None = None) -> str:
    """The first ``limit`` of ``items`` and how many more there are; ``total``: the count, when
    ``items`` holds only the first few (a million query ids need not all be made into text)."""
    count = len(items) if total is None else total
    shown = ", ".join(items[:limit])
    return shown + (f", ... ({count - limit} more)" if count > limit else "")


def _short(text: str, limit: int = 40) -> str:
    """``text`` cut to ``limit`` characters, for quoting user input of any length in a one-line message."""
    return repr(text if len(text) <= limit else f"{text[:limit - 3]}...")


def _counted(n: int, one: str, many: str) -> str:
    """``n`` followed by the words that agree with it: ``_counted(1, "query has", "queries have")``."""
    return f"{n} {one if n == 1 else many}"


def _them(items: Sized) -> str:
    return "it" if len(items) == 1 else "them"


def check_output_file(path: str, inputs: Sequence[str], *, option: str = "-o", writing: str = "it") -> None:
    """An output file's name, checked before anything is read: not a directory, in a directory that
    exists and can be written, and none of ``inputs`` (which writing ``writing`` would replace)."""
    from ..io.files import same_file

    shown = _short(path, 120)
    if os.path.isdir(path):
        raise _Usage(f"{option}: expected a file name; got {shown}, a directory")
    folder = os.path.dirname(path) or os.curdir
    if not os.path.isdir(folder):
        raise _Usage(f"{option}: the directory of {shown} does not exist")
    if not os.access(folder, os.W_OK):
        raise _Usage(f"{option}: cannot write in the directory of {shown}")
    clash = same_file(path, list(inputs))
    if clash is not None:
        raise _Usage(f"{option}: {shown} is also an input ({_short(clash, 120)}); writing {writing} would replace it")
