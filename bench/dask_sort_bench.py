#!/usr/bin/python3
"""Dask's DataFrame.sort_values with pandas' partition sort and with sortd's (sortd.dask), on one
distributed.LocalCluster, same data, same run; not part of CI. Prints a Markdown table.

Each of --workers worker processes (one thread each) gets a sortd of its own on loopback with
shared memory, as a deployment with one sortd per worker host would; with --one-sortd they share
one (--engine=gpu: a host's GPU serves all its workers, as on the GPU host). Dask's task stream splits
each sort's time into stages by task name: the divisions (quantiles, min/max: computed while the
graph is built), the shuffle (set_partitions_pre, shuffle-group/split/join, concat) and the
partition sorts (pandas' sort_values, argsort + take, vs sortd.dask's sort_partition, its
permute="auto": argsort + take on the CPU engine, a sort_pairs per column on a GPU).

    GLIBC_TUNABLES=glibc.malloc.hugetlb=1 PYTHONPATH=build/python /usr/bin/python3 \\
        bench/dask_sort_bench.py --sortd=build/server/sortd --rows=33554432 --partitions=32
"""
from __future__ import annotations

import argparse
import collections
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from typing import Any, Callable

import dask.dataframe as dd
import numpy as np
import pandas as pd
from distributed import Client, LocalCluster, get_task_stream, wait

import sortd
import sortd.dask

SORT_PREFIXES = ("sort_values", "sort_partition")


class Server:
    def __init__(self, binary: str, port: int, engine: str) -> None:
        self.dir = tempfile.mkdtemp(prefix="sortd-dask-bench-", dir="/dev/shm")
        self.target = f"127.0.0.1:{port}"
        self.process = subprocess.Popen(
            [binary, f"--engine={engine}", f"--listen={self.target}", "--metrics_listen=",
             "--shared_memory", f"--shared_memory_dir={self.dir}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with sortd.Client(self.target) as client:
            client.wait_for_server(timeout=60.0)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)
        shutil.rmtree(self.dir, ignore_errors=True)


def make_partition(i: int, rows: int, dtype: str) -> pd.DataFrame:
    rng = np.random.default_rng(i)
    if np.dtype(dtype).kind == "f":
        key = rng.random(rows).astype(dtype)
    else:
        info = np.iinfo(dtype)
        key = rng.integers(info.min, info.max, rows, dtype=dtype, endpoint=True)
    return pd.DataFrame({"key": key, "payload": rng.random(rows)},
                        index=pd.RangeIndex(i * rows, (i + 1) * rows))


def point_worker(target: str, shm_dir: str) -> None:
    os.environ[sortd.dask.TARGET_ENV] = target
    os.environ[sortd.dask.SHM_DIR_ENV] = shm_dir


def stage_of(key: Any) -> str:
    # The task stream names tasks by str(key): "('sort_partition-<token>', 3)".
    name = key[0] if isinstance(key, tuple) else str(key).lstrip("('\"")
    prefix = str(name).rsplit("-", 1)[0]
    if prefix.startswith(SORT_PREFIXES):
        return "partition sort"
    if any(s in prefix for s in ("shuffle", "set_partitions_pre", "concat", "assign", "drop")):
        return "shuffle"
    return "other (" + prefix[:30] + ")"


def timed_sort(client: Client, build: Callable[[], dd.DataFrame]) -> dict[str, float]:
    with get_task_stream(client) as ts:
        start = time.perf_counter()
        ordered = build()  # computes the divisions (Dask does, eagerly)
        divided = time.perf_counter()
        ordered = ordered.persist()
        wait(ordered)
        end = time.perf_counter()
    busy: dict[str, float] = collections.defaultdict(float)
    for task in ts.data:
        for ss in task["startstops"]:
            if ss["action"] == "compute":
                busy[stage_of(task["key"])] += ss["stop"] - ss["start"]
    n = sum(ordered.map_partitions(len).compute())
    del ordered
    return {"wall": end - start, "divisions": divided - start, "rows": n, **busy}


def partition_only(args: argparse.Namespace) -> None:
    """One partition's sort in this process, no cluster: what the partition stage is made of."""
    server = Server(args.sortd, args.port, args.engine)
    try:
        point_worker(server.target, server.dir)
        df = make_partition(0, args.rows // args.partitions, args.dtype)
        keys = df["key"].to_numpy()
        sortd.dask.sort_partition(df, "key")  # grows the region once
        order = np.argsort(keys)
        steps: dict[str, Callable[[], Any]] = {
            "pandas sort_values (Dask's default)": lambda: df.sort_values("key"),
            "sortd.dask.sort_partition, permute=take": lambda: sortd.dask.sort_partition(
                df, "key", permute="take"),
            "sortd.dask.sort_partition, permute=pairs": lambda: sortd.dask.sort_partition(
                df, "key", permute="pairs"),
            "  numpy argsort": lambda: np.argsort(keys),
            "  sortd argsort (shm, stable)": lambda: sortd.dask.argsort(keys),
            "  take (both)": lambda: df.take(order),
            "  the key column alone, permute=pairs (one sort_pairs)": lambda: sortd.dask.sort_partition(
                df[["key"]], "key", permute="pairs"),
        }
        print(f"one partition of {len(df)} rows ({args.dtype} key + float64 payload + int64 "
              f"index), best of {args.repeats}, seconds")
        print()
        print("| step | s |")
        print("|---|---|")
        for label, step in steps.items():
            best = float("inf")
            for _ in range(args.repeats):
                start = time.perf_counter()
                step()
                best = min(best, time.perf_counter() - start)
            print(f"| {label} | {best:.3f} |")
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sortd", required=True, help="the sortd binary")
    parser.add_argument("--rows", type=int, default=2**25)
    parser.add_argument("--partitions", type=int, default=32)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--dtype", default="int64")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--port", type=int, default=50871)
    parser.add_argument("--engine", choices=("cpu", "gpu"), default="cpu",
                        help="sortd's --engine")
    parser.add_argument("--one-sortd", action="store_true",
                        help="one sortd for every worker (one per host) instead of one each")
    parser.add_argument("--partition-only", action="store_true",
                        help="time one partition's sort in this process, no cluster")
    args = parser.parse_args()
    if args.partition_only:
        partition_only(args)
        return

    servers = [Server(args.sortd, args.port + i, args.engine)
               for i in range(1 if args.one_sortd else args.workers)]
    try:
        with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                          dashboard_address=None, memory_limit=0) as lc, Client(lc) as client:
            workers = sorted(client.scheduler_info()["workers"])
            for i, address in enumerate(workers):
                server = servers[i % len(servers)]
                client.run(point_worker, server.target, server.dir, workers=[address])
            per = args.rows // args.partitions
            ddf = dd.from_map(make_partition, range(args.partitions), rows=per,
                              dtype=args.dtype).persist()
            wait(ddf)
            runs: dict[str, list[dict[str, float]]] = {"pandas": [], "sortd": []}
            builders = {"pandas": lambda: ddf.sort_values("key"),
                        "sortd": lambda: sortd.dask.sort_values(ddf, "key")}
            # Alternating, after one unrecorded round that grows each worker's shared-memory
            # region to a partition's size.
            for name, build in builders.items():
                timed_sort(client, build)
            for _ in range(args.repeats):
                for name, build in builders.items():
                    runs[name].append(timed_sort(client, build))
            report(args, runs)
            print()
            print("partitions sorted through sortd, by worker, (target, transport):",
                  client.run(sortd.dask.partition_counts))
    finally:
        for s in servers:
            s.stop()


def report(args: argparse.Namespace, runs: dict[str, list[dict[str, float]]]) -> None:
    def med(name: str, field: str) -> float:
        return statistics.median(r.get(field, 0.0) for r in runs[name])

    print(f"{args.rows} rows ({args.dtype} key + float64 payload + int64 index), "
          f"{args.partitions} partitions, {args.workers} workers x 1 thread, {args.engine} "
          f"engine, {'one sortd for all' if args.one_sortd else 'a sortd each'}, medians of "
          f"{args.repeats}; busy = summed task compute time over all workers")
    print()
    print("| | pandas partition sort | sortd partition sort | ratio |")
    print("|---|---|---|---|")
    rows = [("end to end, wall (s)", "wall"), ("divisions, wall (s)", "divisions"),
            ("shuffle, busy (s)", "shuffle"), ("partition sorts, busy (s)", "partition sort")]
    for label, field in rows:
        a, b = med("pandas", field), med("sortd", field)
        print(f"| {label} | {a:.2f} | {b:.2f} | {a / b if b else float('nan'):.2f}x |")
    others = sorted({k for r in runs["pandas"] + runs["sortd"] for k in r if k.startswith("other")})
    for field in others:
        print(f"| {field}, busy (s) | {med('pandas', field):.2f} | {med('sortd', field):.2f} | |")
    assert all(r["rows"] == args.rows // args.partitions * args.partitions
               for rs in runs.values() for r in rs)


if __name__ == "__main__":
    main()
