#!/usr/bin/env python3
"""Chaos soak for sortd (not in CI): one sortd under mixed hostile load for a given duration,
every answer checked against an independent numpy reference, and the reliability figures that
the docs' reliability table quotes.

    /usr/bin/python3 bench/chaos_soak.py --mode=cpu --duration=30m --workers=4 --out=/tmp/soak
    /usr/bin/python3 bench/chaos_soak.py --mode=standin --fault_every=100 --lose_at_batch=5000 ...
    /usr/bin/python3 bench/chaos_soak.py --mode=gpu --duration=30m ...      (on a GPU machine)

What runs: the supervisor (this process) starts ONE sortd (--sortd) on loopback with
--shared_memory (in a private directory under /dev/shm), a small memory budget
(--budget_mib -> --max_inflight_bytes) and a short --receive_timeout, then --workers worker
PROCESSES that loop over random calls with the Python client (sortd package, --pythonpath):
SortKeys (transport="bytes"), SortStream (transport="stream"), SortSession (sort_many) and
SortKeys over shared-memory regions (transport="shm", scratch and in-place), random key dtypes,
log-uniform sizes (0 .. 2^--max_log2 keys; a fraction --huge_fraction past the whole budget),
random descending / stable / argsort / pairs / algorithm hints, and a fraction --short_deadline_
fraction of calls with a deadline of 1-500 ms. Every few seconds (--kill_every) the supervisor
SIGKILLs a random worker (often mid-call) and starts a new one; the regions the dead worker had
registered are unregistered and removed (ListRegions), as a client's watchdog would (--no_reap:
leave them, to see the region limit bite).

Checked: every OK answer against numpy (floats in sortd's total order -NaN < -Inf < .. < -0.0 <
+0.0 < .. < +Inf < +NaN by bit pattern; stable argsort / pairs equal numpy's stable argsort;
unstable ones a sorted permutation); every status by RPC kind, those other than OK,
RESOURCE_EXHAUSTED (memory budget), DEADLINE_EXCEEDED / CANCELLED (short deadline) and INTERNAL
(injected fault) flagged with their messages; sortd's RSS every second (start, max, end, slope of
the last half); sortd_inflight_bytes (never above its limit; back to 0 within 10 s of the load's
end); the final /metrics; sortd's exit (a death during the soak is a crash and stops it).

Output: a markdown report on stdout and in OUT/report.md, OUT/summary.json, OUT/rss.csv,
OUT/sortd.log, OUT/records/*.jsonl (one line per call), OUT/wrong/*.npz (inputs and outputs of
any wrong answer). A wrong answer's id is SEED:GEN:COUNTER; --replay=ID --target=HOST:PORT
rebuilds that request and sends it again, verified, to a running sortd.
Exit status: 0 when wrong answers, unexpected statuses and sortd crashes are all 0, else 1.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import glob
import json
import os
import platform
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.request
from collections import Counter, defaultdict

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

KINDS = ("bytes", "stream", "session", "session_item", "shm")
KIND_LABEL = {
    "bytes": "SortKeys (bytes)",
    "stream": "SortStream",
    "session": "SortSession (calls)",
    "session_item": "SortSession (requests)",
    "shm": "SortKeys (shared memory)",
}
CODES = ("OK", "RESOURCE_EXHAUSTED", "DEADLINE_EXCEEDED", "CANCELLED", "UNAVAILABLE", "INTERNAL")
DTYPES = ("<u4", "<i4", "<f4", "<u8", "<i8", "<f8")
ALGOS = ("radix", "bitonic", "odd_even_merge", "library", "cpu", "odd_even_transposition")


# ------------------------------------------------------------------------------------------------
# The independent reference: the Python client's tests' own (numpy only, no sortd code).
sys.path.insert(0, os.path.join(REPO, "client", "python", "tests"))
from reference import argsort as ref_argsort, bits, order_keys  # noqa: E402


def check_keys_sorted(a: np.ndarray, out: np.ndarray, descending: bool) -> str | None:
    if out.dtype.newbyteorder("<") != a.dtype.newbyteorder("<"):
        return f"keys dtype {out.dtype}, sent {a.dtype}"
    if out.shape != a.shape:
        return f"{out.shape[0] if out.ndim else out.shape} keys back for {a.shape[0]}"
    want = np.sort(order_keys(a))
    got = order_keys(np.ascontiguousarray(out, dtype=a.dtype))
    if descending:
        got = got[::-1]
    if not np.array_equal(want, got):
        bad = int(np.flatnonzero(want != got)[0])
        pos = a.shape[0] - 1 - bad if descending else bad
        return f"keys differ from numpy's sort first at position {pos}"
    return None


def check_permutation(a: np.ndarray, perm: np.ndarray, descending: bool, stable: bool,
                      what: str) -> str | None:
    n = a.shape[0]
    if perm.shape != (n,):
        return f"{what}: {perm.shape} for {n} keys"
    perm = perm.astype(np.int64, copy=False)
    if n and (perm.min() < 0 or perm.max() >= n):
        return f"{what}: out of range [0, {n})"
    if n and np.bincount(perm, minlength=n).max() != 1:
        return f"{what}: not a permutation (repeats)"
    if stable:
        want = ref_argsort(a, descending)
        if not np.array_equal(want, perm):
            bad = int(np.flatnonzero(want != perm)[0])
            return f"{what}: differs from numpy's stable argsort first at position {bad}"
        return None
    k = order_keys(a)[perm]
    if n > 1 and not (np.all(k[1:] <= k[:-1]) if descending else np.all(k[1:] >= k[:-1])):
        return f"{what}: keys in that order are not sorted"
    return None


# ------------------------------------------------------------------------------------------------
# Requests: everything drawn from numpy's generator seeded with (seed, gen, counter), so any
# request can be built again from its id.
def float_specials(dt: np.dtype) -> np.ndarray:
    w = dt.itemsize
    u = np.dtype(f"<u{w}")
    sign = 1 << (8 * w - 1)
    inf = int(np.array(np.inf, dtype=dt).view(u))
    quiet = 1 << (23 if w == 4 else 52) - 1
    mant = (1 << (23 if w == 4 else 52)) - 1
    pats = [inf | quiet, inf | 1, inf | mant, inf | 12345, inf, 0, 1, mant,
            int(np.array(1.0, dtype=dt).view(u)), int(np.array(np.finfo(dt).max, dtype=dt).view(u))]
    pats += [p | sign for p in pats]
    return np.array(pats, dtype=u).view(dt)


def int_specials(dt: np.dtype) -> np.ndarray:
    info = np.iinfo(dt)
    return np.array([info.min, info.max, 0, 1, 7, info.max - 1, info.min + 1], dtype=dt)


def gen_keys(rng: np.random.Generator, dt: np.dtype, n: int) -> tuple[np.ndarray, str]:
    dist = rng.choice(["bits", "few", "narrow", "specials"], p=[0.45, 0.2, 0.25, 0.1])
    w = dt.itemsize
    specials = float_specials(dt) if dt.kind == "f" else int_specials(dt)
    if dist == "bits":
        a = np.frombuffer(rng.bytes(n * w), dtype=dt).copy()
    elif dist == "few":
        pool = np.concatenate([np.frombuffer(rng.bytes(w * int(rng.integers(1, 16))), dtype=dt),
                               specials[: int(rng.integers(0, len(specials) + 1))]])
        a = pool[rng.integers(0, len(pool), n)]
    elif dist == "narrow":
        if dt.kind == "f":
            a = (rng.standard_normal(n) * 1000).astype(dt)
        elif dt.kind == "u":
            a = rng.integers(0, 2000, n).astype(dt)
        else:
            a = rng.integers(-1000, 1000, n).astype(dt)
    else:
        a = specials[rng.integers(0, len(specials), n)]
    if n and dist != "specials" and rng.random() < 0.5:  # sprinkle specials
        pick = rng.random(n) < 0.05
        a[pick] = specials[rng.integers(0, len(specials), int(pick.sum()))]
    order = rng.choice(["random", "sorted", "reversed", "nearly"], p=[0.7, 0.1, 0.1, 0.1])
    if n > 1 and order != "random":
        a = a[np.argsort(order_keys(a), kind="stable")]
        if order == "reversed":
            a = a[::-1].copy()
        elif order == "nearly":
            i = rng.integers(0, n, max(1, n // 100))
            j = rng.integers(0, n, len(i))
            a[i], a[j] = a[j].copy(), a[i].copy()
    return np.ascontiguousarray(a), f"{dist}/{order}"


def log_uniform_n(rng: np.random.Generator, max_log2: float) -> int:
    return int(2 ** rng.uniform(0, max_log2)) - 1  # 0 .. 2^max_log2 - 1


def make_request(cfg: dict, gen: int, counter: int) -> dict:
    """A request's parameters (no arrays): drawn from (seed, gen, counter) alone."""
    rng = np.random.default_rng([cfg["seed"], gen, counter])
    kind = rng.choice(["bytes", "stream", "session", "shm"], p=cfg["kind_weights"])
    req = dict(id=f"{cfg['seed']}:{gen}:{counter}", kind=str(kind),
               descending=bool(rng.random() < 0.4), stable=bool(rng.random() < 0.4))
    req["algorithm"] = "auto" if rng.random() < 0.7 else str(rng.choice(ALGOS))
    budget = cfg["budget_mib"] << 20
    huge = bool(rng.random() < cfg["huge_fraction"])
    if kind == "session":
        count = int(rng.integers(1, 33))
        items = []
        for _ in range(count):
            dt = str(rng.choice(DTYPES))
            items.append((dt, log_uniform_n(rng, min(cfg["max_log2"], 14))))
        if huge:  # one request past the whole budget
            dt = str(rng.choice(DTYPES))
            items[int(rng.integers(0, count))] = (dt, int(budget * rng.uniform(0.6, 1.2)) //
                                                  np.dtype(dt).itemsize)
        req["items"] = items
    else:
        dt = str(rng.choice(DTYPES))
        req["dtype"] = dt
        if huge:  # input alone 0.6-1.5x the budget: input + output never fit it
            req["n"] = int(budget * rng.uniform(0.6, 1.5)) // np.dtype(dt).itemsize
        else:
            req["n"] = log_uniform_n(rng, cfg["max_log2"])
        req["variant"] = str(rng.choice(["sort", "argsort", "pairs"], p=[0.5, 0.25, 0.25]))
        if kind == "shm" and req["variant"] == "sort":
            req["shm_mode"] = str(rng.choice(["copy", "view", "inplace"], p=[0.5, 0.3, 0.2]))
        if req["variant"] == "pairs":
            req["value_dtype"] = str(rng.choice(DTYPES))
        elif req["variant"] == "sort" and kind == "bytes" and rng.random() < 0.3:
            req["copy"] = False
    n_max = max([x[1] for x in req.get("items", [])] + [req.get("n", 0)])
    if req["algorithm"] == "odd_even_transposition" and n_max > 4096:
        req["algorithm"] = "auto"  # O(n^2): its cap is a refusal, not chaos
    req["deadline"] = (float(np.exp(rng.uniform(np.log(0.001), np.log(0.5))))
                       if rng.random() < cfg["short_deadline_fraction"] else None)
    req["data_seed"] = int(rng.integers(0, 2 ** 63))
    return req


def build_arrays(req: dict):
    rng = np.random.default_rng(req["data_seed"])
    if req["kind"] == "session":
        return [gen_keys(rng, np.dtype(dt), n)[0] for dt, n in req["items"]], None, None
    keys, dist = gen_keys(rng, np.dtype(req["dtype"]), req["n"])
    req["dist"] = dist
    if req["variant"] != "pairs":
        return keys, None, None
    vdt = np.dtype(req["value_dtype"])
    u = np.dtype(f"<u{vdt.itemsize}")
    mask = int(rng.integers(0, 2 ** (8 * vdt.itemsize), dtype=u))
    ids = np.arange(req["n"], dtype=u) ^ u.type(mask)
    return keys, ids.view(vdt), mask


# ------------------------------------------------------------------------------------------------
# One call and its check.
def run_call(clients: dict, req: dict, default_timeout: float, arrays):
    """Returns (records, wrong) where wrong is None or (reason, saved arrays)."""
    import sortd  # noqa: F401  (imported by the worker before)
    from sortd import SortdError

    keys, values, mask = arrays
    kind = req["kind"]
    timeout = req["deadline"] if req["deadline"] is not None else default_timeout
    opts = dict(descending=req["descending"], stable=req["stable"], algorithm=req["algorithm"])
    client = clients["bytes" if kind == "session" else kind]
    client.timeout = timeout
    records, wrong = [], None
    base = dict(k=kind, id=req["id"], dl=req["deadline"])
    t0 = time.monotonic()
    try:
        if kind == "session":
            res = client.sort_many(keys, return_exceptions=True, **opts)
            ms = (time.monotonic() - t0) * 1e3
            item_codes = Counter()
            for i, (a, r) in enumerate(zip(keys, res)):
                if isinstance(r, SortdError):
                    item_codes[r.code.name] += 1
                    records.append(dict(base, k="session_item", c=r.code.name, n=int(a.shape[0]),
                                        t=a.dtype.str, m=r.details[:300], item=i))
                    continue
                item_codes["OK"] += 1
                why = check_keys_sorted(a, r, req["descending"])
                if why and wrong is None:
                    wrong = (f"request {i} of the session: {why}", dict(keys=a, out=r))
            if len(res) != len(keys) and wrong is None:
                wrong = (f"{len(res)} answers for {len(keys)} requests", {})
            records.append(dict(base, c="OK", n=int(sum(a.shape[0] for a in keys)),
                                items=len(keys), ms=round(ms, 2), ic=dict(item_codes)))
            return records, wrong
        n = keys.shape[0]
        rec = dict(base, n=n, t=keys.dtype.str, v=req["variant"], a=req["algorithm"])
        inplace = req.get("shm_mode") == "inplace"
        if req["variant"] == "sort":
            if inplace:
                buf = client.empty(n, keys.dtype)
                buf[...] = keys
                out = client.sort(buf, overwrite_input=True, **opts)
                if out is not buf:
                    wrong = ("overwrite_input=True returned another array", {})
            else:
                out = client.sort(keys, copy=req.get("shm_mode") != "view" and
                                  req.get("copy", True), **opts)
            ms = (time.monotonic() - t0) * 1e3
            why = check_keys_sorted(keys, out, req["descending"])
            saved = dict(keys=keys, out=np.array(out))
            del out
            if inplace:
                del buf
        elif req["variant"] == "argsort":
            out = client.argsort(keys, **opts)
            ms = (time.monotonic() - t0) * 1e3
            why = check_permutation(keys, out, req["descending"], req["stable"], "indices")
            saved = dict(keys=keys, indices=out)
        else:
            out_k, out_v = client.sort_pairs(keys, values, **opts)
            ms = (time.monotonic() - t0) * 1e3
            why = check_keys_sorted(keys, out_k, req["descending"])
            if why is None:
                u = np.dtype(f"<u{values.dtype.itemsize}")
                if out_v.shape != (n,) or out_v.dtype.itemsize != values.dtype.itemsize:
                    why = f"values: {out_v.shape} of {out_v.dtype} back"
                else:
                    perm = (np.ascontiguousarray(out_v).view(u) ^ u.type(mask)).astype(np.int64)
                    why = check_permutation(keys, perm, req["descending"], req["stable"],
                                            "values")
                    if why is None and not np.array_equal(bits(keys[perm]), bits(out_k)):
                        why = "values: not moved with their keys"
            saved = dict(keys=keys, values=values, out_keys=out_k, out_values=out_v)
        if why and wrong is None:
            wrong = (why, saved)
        records.append(dict(rec, c="OK", ms=round(ms, 2)))
        return records, wrong
    except SortdError as e:
        code, msg = e.code.name, e.details
    except Exception as e:  # the client or this harness: listed, never hidden
        code, msg = "CLIENT_EXCEPTION", f"{type(e).__name__}: {e} | " + \
            traceback.format_exc().strip().splitlines()[-3].strip()
    ms = (time.monotonic() - t0) * 1e3
    n = (sum(a.shape[0] for a in keys) if kind == "session" else keys.shape[0])
    records.append(dict(base, c=code, n=int(n), ms=round(ms, 2), m=msg[:300],
                        v=req.get("variant"), t=req.get("dtype"), a=req["algorithm"]))
    return records, wrong


def describe(req: dict) -> str:
    if req["kind"] == "session":
        return (f"session of {len(req['items'])} ({sum(n for _, n in req['items'])} keys) "
                f"desc={req['descending']} stable={req['stable']} algo={req['algorithm']} "
                f"deadline={req['deadline']}")
    return (f"{req['kind']} {req['variant']}{'/' + req['shm_mode'] if 'shm_mode' in req else ''} "
            f"{req['dtype']} n={req['n']} desc={req['descending']} stable={req['stable']} "
            f"algo={req['algorithm']} values={req.get('value_dtype')} deadline={req['deadline']}")


# ------------------------------------------------------------------------------------------------
# The worker process.
def worker_main(cfg: dict) -> int:
    stop = {"now": False}

    def on_term(*_):
        stop["now"] = True

    signal.signal(signal.SIGTERM, on_term)
    sys.path.insert(0, cfg["pythonpath"])
    import sortd
    gen = cfg["gen"]
    rec_fd = os.open(cfg["records"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    cur_fd = os.open(cfg["current"], os.O_WRONLY | os.O_CREAT, 0o644)

    def put(obj):
        obj["ts"] = round(time.time(), 3)  # when the call ended: lines up with sortd.log
        os.write(rec_fd, (json.dumps(obj, separators=(",", ":")) + "\n").encode())

    def current(text: str):
        os.pwrite(cur_fd, text.encode()[:480].ljust(512), 0)

    clients = {t: sortd.Client(cfg["target"], transport=t, shm_dir=cfg["shm_dir"])
               for t in ("bytes", "stream", "shm")}
    counter = 0
    try:
        while not stop["now"]:
            counter += 1
            req = make_request(cfg, gen, counter)
            arrays = build_arrays(req)
            current(f"call {describe(req)} id={req['id']}")
            records, wrong = run_call(clients, req, cfg["call_timeout"], arrays)
            current("idle (building or checking)")
            for r in records:
                put(r)
            if wrong is not None:
                why, saved = wrong
                path = os.path.join(cfg["wrong_dir"], req["id"].replace(":", "_") + ".npz")
                try:
                    if sum(getattr(v, "nbytes", 0) for v in saved.values()) < (256 << 20):
                        np.savez(path, **{k: np.asarray(v) for k, v in saved.items()})
                    else:
                        path = None
                except Exception as e:  # noqa: BLE001
                    path = f"not saved: {e}"
                put(dict(wrong=True, id=req["id"], k=req["kind"], why=why,
                         request=describe(req), dist=req.get("dist"), saved=path))
            del arrays
    finally:
        current("closing")
        for c in clients.values():
            try:
                c.close()
            except Exception:  # noqa: BLE001
                pass
        current("closed")
    return 0


# ------------------------------------------------------------------------------------------------
# The supervisor.
def parse_duration(text: str) -> float:
    m = re.fullmatch(r"\s*([0-9.]+)\s*(ms|s|m|h)?\s*", text)
    if not m:
        raise argparse.ArgumentTypeError(f"duration {text!r}: give e.g. 90s, 30m, 2h")
    return float(m.group(1)) * {"ms": 1e-3, "s": 1, "m": 60, "h": 3600, None: 1}[m.group(2)]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def read_status(pid: int) -> dict:
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(("VmRSS", "RssAnon", "RssFile", "RssShmem", "Threads")):
                    k, v = line.split(":", 1)
                    out[k] = int(v.split()[0])
    except OSError:
        pass
    return out


def scrape(url: str, timeout: float = 2.0) -> dict | None:
    """Prometheus text as {name: {labels-string: value}}."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            text = r.read().decode()
    except Exception:  # noqa: BLE001
        return None
    out: dict = defaultdict(dict)
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+(\S+)$", line)
        if m:
            try:
                out[m.group(1)][m.group(2) or ""] = float(m.group(3))
            except ValueError:
                pass
    return out


def labels(s: str) -> dict:
    return dict(re.findall(r'(\w+)="([^"]*)"', s))


def metric(m: dict | None, name: str, default=None):
    if not m or name not in m:
        return default
    return sum(m[name].values())


def cpu_model() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout
        for line in out.splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except Exception:  # noqa: BLE001
        pass
    return platform.processor() or "unknown"


def slope_per_min(samples: list[tuple[float, float]]) -> float:
    if len(samples) < 2:
        return 0.0
    t = np.array([s[0] for s in samples]) / 60.0
    y = np.array([s[1] for s in samples])
    if np.ptp(t) == 0:
        return 0.0
    return float(np.polyfit(t, y, 1)[0])


def normalize(msg: str) -> str:
    return re.sub(r"\d+(\.\d+)?", "N", msg)[:220]


class Soak:
    def __init__(self, args):
        self.args = args
        self.out = os.path.abspath(args.out)
        for d in ("records", "wrong", "workers"):
            os.makedirs(os.path.join(self.out, d), exist_ok=True)
        self.rng = random.Random(args.seed)
        self.events: list[dict] = []
        self.kills = self.kills_mid_call = 0
        self.worker_deaths: list[dict] = []
        self.reaped = 0
        self.rss: list[tuple[float, dict]] = []
        self.inflight_max = 0.0
        self.inflight_limit = None
        self.regions_max = 0.0
        self.scrape_failures = 0
        self.sortd_died: dict | None = None
        self.stop_sampling = threading.Event()

    # ---- sortd ----
    def sortd_flags(self) -> list[str]:
        a = self.args
        flags = [f"--listen=127.0.0.1:{self.port}", f"--metrics_listen=127.0.0.1:{self.mport}",
                 "--shared_memory", f"--shared_memory_dir={self.shm_dir}",
                 f"--max_inflight_bytes={a.budget_mib << 20}",
                 f"--receive_timeout={a.receive_timeout}", f"--send_timeout={a.send_timeout}"]
        if a.mode == "cpu":
            flags.append("--engine=cpu")
        else:
            flags.append("--engine=gpu")
            if a.mode == "standin":
                flags.append(f"--test_stand_in_gpus={a.stand_in_gpus}")
            if a.fault_every:
                flags.append(f"--test_gpu_fault_every={a.fault_every}")
            if a.lose_at_batch:
                flags.append(f"--test_gpu_lose_at_batch={a.lose_at_batch}")
        return flags + list(a.sortd_args)

    def faults_on(self) -> bool:
        return self.args.mode != "cpu" and bool(self.args.fault_every or self.args.lose_at_batch)

    def start_sortd(self):
        self.port, self.mport = free_port(), free_port()
        self.shm_dir = tempfile.mkdtemp(prefix="sortd-chaos-", dir=self.args.shm_parent)
        self.flags = self.sortd_flags()
        self.sortd_log = open(os.path.join(self.out, "sortd.log"), "wb")
        self.sortd = subprocess.Popen([self.args.sortd] + self.flags, stdout=self.sortd_log,
                                      stderr=subprocess.STDOUT)
        self.target = f"127.0.0.1:{self.port}"
        self.metrics_url = f"http://127.0.0.1:{self.mport}/metrics"
        sys.path.insert(0, self.args.pythonpath)
        import sortd
        from sortd.v1 import sortd_pb2, sortd_pb2_grpc
        import grpc
        self.pb = sortd_pb2
        deadline = time.monotonic() + 30
        while True:
            if self.sortd.poll() is not None:
                raise SystemExit(f"sortd exited with {self.sortd.returncode} at start; see "
                                 f"{self.out}/sortd.log")
            try:
                with sortd.Client(self.target, transport="bytes") as c:
                    c.wait_for_server(timeout=2)
                break
            except Exception:  # noqa: BLE001
                if time.monotonic() > deadline:
                    raise SystemExit("sortd did not become SERVING within 30 s")
        self.channel = grpc.insecure_channel(self.target)
        self.shm_stub = sortd_pb2_grpc.SharedMemoryStub(self.channel)
        self.t0 = time.monotonic()

    def sampler(self):
        pid = self.sortd.pid
        while not self.stop_sampling.is_set():
            t = time.monotonic() - self.t0
            st = read_status(pid)
            if st:
                self.rss.append((t, st))
            m = scrape(self.metrics_url, timeout=1.0)
            if m is None:
                self.scrape_failures += 1
            else:
                v = metric(m, "sortd_inflight_bytes", 0)
                self.inflight_max = max(self.inflight_max, v)
                self.inflight_limit = metric(m, "sortd_inflight_bytes_limit", self.inflight_limit)
                self.regions_max = max(self.regions_max, metric(m, "sortd_shared_memory_regions", 0))
            self.stop_sampling.wait(max(0.0, 1.0 - ((time.monotonic() - self.t0) - t)))

    # ---- workers ----
    def worker_cfg(self, gen: int) -> dict:
        a = self.args
        return dict(target=self.target, shm_dir=self.shm_dir, pythonpath=a.pythonpath,
                    seed=a.seed, gen=gen, max_log2=a.max_log2, budget_mib=a.budget_mib,
                    huge_fraction=a.huge_fraction, short_deadline_fraction=a.short_deadline_fraction,
                    call_timeout=a.call_timeout, kind_weights=self.kind_weights,
                    records=os.path.join(self.out, "records", f"w{gen:05d}.jsonl"),
                    current=os.path.join(self.out, "workers", f"w{gen:05d}.current"),
                    wrong_dir=os.path.join(self.out, "wrong"))

    def spawn(self, gen: int) -> dict:
        cfg = self.worker_cfg(gen)
        err = open(os.path.join(self.out, "workers", f"w{gen:05d}.err"), "wb")
        env = dict(os.environ, PYTHONPATH=self.args.pythonpath, OMP_NUM_THREADS="1",
                   OPENBLAS_NUM_THREADS="1")
        p = subprocess.Popen([self.args.python, os.path.abspath(__file__), "--_worker",
                              json.dumps(cfg)], stdout=err, stderr=subprocess.STDOUT, env=env)
        err.close()
        return dict(proc=p, gen=gen, cfg=cfg, started=time.monotonic())

    def reap_regions(self, pid: int) -> int:
        """Unregisters (ListRegions) and removes the regions of a dead client process."""
        prefix = f"sortd-py-{pid}-"
        n = 0
        try:
            listed = self.shm_stub.ListRegions(self.pb.ListRegionsRequest(), timeout=5)
            for r in listed.regions:
                if r.name.startswith(prefix):
                    try:
                        self.shm_stub.UnregisterRegion(
                            self.pb.UnregisterRegionRequest(name=r.name), timeout=5)
                        n += 1
                    except Exception:  # noqa: BLE001
                        pass
        except Exception as e:  # noqa: BLE001
            self.events.append(dict(t=self.now(), what=f"ListRegions failed: {e}"))
        for path in glob.glob(os.path.join(self.shm_dir, prefix + "*")):
            try:
                os.unlink(path)
            except OSError:
                pass
        return n

    def now(self) -> float:
        return round(time.monotonic() - self.t0, 1)

    def check_sortd(self) -> bool:
        rc = self.sortd.poll()
        if rc is None:
            return True
        self.sortd_died = dict(t=self.now(), returncode=rc,
                               signal=signal.Signals(-rc).name if rc < 0 else None)
        return False

    def run(self):
        a = self.args
        w = [float(x) for x in a.kind_weights.split(",")]
        self.kind_weights = [x / sum(w) for x in w]
        self.start_sortd()
        sampler = threading.Thread(target=self.sampler, daemon=True)
        sampler.start()
        gen = 0
        slots = self.slots = []
        for _ in range(a.workers):
            gen += 1
            slots.append(self.spawn(gen))
        end = self.t0 + a.duration
        kmin, kmax = (float(x) for x in a.kill_every.split(":"))
        next_kill = time.monotonic() + self.rng.uniform(kmin, kmax)
        last_progress = time.monotonic()
        while time.monotonic() < end:
            time.sleep(0.2)
            if not self.check_sortd():
                break
            for i, s in enumerate(slots):
                if s["proc"].poll() is not None:  # died by itself: a harness or client failure
                    tail = open(os.path.join(self.out, "workers", f"w{s['gen']:05d}.err"),
                                errors="replace").read()[-2000:]
                    self.worker_deaths.append(dict(t=self.now(), gen=s["gen"],
                                                   returncode=s["proc"].returncode, tail=tail))
                    self.reaped += self.reap_regions(s["proc"].pid)
                    gen += 1
                    slots[i] = self.spawn(gen)
            if a.kill_every != "0:0" and time.monotonic() >= next_kill:
                i = self.rng.randrange(len(slots))
                s = slots[i]
                s["proc"].send_signal(signal.SIGKILL)
                s["proc"].wait()
                self.kills += 1
                try:
                    cur = open(s["cfg"]["current"]).read().strip()
                except OSError:
                    cur = ""
                if cur.startswith("call "):
                    self.kills_mid_call += 1
                if not a.no_reap:
                    self.reaped += self.reap_regions(s["proc"].pid)
                gen += 1
                slots[i] = self.spawn(gen)
                next_kill = time.monotonic() + self.rng.uniform(kmin, kmax)
            if a.progress and time.monotonic() - last_progress >= a.progress:
                last_progress = time.monotonic()
                st = self.rss[-1][1] if self.rss else {}
                print(f"[{self.now():7.0f}s] kills {self.kills} rss "
                      f"{st.get('VmRSS', 0) / 1024:.0f} MiB", file=sys.stderr, flush=True)
        self.load_end = time.monotonic()
        # ---- stop the load ----
        for s in slots:
            if s["proc"].poll() is None:
                s["proc"].send_signal(signal.SIGTERM)
        self.stuck_workers = 0
        stop_deadline = time.monotonic() + a.call_timeout + 10
        for s in slots:
            try:
                s["proc"].wait(timeout=max(0.1, stop_deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                self.stuck_workers += 1
                s["proc"].kill()
                s["proc"].wait()
                self.reaped += self.reap_regions(s["proc"].pid)
            # SIGTERM before the worker set its handler (still starting) is asked for too.
            if s["proc"].returncode not in (0, -signal.SIGKILL, -signal.SIGTERM):
                tail = open(os.path.join(self.out, "workers", f"w{s['gen']:05d}.err"),
                            errors="replace").read()[-2000:]
                self.worker_deaths.append(dict(t=self.now(), gen=s["gen"],
                                               returncode=s["proc"].returncode, tail=tail))
        self.generations = gen
        alive = self.check_sortd() if self.sortd_died is None else False
        # ---- after the load: in-flight bytes back to 0 within 10 s ----
        self.inflight_after = None
        self.inflight_zero_after_s = None
        final = None
        if alive:
            t_stop = time.monotonic()
            while True:
                final = scrape(self.metrics_url)
                v = metric(final, "sortd_inflight_bytes")
                self.inflight_after = v
                if v == 0:
                    self.inflight_zero_after_s = round(time.monotonic() - t_stop, 2)
                    break
                if time.monotonic() - t_stop > 10:
                    break
                time.sleep(0.25)
            time.sleep(1.5)  # one more RSS sample or two after the load
        self.stop_sampling.set()
        sampler.join(timeout=5)
        self.final_metrics = final
        # ---- regions still registered after every client closed ----
        self.regions_left = []
        if alive:
            try:
                listed = self.shm_stub.ListRegions(self.pb.ListRegionsRequest(), timeout=5)
                self.regions_left = [r.name for r in listed.regions]
                for name in self.regions_left:
                    self.shm_stub.UnregisterRegion(self.pb.UnregisterRegionRequest(name=name),
                                                   timeout=5)
            except Exception as e:  # noqa: BLE001
                self.events.append(dict(t=self.now(), what=f"ListRegions at the end failed: {e}"))
        self.files_left = sorted(os.listdir(self.shm_dir))
        shutil.rmtree(self.shm_dir, ignore_errors=True)
        # ---- sortd's own exit: SIGTERM drains, exit 0 ----
        self.exit_on_sigterm = None
        if alive and self.check_sortd():
            self.sortd.send_signal(signal.SIGTERM)
            try:
                rc = self.sortd.wait(timeout=60)
                self.exit_on_sigterm = (f"{rc}" if rc >= 0 else f"signal {signal.Signals(-rc).name}")
            except subprocess.TimeoutExpired:
                self.sortd.kill()
                self.sortd.wait()
                self.exit_on_sigterm = "did not exit within 60 s of SIGTERM (killed)"
        self.channel.close()
        self.sortd_log.close()

    # ---- the report ----
    def expected(self, kind: str, code: str, msg: str, short: bool) -> bool:
        if code == "OK":
            return True
        if code == "RESOURCE_EXHAUSTED":
            return "memory budget" in msg
        if code in ("DEADLINE_EXCEEDED", "CANCELLED"):
            return short
        if code == "INTERNAL":
            # A lost real GPU fails its queued work with CUDA errors of its own as well.
            return self.faults_on() and ("injected" in msg or (
                self.args.mode == "gpu" and bool(self.args.lose_at_batch)))
        return False

    def summarize(self) -> dict:
        a = self.args
        table = {k: Counter() for k in KINDS}
        wrong, unexpected = [], defaultdict(lambda: dict(count=0, example=None))
        lat = defaultdict(list)
        re_msgs = defaultdict(lambda: dict(count=0, example=None))
        for path in sorted(glob.glob(os.path.join(self.out, "records", "*.jsonl"))):
            with open(path, errors="replace") as f:
                for line in f:
                    try:
                        r = json.loads(line)
                    except json.JSONDecodeError:
                        continue  # a line cut by SIGKILL (os.write is one call: should not happen)
                    if r.get("wrong"):
                        wrong.append(r)
                        table[r["k"]]["wrong"] += 1
                        continue
                    kind, code, msg = r["k"], r["c"], r.get("m", "")
                    col = code if code in CODES else "other"
                    table[kind][col] += 1
                    table[kind]["calls"] += 1
                    if code == "OK" and "ms" in r:
                        lat[kind].append(r["ms"])
                    if kind == "session":
                        table["session_item"]["calls"] += r.get("ic", {}).get("OK", 0)
                        table["session_item"]["OK"] += r.get("ic", {}).get("OK", 0)
                    if kind == "session_item":
                        pass
                    if code != "OK":
                        key = (kind, code, normalize(msg))
                        re_msgs[key]["count"] += 1
                        re_msgs[key]["example"] = re_msgs[key]["example"] or \
                            dict(id=r["id"], msg=msg, n=r.get("n"), dl=r.get("dl"))
                    if not self.expected(kind, code, msg, r.get("dl") is not None):
                        table[kind]["unexpected"] += 1
                        key = (kind, code, normalize(msg))
                        unexpected[key]["count"] += 1
                        unexpected[key]["example"] = unexpected[key]["example"] or \
                            dict(id=r["id"], msg=msg, n=r.get("n"), dl=r.get("dl"),
                                 v=r.get("v"), t=r.get("t"), a=r.get("a"))
        rss = [(t, st.get("VmRSS", 0) / 1024) for t, st in self.rss]
        load_secs = self.load_end - self.t0
        during = [x for x in rss if x[0] <= load_secs]
        half = [x for x in during if x[0] >= load_secs / 2]
        shmem = [(t, st.get("RssShmem", 0) / 1024) for t, st in self.rss]
        with open(os.path.join(self.out, "rss.csv"), "w") as f:
            f.write("seconds,vmrss_kib,rss_anon_kib,rss_file_kib,rss_shmem_kib,threads\n")
            for t, st in self.rss:
                f.write(f"{t:.1f},{st.get('VmRSS', 0)},{st.get('RssAnon', 0)},"
                        f"{st.get('RssFile', 0)},{st.get('RssShmem', 0)},{st.get('Threads', 0)}\n")
        fm = self.final_metrics
        req_by = defaultdict(Counter)
        if fm and "sortd_requests_total" in fm:
            for lab, v in fm["sortd_requests_total"].items():
                L = labels(lab)
                req_by[L.get("method", "?")][L.get("code", "?")] += int(v)
        healthy = {labels(k).get("worker"): int(v)
                   for k, v in (fm or {}).get("sortd_worker_healthy", {}).items()}
        total_calls = sum(t["calls"] for k, t in table.items() if k != "session_item")
        s = dict(
            date=self.started_at, host=platform.node(), cpu=cpu_model(), cores=os.cpu_count(),
            mode=a.mode, sortd=os.path.abspath(a.sortd), sortd_flags=self.flags,
            duration_s=round(load_secs, 1), workers=a.workers, seed=a.seed,
            worker_processes_started=self.generations, kills=self.kills,
            kills_mid_call=self.kills_mid_call, worker_deaths_unasked=self.worker_deaths,
            stuck_workers_at_end=self.stuck_workers, regions_reaped_after_kills=self.reaped,
            regions_left_after_clients_closed=self.regions_left,
            shm_files_left=self.files_left,
            outcomes={k: dict(v) for k, v in table.items()},
            calls_total=total_calls,
            latency_ms_ok={k: dict(p50=float(np.percentile(v, 50)), p99=float(np.percentile(v, 99)),
                                   max=float(np.max(v))) for k, v in lat.items() if v},
            wrong_answers=len(wrong), wrong=wrong[:50],
            unexpected_total=sum(u["count"] for u in unexpected.values()),
            unexpected=[dict(kind=k[0], code=k[1], pattern=k[2], **v)
                        for k, v in sorted(unexpected.items(), key=lambda x: -x[1]["count"])],
            non_ok_messages=[dict(kind=k[0], code=k[1], pattern=k[2], **v)
                             for k, v in sorted(re_msgs.items(), key=lambda x: -x[1]["count"])],
            sortd_crashes=1 if self.sortd_died else 0, sortd_died=self.sortd_died,
            sortd_exit_on_sigterm=self.exit_on_sigterm,
            rss_mib=dict(start=round(during[0][1], 1) if during else None,
                         max=round(max(x[1] for x in during), 1) if during else None,
                         end_of_load=round(during[-1][1], 1) if during else None,
                         after_load=round(rss[-1][1], 1) if rss else None,
                         slope_last_half_mib_per_min=round(slope_per_min(half), 3),
                         shmem_max=round(max((x[1] for x in shmem), default=0), 1),
                         samples=len(rss)),
            rss_timeline_mib=[round(during[int(i * (len(during) - 1) / 10)][1])
                              for i in range(11)] if during else [],
            inflight_bytes_max=self.inflight_max, inflight_bytes_limit=self.inflight_limit,
            inflight_bytes_after_load=self.inflight_after,
            inflight_zero_after_s=self.inflight_zero_after_s,
            shared_memory_regions_max=self.regions_max,
            metrics_scrape_failures=self.scrape_failures,
            metrics=dict(requests_total={m: dict(c) for m, c in req_by.items()},
                         lost_answers_total=metric(fm, "sortd_lost_answers_total"),
                         receive_timeouts_total=metric(fm, "sortd_receive_timeouts_total"),
                         send_timeouts_total=metric(fm, "sortd_send_timeouts_total"),
                         live_calls=metric(fm, "sortd_live_calls"),
                         shared_memory_regions=metric(fm, "sortd_shared_memory_regions"),
                         worker_healthy=healthy),
            events=self.events,
        )
        s["passed"] = (s["wrong_answers"] == 0 and s["unexpected_total"] == 0 and
                       s["sortd_crashes"] == 0 and self.inflight_after == 0 and
                       not self.worker_deaths)
        return s

    def report(self, s: dict) -> str:
        L = []
        p = L.append
        p(f"## sortd chaos soak: {s['mode']}, {s['duration_s'] / 60:.1f} min, "
          f"{'PASSED' if s['passed'] else 'FAILED'}")
        p("")
        p(f"- date: {s['date']}; host: {s['cpu']}, {s['cores']} cores")
        p(f"- sortd: `{s['sortd']} {' '.join(s['sortd_flags'])}`")
        p(f"- load: {s['workers']} worker processes (seed {s['seed']}), "
          f"{s['worker_processes_started']} started in all; {s['kills']} SIGKILLed "
          f"({s['kills_mid_call']} mid-call); regions of killed workers reaped: "
          f"{s['regions_reaped_after_kills']}")
        p("")
        cols = ["calls"] + list(CODES) + ["other", "unexpected", "wrong"]
        p("| RPC | " + " | ".join(c if c != "RESOURCE_EXHAUSTED" else "RES_EXHAUSTED"
                                   for c in cols) + " |")
        p("|" + "---|" * (len(cols) + 1))
        tot = Counter()
        for k in KINDS:
            row = s["outcomes"].get(k, {})
            if k != "session_item":
                for c in cols:
                    tot[c] += row.get(c, 0)
            else:
                tot["unexpected"] += row.get("unexpected", 0)
                tot["wrong"] += row.get("wrong", 0)
            p(f"| {KIND_LABEL[k]} | " + " | ".join(str(row.get(c, 0)) for c in cols) + " |")
        p("| **all calls** | " + " | ".join(f"**{tot[c]}**" for c in cols) + " |")
        p("")
        r = s["rss_mib"]
        m = s["metrics"]
        lim = s["inflight_bytes_limit"]
        p("| figure | value |")
        p("|---|---|")
        p(f"| wrong answers (numpy reference) | **{s['wrong_answers']}** |")
        p(f"| unexpected statuses | **{s['unexpected_total']}** |")
        p(f"| sortd crashes | **{s['sortd_crashes']}**"
          f"{' ' + json.dumps(s['sortd_died']) if s['sortd_died'] else ''} |")
        p(f"| sortd exit on SIGTERM after the soak | {s['sortd_exit_on_sigterm']} |")
        p(f"| worker deaths not caused by the soak | {len(s['worker_deaths_unasked'])} |")
        p(f"| RSS MiB start / max / end of load / after | {r['start']} / {r['max']} / "
          f"{r['end_of_load']} / {r['after_load']} |")
        p(f"| RSS slope, last half of the load | {r['slope_last_half_mib_per_min']:+.2f} MiB/min |")
        p(f"| RSS timeline (11 points, MiB) | {' '.join(str(x) for x in s['rss_timeline_mib'])} |")
        p(f"| in-flight bytes max / limit | {s['inflight_bytes_max']:.0f} / "
          f"{lim if lim is None else int(lim)} (sampled each second) |")
        p(f"| in-flight bytes after the load | {s['inflight_bytes_after_load']} "
          f"(0 after {s['inflight_zero_after_s']} s) |")
        p(f"| shared-memory regions max / left after clients closed | "
          f"{s['shared_memory_regions_max']:.0f} / {len(s['regions_left_after_clients_closed'])} |")
        p(f"| sortd_lost_answers_total | {m['lost_answers_total']} |")
        p(f"| sortd_receive_timeouts_total / send_timeouts_total | "
          f"{m['receive_timeouts_total']} / {m['send_timeouts_total']} |")
        for meth, codes in sorted(m["requests_total"].items()):
            p(f"| sortd_requests_total {meth} | " +
              ", ".join(f"{c} {v}" for c, v in sorted(codes.items(), key=lambda x: -x[1])) + " |")
        if m["worker_healthy"]:
            p(f"| sortd_worker_healthy at end | " +
              ", ".join(f"{k}={v}" for k, v in sorted(m["worker_healthy"].items())) + " |")
        p("")
        if s["latency_ms_ok"]:
            p("OK latency (client side, ms): " + "; ".join(
                f"{KIND_LABEL[k]} p50 {v['p50']:.1f} p99 {v['p99']:.1f} max {v['max']:.0f}"
                for k, v in s["latency_ms_ok"].items()))
            p("")
        if s["wrong"]:
            p("### Wrong answers")
            for w in s["wrong"]:
                p(f"- `{w['id']}` {w['request']} ({w.get('dist')}): {w['why']}; saved {w['saved']}")
            p("")
        if s["unexpected"]:
            p("### Unexpected statuses")
            for u in s["unexpected"]:
                p(f"- {u['count']}x {u['kind']} {u['code']}: {u['example']['msg']!r} "
                  f"(e.g. `{u['example']['id']}`, n={u['example']['n']}, "
                  f"deadline={u['example']['dl']})")
            p("")
        if s["worker_deaths_unasked"]:
            p("### Worker deaths the soak did not cause")
            for d in s["worker_deaths_unasked"][:10]:
                p(f"- gen {d['gen']} at {d['t']} s, exit {d['returncode']}: "
                  f"{d['tail'][-400:]!r}")
            p("")
        p("### Non-OK statuses by message")
        for u in s["non_ok_messages"][:25]:
            p(f"- {u['count']}x {u['kind']} {u['code']}: {u['pattern']!r}")
        if s["regions_left_after_clients_closed"] or s["shm_files_left"]:
            p("")
            p(f"Regions left registered after every client closed: "
              f"{s['regions_left_after_clients_closed'][:10]}; files left: "
              f"{s['shm_files_left'][:10]}")
        return "\n".join(L) + "\n"


def replay(args) -> int:
    sys.path.insert(0, args.pythonpath)
    import sortd
    seed, gen, counter = (int(x) for x in args.replay.split(":"))
    w = [float(x) for x in args.kind_weights.split(",")]
    cfg = dict(seed=seed, max_log2=args.max_log2, budget_mib=args.budget_mib,
               huge_fraction=args.huge_fraction, short_deadline_fraction=args.short_deadline_fraction,
               kind_weights=[x / sum(w) for x in w])
    req = make_request(cfg, gen, counter)
    req["deadline"] = None
    arrays = build_arrays(req)
    print("request:", describe(req), "keys:", req.get("dist"))
    clients = {t: sortd.Client(args.target, transport=t, shm_dir=args.shm_dir)
               for t in ("bytes", "stream", "shm")}
    records, wrong = run_call(clients, req, args.call_timeout, arrays)
    for c in clients.values():
        c.close()
    print("records:", records)
    print("wrong:", wrong[0] if wrong else None)
    return 1 if wrong else 0


def main() -> int:
    if len(sys.argv) == 3 and sys.argv[1] == "--_worker":
        return worker_main(json.loads(sys.argv[2]))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sortd", default=os.path.join(REPO, "build/server/sortd"))
    ap.add_argument("--pythonpath", default=os.path.join(REPO, "build/python"),
                    help="where the built sortd Python package is")
    ap.add_argument("--python", default="/usr/bin/python3" if os.path.exists("/usr/bin/python3")
                    else sys.executable, help="the workers' interpreter (numpy, grpcio)")
    ap.add_argument("--mode", choices=("cpu", "standin", "gpu"), default="cpu")
    ap.add_argument("--duration", type=parse_duration, default=parse_duration("30m"))
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--budget_mib", type=int, default=64)
    ap.add_argument("--out", default=None, help="output directory (default: a new temp dir)")
    ap.add_argument("--max_log2", type=float, default=21, help="sizes up to 2^this keys")
    ap.add_argument("--huge_fraction", type=float, default=0.02,
                    help="calls sized past the whole budget")
    ap.add_argument("--short_deadline_fraction", type=float, default=0.15)
    ap.add_argument("--call_timeout", type=float, default=120,
                    help="deadline of the other calls (s): a hang shows as DEADLINE_EXCEEDED")
    ap.add_argument("--kill_every", default="2:6", help="seconds between kills, MIN:MAX (0:0: none)")
    ap.add_argument("--kind_weights", default="0.35,0.2,0.15,0.3", help="bytes,stream,session,shm")
    ap.add_argument("--no_reap", action="store_true",
                    help="leave killed workers' regions registered")
    ap.add_argument("--receive_timeout", default="5s")
    ap.add_argument("--send_timeout", default="5s")
    ap.add_argument("--stand_in_gpus", type=int, default=2)
    ap.add_argument("--fault_every", type=int, default=None,
                    help="--test_gpu_fault_every (default 100 in standin mode, 0 otherwise)")
    ap.add_argument("--lose_at_batch", type=int, default=0, help="--test_gpu_lose_at_batch")
    ap.add_argument("--shm_parent", default="/dev/shm", help="parent of the soak's region dir")
    ap.add_argument("--progress", type=float, default=60, help="progress line every N s (0: none)")
    ap.add_argument("--replay", help="SEED:GEN:COUNTER: send that request again to --target")
    ap.add_argument("--target", help="with --replay: a running sortd")
    ap.add_argument("--shm_dir", default="/dev/shm", help="with --replay: its --shared_memory_dir")
    ap.add_argument("sortd_args", nargs="*", help="after --: more sortd flags")
    args = ap.parse_args()
    if args.replay:
        return replay(args)
    if args.fault_every is None:
        args.fault_every = 100 if args.mode == "standin" else 0
    if args.mode == "cpu" and (args.fault_every or args.lose_at_batch):
        ap.error("fault injection needs --mode=standin or gpu")
    args.out = args.out or tempfile.mkdtemp(prefix="sortd-chaos-soak-")
    soak = Soak(args)
    soak.started_at = _dt.datetime.now().astimezone().isoformat(timespec="seconds")
    print(f"chaos soak: {args.mode}, {args.duration:.0f} s, {args.workers} workers, seed "
          f"{args.seed}, output in {os.path.abspath(args.out)}", file=sys.stderr, flush=True)
    try:
        soak.run()
    finally:
        for s in getattr(soak, "slots", []):  # only after an error: they are gone otherwise
            if s["proc"].poll() is None:
                s["proc"].kill()
                s["proc"].wait()
        if getattr(soak, "sortd", None) is not None and soak.sortd.poll() is None:
            soak.sortd.kill()
        if getattr(soak, "shm_dir", None):
            shutil.rmtree(soak.shm_dir, ignore_errors=True)
    s = soak.summarize()
    with open(os.path.join(soak.out, "summary.json"), "w") as f:
        json.dump(s, f, indent=1, default=str)
    text = soak.report(s)
    with open(os.path.join(soak.out, "report.md"), "w") as f:
        f.write(text)
    print(text)
    return 0 if s["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
