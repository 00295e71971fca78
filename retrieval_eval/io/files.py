"""Writing a file without ever leaving half of it: every command and function that writes a file
(``plot -o`` and :func:`retrieval_eval.plotting.save` now; ``fuse -o``, ``baseline save -o``,
``report -o`` as they come) goes through :func:`replacing`, and a command refuses an output that is
one of its inputs with :func:`same_file`.

:func:`replacing` writes into a new file beside the target, in the same directory (so on the same
file system), and renames it over the target only once every byte is written and flushed
(:func:`os.replace`, atomic on POSIX). A failure at any point (a full disk, a file-size limit, an
exception in the writer) removes the temporary file and leaves the old target as it was.

>>> import os, tempfile
>>> folder = tempfile.mkdtemp()
>>> target = os.path.join(folder, "out.txt")
>>> with replacing(target) as out:
...     _ = out.write(b"first")
>>> try:
...     with replacing(target) as out:
...         _ = out.write(b"half of the second")
...         raise OSError(27, "File too large")
... except OSError as exc:
...     print(exc.strerror)
File too large
>>> with open(target, "rb") as old:
...     old.read(), sorted(os.listdir(folder))
(b'first', ['out.txt'])
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterable, Iterator
from typing import BinaryIO

__all__ = ["replacing", "same_file", "write_error"]


@contextlib.contextmanager
def replacing(path: str | os.PathLike[str]) -> Iterator[BinaryIO]:
    """A binary file to write ``path``'s new content into; ``path`` is replaced when the block ends.

    - The new file is created beside ``path`` (named ``.NAME.XXXXXXXX.tmp``), with the permissions a
      new file gets (the umask applies), or the permissions of the file it replaces.
    - On leaving the block without an exception, the data is flushed to disk and the new file
      renamed over ``path`` in one step: a reader sees the old file or the new one, never a part.
    - On an exception (in the block, in the flush or in the rename) the new file is removed and
      ``path`` is untouched. An exception whose cause is an :class:`OSError` (a writer that fails in
      its own clean-up after the disk filled up, as matplotlib's PDF writer does) is raised as that
      OSError, so that callers catch one type.
    - ``path`` an existing file that cannot be written (read-only): :class:`PermissionError`, as
      ``open`` would raise, although the directory would let it be replaced.
    - ``path`` a symbolic link: the file it points to is replaced, the link kept. ``path`` an existing
      file that is not a regular file (``/dev/null``, a named pipe): written in place, as it cannot be
      replaced.

    Text writers wrap the binary file: ``io.TextIOWrapper(out, encoding="utf-8")``, detached (or
    flushed) before the block ends.

    Raises
    ------
    OSError
        The directory cannot be written, or the writing failed; ``path`` is unchanged.
    """
    target = os.path.realpath(path)
    try:
        mode: int | None = os.stat(target).st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and not os.access(target, os.W_OK):  # as open() would: a read-only file stays
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fspath(path))
    if mode is not None and not stat.S_ISREG(mode):  # a device or a pipe: nothing to rename over
        with _reraised_os_error(), open(target, "wb") as direct:
            yield direct
        return
    temporary, handle = _create_beside(target)
    try:
        with _reraised_os_error():
            with os.fdopen(handle, "wb") as out:
                yield out
                out.flush()
                os.fsync(out.fileno())
            if mode is not None:
                os.chmod(temporary, stat.S_IMODE(mode))
            os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _create_beside(target: str) -> tuple[str, int]:
    """A new, empty file in ``target``'s directory, opened for writing: its path and descriptor."""
    folder, name = os.path.split(target)
    for _ in range(100):
        candidate = os.path.join(folder, f".{name[:200]}.{secrets.token_hex(4)}.tmp")
        try:
            return candidate, os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
    raise FileExistsError(f"{folder}: no free name for a temporary file")  # pragma: no cover


@contextlib.contextmanager
def _reraised_os_error() -> Iterator[None]:
    try:
        yield
    except OSError:
        raise
    except Exception as exc:
        cause = write_error(exc)
        if cause is None:
            raise
        raise cause from exc


def write_error(exc: BaseException) -> OSError | None:
    """The :class:`OSError` behind ``exc``: ``exc`` itself, or the first one in its chain of causes
    and contexts (a writer whose clean-up failed after the write did), or None."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, OSError):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def same_file(output: str | os.PathLike[str], inputs: Iterable[object]) -> str | None:
    """The first of ``inputs`` that names the same file as ``output`` (as given), or None.

    Two names are the same file when :func:`os.path.samefile` says so (links and hard links
    included), or, where ``output`` does not exist yet, when their real paths agree. Inputs that are
    not paths (``-``, open files) and paths that cannot be looked at are skipped.

    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> run = os.path.join(folder, "a.run")
    >>> with open(run, "w"):
    ...     pass
    >>> same_file(run, ["-", os.path.join(folder, ".", "a.run")]) == os.path.join(folder, ".", "a.run")
    True
    >>> same_file(os.path.join(folder, "plot.png"), [run]) is None
    True
    """
    out = os.fspath(output)
    for given in inputs:
        if not isinstance(given, (str, os.PathLike)) or os.fspath(given) == "-":
            continue
        name = os.fspath(given)
        assert isinstance(name, str)
        try:
            if os.path.samefile(out, name):
                return name
        except OSError:  # one of them does not exist (yet): compare where they would be
            if os.path.realpath(out) == os.path.realpath(name):
                return name
        except ValueError:  # a NUL in a name: it names no file
            continue
    return None
