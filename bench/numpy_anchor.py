#!/usr/bin/env python3
"""np.sort against the sorts of bench/numpy_anchor.cc, in one process, on one core.

Every round sorts a copy of the same random array with numpy (`a.sort()`, its default kind: Intel's
x86-simd-sort in numpy 2.x on AVX-512 CPUs) and with each sort of the library in turn; a row's
figure is the median over rounds, so the machine's drift hits every column alike. Each sort's
first result is checked against numpy's. Prints a markdown table: Mkeys/s, and the fastest of the
library's sorts against numpy.

Usage: numpy_anchor.py --lib build/bench/libnumpy_anchor.so [--dtypes uint32,int64]
                       [--sorts vqsort,lsd11,msd_lsd,msd_vqsort] [--min_log2 16] [--max_log2 26]
"""
from __future__ import annotations

import argparse
import ctypes
import statistics
import sys
import time

import numpy as np

U32_SORTS = ["vqsort", "lsd11", "msd_lsd", "msd_vqsort"]


def random_keys(rng: np.random.Generator, dtype: np.dtype, n: int) -> np.ndarray:
    """Random bits of an integer type."""
    bits = rng.integers(0, 2**64, size=n, dtype=np.uint64)
    return (bits.astype(np.uint32) if dtype.itemsize == 4 else bits).view(dtype)


def time_row(lib, dtype: np.dtype, n: int, sorts: list[str], rounds: int,
             rng: np.random.Generator) -> dict[str, float]:
    src = random_keys(rng, dtype, n)
    expected = np.sort(src)
    work = np.empty_like(src)
    # The partition writes whole 64-byte lines of tmp: aligned to them.
    raw = np.empty(n * src.itemsize + 64, np.uint8)
    tmp = raw[-raw.ctypes.data % 64:][:n * src.itemsize].view(src.dtype)
    inner = max(1, (1 << 20) // n)  # small arrays: several sorts a timing
    seconds: dict[str, list[float]] = {name: [] for name in ["numpy"] + sorts}
    for round_ in range(rounds):
        for name in seconds:
            total = 0.0
            for _ in range(inner):
                work[:] = src
                start = time.perf_counter()
                if name == "numpy":
                    work.sort()
                elif lib.sortd_anchor_sort(name.encode(), dtype.name.encode(), work.ctypes.data,
                                           tmp.ctypes.data, n) != 0:
                    raise SystemExit(f"{name} does not sort {dtype.name}")
                total += time.perf_counter() - start
            if round_ == 0 and not np.array_equal(work, expected):
                raise SystemExit(f"{name}: wrong order for {dtype.name} at n={n}")
            seconds[name].append(total / inner)
    return {name: n / statistics.median(s) / 1e6 for name, s in seconds.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lib", required=True)
    parser.add_argument("--dtypes", default="uint32,int32,uint64,int64")
    parser.add_argument("--sorts", default=None,
                        help=f"u32: {','.join(U32_SORTS)} (default); other types: vqsort")
    parser.add_argument("--min_log2", type=int, default=16)
    parser.add_argument("--max_log2", type=int, default=26)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    lib = ctypes.CDLL(args.lib)
    lib.sortd_anchor_sort.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_void_p,
                                      ctypes.c_void_p, ctypes.c_size_t]
    lib.sortd_anchor_sort.restype = ctypes.c_int
    rng = np.random.default_rng(args.seed)
    print(f"numpy {np.__version__}; Mkeys/s, medians of alternate runs in one process")
    for dtype in (np.dtype(d) for d in args.dtypes.split(",")):
        sorts = (args.sorts.split(",") if args.sorts
                 else U32_SORTS if dtype == np.uint32 else ["vqsort"])
        print(f"\n| keys | n | numpy | {' | '.join(sorts)} | best / numpy |")
        print(f"|---|---|--:|{'--:|' * len(sorts)}--:|")
        for log2 in range(args.min_log2, args.max_log2 + 1, 2):
            rounds = 9 if log2 <= 20 else 5 if log2 <= 24 else 3
            rates = time_row(lib, dtype, 1 << log2, sorts, rounds, rng)
            best = max(sorts, key=rates.get)
            cells = " | ".join(f"{rates[s]:.0f}" for s in sorts)
            print(f"| {dtype.name} | 2^{log2} | {rates['numpy']:.0f} | {cells} | "
                  f"{rates[best] / rates['numpy']:.2f}x ({best}) |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
