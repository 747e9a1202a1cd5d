#!/usr/bin/env python3
"""Turns the CSV rows of run_scenarios.sh (a scenario column, then `sortctl bench --csv`) into a
markdown table. Sort rows that have an Echo row of the same scenario also get their throughput as
a fraction of Echo's: the share of the transport ceiling that sorting keeps."""
import csv
import sys


def fmt_rate(x):
    x = float(x)
    for unit, div in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if x >= div:
            return f"{x / div:.2f} {unit}"
    return f"{x:.1f}"


def main(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    echo = {r["scenario"]: r for r in rows if r["rpc"] == "echo"}
    print("| scenario | rpc | load | keys/request | requests/s | keys/s | MB/s | p50 ms | p99 ms "
          "| p99.9 ms | max ms | p99 ms uncorrected | errors | of echo |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        loop = "closed" if r["loop"] == "closed" else f"open {float(r['rate']):g}/s"
        load = f"{loop}, {r['concurrency']} in flight max, {r['channels']} ch"
        if r.get("dispatchers") and r["dispatchers"] != "1":  # CSVs from before --dispatchers lack it
            load += f", {r['dispatchers']} dispatchers"
        uncorrected = r["uncorrected_p99_ms"] if r["loop"] == "open" else "="
        fraction = ""
        if r["rpc"] == "sort" and r["scenario"] in echo:
            e = float(echo[r["scenario"]]["keys_per_s"])
            if e > 0:
                fraction = f"{float(r['keys_per_s']) / e:.0%}"
        errors = r["errors"] if r["errors"] == "0" else f"**{r['errors']}** ({r['errors_by_code']})"
        print(f"| {r['scenario']} | {r['rpc']} {r['key_type']}"
              f"{'+v' + r['value_width'] if r['value_width'] != '0' else ''} | {load} "
              f"| {float(r['mean_keys']):.0f} | {float(r['requests_per_s']):.1f} "
              f"| {fmt_rate(r['keys_per_s'])} | {float(r['mb_per_s']):.1f} "
              f"| {float(r['p50_ms']):.3f} | {float(r['p99_ms']):.3f} | {float(r['p999_ms']):.3f} "
              f"| {float(r['max_ms']):.3f} | {uncorrected} | {errors} | {fraction} |")


if __name__ == "__main__":
    main(sys.argv[1])
