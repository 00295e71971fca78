"""The C library's allocator: giving freed memory back to the OS, and keeping it for a whole process.

Used by the reader and the build (:func:`release_freed_memory`) and by the command line, which owns
its process (:func:`keep_freed_memory`).
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from functools import cache
from typing import Any


def release_freed_memory() -> None:
    """Hand memory freed by NumPy back to the OS, where the C library is glibc (Linux).

    glibc keeps freed blocks in its heaps (one per thread) for reuse; after reading a large file
    on several threads that is a few hundred MB of temporaries, which would add to the peak of the
    next step. Elsewhere this does nothing.
    """
    trim = _libc_function("malloc_trim")
    if trim is not None:
        trim(0)


#: glibc's mallopt parameters (malloc.h).
_M_TRIM_THRESHOLD, _M_MMAP_MAX, _M_ARENA_MAX = -1, -4, -8


def keep_freed_memory() -> None:
    """Reuse freed memory instead of asking the OS for new pages, for the rest of the process.

    The kernel zeroes every page it hands out, and on a virtual machine a first touch costs more
    still (some 2 us a page). By default glibc maps each block of 128 KiB or more afresh and unmaps
    it when freed, and gives each thread a heap of its own: the reader's per-block temporaries, and
    the hundreds of arrays of tens of MB that an evaluation of 10 million queries makes and frees,
    were then touched page by page again, as much time as the computing itself. Here every block
    comes from one heap shared by all threads (the reader's threads allocate a few large blocks
    each, so they hardly wait for one another), whose freed space is reused as it is; only
    :func:`release_freed_memory` gives it back. NumPy's request for transparent huge pages is
    turned off too: on a fresh heap page the kernel then zeroes 4 KiB rather than 2 MiB, most of
    which a smaller array never uses.

    Process-wide, so only the command line calls it. Does nothing where the C library is not glibc.
    """
    mallopt = _libc_function("mallopt")
    if mallopt is not None:
        mallopt(_M_MMAP_MAX, 0)  # no block gets its own mapping: the heap serves them all
        mallopt(_M_TRIM_THRESHOLD, 2**31 - 1)  # the freed top of the heap stays for the next array
        mallopt(_M_ARENA_MAX, 1)  # one heap for every thread: a fresh per-thread heap is touched anew
    import numpy as np

    core: Any = getattr(np, "_core", None) or np.core  # NumPy 2, or 1.x
    set_hugepage = getattr(core.multiarray, "_set_madvise_hugepage", None)  # NumPy's own switch (Linux only)
    if set_hugepage is not None:
        set_hugepage(False)


@cache
def _libc_function(name: str) -> Callable[..., int] | None:
    try:
        function: Callable[..., int] = getattr(ctypes.CDLL("libc.so.6"), name)
    except (OSError, AttributeError):  # not glibc
        return None
    return function
