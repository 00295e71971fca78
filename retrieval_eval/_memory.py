"""Giving freed memory back to the operating system (used by the reader and the build only)."""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from functools import cache


def release_freed_memory() -> None:
    """Hand memory freed by NumPy back to the OS, where the C library is glibc (Linux).

    glibc keeps freed blocks in its heaps (one per thread) for reuse; after reading a large file
    on several threads that is a few hundred MB of temporaries, which would add to the peak of the
    next step. Elsewhere this does nothing.
    """
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    try:
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None
