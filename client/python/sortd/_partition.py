"""One pandas partition sorted by sortd: the worker side of :mod:`sortd.dask`.

The contract is pandas' ``df.sort_values(by, ascending=..., na_position=..., kind="stable")``,
row for row: sortd argsorts the key column (stable), then the rows are taken in that order.
"""
from __future__ import annotations

import logging
import os
import threading
from typing import Any, Callable, Optional, Sequence, Union

import numpy as np
import pandas as pd

from sortd._errors import SortdError
from sortd.client import Client

logger = logging.getLogger("sortd.dask")

TARGET_ENV = "SORTD_TARGET"
SHM_DIR_ENV = "SORTD_SHM_DIR"
CONFIG_TARGET = "sortd.target"
CONFIG_SHM_DIR = "sortd.shm_dir"
CONFIG_TIMEOUT = "sortd.timeout"
DEFAULT_SHM_DIR = "/dev/shm"
# A partition sort that takes longer than this is a hung server, not a big partition: even the
# CPU engine sorts 2^28 keys well inside it.
DEFAULT_TIMEOUT_S = 600.0
# Below this many rows a call costs more than the sort, so pandas sorts in process (the same
# contract, so the same rows). It also covers Dask's metadata inference, which runs the partition
# function on a 2-row stand-in in the *client* process, where no sortd need be reachable.
IN_PROCESS_ROWS = 64
PERMUTE_CHOICES = ("auto", "take", "pairs")

_NATIVE = {np.dtype(t) for t in ("uint32", "int32", "float32", "uint64", "int64", "float64")}
# Lossless widenings for keys sortd has no type of its own for.
_WIDEN = {np.dtype("int8"): np.dtype("int32"), np.dtype("int16"): np.dtype("int32"),
          np.dtype("uint8"): np.dtype("uint32"), np.dtype("uint16"): np.dtype("uint32"),
          np.dtype("bool"): np.dtype("uint32")}


class PartitionSortError(RuntimeError):
    """A partition's sort by sortd failed: no sortd configured or reachable, or sortd failed.

    Raised inside the Dask task, so the task fails (and Dask's ``retries=`` apply); the message
    names the sortd target, the worker and the partition."""


def key_dtype(dtype: Any) -> np.dtype:
    """The dtype the key column is sent to sortd as; TypeError for a column sortd cannot sort."""
    dt = np.dtype(dtype) if not isinstance(dtype, pd.api.extensions.ExtensionDtype) else None
    if dt is not None and dt.newbyteorder("=") in _NATIVE:
        return dt.newbyteorder("<")
    if dt is not None and dt in _WIDEN:
        return _WIDEN[dt]
    raise TypeError(f"key column of dtype {dtype}: sortd sorts uint32, int32, float32, uint64, "
                    "int64 and float64 keys (and the narrower integers and bool, widened); "
                    "convert the column first (nullable pandas dtypes: fill or drop the NAs)")


def canonical_keys(values: np.ndarray, ascending: bool, na_position: str) -> np.ndarray:
    """The keys sortd sorts so that its order is pandas': a new array.

    sortd's float order is a total order (-NaN < -Inf < ... < -0.0 < +0.0 < ... < +NaN, NaNs by
    payload); pandas' has -0.0 == +0.0 and every NaN at `na_position` in either direction. So
    zeros become +0.0 and every NaN one NaN whose sign puts it at `na_position`: +NaN ends an
    ascending sort and starts a descending one (sortd's descending is the exact reverse).
    """
    dt = key_dtype(values.dtype)
    if dt.kind != "f":
        return np.array(values, dtype=dt, copy=True)
    keys = np.add(values, dt.type(0), dtype=dt)  # -0.0 + 0.0 is +0.0; NaN stays NaN
    nan = np.isnan(keys)
    if nan.any():
        positive = (na_position == "last") == ascending
        keys[nan] = dt.type(np.nan) if positive else -dt.type(np.nan)
    return keys


def resolve(target: Optional[str], shm_dir: Optional[str],
            timeout: Optional[float]) -> tuple[str, str, float]:
    """This process's sortd: the argument, else Dask config ``sortd.target`` (also set by the
    environment variable DASK_SORTD__TARGET), else $SORTD_TARGET; likewise the shared-memory
    directory (``sortd.shm_dir``, $SORTD_SHM_DIR, /dev/shm) and the per-call timeout."""
    import dask.config

    target = target or dask.config.get(CONFIG_TARGET, None) or os.environ.get(TARGET_ENV)
    if not target:
        raise PartitionSortError(
            f"no sortd target on {_where()}: set ${TARGET_ENV} (or Dask config "
            f"{CONFIG_TARGET!r}) on each worker to the sortd on its host, e.g. 127.0.0.1:50051")
    shm_dir = (shm_dir or dask.config.get(CONFIG_SHM_DIR, None) or os.environ.get(SHM_DIR_ENV)
               or DEFAULT_SHM_DIR)
    timeout = float(timeout or dask.config.get(CONFIG_TIMEOUT, None) or DEFAULT_TIMEOUT_S)
    return target, shm_dir, timeout


# One client per thread and target: a client's shared-memory sorts run one at a time, and a
# worker runs as many partition sorts at once as it has threads.
_local = threading.local()
_counts_lock = threading.Lock()
_counts: dict[tuple[str, str], int] = {}


def _client(target: str, shm_dir: str, timeout: float) -> Client:
    clients = _local.__dict__.setdefault("clients", {})
    key = (target, shm_dir, timeout)
    if key not in clients:
        clients[key] = Client(target, shm_dir=shm_dir, timeout=timeout)
    return clients[key]


def _forget(target: str, shm_dir: str, timeout: float) -> None:
    # A failed server may come back (restarted, its regions gone): the next task starts afresh.
    client = _local.__dict__.get("clients", {}).pop((target, shm_dir, timeout), None)
    if client is not None:
        client.close()


def partition_counts() -> dict[tuple[str, str], int]:
    """Partitions this process has sorted through sortd, by (target, transport)."""
    with _counts_lock:
        return dict(_counts)


def _where() -> str:
    try:
        from distributed import get_worker

        return f"Dask worker {get_worker().address}"
    except (ImportError, ValueError):
        return f"process {os.getpid()} (not a Dask worker)"


def argsort(keys: np.ndarray, ascending: bool = True, na_position: str = "last", *,
            target: Optional[str] = None, shm_dir: Optional[str] = None,
            timeout: Optional[float] = None) -> np.ndarray:
    """The stable permutation that sorts `keys` as pandas does (NaNs at `na_position`),
    computed by this process's sortd."""
    if na_position not in ("first", "last"):
        raise ValueError(f"na_position: {na_position!r}; give 'first' or 'last'")
    canonical = canonical_keys(np.asarray(keys), ascending, na_position)
    where = resolve(target, shm_dir, timeout)
    order = _through_sortd(where, len(canonical), lambda client: client.argsort(
        canonical, descending=not ascending, stable=True))
    _count(where)
    return order


def _through_sortd(where: tuple[str, str, float], n: int,
                   call: Callable[[Client], Any]) -> Any:
    """call(client) on this thread's client of `where`; every result it returns has n rows."""
    client = _client(*where)
    try:
        result = call(client)
    except SortdError as e:
        _forget(*where)
        raise PartitionSortError(
            f"sortd at {where[0]} failed to sort a partition of {n} keys on {_where()}: "
            f"{e}") from e
    for got in result if isinstance(result, tuple) else (result,):
        if len(got) != n:  # never a silently partial partition
            raise PartitionSortError(f"sortd at {where[0]} returned {len(got)} rows for {n} keys")
    return result


def _count(where: tuple[str, str, float]) -> None:
    """One more partition sorted through `where`, by the transport of its last call."""
    client = _existing_client(where)
    with _counts_lock:
        counter = (where[0], (client.last_transport if client else None) or "")
        _counts[counter] = _counts.get(counter, 0) + 1


def _existing_client(where: tuple[str, str, float]) -> Optional[Client]:
    return _local.__dict__.get("clients", {}).get(where)


def _ran_on_gpu(where: tuple[str, str, float]) -> bool:
    """Whether this thread's last sort through `where` ran on one of sortd's GPUs."""
    client = _existing_client(where)
    return client is not None and (client.last_device or "").startswith("cuda")


def _pairs_array(values: Any) -> Optional[np.ndarray]:
    """`values` as the array sort_pairs moves (plain 4- or 8-byte elements), else None."""
    if isinstance(getattr(values, "dtype", None), pd.api.extensions.ExtensionDtype):
        return None
    array = np.asarray(values)
    if array.ndim != 1 or array.dtype.hasobject or array.dtype.itemsize not in (4, 8):
        return None
    return array


def _by_pairs(df: pd.DataFrame, column: str, canonical: np.ndarray, ascending: bool,
              where: tuple[str, str, float]) -> Optional[pd.DataFrame]:
    """`df` sorted by one stable sort_pairs per column (and index) that must move, each moved by
    sortd beside the keys; None when a column or the index is not of 4 or 8 plain bytes."""
    # pandas' take keeps a DatetimeIndex's freq where the order is a slice: left to it.
    if not df.columns.is_unique or getattr(df.index, "freq", None) is not None:
        return None
    moving = {name: _pairs_array(df[name]) for name in df.columns}
    index = _pairs_array(df.index)
    if index is None or any(a is None for a in moving.values()):
        return None
    key = moving[column]
    if key.dtype == canonical.dtype and key.dtype.kind in "iu":
        del moving[column]  # the sorted canonical keys are the column's own values
    n = len(df)

    def permuted(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        # Views over the answer (the region's, valid until the next sort): only what is kept is
        # copied, into arrays of the frame's own.
        return _through_sortd(where, n, lambda client: client.sort_pairs(
            canonical, values, descending=not ascending, stable=True, copy=False))

    sorted_keys, new_index = permuted(index)
    if column not in moving:
        sorted_keys = sorted_keys.copy()
    new_index = new_index.copy()
    columns = {name: permuted(values)[1].copy() for name, values in moving.items()}
    columns.setdefault(column, sorted_keys)
    ordered = pd.DataFrame(columns, index=pd.Index(new_index, name=df.index.name),
                           columns=df.columns, copy=False)
    return ordered.__finalize__(df)  # attrs and flags, as pandas' own sort keeps them


def check_permute(permute: str) -> None:
    if permute not in PERMUTE_CHOICES:
        raise ValueError(f"permute: {permute!r}; give one of {', '.join(PERMUTE_CHOICES)}")


def _one_column(by: Union[str, Sequence[str]]) -> str:
    columns = [by] if isinstance(by, str) else list(by)
    if len(columns) != 1:
        raise NotImplementedError(f"by={by!r}: sortd.dask sorts by one column")
    return columns[0]


def _one_flag(ascending: Union[bool, Sequence[bool]]) -> bool:
    if isinstance(ascending, (list, tuple)):
        if len(ascending) != 1:
            raise NotImplementedError(f"ascending={ascending!r}: one column, one direction")
        ascending = ascending[0]
    return bool(ascending)


def sort_partition(df: pd.DataFrame, by: Union[str, Sequence[str]],
                   ascending: Union[bool, Sequence[bool]] = True, na_position: str = "last", *,
                   target: Optional[str] = None, shm_dir: Optional[str] = None,
                   timeout: Optional[float] = None, pandas_fallback: bool = False,
                   permute: str = "auto", **_: Any) -> pd.DataFrame:
    """`df` sorted by column `by`, as ``df.sort_values(by, ascending=ascending,
    na_position=na_position, kind="stable")`` would, with sortd computing the permutation.

    The signature of Dask's ``sort_function=`` hook (``sort_values`` passes `by`, `ascending`,
    `na_position`; other keywords come from ``sort_function_kwargs``; unknown ones, such as a
    ``kind``, are ignored: the sort is always stable). With ``pandas_fallback=True`` a partition
    whose sortd fails is sorted by pandas instead, with a warning in the worker's log; by default
    the task fails with :class:`PartitionSortError`.

    `permute` says how the other columns follow the keys. ``"take"``: sortd argsorts the key
    column and pandas takes the rows in that order, a random gather per column. ``"pairs"``: one
    stable ``sort_pairs`` per column and for the index, sortd moving each beside the keys, where
    every one of them holds plain 4- or 8-byte elements (else as "take"). ``"auto"``: "pairs"
    where this thread's last sort through that sortd ran on a GPU, whose sorts of the pairs cost
    less than the gather; "take" otherwise (on the CPU engine the sorts gained nothing over it).
    """
    column = _one_column(by)
    up = _one_flag(ascending)
    check_permute(permute)
    if na_position not in ("first", "last"):
        raise ValueError(f"na_position: {na_position!r}; give 'first' or 'last'")
    if len(df) < IN_PROCESS_ROWS:
        return df.sort_values(column, ascending=up, na_position=na_position, kind="stable")
    try:
        where = resolve(target, shm_dir, timeout)
        canonical = canonical_keys(df[column].to_numpy(), up, na_position)
        if permute == "pairs" or (permute == "auto" and _ran_on_gpu(where)):
            ordered = _by_pairs(df, column, canonical, up, where)
            if ordered is not None:
                _count(where)
                return ordered
        order = _through_sortd(where, len(df), lambda client: client.argsort(
            canonical, descending=not up, stable=True))
        _count(where)
    except PartitionSortError as e:
        if not pandas_fallback:
            raise
        logger.warning("sorting a partition of %d rows with pandas instead: %s", len(df), e)
        return df.sort_values(column, ascending=up, na_position=na_position, kind="stable")
    return df.take(order)
