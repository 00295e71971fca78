"""Giving freed memory back to the operating system, and keeping it for reuse while a file is read."""

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
    trim = _libc_function("malloc_trim")
    if trim is not None:
        trim(0)


#: glibc's mallopt parameters (malloc.h), and the values :func:`reuse_freed_memory` gives them.
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD, _M_ARENA_MAX = -1, -3, -8
_MMAP_THRESHOLD = 32 << 20
_TRIM_THRESHOLD = 64 << 20


def reuse_freed_memory() -> None:
    """Let glibc reuse freed blocks from the start of the process (the CLI calls this; the library never does).

    By default glibc maps every block of 128 KiB or more afresh and unmaps it when it is freed, and
    trims the top of its heaps past 128 KiB, raising both thresholds only as large blocks come and
    go (up to 32 MiB, with twice that kept at the top of a heap). The reader's per-block temporaries
    are such blocks, so each one is touched page by page again: a page fault per 4 KiB, some 18,000
    more on a robust04-sized evaluation. This starts glibc at the thresholds its own rule ends up
    at. One heap serves every thread (glibc gives each thread a heap of its own by default, and a
    fresh heap is touched page by page again): the reader's threads allocate a few large blocks
    each, so they hardly ever wait for one another. :func:`release_freed_memory` still hands
    everything back where the readers call it. Elsewhere than glibc this does nothing.
    """
    mallopt = _libc_function("mallopt")
    if mallopt is not None:
        mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)
        mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD)
        mallopt(_M_ARENA_MAX, 1)


@cache
def _libc_function(name: str) -> Callable[..., int] | None:
    try:
        function: Callable[..., int] = getattr(ctypes.CDLL("libc.so.6"), name)
    except (OSError, AttributeError):  # not glibc
        return None
    return function
