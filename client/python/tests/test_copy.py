"""The threaded copies into and out of shared-memory regions (sortd._copy): every size around the
point where the copy splits, every slice's edge."""
from __future__ import annotations

import numpy as np
import pytest

from sortd import _copy


@pytest.mark.parametrize("dtype", ["<u4", "<f8"])
@pytest.mark.parametrize("extra", [-1, 0, 1])
@pytest.mark.parametrize("parts", [0, 1, 2, 3, 7, 9])
def test_copy_into_equals_the_source(monkeypatch: pytest.MonkeyPatch, dtype: str, extra: int,
                                     parts: int) -> None:
    monkeypatch.setattr(_copy, "MIN_BYTES_PER_THREAD", 4096)  # many slices on small arrays
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
