#!/usr/bin/env python3
"""Offline checks of everything under deploy/ and the Dockerfile (no Docker engine or cluster is
available to CI): every YAML and JSON file parses; the Kubernetes manifests and the compose file
have the structure and cross-references they need; the Dockerfile's COPY sources exist and it uses
the same dependency script as the README and CI.

Usage: check_deploy.py REPO_ROOT
"""
import json
import pathlib
import re
import sys

import yaml

root = pathlib.Path(sys.argv[1])
problems = []
checks = 0


def check(condition, message):
    global checks
    checks += 1
    if not condition:
        problems.append(message)


def duration_seconds(text):
    m = re.fullmatch(r"(\d+)(ms|s|m)", text)
    if not m:
        return None
    return int(m.group(1)) * {"ms": 0.001, "s": 1, "m": 60}[m.group(2)]


# 1. Every YAML and JSON file parses.
docs = {}
for path in sorted(root.glob("deploy/**/*")):
    if path.suffix in (".yml", ".yaml"):
        try:
            docs[path] = [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
            check(True, "")
        except yaml.YAMLError as e:
            check(False, f"{path}: does not parse: {e}")
    elif path.suffix == ".json":
        try:
            json.loads(path.read_text())
            check(True, "")
        except json.JSONDecodeError as e:
            check(False, f"{path}: does not parse: {e}")

# 2. Kubernetes manifests.
k8s = {}
for path, ds in docs.items():
    if "deploy/k8s" in str(path):
        for d in ds:
            check(isinstance(d, dict) and "apiVersion" in d and "kind" in d,
                  f"{path}: a document without apiVersion/kind")
            if d.get("kind") != "Kustomization":
                check("name" in d.get("metadata", {}), f"{path}: {d.get('kind')} without metadata.name")
            k8s.setdefault(d.get("kind"), []).append((path, d))

known = {"Deployment": "apps/v1", "Service": "v1", "ServiceMonitor": "monitoring.coreos.com/v1",
         "HorizontalPodAutoscaler": "autoscaling/v2", "ConfigMap": "v1",
         "Kustomization": "kustomize.config.k8s.io/v1beta1", "NetworkPolicy": "networking.k8s.io/v1"}
for kind, items in k8s.items():
    check(kind in known, f"unexpected kind {kind}")
    for path, d in items:
        check(d["apiVersion"] == known.get(kind), f"{path}: {kind} should be {known.get(kind)}, is {d['apiVersion']}")

deployments = k8s.get("Deployment", [])
check(len(deployments) == 1, "exactly one Deployment expected")
dep = deployments[0][1]
spec = dep["spec"]
pod_labels = spec["template"]["metadata"]["labels"]
check(spec["selector"]["matchLabels"].items() <= pod_labels.items(), "Deployment selector does not match its pod labels")
pod = spec["template"]["spec"]
container = pod["containers"][0]
ports = {p["name"]: p["containerPort"] for p in container["ports"]}
args = {a.split("=", 1)[0]: a.split("=", 1)[1] for a in container.get("args", []) if "=" in a}
check(ports.get("grpc") == int(args.get("--listen", ":0").rsplit(":", 1)[1]), "grpc containerPort differs from --listen")
check(ports.get("metrics") == int(args.get("--metrics_listen", ":0").rsplit(":", 1)[1]), "metrics containerPort differs from --metrics_listen")
for probe in ("readinessProbe", "livenessProbe"):
    check(container.get(probe, {}).get("grpc", {}).get("port") == ports.get("grpc"), f"{probe} is not a native gRPC probe on the grpc port")
for section in ("requests", "limits"):
    check(str(container["resources"].get(section, {}).get("nvidia.com/gpu")) == "1", f"resources.{section} lacks nvidia.com/gpu: 1")
check("cpu" in container["resources"]["requests"] and "memory" in container["resources"]["requests"], "cpu/memory requests missing")
# Pinned staging is locked for the pod's life, so the pod asks for all the memory it may use.
check(container["resources"]["requests"].get("memory") == container["resources"]["limits"].get("memory"),
      "memory request differs from the limit")
check(args.get("--engine") == "gpu", "a pod holding a GPU should run --engine=gpu, not fall back to the CPU engine")
check("replicas" not in spec, "the Deployment sets replicas, which the HPA owns")
caps = container.get("securityContext", {}).get("capabilities", {}).get("drop", [])
check("ALL" in caps, "the container should drop all capabilities")
drain = duration_seconds(args.get("--drain_deadline", "30s"))
pre_stop = container.get("lifecycle", {}).get("preStop", {}).get("exec", {}).get("command", [])
check(len(pre_stop) == 2 and pre_stop[0] == "sleep", "preStop should be a sleep so endpoints stop routing before the drain")
delay = int(pre_stop[1]) if len(pre_stop) == 2 else 0
grace = pod.get("terminationGracePeriodSeconds", 30)
check(drain is not None and grace > drain + delay,
      f"terminationGracePeriodSeconds {grace} must exceed preStop {delay}s + drain deadline {drain}s")
check(pod.get("securityContext", {}).get("runAsNonRoot") is True, "pods should run as non-root")

services = {d["metadata"]["name"]: d for _, d in k8s.get("Service", [])}
check(any(s["spec"].get("clusterIP") == "None" for s in services.values()), "no headless Service")
check(any(s["spec"].get("type", "ClusterIP") == "ClusterIP" and s["spec"].get("clusterIP") != "None"
          for s in services.values()), "no ClusterIP Service")
for name, s in services.items():
    check(s["spec"]["selector"].items() <= pod_labels.items(), f"Service {name} selects no sortd pods")
    for p in s["spec"]["ports"]:
        check(p.get("targetPort") in ports or p.get("targetPort") in ports.values(), f"Service {name} port {p} targets no container port")

for _, sm in k8s.get("ServiceMonitor", []):
    selected = [n for n, s in services.items() if sm["spec"]["selector"]["matchLabels"].items() <= s["metadata"].get("labels", {}).items()]
    check(len(selected) == 1, f"ServiceMonitor should select exactly one Service (selects {selected}), or pods are scraped twice")
    for ep in sm["spec"]["endpoints"]:
        for n in selected:
            check(ep["port"] in [p["name"] for p in services[n]["spec"]["ports"]], f"ServiceMonitor port {ep['port']} not on Service {n}")

policies = k8s.get("NetworkPolicy", [])
check(len(policies) == 1, "exactly one NetworkPolicy expected (who may reach sortd)")
for _, np in policies:
    check(np["spec"]["podSelector"]["matchLabels"].items() <= pod_labels.items(),
          "NetworkPolicy does not select the sortd pods")
    check(np["spec"].get("policyTypes") == ["Ingress"], "NetworkPolicy should restrict ingress")
    admitted = {p["port"] for rule in np["spec"]["ingress"] for p in rule.get("ports", [])}
    check(admitted == set(ports), f"NetworkPolicy admits ports {sorted(admitted)}, the pod serves {sorted(ports)}")
    check(all(rule.get("from") for rule in np["spec"]["ingress"]), "a NetworkPolicy rule admits every source")
    # The gRPC port from the namespace's pods only; metrics from a namespace-qualified scraper.
    for rule in np["spec"]["ingress"]:
        rule_ports = {p["port"] for p in rule.get("ports", [])}
        if "grpc" in rule_ports:
            check(all("namespaceSelector" not in f and "ipBlock" not in f for f in rule["from"]), "the gRPC port is open beyond sortd's namespace")
        if "metrics" in rule_ports:
            check(all("namespaceSelector" in f and "podSelector" in f for f in rule["from"]), "the metrics port should admit only the scraper's pods in its namespace")

for _, hpa in k8s.get("HorizontalPodAutoscaler", []):
    ref = hpa["spec"]["scaleTargetRef"]
    check(ref["kind"] == "Deployment" and ref["name"] == dep["metadata"]["name"], "HPA does not target the sortd Deployment")
    names = [m["pods"]["metric"]["name"] for m in hpa["spec"]["metrics"] if m["type"] == "Pods"]
    check("sortd_queue_depth" in names, "HPA does not scale on sortd_queue_depth")
adapter = [d for _, d in k8s.get("ConfigMap", []) if "adapter" in d["metadata"]["name"]]
check(len(adapter) == 1, "prometheus-adapter rule ConfigMap missing")
if adapter:
    rules = yaml.safe_load(adapter[0]["data"]["config.yaml"])["rules"]
    check(any(r["name"]["as"] == "sortd_queue_depth" and "sortd_queue_depth" in r["seriesQuery"] for r in rules),
          "adapter rule does not expose sortd_queue_depth")
kustomization = k8s.get("Kustomization", [])
if kustomization:
    listed = set(kustomization[0][1]["resources"])
    on_disk = {p.name for p in (root / "deploy/k8s").glob("*.yaml") if p.name != "kustomization.yaml"}
    check(listed == on_disk, f"kustomization lists {sorted(listed)}, directory has {sorted(on_disk)}")

# 3. Compose stack.
compose_path = root / "deploy/compose/docker-compose.yml"
compose = docs.get(compose_path, [{}])[0]
svcs = compose.get("services", {})
check({"sortd", "prometheus", "grafana"} <= set(svcs), "compose needs sortd, prometheus and grafana")
devices = svcs.get("sortd", {}).get("deploy", {}).get("resources", {}).get("reservations", {}).get("devices", [])
check(any(d.get("driver") == "nvidia" and "gpu" in d.get("capabilities", []) for d in devices), "compose sortd has no nvidia GPU reservation")
build = svcs.get("sortd", {}).get("build", {})
check((compose_path.parent / build.get("context", ".") / build.get("dockerfile", "Dockerfile")).resolve().exists(), "compose build context has no Dockerfile")
for name, svc in svcs.items():
    for vol in svc.get("volumes", []):
        src = vol.split(":")[0]
        if src.startswith("."):
            check((compose_path.parent / src).exists(), f"compose {name} mounts missing {src}")
prom_cfg = yaml.safe_load((root / "deploy/compose/prometheus.yml").read_text())
targets = [t for job in prom_cfg["scrape_configs"] for sc in job["static_configs"] for t in sc["targets"]]
check("sortd:9464" in targets, "compose Prometheus does not scrape sortd:9464")
ds = yaml.safe_load((root / "deploy/compose/grafana/provisioning/datasources/prometheus.yml").read_text())
check(any(d["type"] == "prometheus" and "prometheus:9090" in d["url"] for d in ds["datasources"]), "Grafana datasource does not point at Prometheus")

# 4. Dockerfile.
dockerfile = (root / "Dockerfile").read_text()
# The bases are build arguments (any Debian/Ubuntu base); their defaults must be the CUDA images.
global_args = dict(re.findall(r"^ARG\s+(\w+)=(\S+)", dockerfile.split("\nFROM", 1)[0], re.M))
def expand(text):
    for _ in range(5):
        text = re.sub(r"\$\{(\w+)\}", lambda m: global_args.get(m.group(1), m.group(0)), text)
    return text
# A stage may start from an earlier one (FROM runtime AS prebuilt): follow names to their base.
from_lines = re.findall(r"^FROM\s+(\S+)(?:\s+AS\s+(\S+))?", dockerfile, re.M)
bases_of = {}
raw_stages = []
for image, name in from_lines:
    raw = bases_of.get(image, image)
    raw_stages.append(raw)
    if name:
        bases_of[name] = raw
stages = [expand(s) for s in raw_stages]
check(len(stages) >= 2, "Dockerfile should be multi-stage")
check(any("nvidia/cuda:" in s and "devel" in s for s in stages[:-1]) and "nvidia/cuda:" in stages[-1]
      and "runtime" in stages[-1], f"by default build on CUDA devel, run on CUDA runtime (stages: {stages})")
check(raw_stages[0] == "${BUILD_BASE}" and raw_stages[-1] == "${RUNTIME_BASE}",
      "FROM ${BUILD_BASE} ... FROM ${RUNTIME_BASE}: the bases are build arguments")
check(re.search(r"^ARG SORTD_CUDA=ON$", dockerfile, re.M) and '-DSORTD_CUDA="${SORTD_CUDA}"' in dockerfile,
      "the CUDA build is a build argument (ON by default, OFF for a CPU-only image)")
for src in re.findall(r"^COPY\s+(?!--from)(\S+)\s", dockerfile, re.M):
    # .container-prebuilt is made on demand (target prebuilt: tests/deploy/container_test.sh).
    check(src in (".", ".container-prebuilt") or (root / src).exists(),
          f"Dockerfile COPY source {src} does not exist")
copied = set(re.findall(r"^COPY\s+(?!--from)(\S+)\s", dockerfile, re.M))
top_cmake = (root / "CMakeLists.txt").read_text()
for folder in re.findall(r"^add_subdirectory\((\w+)\)", top_cmake, re.M):
    if folder not in ("tests", "bench"):  # the image builds neither
        check("." in copied or folder in copied,
              f"Dockerfile must COPY {folder}/: CMakeLists.txt builds it (add_subdirectory)")
check("scripts/install-deps.sh" in dockerfile, "Dockerfile must install dependencies with scripts/install-deps.sh")
check(re.search(r"^USER\s+(?!root|0\b)\S+", dockerfile, re.M) is not None, "Dockerfile must switch to a non-root USER")
check(re.search(r"^EXPOSE\s+.*50051", dockerfile, re.M) and re.search(r"^EXPOSE\s+.*9464", dockerfile, re.M), "EXPOSE 50051 and 9464")
check(re.search(r"^HEALTHCHECK .*sortctl.*health", dockerfile, re.M | re.S) is not None, "HEALTHCHECK through sortctl health")
check(re.search(r'^ENTRYPOINT \["sortd"\]', dockerfile, re.M) is not None, "ENTRYPOINT sortd")
# The CUDA base's LD_LIBRARY_PATH names where the NVIDIA runtime may mount the driver's libraries.
check(re.search(r"LD_LIBRARY_PATH=/opt/sortd/lib\$\{LD_LIBRARY_PATH:\+:\$LD_LIBRARY_PATH\}", dockerfile)
      is not None, "the image must append to LD_LIBRARY_PATH, not replace the base's")
check(re.search(r"^ARG CUDA_ARCHITECTURES=\S+$", dockerfile, re.M) and
      '-DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHITECTURES}"' in dockerfile,
      "the GPUs the kernels are built for are a build argument (CUDA_ARCHITECTURES)")
check((root / "Dockerfile").read_text().count("ARG CUDA_VERSION=13.0") == 1, "CUDA 13.0 images (matching nvcc here)")
ignore = (root / ".dockerignore").read_text().split()
check("build" in ignore and ".git" in ignore, ".dockerignore must keep build trees and .git out")
readme = (root / "README.md").read_text()
check("./scripts/test.sh" in readme, "README's test command")
check("./scripts/test.sh" in (root / ".ci/run").read_text(), ".ci/run must run the README's test command")

# 5. The Dask cluster with a sortd per worker (deploy/dask): each worker reaches its own sortd on
# loopback and shares a memory-backed /dev/shm with it, so sortd.dask sorts over shared memory.
def flag_values(args):
    return {a.split("=", 1)[0]: a.split("=", 1)[1] if "=" in a else True for a in args}


def check_worker_and_sortd(where, worker_env, worker_mounts, sortd_args, sortd_mounts):
    flags = flag_values(sortd_args)
    listen = str(flags.get("--listen", ""))
    target = worker_env.get("SORTD_TARGET", "")
    check(listen.startswith("127.0.0.1:") and target == listen,
          f"{where}: the worker's SORTD_TARGET {target!r} is not sortd's loopback --listen {listen!r}")
    check(flags.get("--shared_memory") is True, f"{where}: sortd without --shared_memory")
    shm_dir = flags.get("--shared_memory_dir")
    check(shm_dir == "/dev/shm" and worker_env.get("SORTD_SHM_DIR", "/dev/shm") == shm_dir,
          f"{where}: sortd's --shared_memory_dir {shm_dir!r} is not the worker's SORTD_SHM_DIR")
    check(worker_mounts.get("/dev/shm") is not None and worker_mounts.get("/dev/shm") == sortd_mounts.get("/dev/shm"),
          f"{where}: the worker and sortd do not mount one volume at /dev/shm")
    return worker_mounts.get("/dev/shm")


dask_compose_path = root / "deploy/dask/docker-compose.yml"
dask_compose = docs.get(dask_compose_path, [{}])[0]
dsv = dask_compose.get("services", {})
check({"scheduler", "worker", "sortd"} <= set(dsv), "deploy/dask compose needs scheduler, worker and sortd")
if {"worker", "sortd"} <= set(dsv):
    def compose_mounts(svc):
        return {v.split(":")[1]: v.split(":")[0] for v in svc.get("volumes", []) if ":" in v}
    volume = check_worker_and_sortd("deploy/dask compose", dsv["worker"].get("environment", {}),
                                    compose_mounts(dsv["worker"]), dsv["sortd"].get("command", []),
                                    compose_mounts(dsv["sortd"]))
    opts = dask_compose.get("volumes", {}).get(volume) or {}
    check(opts.get("driver_opts", {}).get("type") == "tmpfs", "deploy/dask compose: the /dev/shm volume is not tmpfs")
    check(dsv["worker"].get("network_mode") == "service:sortd",
          "deploy/dask compose: the worker must share sortd's network namespace (loopback target)")
    check(any("tcp://scheduler:" in str(a) for a in dsv["worker"].get("command", [])),
          "deploy/dask compose: the worker does not join the scheduler")
for svc in dsv.values():
    build = svc.get("build")
    if build:
        check((dask_compose_path.parent / build.get("context", ".") / build.get("dockerfile", "Dockerfile")).resolve().exists(),
              f"deploy/dask compose: no {build.get('dockerfile')}")

dask_k8s = {}
for path, ds in docs.items():
    if "deploy/dask/k8s" in str(path):
        for d in ds:
            dask_k8s.setdefault(d.get("kind"), []).append(d)
dask_kustomization = dask_k8s.get("Kustomization", [{}])[0]
on_disk = {p.name for p in (root / "deploy/dask/k8s").glob("*.yaml") if p.name != "kustomization.yaml"}
check(set(dask_kustomization.get("resources", [])) == on_disk, "deploy/dask/k8s: kustomization does not list every manifest")
dask_deps = {d["metadata"]["name"]: d for d in dask_k8s.get("Deployment", [])}
check({"dask-scheduler", "dask-worker"} <= set(dask_deps), "deploy/dask/k8s: Deployments dask-scheduler and dask-worker expected")
if "dask-worker" in dask_deps:
    wpod = dask_deps["dask-worker"]["spec"]["template"]["spec"]
    cs = {c["name"]: c for c in wpod["containers"]}
    check({"worker", "sortd"} <= set(cs), "deploy/dask/k8s: each worker pod needs a worker and a sortd container")
    if {"worker", "sortd"} <= set(cs):
        def pod_mounts(c):
            return {m["mountPath"]: m["name"] for m in c.get("volumeMounts", [])}
        env = {e["name"]: e.get("value") for e in cs["worker"].get("env", [])}
        volume = check_worker_and_sortd("deploy/dask/k8s", env, pod_mounts(cs["worker"]),
                                        cs["sortd"].get("args", []), pod_mounts(cs["sortd"]))
        vols = {v["name"]: v for v in wpod.get("volumes", [])}
        check(vols.get(volume, {}).get("emptyDir", {}).get("medium") == "Memory",
              "deploy/dask/k8s: /dev/shm must be a memory-backed emptyDir")
        check(wpod.get("securityContext", {}).get("runAsUser") is not None and
              all("runAsUser" not in c.get("securityContext", {}) for c in cs.values()),
              "deploy/dask/k8s: worker and sortd must run as one uid (sortd opens the worker's 0600 regions)")
        scheduler_services = [s for s in dask_k8s.get("Service", [])
                              if any(p["port"] == 8786 for p in s["spec"]["ports"])]
        check(any(f"tcp://{s['metadata']['name']}:8786" in cs["worker"].get("args", [])
                  for s in scheduler_services), "deploy/dask/k8s: the workers do not join the scheduler's Service")
if "dask-scheduler" in dask_deps:
    labels = dask_deps["dask-scheduler"]["spec"]["template"]["metadata"]["labels"]
    check(any(s["spec"]["selector"].items() <= labels.items() for s in dask_k8s.get("Service", [])),
          "deploy/dask/k8s: no Service selects the scheduler")

for p in problems:
    print("FAIL", p)
print(f"{checks - len(problems)} passed, {len(problems)} failed")
sys.exit(1 if problems else 0)
