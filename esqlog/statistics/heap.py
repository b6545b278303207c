"""Giving the C heap's freed memory back to the system after a large load.

Why: loading a calibration's statistics checks arrays of millions of entries, a chunk at a
time, and the temporaries are freed; glibc's allocator keeps freed heap memory for reuse,
so after the load every process held ~15 MiB of it at a million documents, private to
each of N worker processes that otherwise share the mapped files. ``malloc_trim(0)`` hands
it back (milliseconds). Elsewhere than glibc this does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from functools import cache
from typing import Any


@cache
def _libc() -> Any:
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
    except OSError:
        return None
    return libc if libc is not None and hasattr(libc, "malloc_trim") else None


def release_freed_memory() -> bool:
    """Return freed heap memory to the system; whether the allocator could be asked."""
    libc = _libc()
    if libc is None:
        return False
    libc.malloc_trim(0)
    return True
