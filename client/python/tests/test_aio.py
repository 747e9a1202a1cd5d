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


def test_stream_answers_come_in_the_clients_chunks(cpu_server):
    """As the sync client's test: answer messages of stream_chunk_bytes, and a server whose
    --max_request_bytes (262144) is smaller refuses the stream, which is sent again in chunks of
    its limit."""
    a = ref.keys(np.uint64, 100_000, seed=4)  # 800 KB
    sizes: list[int] = []

    class Recording:
        """A SortStream call whose answer messages are counted as they arrive."""

        def __init__(self, call):
            self._call = call

        async def _answers(self):
            async for raw in self._call:
                sizes.append(len(raw))
                yield raw

        def __aiter__(self):
            return self._answers()

        def cancel(self):
            return self._call.cancel()

    async def main():
        async with sortd.aio.Client(cpu_server.target, transport="stream", timeout=60) as client:
            real = client._sort_stream
            client._sort_stream = lambda requests, **kwargs: Recording(real(requests, **kwargs))
            np.testing.assert_array_equal(await client.sort(a), np.sort(a))
            assert client.max_request_bytes == 262144  # learned from the refusal
            assert len(sizes) >= 4 and max(sizes) <= 262144 + 64
            client.stream_chunk_bytes = 65536
            sizes.clear()
            got, _ = await client.sort_pairs(a, a.view(np.float64))
            np.testing.assert_array_equal(got, np.sort(a))
            assert len(sizes) >= 25 and max(sizes) <= 65536 + 64  # 100,000 keys of 16 bytes
    run(main())
