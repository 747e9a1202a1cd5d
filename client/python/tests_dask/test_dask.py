"""sortd.dask on a real cluster: a distributed.LocalCluster of 2 worker processes, each pointed at
its own sortd (CPU engine, loopback TCP, shared memory), against pandas' sort of the whole."""
from __future__ import annotations

import os
import signal
from typing import Any, Iterator

import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest
from distributed import Client, LocalCluster, get_worker

import sortd.dask
from conftest import servers

ROWS = 2**21 + 4099  # past 2^21 and not a multiple of the partition count
PARTITIONS = 16


def _frame() -> pd.DataFrame:
    rng = np.random.default_rng(48)
    # Few distinct keys, so every partition holds long runs of ties whose order is checked.
    f64 = rng.integers(-500, 500, ROWS).astype(np.float64)
    f64[rng.random(ROWS) < 0.02] = np.nan
    f64[rng.random(ROWS) < 0.01] = -np.nan
    f64[rng.random(ROWS) < 0.01] = -0.0
    return pd.DataFrame({
        "i64": rng.integers(-(2**62), 2**62, ROWS) // 2**50,
        "u32": rng.integers(0, 2**12, ROWS).astype(np.uint32),
        "f64": f64,
        "row": np.arange(ROWS),
    })


def _point_worker(target: str, shm_dir: str) -> None:
    # What a deployment sets in each worker's environment.
    os.environ[sortd.dask.TARGET_ENV] = target
    os.environ[sortd.dask.SHM_DIR_ENV] = shm_dir


@pytest.fixture(scope="module")
def sortds() -> Iterator[list[Any]]:
    started: list[Any] = []
    try:
        for _ in range(2):
            started.append(servers.start("--engine=cpu", tcp=True))
        yield started
    finally:
        for s in started:
            s.stop()


@pytest.fixture(scope="module")
def cluster(sortds: list[Any]) -> Iterator[tuple[Client, list[str]]]:
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as lc, Client(lc) as client:
        workers = sorted(client.scheduler_info()["workers"])
        assert len(workers) == 2
        for address, server in zip(workers, sortds):
            client.run(_point_worker, server.target, server.shm_dir, workers=[address])
        yield client, workers


@pytest.fixture(scope="module")
def frames(cluster: tuple[Client, list[str]]) -> tuple[pd.DataFrame, dd.DataFrame]:
    client, _ = cluster
    pdf = _frame()
    ddf = client.persist(dd.from_pandas(pdf, npartitions=PARTITIONS))
    return pdf, ddf


@pytest.mark.parametrize("by, ascending, na_position, permute", [
    ("f64", True, "last", "auto"),
    ("f64", False, "first", "auto"),
    ("u32", False, "last", "pairs"),
])
def test_dataframe_equals_pandas(frames: tuple[pd.DataFrame, dd.DataFrame], by: str,
                                 ascending: bool, na_position: str, permute: str) -> None:
    pdf, ddf = frames
    ordered = sortd.dask.sort_values(ddf, by, ascending=ascending, na_position=na_position,
                                     permute=permute)
    assert ordered.npartitions == PARTITIONS
    got = ordered.compute()
    want = pdf.sort_values(by, ascending=ascending, na_position=na_position, kind="stable")
    # Index labels too: equal keys in input order is the stable sort of the whole.
    pd.testing.assert_frame_equal(got, want)


def test_each_worker_sorts_with_its_own_sortd_over_shared_memory(
        cluster: tuple[Client, list[str]], sortds: list[Any],
        frames: tuple[pd.DataFrame, dd.DataFrame]) -> None:
    client, workers = cluster
    pdf, ddf = frames
    got = sortd.dask.sort_values(ddf, "i64", ascending=False).compute()
    pd.testing.assert_frame_equal(got, pdf.sort_values("i64", ascending=False, kind="stable"))
    counts = client.run(sortd.dask.partition_counts)
    for address, server in zip(workers, sortds):
        used = counts[address]
        assert set(used) == {(server.target, "shm")}, used
        assert sum(used.values()) >= 1


def test_array_equals_numpy(cluster: tuple[Client, list[str]]) -> None:
    rng = np.random.default_rng(7)
    x = rng.integers(0, 1000, 2**20).astype(np.float32)
    x[rng.random(len(x)) < 0.01] = np.nan
    darr = da.from_array(x, chunks=len(x) // 8)
    got = sortd.dask.sort_array(darr, ascending=False).compute()
    want = np.sort(x)[::-1]
    want = np.concatenate([want[~np.isnan(want)], want[np.isnan(want)]])  # NaNs last
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("permute", ["take", "pairs"])
@pytest.mark.parametrize("dtype", [*sortd.KEY_DTYPES, "int8", "uint16", "bool"])
def test_partition_sort_is_pandas_stable_sort(sortds: list[Any], dtype: str,
                                              permute: str) -> None:
    """Every key dtype, both orders, both NaN places, ties, -0.0, NaNs of either sign."""
    rng = np.random.default_rng(abs(hash(dtype)) % 2**32)
    n = 20000
    keys = rng.integers(0, 2 if dtype == "bool" else 60, n).astype(dtype)
    if keys.dtype.kind == "f":
        for value, share in ((np.nan, 0.03), (-np.nan, 0.03), (-0.0, 0.05), (0.0, 0.05)):
            keys[rng.random(n) < share] = value
    frame = pd.DataFrame({"k": keys, "row": np.arange(n)}, index=rng.permutation(n))
    server = sortds[0]
    for ascending in (True, False):
        for na_position in ("first", "last"):
            got = sortd.dask.sort_partition(frame, ["k"], ascending, na_position,
                                            target=server.target, shm_dir=server.shm_dir,
                                            permute=permute)
            want = frame.sort_values("k", ascending=ascending, na_position=na_position,
                                     kind="stable")
            pd.testing.assert_frame_equal(got, want)


def _calls_for(frame: pd.DataFrame, server: Any, monkeypatch: pytest.MonkeyPatch,
               **kwargs: Any) -> dict[str, int]:
    """Sorts `frame` by "k" through `server`, checks it against pandas; the client calls it made
    by name ("argsort", "sort_pairs")."""
    calls: dict[str, int] = {}
    for name in ("argsort", "sort_pairs"):
        def counted(self: Any, *args: Any, _name: str = name,
                    _real: Any = getattr(sortd.Client, name), **kw: Any) -> Any:
            calls[_name] = calls.get(_name, 0) + 1
            return _real(self, *args, **kw)
        monkeypatch.setattr(sortd.Client, name, counted)
    before = sum(sortd.dask.partition_counts().values())
    got = sortd.dask.sort_partition(frame, "k", target=server.target, shm_dir=server.shm_dir,
                                    **kwargs)
    want = frame.sort_values("k", kind="stable")
    pd.testing.assert_frame_equal(got, want)  # freq of a DatetimeIndex included
    assert got.attrs == want.attrs
    assert sum(sortd.dask.partition_counts().values()) == before + 1  # partitions, not calls
    monkeypatch.undo()
    return calls


def test_pairs_move_every_plain_column_and_the_index(sortds: list[Any],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(5)
    n = 4099
    when = np.datetime64("2026-01-01") + rng.integers(0, 10**6, n).astype("timedelta64[s]")
    frame = pd.DataFrame({
        "f32": rng.random(n).astype(np.float32),
        "k": rng.integers(0, 50, n).astype(np.float64),  # ties; floats travel as values
        "i32": rng.integers(-9, 9, n).astype(np.int32),
        "when": when.astype("datetime64[ns]"),
    }, index=pd.DatetimeIndex(when[::-1].astype("datetime64[ns]"), name="stamp"))
    frame.attrs["source"] = "kept"
    # One call for the index (and the keys), one per column: the float key column's values too.
    assert _calls_for(frame, sortds[0], monkeypatch, permute="pairs") == {"sort_pairs": 5}
    integer_key = frame.assign(k=frame["k"].astype(np.int64)).reset_index(drop=True)
    # An integer key column is the sorted keys themselves; a RangeIndex moves as int64.
    assert _calls_for(integer_key, sortds[0], monkeypatch, permute="pairs") == {"sort_pairs": 4}


@pytest.mark.parametrize("odd", ["object", "category", "int16", "duplicate names", "index",
                                 "index freq"])
def test_pairs_fall_back_to_take_where_a_column_cannot_move(
        sortds: list[Any], odd: str, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(6)
    n = 3000
    frame = pd.DataFrame({"k": rng.integers(0, 40, n), "v": rng.random(n)})
    if odd == "object":
        frame["s"] = frame["k"].astype(str)
    elif odd == "category":
        frame["c"] = pd.Categorical(rng.integers(0, 5, n))
    elif odd == "int16":
        frame["h"] = rng.integers(0, 99, n).astype(np.int16)
    elif odd == "duplicate names":
        frame = pd.concat([frame, frame[["v"]]], axis=1)
        want = frame.take(np.argsort(frame["k"].to_numpy(), kind="stable"))
        got = sortd.dask.sort_partition(frame, "k", target=sortds[0].target,
                                        shm_dir=sortds[0].shm_dir, permute="pairs")
        pd.testing.assert_frame_equal(got, want)
        return
    elif odd == "index freq":
        frame["k"] = np.arange(n)  # sorted already: pandas keeps the freq of its slice
        frame.index = pd.date_range("2026-01-01", periods=n, freq="s")
    else:
        frame.index = pd.Index([f"r{i}" for i in range(n)])
    frame.attrs["source"] = "kept"
    assert _calls_for(frame, sortds[0], monkeypatch, permute="pairs") == {"argsort": 1}


def test_auto_takes_on_the_cpu_engine(sortds: list[Any], monkeypatch: pytest.MonkeyPatch) -> None:
    frame = pd.DataFrame({"k": np.arange(5000, 0, -1), "v": np.arange(5000.0)})
    # The answers say "cpu": an argsort each, then pandas' take (no stand-in answers "cuda").
    assert [_calls_for(frame, sortds[0], monkeypatch) for _ in range(2)] == [{"argsort": 1}] * 2


def test_auto_moves_pairs_after_an_answer_from_a_gpu(sortds: list[Any],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from sortd import _partition
    server = sortds[0]
    frame = pd.DataFrame({"k": np.arange(5000, 0, -1), "v": np.arange(5000.0)})
    assert _calls_for(frame, server, monkeypatch) == {"argsort": 1}
    client = _partition._local.clients[_partition.resolve(server.target, server.shm_dir, None)]
    client.last_device = "cuda:0"  # as a GPU engine's answer names its device
    assert _calls_for(frame, server, monkeypatch) == {"sort_pairs": 2}
    assert client.last_device == "cpu"  # this server's answer: the next partition takes again
    assert _calls_for(frame, server, monkeypatch) == {"argsort": 1}


def test_bad_permute_is_a_value_error(frames: tuple[pd.DataFrame, dd.DataFrame]) -> None:
    with pytest.raises(ValueError, match="permute: 'gather'"):
        sortd.dask.sort_values(frames[1], "i64", permute="gather")
    with pytest.raises(ValueError, match="permute: 'gather'"):
        sortd.dask.sort_partition(frames[0].head(1000), "i64", permute="gather")


def test_no_sortd_configured_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(sortd.dask.TARGET_ENV, raising=False)
    frame = pd.DataFrame({"k": np.arange(1000, 0, -1, dtype=np.int64)})
    with pytest.raises(sortd.dask.PartitionSortError, match="no sortd target"):
        sortd.dask.sort_partition(frame, ["k"])
    # The opt-in fallback: pandas sorts, with the same contract.
    got = sortd.dask.sort_partition(frame, ["k"], pandas_fallback=True)
    pd.testing.assert_frame_equal(got, frame.sort_values("k", kind="stable"))


def test_unsortable_column_fails_before_any_task(frames: tuple[pd.DataFrame, dd.DataFrame]) -> None:
    with pytest.raises(TypeError, match="dtype object"):
        sortd.dask.sort_values(frames[1].assign(s=frames[1]["row"].astype(str)), "s")


def test_sortd_killed_mid_sort_fails_the_computation(
        cluster: tuple[Client, list[str]], sortds: list[Any],
        frames: tuple[pd.DataFrame, dd.DataFrame]) -> None:
    """Runs last: it leaves the second worker without a sortd."""
    client, workers = cluster
    victim = sortds[1]
    pid, doomed_worker = victim.process.pid, workers[1]

    def kill_then_sort(df: pd.DataFrame, **kwargs: Any) -> pd.DataFrame:
        # The doomed worker's sortd dies as that worker starts its first partition, while the
        # other worker sorts its own: that partition's sort must fail, not come back unsorted.
        if len(df) >= sortd.dask.IN_PROCESS_ROWS and get_worker().address == doomed_worker:
            os.kill(pid, signal.SIGKILL)
        return sortd.dask.sort_partition(df, **kwargs)

    ordered = frames[1].sort_values("i64", sort_function=kill_then_sort)
    with pytest.raises(sortd.dask.PartitionSortError, match=f"sortd at {victim.target}"):
        ordered.compute()
    victim.process.wait(timeout=10)
    assert victim.process.returncode == -signal.SIGKILL


def test_errors_survive_pickling() -> None:
    """Dask ships a task's exception, causes included, to the client by pickle."""
    import pickle

    import grpc

    error = sortd.SortdError(grpc.StatusCode.UNAVAILABLE, "Socket closed", index=3)
    back = pickle.loads(pickle.dumps(error))
    assert (back.code, back.details, back.index, str(back)) == (
        error.code, error.details, error.index, str(error))
    assert str(pickle.loads(pickle.dumps(sortd.dask.PartitionSortError("x")))) == "x"
