#!/usr/bin/python3
"""The Python client (client/python) against `sortctl bench` on the same sortd and transport, and
against numpy on the same machine. Prints one markdown table. Not run in CI.

    PYTHONPATH=build/python /usr/bin/python3 bench/python_client_bench.py \
        --sortd build/server/sortd --sortctl build/client/sortctl [--engine=cpu] [--quick] \
        [--no-numpy] [--copy-threads=N]

It starts its own sortd (--shared_memory, on a Unix socket in a scratch folder under /dev/shm).
Latencies are p50 of sequential calls (one in flight), after one warm-up call; ratios are of the
unrounded p50s. The "from client.empty" rows do what sortctl bench --transport=shm does: keys
loaded once into a registered region (sortctl loads a request into its region once and sends it
again from there), sorted into another range of shared memory and read there (copy=False); their
notes add the same sort where the keys lie (overwrite_input=True), the keys loaded again before
each call outside the timing. Their 1K row shows the fixed cost of a call. sortd and sortctl
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


def interleaved_p50_ms(fns: list[Callable[[], object]], reps: int,
                       setups: list[Callable[[], object]]) -> list[float]:
    """p50 of each of `fns`, their calls taken in turn (each after its untimed setup). Measured
    one after the other, the first (right after sortctl's run) came out 1.4 to 1.6 times slower
    in one run than in calls interleaved with the other."""
    times: list[list[float]] = [[] for _ in fns]
    for i in range(reps + 1):
        for k, fn in enumerate(fns):
            setups[k]()
            t = time.perf_counter()
            fn()
            if i:  # the first round warms up: connection, region, page faults
                times[k].append(time.perf_counter() - t)
    return [statistics.median(ts) * 1e3 for ts in times]


def ms(t: float) -> str:
    # Sub-millisecond rows (the fixed cost of a call) need 0.01 ms to be compared at all.
    return f"{t:.2f}" if t < 10 else f"{t:.1f}"


def size(n: int) -> str:
    return f"{n // M}M" if n >= M else f"{n // 1024}K"


def sortctl_p50_ms(sortctl: str, target: str, shm_dir: str, transport: str, n: int,
                   reps: int) -> float:
    out = subprocess.run(
        [sortctl, "bench", f"--target={target}", f"--transport={transport}",
         f"--shm_dir={shm_dir}", "--key_type=u32", f"--sizes=fixed:{n}", "--concurrency=1",
         f"--requests={reps}", "--warmup=0s", "--no_verify", "--progress=false", "--json",
         "--timeout=600s"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)["latency_ms"]["p50_ms"]


def region_row(client: sortd.Client, sortctl: str, target: str, work: str, a: np.ndarray,
               reps: int) -> tuple[str, str, str, str]:
    """Python against sortctl bench --transport=shm doing the same work (see the docstring)."""
    n = a.shape[0]
    c = sortctl_p50_ms(sortctl, target, work, "shm", n, reps)
    # Sorted into another range, the keys stay as loaded, as sortctl's do; sorted where they lie
    # (an array of their own) they are loaded again before each call.
    lent, lent_in_place = client.empty(n, np.uint32), client.empty(n, np.uint32)
    lent[...] = a

    def refill() -> None:
        lent_in_place[...] = a

    py, py_in_place = interleaved_p50_ms(
        [lambda: client.sort(lent, copy=False),
         lambda: client.sort(lent_in_place, overwrite_input=True, copy=False)], reps,
        [lambda: None, refill])
    return (f"u32 {size(n)} sort, shm from client.empty: Python / sortctl",
            f"{ms(py)} / {ms(c)} ms", f"{py / c:.3f}x",
            f"copy=False; overwrite_input=True (keys loaded again, untimed): {ms(py_in_place)} ms "
            f"({py_in_place / c:.3f}x)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sortd", required=True)
    ap.add_argument("--sortctl", required=True)
    ap.add_argument("--engine", default="cpu")
    ap.add_argument("--quick", action="store_true", help="1M only (and the 1K client.empty row)")
    ap.add_argument("--no-numpy", action="store_true", help="leave out the rows against numpy")
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
            small = rng.integers(0, 1 << 32, 1024, dtype=np.uint32)
            rows.append(region_row(client, args.sortctl, target, work, small, 2001))
            for n in sizes:
                reps = 11 if n == M else 5
                a = rng.integers(0, 1 << 32, n, dtype=np.uint32)
                for transport in ("shm", "bytes", "stream"):
                    c = sortctl_p50_ms(args.sortctl, target, work, transport, n, reps)
                    py = p50_ms(lambda: client.sort(a, transport=transport), reps)
                    py_view = p50_ms(lambda: client.sort(a, transport=transport, copy=False),
                                     reps)
                    note = f"copy=False: {ms(py_view)} ms ({py_view / c:.3f}x)"
                    if transport == "shm":
                        rows.append(region_row(client, args.sortctl, target, work, a, reps))
                    rows.append((f"u32 {size(n)} sort, {transport}: Python / sortctl",
                                 f"{ms(py)} / {ms(c)} ms", f"{py / c:.3f}x", note))
            for dtype in () if args.no_numpy else (np.uint32, np.float64, np.int64):
                for n in sizes:
                    reps = 5 if n == M else 3
                    a = (rng.integers(0, 1 << 62, n).astype(dtype) if dtype != np.float64
                         else rng.standard_normal(n))
                    for name, ours, theirs in (
                            ("sort", lambda: client.sort(a), lambda: np.sort(a)),
                            ("argsort", lambda: client.argsort(a), lambda: np.argsort(a))):
                        o = p50_ms(ours, reps)
                        t = p50_ms(theirs, reps)
                        rows.append((f"{np.dtype(dtype).name} {size(n)} {name}: sortd / numpy",
                                     f"{ms(o)} / {ms(t)} ms", f"{o / t:.3f}x",
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
