#!/usr/bin/env python3
"""What one `sortctl bench` run cost the server, for bench/device_run.sh (bench/sortd_bench_lib.sh).

  bench_summary.py snapshot PID METRICS_PORT FILE before|after
      sortd's CPU time and /metrics text, as JSON
  bench_summary.py report NAME REPORT_JSON RC BEFORE AFTER [DEVICE ...]
      one line: the client's figures, then the server's CPU per request and, from the metrics'
      deltas, the mean time in the server, per stage, and the mean launch size. With DEVICEs,
      exits 1 unless exactly those devices ("cuda:0", ...) served the run.
Writes REPORT_JSON's figures plus the server's into REPORT_JSON with .summary.json for its suffix.
"""
import json
import os
import re
import sys
import urllib.request


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def snapshot(pid, metrics_port, path, when):
    """The scrapes stay outside the CPU delta: scraped before the CPU time is read for "before",
    after it for "after"."""
    def scrape():
        if not metrics_port or metrics_port == "0":
            return ""
        with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10) as r:
            return r.read().decode()
    if when == "before":
        text = scrape()
        cpu_s = cpu_seconds(pid)
    else:
        cpu_s = cpu_seconds(pid)
        text = scrape()
    with open(path, "w") as f:
        json.dump({"cpu_s": cpu_s, "metrics": text}, f)


def series(text, name):
    """{labels text: value} for one metric name."""
    out = {}
    for m in re.finditer(r"^" + re.escape(name) + r"(\{[^}]*\})? (\S+)$", text, re.M):
        out[m.group(1) or ""] = float(m.group(2))
    return out


def delta_mean(before, after, family, labels=None):
    """Mean of a histogram's samples between two scrapes (summed over label sets matching)."""
    def total(text, suffix):
        return sum(v for k, v in series(text, family + suffix).items() if labels is None or labels in k)
    n = total(after, "_count") - total(before, "_count")
    return (total(after, "_sum") - total(before, "_sum")) / n if n > 0 else None


def report(name, report_path, rc, before_path, after_path, devices):
    try:
        r = json.load(open(report_path))
    except (OSError, ValueError):
        print(f"{name}: no report (sortctl exit {rc})")
        return 1
    before, after = json.load(open(before_path)), json.load(open(after_path))
    lat = r["latency_ms"]
    requests = r["requests_ok"] + r["errors"] + r.get("warmup_requests", 0)
    server_cpu_s = after["cpu_s"] - before["cpu_s"]
    s = {"server_cpu_s": server_cpu_s,
         "server_cpu_us_per_request": 1e6 * server_cpu_s / requests if requests else None}
    mb, ma = before["metrics"], after["metrics"]
    s["server_mean_ms"] = delta_mean(mb, ma, "sortd_request_duration_seconds", 'method="SortKeys"')
    for stage in ("queue", "host_to_device", "compute", "device_to_host"):
        s[f"{stage}_mean_ms"] = delta_mean(mb, ma, "sortd_stage_duration_seconds", f'stage="{stage}"')
    s["mean_launch_requests"] = delta_mean(mb, ma, "sortd_launch_requests")
    for k, v in s.items():
        if v is not None and k.endswith("_ms"):
            s[k] = 1e3 * v
    line = (f"{name}: rc={rc} req/s {r['requests_per_s']:.1f} keys/s {r['keys_per_s']:.4g} "
            f"MB/s {r['mb_per_s']:.1f} p50 {lat['p50_ms']:.3f} ms p99 {lat['p99_ms']:.3f} ms "
            f"errors {r['errors']} served_by {r['served_by']}")
    line += (f"\n    client {r.get('client_cpu_us_per_request', 0):.1f} us CPU/req; "
             f"server {s['server_cpu_us_per_request'] or 0:.1f} us CPU/req "
             f"({server_cpu_s / max(r['measured_s'] + r.get('warmup_s', 0), 1e-9):.1f} cores)")
    if s["server_mean_ms"] is not None:
        stages = " ".join(f"{k[:-8]} {s[k]:.3f}" for k in s if k.endswith("_mean_ms") and k != "server_mean_ms"
                          and s[k] is not None)
        line += f"; in server {s['server_mean_ms']:.3f} ms (means, ms: {stages})"
    if s["mean_launch_requests"] is not None:
        line += f"; {s['mean_launch_requests']:.1f} requests per launch"
    print(line)
    json.dump({**r, "server": s}, open(re.sub(r"\.json$", "", report_path) + ".summary.json", "w"), indent=1)
    ok = rc == 0 and r.get("passed", True)
    if devices:
        served = {where.split()[0] for where in r["served_by"]}
        if served != set(devices):
            print(f"  FAIL: served by {sorted(served)}, expected exactly {devices}")
            ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "snapshot" and sys.argv[5] in ("before", "after"):
        snapshot(*sys.argv[2:6])
    elif len(sys.argv) >= 7 and sys.argv[1] == "report":
        sys.exit(report(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5], sys.argv[6], sys.argv[7:]))
    else:
        sys.exit(__doc__)
