"""Shared-memory regions for sortd's same-host data plane (sortd --shared_memory).

A region is a file this process creates in sortd's --shared_memory_dir (O_EXCL, mode 0600), sizes
and maps; once registered, sortd maps it too and sort requests name byte ranges of it instead of
carrying the arrays. As in the C++ client (client/shm_region.cc), the file is unlinked when the
region is released, so a run leaves nothing behind in /dev/shm.
"""
from __future__ import annotations

import itertools
import mmap
import os
import secrets
import sys
import weakref
from typing import Optional

import numpy as np

ALIGNMENT = 64  # a cache line; keeps 8-byte keys aligned too
_counter = itertools.count()


def align_up(n: int) -> int:
    return (n + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT


def unique_name(prefix: str = "sortd-py") -> str:
    # pid: unique among live processes; counter: among this process's regions; random: against a
    # pid reused after a crash left a file behind (creation refuses existing files).
    return f"{prefix}-{os.getpid()}-{next(_counter)}-{secrets.token_hex(4)}"


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


class Region:
    """A mapped file in `directory`. Arrays made by :meth:`view` keep the mapping alive (numpy
    holds the mmap as their base), so releasing a region never invalidates them: it unlinks the
    file and unmaps only once the last view is gone."""

    def __init__(self, directory: str, size: int) -> None:
        if size <= 0:
            raise ValueError(f"region size: {size} bytes; give at least 1")
        self.name = unique_name()
        self.path = os.path.join(directory, self.name)
        self.size = size
        fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW,
                     0o600)
        try:
            os.ftruncate(fd, size)
            self._mmap: Optional[mmap.mmap] = mmap.mmap(fd, size, mmap.MAP_SHARED,
                                                       mmap.PROT_READ | mmap.PROT_WRITE)
        except BaseException:
            _unlink(self.path)
            raise
        finally:
            os.close(fd)  # the mapping does not need the descriptor
        probe = np.frombuffer(self._mmap, dtype=np.uint8, count=1)
        self.address = probe.ctypes.data
        del probe
        # Unlinks on garbage collection or exit if release() never ran.
        self._finalizer = weakref.finalize(self, _unlink, self.path)
        self.registered = False

    def view(self, offset: int, count: int, dtype: np.dtype) -> np.ndarray:
        """A writable array over [offset, offset + count * itemsize) of the region."""
        assert self._mmap is not None, "region released"
        return np.frombuffer(self._mmap, dtype=dtype, count=count, offset=offset)

    def holds(self, arr: np.ndarray) -> Optional[int]:
        """The offset of `arr`'s bytes in this region, or None when they are not all inside it."""
        if self._mmap is None or not arr.flags.c_contiguous:
            return None
        start = arr.__array_interface__["data"][0] - self.address
        if 0 <= start and start + arr.nbytes <= self.size:
            return start
        return None

    def release(self) -> None:
        """Unlinks the file and unmaps it unless arrays still view it (then they own the mapping,
        and it goes with the last of them)."""
        self._finalizer()
        if self._mmap is not None:
            try:
                self._mmap.close()
            except BufferError:
                pass  # views exist: numpy's reference keeps the mapping until they are gone
            self._mmap = None

    def release_if_unused(self) -> bool:
        """Releases the region when no array views it any more (then True)."""
        if self._mmap is None:
            return True
        if sys.getrefcount(self._mmap) > 2:
            # Held by more than this region and the call's argument: every view holds it. Saves
            # the refused close (a raised BufferError) on every sort while an empty() array lives.
            return False
        try:
            self._mmap.close()  # refused (BufferError) while numpy arrays view the mapping
        except BufferError:
            return False
        self._mmap = None
        self._finalizer()
        return True
