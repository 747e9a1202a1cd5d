"""The threaded copies into and out of shared-memory regions (sortd._copy): every size around the
point where the copy splits, every slice's edge."""
from __future__ import annotations

import time

import numpy as np
import pytest

from sortd import _copy


@pytest.mark.parametrize("dtype", ["<u4", "<f8"])
@pytest.mark.parametrize("extra", [-1, 0, 1])
@pytest.mark.parametrize("parts", [0, 1, 2, 3, 7, 9])
def test_copy_into_equals_the_source(monkeypatch: pytest.MonkeyPatch, dtype: str, extra: int,
                                     parts: int) -> None:
    monkeypatch.setattr(_copy, "MIN_BYTES_PER_THREAD", 4096)  # many slices on small arrays
    monkeypatch.setattr(_copy, "_cores", lambda: 16)  # as many as a large host's
    n = max(0, parts * 4096 // np.dtype(dtype).itemsize + extra)
    src = np.random.default_rng(n).integers(0, 2**31, n).astype(dtype)
    dst = np.full(n, 7, dtype)
    _copy.copy_into(dst, src)
    np.testing.assert_array_equal(dst, src)
    out = _copy.copied(src)
    np.testing.assert_array_equal(out, src)
    assert out.dtype == src.dtype and not np.shares_memory(out, src)


def test_threads_follow_the_size() -> None:
    assert _copy._threads_for(0) == 1
    assert _copy._threads_for(_copy.MIN_BYTES_PER_THREAD - 1) == 1
    assert 1 <= _copy._threads_for(1 << 40) <= _copy.MAX_THREADS


def test_a_failed_copy_returns_only_once_every_slice_has_ended(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_copy, "MIN_BYTES_PER_THREAD", 4096)
    monkeypatch.setattr(_copy, "_cores", lambda: 4)
    ended = []
    real = np.copyto

    def slow_copyto(dst: np.ndarray, src: np.ndarray) -> None:
        time.sleep(0.2)  # still running when the first slice fails, unless copy_into waits
        try:
            real(dst, src)
        finally:
            ended.append(1)

    monkeypatch.setattr(np, "copyto", slow_copyto)
    src = np.arange(4 * 1024, dtype="<u4")
    dst = np.zeros_like(src)
    dst.flags.writeable = False  # the first slice, copied here, fails at once
    with pytest.raises(ValueError):
        _copy.copy_into(dst, src)
    assert len(ended) == 3
