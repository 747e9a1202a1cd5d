"""Each transport by name and by the client's own choice; shared memory in place and not."""
from __future__ import annotations

import os

import numpy as np
import pytest

import conftest
import reference as ref
import sortd


@pytest.fixture(scope="module")
def plain_server():
    """No shared memory, over TCP loopback."""
    server = conftest.start("--engine=cpu", "--max_request_bytes=65536", tcp=True, shm=False)
    yield server
    server.stop()


@pytest.mark.parametrize("transport", ["bytes", "stream", "shm"])
def test_named_transport(cpu_server, transport):
    a = ref.keys(np.float32, 5000, seed=1)
    with cpu_server.client(transport=transport) as client:
        for op in ("sort", "argsort", "pairs8"):
            for descending in (False, True):
                from test_sort_matrix import check
                check(client, op, a, descending, stable=True)
                assert client.last_transport == transport
                assert client.last_device == "cpu"  # the answer's device, on every transport


@pytest.mark.parametrize("transport", ["bytes", "stream", "shm"])
def test_last_device_names_the_stand_in_that_sorted(gpu_server, transport):
    with gpu_server.client(transport=transport) as client:
        assert client.last_device is None
        client.sort(ref.keys(np.uint32, 300_000, seed=3))
        assert client.last_device.startswith("cpu-device:"), client.last_device


def test_auto_uses_shm_on_a_local_server(cpu_server):
    with cpu_server.client() as client:
        client.sort(np.arange(10, dtype=np.uint32))
        assert client.last_transport == "shm" and client.shm_unavailable is None
        # the region is this client's, registered once and grown for a larger array
        names = os.listdir(cpu_server.shm_dir)
        assert len(names) == 1
        client.sort(ref.keys(np.uint64, 300_000, seed=2))
        assert len(os.listdir(cpu_server.shm_dir)) == 1 and os.listdir(cpu_server.shm_dir) != names
    assert os.listdir(cpu_server.shm_dir) == []


def test_auto_without_shm_streams_past_the_limit(plain_server):
    a = ref.keys(np.int32, 100_000, seed=3)  # 400 KB, past --max_request_bytes=65536
    with plain_server.client() as client:
        small = client.sort(a[:100])
        assert client.last_transport == "bytes" and "refused" in client.shm_unavailable
        np.testing.assert_array_equal(small, np.sort(a[:100]))
        got_keys, got_values = client.sort_pairs(a, a.view(np.float32), descending=True,
                                                 stable=True)
        assert client.last_transport == "stream"
        want = ref.argsort(a, True)
        np.testing.assert_array_equal(got_keys, a[want])
        np.testing.assert_array_equal(got_values.view(np.int32), a[want])
        assert client.max_request_bytes == 65536  # learned from the refusal
        client.sort(a)
        assert client.last_transport == "stream"


def test_stream_answers_come_in_the_clients_chunks(cpu_server):
    """Answer messages of stream_chunk_bytes, not the server's 4 MiB; a server whose
    --max_request_bytes (262144) is smaller than that refuses the stream, which is sent again in
    chunks of its limit."""
    a = ref.keys(np.uint64, 100_000, seed=4)  # 800 KB
    with cpu_server.client(transport="stream") as client:
        sizes: list[int] = []
        real = client._sort_stream

        def recording(requests, **kwargs):
            for raw in real(requests, **kwargs):
                sizes.append(len(raw))
                yield raw

        client._sort_stream = recording
        np.testing.assert_array_equal(client.sort(a), np.sort(a))
        assert client.max_request_bytes == 262144  # learned from the refusal
        assert len(sizes) >= 4 and max(sizes) <= 262144 + 64
        client.stream_chunk_bytes = 65536
        sizes.clear()
        got, values = client.sort_pairs(a, a.view(np.float64))
        np.testing.assert_array_equal(got, np.sort(a))
        assert len(sizes) >= 25 and max(sizes) <= 65536 + 64  # 100,000 keys of 16 bytes


def test_bytes_past_the_limit_is_the_servers_error(plain_server):
    with plain_server.client(transport="bytes") as client:
        with pytest.raises(sortd.SortdError) as e:
            client.sort(np.zeros(20_000, np.uint32))
    assert e.value.code.name == "RESOURCE_EXHAUSTED" and "--max_request_bytes" in e.value.details


def test_shm_required_but_not_served(plain_server):
    with plain_server.client(transport="shm") as client:
        with pytest.raises(sortd.SortdError) as e:
            client.sort(np.arange(3, dtype=np.uint32))
    assert e.value.code.name == "UNIMPLEMENTED"


def test_copy_false_views_the_region(cpu_server):
    a = ref.keys(np.int64, 1000, seed=4)
    with cpu_server.client(transport="shm") as client:
        view = client.sort(a, copy=False)
        np.testing.assert_array_equal(view, np.sort(a))
        assert view.flags.writeable and not view.flags.owndata
        copied = client.sort(a)
        assert copied.flags.owndata
        kept = view.copy()
        client.sort(a, descending=True)  # the next shared-memory sort reuses the region
        np.testing.assert_array_equal(view, kept[::-1])
    np.testing.assert_array_equal(view, kept[::-1])  # still mapped after close


def test_copy_false_over_bytes_is_read_only(cpu_server):
    with cpu_server.client(transport="bytes") as client:
        got = client.sort(np.array([3, 1, 2], np.uint32), copy=False)
    assert not got.flags.writeable and list(got) == [1, 2, 3]


def test_empty_sorted_in_place(cpu_server):
    with cpu_server.client() as client:
        keys = client.empty(100_001, np.float64)
        values = client.empty(100_001, np.uint32)
        keys[:] = ref.keys(np.float64, 100_001, seed=5)
        values[:] = np.arange(100_001)
        original = keys.copy()
        out_keys, out_values = client.sort_pairs(keys, values, stable=True, overwrite_input=True)
        assert out_keys is keys and out_values is values and client.last_transport == "shm"
        want = ref.argsort(original, False)
        np.testing.assert_array_equal(ref.bits(keys), ref.bits(original[want]))
        np.testing.assert_array_equal(values, want)
        # as an input that is not overwritten: no copy in, result elsewhere
        got = client.sort(keys, descending=True)
        np.testing.assert_array_equal(ref.bits(got), ref.bits(original[ref.argsort(original, True)]))
        assert len(os.listdir(cpu_server.shm_dir)) == 3  # scratch + two arrays
        del keys, values, out_keys, out_values
        client.sort(got)  # the regions of arrays nobody holds are dropped
        assert len(os.listdir(cpu_server.shm_dir)) == 1


def test_overwrite_input_without_shm(cpu_server):
    a = np.array([5, 3, 9, 1], dtype=np.int32)
    with cpu_server.client(transport="bytes") as client:
        assert client.sort(a, overwrite_input=True) is a
    assert list(a) == [1, 3, 5, 9]


def test_empty_needs_shm(plain_server):
    with plain_server.client() as client:
        with pytest.raises(sortd.SortdError):
            client.empty(10, np.uint32)


def test_the_wire_server_sees_the_same_answer(cpu_server):
    """Hand-framed requests and answers against protobuf's own encoding of the same message."""
    from sortd import _core, _types, _wire
    from sortd.v1 import sortd_pb2 as pb
    a = np.array([3, 1, 2], dtype=np.uint64)
    v = np.array([7, 8, 9], dtype=np.uint32)
    arrays = _types.check_arrays(a, v)
    opts = _types.make_options(True, True, "cpu", True)
    parsed = pb.SortRequest.FromString(_core.bytes_request(arrays, opts))
    assert parsed.keys == a.tobytes() and parsed.values == v.tobytes()
    assert parsed.value_width == 4 and parsed.order == pb.SORT_ORDER_DESCENDING
    assert parsed.return_indices and parsed.algorithm == pb.ALGORITHM_CPU
    answer = pb.SortResponse(keys=b"k" * 8, indices=b"i" * 4, device="cpu",
                             error=pb.RequestError(code=3, message="m"))
    decoded = _wire.decode_answer(answer.SerializeToString())
    assert decoded.array("keys", np.dtype("u1")).tobytes() == b"k" * 8
    assert decoded.fields.device == "cpu" and decoded.fields.error.message == "m"
    assert "values" not in decoded.spans


def test_a_failed_shm_call_retires_its_scratch_region():
    """sortd goes on sorting a call whose deadline passed on the client's side, into the region
    that call named: the client's next sort must not share that region."""
    server = conftest.start("--engine=cpu", "--test_delay_per_job=300ms")
    try:
        with server.client(transport="shm", timeout=30.0) as client:
            keys = np.arange(100_000, 0, -1, dtype=np.uint32)
            np.testing.assert_array_equal(client.sort(keys), np.sort(keys))
            used = client._scratch.name
            client.timeout = 0.05
            with pytest.raises(sortd.SortdError) as failed:
                client.sort(keys)
            assert failed.value.code.name == "DEADLINE_EXCEEDED"
            assert client._scratch is None
            client.timeout = 30.0
            again = np.random.default_rng(1).integers(0, 2**32, 100_000, dtype=np.uint32)
            np.testing.assert_array_equal(client.sort(again), np.sort(again))
            assert client._scratch.name != used
    finally:
        server.stop()
