"""sortd as the per-partition sort engine of a Dask cluster.

Dask does what spans machines: it samples the key's quantiles into divisions and shuffles the
rows so that partition i holds the i-th key range. Each partition is then sorted on its worker by
the sortd on that worker's host (:func:`sort_partition`, Dask's ``sort_function=`` hook): sortd
argsorts the key column (stable), the worker takes the rows in that order.

    import sortd.dask
    ordered = sortd.dask.sort_values(ddf, "key")               # a Dask DataFrame, lazily
    ordered = sortd.dask.sort_array(darr, ascending=False)     # a 1-d Dask Array

Each worker finds its sortd in Dask config ``sortd.target`` (environment variable
DASK_SORTD__TARGET) or $SORTD_TARGET, unless ``target=`` is given; with a sortd on the same host
started with ``--shared_memory``, keys and indices move through shared memory in
``sortd.shm_dir`` / $SORTD_SHM_DIR (default /dev/shm, which the worker and sortd must share).

The result is pandas' ``sort_values(..., kind="stable")`` of the whole: ties keep their input
order in both directions (with Dask's task shuffle, the default here), -0.0 and +0.0 tie, and
every NaN goes where `na_position` says ("last" by default, in both directions), whatever its
sign; sortd's own float order (-NaN first, +NaN last) is not exposed. A partition whose sortd
is missing, unreachable or fails fails its task with :class:`PartitionSortError` (Dask's
``retries=`` apply); nothing falls back to pandas unless ``pandas_fallback=True`` is passed.
See docs/dask.md.
"""
from __future__ import annotations

from typing import Any, Literal, Optional, Union

import dask.array as da
import dask.config
import dask.dataframe as dd

from sortd._partition import (CONFIG_SHM_DIR, CONFIG_TARGET, CONFIG_TIMEOUT, IN_PROCESS_ROWS,
                              SHM_DIR_ENV, TARGET_ENV, PartitionSortError, argsort,
                              check_permute, key_dtype, partition_counts, sort_partition)

__all__ = ["sort_values", "sort_array", "sort_partition", "argsort", "PartitionSortError",
           "partition_counts", "key_dtype", "TARGET_ENV", "SHM_DIR_ENV", "CONFIG_TARGET",
           "CONFIG_SHM_DIR", "CONFIG_TIMEOUT", "IN_PROCESS_ROWS"]

_ARRAY_COLUMN = "key"


def _engine_kwargs(target: Optional[str], shm_dir: Optional[str], timeout: Optional[float],
                   pandas_fallback: bool, permute: str = "auto") -> dict[str, Any]:
    return {"target": target, "shm_dir": shm_dir, "timeout": timeout,
            "pandas_fallback": pandas_fallback, "permute": permute}


def sort_values(df: dd.DataFrame, by: str, *, ascending: bool = True,
                na_position: Literal["first", "last"] = "last",
                npartitions: Union[int, Literal["auto"], None] = None,
                target: Optional[str] = None, shm_dir: Optional[str] = None,
                timeout: Optional[float] = None, pandas_fallback: bool = False,
                permute: Literal["auto", "take", "pairs"] = "auto",
                shuffle: str = "tasks", **kwargs: Any) -> dd.DataFrame:
    """`df` sorted by column `by`: Dask's ``DataFrame.sort_values`` (its divisions, its shuffle)
    with every partition sorted by its worker's sortd.

    `target`, `shm_dir`, `timeout` (seconds per call) override each worker's configuration for
    every worker alike (e.g. ``target="127.0.0.1:50051"`` where each host runs sortd on that
    port). `permute` is how each partition's other columns follow its keys
    (:func:`sort_partition`). `shuffle` is Dask's shuffle method: "tasks" (the default here, whatever Dask's
    config says) hands each output partition its rows in input order, so equal keys keep their
    input order across the whole frame; "disk" (partd) does not. Other keywords
    (``upsample=``, ``partition_size=``) go to Dask's ``sort_values``.
    """
    if by not in df.columns:
        raise KeyError(f"by={by!r}: no such column")
    key_dtype(df._meta[by].dtype)  # an unsortable column fails here, not in every task
    if na_position not in ("first", "last"):
        raise ValueError(f"na_position: {na_position!r}; give 'first' or 'last'")
    check_permute(permute)
    # Dask 2022.12's sort_values takes its shuffle method from config only, when it builds the
    # graph, so the setting need not outlive this call.
    with dask.config.set(shuffle=shuffle):
        return df.sort_values(by, npartitions=npartitions, ascending=bool(ascending),
                              na_position=na_position, sort_function=sort_partition,
                              sort_function_kwargs=_engine_kwargs(target, shm_dir, timeout,
                                                                  pandas_fallback, permute),
                              **kwargs)


def sort_array(x: da.Array, *, ascending: bool = True,
               na_position: Literal["first", "last"] = "last",
               npartitions: Optional[int] = None, target: Optional[str] = None,
               shm_dir: Optional[str] = None, timeout: Optional[float] = None,
               pandas_fallback: bool = False) -> da.Array:
    """The 1-d Dask Array `x` sorted, as ``np.sort`` would (NaNs last by default), descending
    with ``ascending=False``.

    Goes through :func:`sort_values` on a one-column frame, so the chunks of the result have
    unknown sizes (NaN in ``.chunks``), as after boolean indexing: ``compute_chunk_sizes()``
    learns them. Persist `x` first when it is expensive: the divisions are computed from it
    before the shuffle reads it again.
    """
    if x.ndim != 1:
        raise ValueError(f"x has {x.ndim} dimensions; sort_array sorts 1-d arrays")
    key_dtype(x.dtype)
    frame = dd.from_dask_array(x, columns=_ARRAY_COLUMN).to_frame()
    ordered = sort_values(frame, _ARRAY_COLUMN, ascending=ascending, na_position=na_position,
                          npartitions=npartitions, target=target, shm_dir=shm_dir,
                          timeout=timeout, pandas_fallback=pandas_fallback)
    return ordered[_ARRAY_COLUMN].to_dask_array()
