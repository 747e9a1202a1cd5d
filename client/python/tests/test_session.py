"""sort_many over one SortSession; a server that goes away mid-call."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import conftest
import reference as ref
import sortd


@pytest.fixture(scope="module")
def small_server():
    server = conftest.start("--engine=cpu", "--max_request_bytes=4096")
    yield server
    server.stop()


def test_in_order(cpu_server):
    arrays = [ref.keys(d, n, seed=n) for n in (0, 1, 17, 300) for d in ref.KEY_DTYPES]
    with cpu_server.client() as client:
        got = client.sort_many(arrays, descending=True, stable=True)
    assert len(got) == len(arrays)
    for a, g in zip(arrays, got):
        np.testing.assert_array_equal(ref.bits(g), ref.bits(a[ref.argsort(a, True)]))


def test_rows_of_a_2d_array(cpu_server):
    a = ref.keys(np.int32, 1000, seed=1).reshape(10, 100)
    with cpu_server.client() as client:
        got = np.stack(client.sort_many(a))
    np.testing.assert_array_equal(got, np.sort(a, axis=-1))


def test_iterator_is_sent_lazily(cpu_server):
    with cpu_server.client() as client:
        got = client.sort_many(np.full(5, i, np.uint64) - np.arange(5, dtype=np.uint64)
                               for i in range(10, 20))
    assert [list(g) for g in got] == [list(range(i - 4, i + 1)) for i in range(10, 20)]


def test_bad_input_from_an_iterator_raises_it(cpu_server):
    def arrays():
        yield np.array([2, 1], np.uint32)
        yield np.array([1, 2], np.int8)
    with cpu_server.client() as client:
        with pytest.raises(TypeError, match="int8"):
            client.sort_many(arrays())


def test_bad_request_in_the_middle(small_server):
    arrays = [np.array([3, 1, 2], np.uint32), np.zeros(2000, np.uint32),  # 8000 B > 4096
              np.array([9.5, -1.0], np.float64)]
    with small_server.client() as client:
        got = client.sort_many(arrays, return_exceptions=True)
        assert list(got[0]) == [1, 2, 3] and list(got[2]) == [-1.0, 9.5]
        assert isinstance(got[1], sortd.SortdError) and got[1].index == 1
        assert got[1].code.name == "RESOURCE_EXHAUSTED" and "--max_request_bytes" in got[1].details
        with pytest.raises(sortd.SortdError) as e:
            client.sort_many(arrays)
        assert e.value.index == 1 and e.value.details == got[1].details


def _killed_mid_call(call_with_generator) -> None:
    """Runs a call whose request iterator kills the server once the call is under way; the call
    must raise SortdError, not hang (the join's timeout is the test's bound, not a wait)."""
    server = conftest.start("--engine=cpu", "--test_delay_per_job=60s")
    outcome: list = []

    def arrays():
        yield np.arange(1000, dtype=np.uint32)
        server.kill()  # the first request is sent and being worked on (for 60 s)
        yield np.arange(10, dtype=np.uint32)

    def run() -> None:
        try:
            with server.client(timeout=None) as client:
                outcome.append(call_with_generator(client, arrays()))
        except BaseException as e:
            outcome.append(e)
    try:
        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        thread.join(timeout=30)
        assert not thread.is_alive(), "the call hung after the server died"
        assert isinstance(outcome[0], sortd.SortdError), outcome
        assert outcome[0].code.name in ("UNAVAILABLE", "CANCELLED", "INTERNAL")
    finally:
        server.stop()


def test_server_killed_mid_session():
    _killed_mid_call(lambda client, arrays: client.sort_many(arrays))


def test_server_killed_mid_stream(monkeypatch):
    # A SortStream whose second chunk is made only after the server was killed.
    from sortd import _core
    real = _core.stream_requests

    def call(client, arrays_iter):
        first = next(arrays_iter)

        def chunks(arrays, opts, chunk_bytes):
            it = real(arrays, opts, 4000)
            yield next(it)
            next(arrays_iter, None)  # the generator kills the server here
            yield from it
        monkeypatch.setattr(_core, "stream_requests", chunks)
        return client.sort(np.tile(first, 10), transport="stream")
    _killed_mid_call(call)
