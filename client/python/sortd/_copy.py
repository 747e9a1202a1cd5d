"""Copies of large arrays into and out of shared-memory regions and gRPC answers, on several
threads.

A GPU sorts 16M keys in about 3 ms; one thread's copies of them into a region and of the result
out of it (into fresh memory) made a default shared-memory sort take 33.4 ms on the GPU host's
Xeon, and copies on up to 8 threads 10.4 ms (docs/python.md, "On the GPU host"). numpy releases
the GIL while it copies plain dtypes, so a pool of threads copies the slices at once.
"""
from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Optional

import numpy as np

# Each thread copies at least this much: below it, handing a slice to a thread costs more than
# copying it (a 4 MiB copy takes 0.07 ms when it is in the caches).
MIN_BYTES_PER_THREAD = 2 << 20
MAX_THREADS = 8

_lock = threading.Lock()
_pool: Optional[ThreadPoolExecutor] = None


def _forget_pool() -> None:
    # A forked child has none of the parent's threads, and a lock one of them held stays held.
    global _pool, _lock
    _pool = None
    _lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))  # the cores this process may run on
    except AttributeError:
        return os.cpu_count() or 1


def _threads_for(nbytes: int) -> int:
    if nbytes < 2 * MIN_BYTES_PER_THREAD:
        return 1  # the common small copy asks the kernel for nothing
    return max(1, min(MAX_THREADS, _cores(), nbytes // MIN_BYTES_PER_THREAD))


def copy_into(dst: np.ndarray, src: np.ndarray) -> None:
    """``dst[...] = src`` for 1-d arrays of the same shape, in slices on several threads when
    `src` is large."""
    threads = _threads_for(src.nbytes)
    if threads == 1:
        dst[...] = src
        return
    global _pool
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(MAX_THREADS, thread_name_prefix="sortd-copy")
        pool = _pool
    step = -(-src.shape[0] // threads)
    slices = [slice(i, i + step) for i in range(0, src.shape[0], step)]
    done = [pool.submit(np.copyto, dst[s], src[s]) for s in slices[1:]]
    try:
        dst[slices[0]] = src[slices[0]]
    finally:
        # Every slice has landed before this returns or raises: a copy still running could
        # otherwise overwrite what the next sort copies into the same region.
        wait(done)
    for d in done:
        d.result()


def copied(src: np.ndarray) -> np.ndarray:
    """A new array equal to the 1-d `src`, copied as copy_into does."""
    out = np.empty_like(src)
    copy_into(out, src)
    return out
