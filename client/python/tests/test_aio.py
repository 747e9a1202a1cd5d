"""sortd.aio: the same calls on grpc.aio."""
from __future__ import annotations

import asyncio

import numpy as np
import pytest

import reference as ref
import sortd
import sortd.aio


def run(coro):
    return asyncio.run(coro)


@pytest.mark.parametrize("transport", ["auto", "bytes", "stream", "shm"])
def test_calls(cpu_server, transport):
    # 560 KB: past the server's --max_request_bytes, except for bytes, which has no way around it
    a = ref.keys(np.float64, 20_001 if transport == "bytes" else 70_001, seed=11)
    want = ref.argsort(a, True)

    async def main():
        async with sortd.aio.Client(cpu_server.target, shm_dir=cpu_server.shm_dir,
                                    transport=transport, timeout=60) as client:
            await client.wait_for_server(10)
            got = await client.sort(a, descending=True)
            np.testing.assert_array_equal(ref.bits(got), ref.bits(a[want]))
            np.testing.assert_array_equal(await client.argsort(a, descending=True, stable=True),
                                          want)
            k, v = await client.sort_pairs(a, np.arange(a.size, dtype=np.int32),
                                           descending=True, stable=True)
            np.testing.assert_array_equal(v, want)
            assert client.last_transport == ("shm" if transport == "auto" else transport)
            assert client.last_device == "cpu"
            many = await client.sort_many([a[:5], a[5:9]])
            np.testing.assert_array_equal(ref.bits(many[1]),
                                          ref.bits(a[5:9][ref.argsort(a[5:9], False)]))
    run(main())


def test_bytes_too_large_raises(cpu_server):
    async def main():
        async with sortd.aio.Client(cpu_server.target, transport="bytes") as client:
            with pytest.raises(sortd.SortdError) as e:
                await client.sort(np.zeros(100_000, np.uint64))
            assert e.value.code.name == "RESOURCE_EXHAUSTED"
            with pytest.raises(TypeError):
                await client.sort(np.zeros(3, np.int16))
    run(main())


def test_empty_in_place_and_errors_in_a_session(cpu_server):
    async def main():
        async with sortd.aio.Client(cpu_server.target, shm_dir=cpu_server.shm_dir) as client:
            keys = await client.empty(1000, np.uint32)
            keys[:] = np.arange(1000)[::-1]
            assert await client.sort(keys, overwrite_input=True) is keys
            assert list(keys[:3]) == [0, 1, 2]
            got = await client.sort_many([np.array([2, 1], np.uint32), np.zeros(70_000, np.uint32),
                                          np.array([4, 3], np.uint32)], return_exceptions=True)
            assert list(got[0]) == [1, 2] and list(got[2]) == [3, 4]
            assert isinstance(got[1], sortd.SortdError) and got[1].index == 1
    run(main())
