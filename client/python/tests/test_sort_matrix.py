"""Every key dtype x sizes x order x stability x sort / argsort / pairs, against reference.py, on
the CPU engine and the GPU engine's paths (stand-in GPUs)."""
from __future__ import annotations

import numpy as np
import pytest

import reference as ref

SIZES = [0, 1, 2, 3, 31, 33, 255, 257, 4095, 4097]
OPS = ["sort", "argsort", "pairs4", "pairs8"]


def check(client, op: str, a: np.ndarray, descending: bool, stable: bool, **kw) -> None:
    n = a.shape[0]
    want = ref.argsort(a, descending)
    opts = dict(descending=descending, stable=stable, **kw)
    if op == "sort":
        got = client.sort(a, **opts)
        assert got.dtype == a.dtype and got.shape == (n,)
        np.testing.assert_array_equal(ref.bits(got), ref.bits(a[want]))
    elif op == "argsort":
        got = client.argsort(a, **opts)
        assert got.dtype == np.intp
        if stable:
            np.testing.assert_array_equal(got, want)
        else:
            np.testing.assert_array_equal(np.sort(got), np.arange(n))
            np.testing.assert_array_equal(ref.bits(a[got]), ref.bits(a[want]))
    else:
        values = np.arange(n, dtype=np.uint32 if op == "pairs4" else np.uint64)
        got_keys, got_values = client.sort_pairs(a, values, **opts)
        assert got_values.dtype == values.dtype
        np.testing.assert_array_equal(ref.bits(got_keys), ref.bits(a[want]))
        if stable:
            np.testing.assert_array_equal(got_values, values[want])
        else:  # the values travelled with their keys
            np.testing.assert_array_equal(np.sort(got_values), values)
            np.testing.assert_array_equal(ref.bits(a[got_values]), ref.bits(got_keys))


@pytest.fixture(scope="module")
def cpu_client(cpu_server):
    with cpu_server.client() as client:
        yield client


@pytest.fixture(scope="module")
def gpu_client(gpu_server):
    with gpu_server.client() as client:
        yield client


@pytest.mark.parametrize("stable", [False, True])
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", ref.KEY_DTYPES, ids=lambda d: np.dtype(d).name)
def test_cpu_engine(cpu_client, dtype, op, descending, stable):
    for i, n in enumerate(SIZES):
        check(cpu_client, op, ref.keys(dtype, n, seed=i), descending, stable)


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", ref.KEY_DTYPES, ids=lambda d: np.dtype(d).name)
def test_gpu_engine_stand_in(gpu_client, dtype, op, descending):
    for i, n in enumerate(SIZES):
        check(gpu_client, op, ref.keys(dtype, n, seed=100 + i), descending, stable=i % 2 == 0)


@pytest.mark.parametrize("algorithm", ["radix", "bitonic", "odd_even_merge", "library", "cpu"])
def test_gpu_algorithms(gpu_client, algorithm):
    for dtype in (np.float32, np.int64):
        check(gpu_client, "pairs4", ref.keys(dtype, 1000, seed=7), True, True, algorithm=algorithm)


# The large sizes: each past the CPU server's --max_request_bytes, so these stream in bytes
# transport and go through the shared-memory region otherwise.
@pytest.mark.parametrize("n", [(1 << 20) - 1, (1 << 20) + 1])
@pytest.mark.parametrize("case", [(np.uint32, "sort", False, False),
                                  (np.float64, "argsort", True, True),
                                  (np.int64, "pairs8", True, False)],
                         ids=["u32-sort", "f64-argsort-desc-stable", "i64-pairs-desc"])
def test_large(cpu_client, gpu_client, case, n):
    dtype, op, descending, stable = case
    a = ref.keys(dtype, n, seed=n)
    check(cpu_client, op, a, descending, stable)
    check(gpu_client, op, a, descending, stable, transport="stream")
