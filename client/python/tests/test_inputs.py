"""What the client refuses before any call, and the inputs it converts."""
from __future__ import annotations

import numpy as np
import pytest

import reference as ref
import sortd


@pytest.fixture(scope="module")
def nowhere():
    """A client of a server that does not exist: any call would raise SortdError, so a
    TypeError/ValueError proves the input was refused before a call."""
    with sortd.Client("unix:/nonexistent/sortd.sock", timeout=5) as client:
        yield client


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.uint8, np.uint16, np.float16, np.bool_,
                                   object, np.complex64, "U3", "V4"])
def test_unsupported_key_dtypes(nowhere, dtype):
    a = np.zeros(3, dtype=dtype)
    for call in (nowhere.sort, nowhere.argsort, lambda x: nowhere.sort_pairs(x, np.zeros(3, "u4"))):
        with pytest.raises(TypeError, match="uint32, int32, float32, uint64, int64 or float64"):
            call(a)


def test_shapes_and_axes(nowhere):
    with pytest.raises(ValueError, match="0-d"):
        nowhere.sort(np.uint32(3))
    with pytest.raises(ValueError, match="1-d"):
        nowhere.sort(np.zeros((2, 3), np.uint32))
    with pytest.raises(ValueError, match="axis=0"):
        nowhere.sort(np.zeros((2, 3), np.uint32), axis=0)
    with pytest.raises(ValueError, match="axis=1"):
        nowhere.argsort(np.zeros(3, np.uint32), axis=1)
    with pytest.raises(ValueError, match="0-d"):
        nowhere.sort_many([np.zeros(2, np.int32), np.int32(1)])


def test_values(nowhere):
    k = np.zeros(3, np.uint32)
    with pytest.raises(TypeError, match="4 or 8"):
        nowhere.sort_pairs(k, np.zeros(3, np.uint16))
    with pytest.raises(TypeError, match="4 or 8"):
        nowhere.sort_pairs(k, np.zeros(3, object))
    with pytest.raises(ValueError, match="2 values for 3 keys"):
        nowhere.sort_pairs(k, np.zeros(2, np.uint32))


def test_options(nowhere):
    a = np.zeros(3, np.uint32)
    with pytest.raises(ValueError, match="algorithm"):
        nowhere.sort(a, algorithm="quick")
    with pytest.raises(ValueError, match="transport"):
        nowhere.sort(a, transport="carrier-pigeon")
    with pytest.raises(TypeError, match="descending"):
        nowhere.sort(a, descending="yes")
    read_only = a.copy()
    read_only.flags.writeable = False
    with pytest.raises(ValueError, match="writable"):
        nowhere.sort(read_only, overwrite_input=True)
    with pytest.raises(ValueError, match="writable"):
        nowhere.sort([3, 1, 2], overwrite_input=True)
    with pytest.raises(ValueError, match="transport"):
        sortd.Client("localhost:1", transport="pigeon")
    with pytest.raises(ValueError, match="tls.cert_file and tls.key_file"):
        sortd.Client("localhost:1", tls=sortd.TLS(ca_file="/dev/null", cert_file="x"))


def test_unreachable_server_is_a_sortd_error(nowhere):
    with pytest.raises(sortd.SortdError) as e:
        nowhere.sort(np.zeros(3, np.uint32))
    assert e.value.code.name == "UNAVAILABLE"


@pytest.mark.parametrize("transport", ["bytes", "shm", "stream"])
def test_converted_inputs(cpu_server, transport):
    base = ref.keys(np.float64, 2001, seed=9)
    strided = base[::2]
    big_endian = base.astype(">f8")
    read_only = base.copy()
    read_only.flags.writeable = False
    with cpu_server.client(transport=transport) as client:
        for a in (strided, big_endian, read_only, list(base[:50])):
            a_np = np.asarray(a, dtype="<f8")
            want = ref.bits(a_np[ref.argsort(a_np, False)])
            got = client.sort(a)
            assert got.dtype == np.dtype("<f8")
            np.testing.assert_array_equal(ref.bits(got), want)
            np.testing.assert_array_equal(client.argsort(a, stable=True), ref.argsort(a_np, False))
        big_values = np.arange(strided.shape[0], dtype=">i8")
        keys, values = client.sort_pairs(strided, big_values, stable=True)
        assert values.dtype == np.dtype(">i8")  # values are records: kept in their byte order
        np.testing.assert_array_equal(values, big_values[ref.argsort(strided, False)])


def test_float_order_differs_from_numpy(cpu_server):
    a = np.array([np.nan, 1.0, -0.0, -np.nan, 0.0, -np.inf], dtype=np.float64)
    with cpu_server.client() as client:
        got = client.sort(a)
    assert np.isnan(got[0]) and np.signbit(got[0]) and np.isnan(got[-1]) and not np.signbit(got[-1])
    assert list(got[1:5]) == [-np.inf, 0.0, 0.0, 1.0] and np.signbit(got[2]) and not np.signbit(got[3])
    assert np.isnan(np.sort(a)[-2:]).all()  # numpy: every NaN last
