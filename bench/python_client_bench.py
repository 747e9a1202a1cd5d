#!/usr/bin/python3
"""The Python client (client/python) against `sortctl bench` on the same sortd and transport, and
against numpy on the same machine. Prints one markdown table. Not run in CI.

    PYTHONPATH=build/python /usr/bin/python3 bench/python_client_bench.py \
        --sortd build/server/sortd --sortctl build/client/sortctl [--engine=cpu] [--quick]

It starts its own sortd (--shared_memory, on a Unix socket in a scratch folder under /dev/shm).
Latencies are p50 of sequential calls (one in flight), after one warm-up call. sortd and sortctl
inherit this process's environment: run it with GLIBC_TUNABLES=glibc.malloc.hugetlb=1 for all
three, as docs/python.md does, or without for none.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from typing import Callable

import numpy as np

import sortd

M = 1 << 20


def p50_ms(fn: Callable[[], object], reps: int) -> float:
    fn()  # warm-up: connection, region, page faults
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def sortctl_p50_ms(sortctl: str, target: str, shm_dir: str, transport: str, n: int,
                   reps: int) -> float:
    out = subprocess.run(
        [sortctl, "bench", f"--target={target}", f"--transport={transport}",
         f"--shm_dir={shm_dir}", "--key_type=u32", f"--sizes=fixed:{n}", "--concurrency=1",
         f"--requests={reps}", "--warmup=0s", "--no_verify", "--progress=false", "--json",
         "--timeout=600s"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)["latency_ms"]["p50_ms"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sortd", required=True)
    ap.add_argument("--sortctl", required=True)
    ap.add_argument("--engine", default="cpu")
    ap.add_argument("--quick", action="store_true", help="1M only")
    ap.add_argument("--copy-threads", type=int, default=None,
                    help="at most this many threads per copy into or out of a region (1: one)")
    args = ap.parse_args()
    if args.copy_threads is not None:
        from sortd import _copy
        _copy.MAX_THREADS = max(1, args.copy_threads)
    sizes = [M] if args.quick else [M, 16 * M]
    work = tempfile.mkdtemp(prefix="sortd-pybench-", dir="/dev/shm")
    target = f"unix:{work}/sortd.sock"
    server = subprocess.Popen(
        [args.sortd, f"--listen={target}", "--metrics_listen=", f"--engine={args.engine}",
         "--shared_memory", f"--shared_memory_dir={work}"], stderr=subprocess.DEVNULL)
    rows = []
    try:
        with sortd.Client(target, shm_dir=work) as client:
            client.wait_for_server(60)
            rng = np.random.default_rng(1)
            for n in sizes:
                reps = 11 if n == M else 5
                a = rng.integers(0, 1 << 32, n, dtype=np.uint32)
                for transport in ("shm", "bytes", "stream"):
                    c = sortctl_p50_ms(args.sortctl, target, work, transport, n, reps)
                    py = p50_ms(lambda: client.sort(a, transport=transport), reps)
                    py_view = p50_ms(lambda: client.sort(a, transport=transport, copy=False),
                                     reps)
                    note = f"copy=False: {py_view:.1f} ms ({py_view / c:.2f}x)"
                    if transport == "shm":
                        # As sortctl sends it: the keys already in shared memory, the result read
                        # where sortd wrote it. Filled once; each sort writes to the scratch region.
                        lent = client.empty(n, np.uint32)
                        lent[...] = a
                        py_lent = p50_ms(lambda: client.sort(lent, copy=False), reps)
                        note += f"; input from client.empty: {py_lent:.1f} ms ({py_lent / c:.2f}x)"
                    rows.append((f"u32 {n // M}M sort, {transport}: Python / sortctl",
                                 f"{py:.1f} / {c:.1f} ms", f"{py / c:.2f}x", note))
            for dtype in (np.uint32, np.float64, np.int64):
                for n in sizes:
                    reps = 5 if n == M else 3
                    a = (rng.integers(0, 1 << 62, n).astype(dtype) if dtype != np.float64
                         else rng.standard_normal(n))
                    for name, ours, theirs in (
                            ("sort", lambda: client.sort(a), lambda: np.sort(a)),
                            ("argsort", lambda: client.argsort(a), lambda: np.argsort(a))):
                        o = p50_ms(ours, reps)
                        t = p50_ms(theirs, reps)
                        rows.append((f"{np.dtype(dtype).name} {n // M}M {name}: sortd / numpy",
                                     f"{o:.1f} / {t:.1f} ms", f"{o / t:.2f}x",
                                     f"transport {client.last_transport}"))
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(work, ignore_errors=True)
    print("| case | time (p50) | ratio | note |")
    print("|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
