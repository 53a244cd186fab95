#!/usr/bin/env python3
"""The benchmark suite: runs every benchmark of the project in one run and writes the results, ratios
side by side, as docs/performance.md (the one performance page: Markdown tables) and
docs/performance.png (a chart).

  corpus        real NVRTC vs the shim cold vs warm (scripts/bench/corpus.py on bench/bench_kernels.h)
  hit floor     the warm runs' hit latency split next to its floor (bench/hit_floor.cc)
  single-flight N processes on one key (scripts/bench/single_flight.sh)
  store         get latency and disk use against the entry count (bench/store_scaling.cc)
  cuda.core     cuda.core's own program caches vs the shim (scripts/bench/cuda_core.py)
  program-cache nvrtc_cache.ProgramCache vs cuda.core's InMemoryProgramCache and FileStreamProgramCache
                (scripts/bench/program_cache.py)
  first-hit     a fresh process's first compiles, real NVRTC vs the shim warm (bench/first_hit_bench.cc),
                and the store's open piece by piece (bench/store_open_bench.cc)
  redis         GET/SET round trips of the Redis tier's own client against hiredis, on a throw-away
                redis-server (bench/redis_round_trip.cc; skipped without hiredis or redis-server)
  shared-tier   a shared-tier hit through the shim, Redis, HTTP and HTTPS (scripts/bench/shared_tier.py)
  tiers         the shared tiers side by side: Redis, TLS, Cluster, HTTP, HTTPS (scripts/bench/tiers.sh)
  compression   stored size and hit cost of a CUB entry per zstd level (bench/entry_compression_bench.cc)

usage: scripts/bench/suite.py [--quick] [--build BUILD_DIR] [--out DOCS_DIR] [--only SECTION...]
                              [--kernels PROGRAM...]
Run it through scripts/bench/run.sh, which builds what it needs and prepares .venv first.
"""
import argparse
import ctypes
import datetime
import glob
import json
import math
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402  scripts/bench/corpus.py
import cuda_core  # noqa: E402  scripts/bench/cuda_core.py
import nvvm  # noqa: E402  scripts/bench/nvvm.py
import program_cache  # noqa: E402  scripts/bench/program_cache.py

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SECTIONS = ("corpus", "link", "nvvm", "single-flight", "store", "cuda.core", "program-cache", "first-hit", "redis",
            "shared-tier", "tiers", "compression")
CCCL = "/usr/local/cuda/include/cccl"
KERNEL_LABELS = {"trivial": "trivial (axpy)", "names": "templates + 5 name expressions",
                 "cub": "CUB block reduce + radix sort", "cute": "CuTe tensor tile copy",
                 "headers": "generated headers"}


def cutlass_include_dir(python):
    found = glob.glob(os.path.join(os.path.dirname(os.path.dirname(python)), "lib", "python3*", "site-packages",
                                   "cutlass_library", "source", "include"))
    return found[0] if found and os.path.isdir(os.path.join(found[0], "cute")) else None


def generate_headers(directory, count):
    """`count` headers, each one inline device function, and all.h including every one of them."""
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "all.h"), "w") as all_h:
        all_h.write("#pragma once\n")
        for i in range(count):
            with open(os.path.join(directory, f"h{i:05d}.h"), "w") as h:
                h.write(f"#pragma once\n__device__ inline int f{i:05d}(int x) {{ return x * 3 + {i}; }}\n")
            all_h.write(f'#include "h{i:05d}.h"\n')
        all_h.write(f"__device__ inline int generated_entry(int x) {{ return f00000(x) + f{count - 1:05d}(x); }}\n")


def dependency_paths(include_dirs, files, probes):
    """Paths standing for a compile's dependencies: `files` existing headers from its include
    directories and `probes` missing paths as deep as those (NVRTC's failed -I lookups)."""
    existing = []
    for d in include_dirs:
        for root, dirs, names in os.walk(d):
            dirs.sort()
            existing += [os.path.join(root, n) for n in sorted(names) if n.endswith((".h", ".cuh", ".hpp", ".inl"))]
            if len(existing) >= files + probes:
                break
    existing = existing[:max(files, probes)]
    if not existing and probes:
        existing = ["/usr/local/cuda/include/cuda_runtime.h"]
    chosen = existing[:files] + [existing[i % len(existing)] + ".absent" for i in range(probes)]
    return chosen


def measure_corpus(args, build, kernels, env):
    results = []
    for kernel in kernels:
        t = time.time()
        m = corpus.measure_kernel(build, kernel, args.repeat, env, args.warm_repeat, args.first_hits)
        include_dirs = {"cub": [CCCL], "cute": [env.get("CUTLASS_INCLUDE_DIR", ""), CCCL],
                        "headers": [env.get("NVRTC_BENCH_HEADERS_DIR", "")]}.get(kernel, [])
        files, probes = m["files_read"] or 0, m["paths_probed"] or 0
        paths = dependency_paths(include_dirs, files, probes)
        out = subprocess.run([os.path.join(build, "bin", "hit_floor"), kernel, str(m["output_bytes"]),
                              str(50 if len(paths) > 1000 else 200)], input="\n".join(paths), env=dict(os.environ, **env),
                             check=True, capture_output=True, text=True).stdout.split()
        m["floor"] = dict(zip(("hash", "stat", "copy"), (int(v) for v in out)))
        m["floor_paths"] = len(paths)
        results.append(m)
        print(f"  corpus {kernel}: {time.time() - t:.0f} s", file=sys.stderr)
    return results


def measure_single_flight(args, build):
    env = dict(os.environ, REPEAT=str(args.flight_repeat), FORMAT="tsv")
    out = subprocess.run([os.path.join(ROOT, "scripts", "bench", "single_flight.sh"), build, args.flight_kernel]
                         + [str(n) for n in args.flight_counts], env=env, check=True, capture_output=True,
                         text=True).stdout
    rows, one = [], None
    for line in out.splitlines():
        f = line.split("\t")
        if f[0] == "one":
            one = float(f[1])
        elif len(f) == 10:
            rows.append({"n": int(f[0]), "sf_compiles": int(f[1]), "sf_hits": int(f[2]), "sf_waited": int(f[3]),
                         "sf_wall": float(f[4]), "sf_ratio": float(f[5]), "no_compiles": int(f[6]),
                         "no_hits": int(f[7]), "no_wall": float(f[8]), "no_ratio": float(f[9])})
    return {"one_ms": one, "kernel": args.flight_kernel, "repeat": args.flight_repeat, "rows": rows}


def measure_store(args, build):
    """The scaling rows on tmpfs when it has room (a fill of fsync'd puts on a disk takes minutes per
    10^4 entries), plus one row on the disk (TMPDIR) at the smallest count for the fsync'd put time."""
    keys = ("entries", "put_us", "get_p50_ns", "get_p99_ns", "miss_p50_ns", "disk_bytes", "payload_bytes")

    def run(parent, counts):
        with tempfile.TemporaryDirectory(prefix="nvrtc-cache-store-scaling-", dir=parent) as d:
            out = subprocess.run([os.path.join(build, "bin", "store_scaling"), os.path.join(d, "store"),
                                  str(args.entry_kib[0]), str(args.entry_kib[1]), str(args.store_gets)]
                                 + [str(c) for c in counts], check=True, capture_output=True, text=True).stdout
        return [dict(zip(keys, (float(v) for v in line.split()))) for line in out.splitlines()]

    needed = 3 * args.store_mean_kib * 1024 * args.store_counts[-1]
    shm = "/dev/shm"
    on_tmpfs = os.path.isdir(shm) and os.statvfs(shm).f_bavail * os.statvfs(shm).f_frsize > needed
    rows = [dict(r, where="tmpfs" if on_tmpfs else "disk") for r in run(shm if on_tmpfs else None, args.store_counts)]
    if on_tmpfs:
        rows.insert(0, dict(run(None, args.store_counts[:1])[0], where="disk"))
    return rows


def measure_link(args, build):
    """bench/link_bench (an LTO link of four CUB kernels' LTO-IR through nvJitLink), each mode in fresh
    processes: directly (the real nvJitLink), under the shim cold (an empty cache), and warm (the
    median of `first_hits` processes). Per mode: the process's first link and the median of its
    other links, ns."""
    binary = os.path.join(build, "bin", "link_bench")
    shim = os.path.join(build, "lib", "libnvrtc-cache.so")
    repeat = str(args.repeat)

    def run(env):
        out = subprocess.run([binary, repeat], env=env, check=True, capture_output=True, text=True).stdout
        return json.loads(out)

    with tempfile.TemporaryDirectory(prefix="nvrtc-cache-link-") as cache_dir:
        real_env = corpus.base_env()
        shim_env = dict(real_env, LD_PRELOAD=shim, NVRTC_CACHE_DIR=cache_dir)
        real = run(real_env)
        cold = run(shim_env)
        warm = [run(shim_env) for _ in range(args.first_hits)]
    return {"repeat": args.repeat, "processes": args.first_hits, "real": real, "cold": cold,
            "warm": {"first_ns": statistics.median(w["first_ns"] for w in warm),
                     "repeat_median_ns": statistics.median(w["repeat_median_ns"] for w in warm)}}


def measure_first_hit(args, build):
    """bench/first_hit_bench, each sample a fresh process, directly (real NVRTC) and under the shim with a
    warm cache, interleaved so that both see the same machine load: per program and mode, the 25th, 50th
    and 75th percentiles (ns) of the NVRTC program's creation, the first compile, the second compile and
    the whole process."""
    binary = os.path.join(build, "bin", "first_hit_bench")
    shim = os.path.join(build, "lib", "libnvrtc-cache.so")

    def sample(kernel, env):
        start = time.perf_counter_ns()
        out = subprocess.run([binary, kernel], env=env, check=True, capture_output=True, text=True).stdout.split()
        wall = time.perf_counter_ns() - start
        create, first, second, _ = (int(x) for x in out)
        return {"create": create, "first": first, "second": second, "process": wall}

    store_open = os.path.join(build, "bin", "store_open_bench")
    open_fields = ("config", "directory", "data_file", "lmdb_open", "counters", "first_get", "total")
    open_samples = []
    rows = []
    for kernel in ("trivial", "reject"):  # reject: a compile NVRTC refuses (a bad option)
        with tempfile.TemporaryDirectory(prefix="nvrtc-cache-first-hit-") as cache_dir:
            real_env = corpus.base_env()
            shim_env = dict(real_env, LD_PRELOAD=shim, NVRTC_CACHE_DIR=cache_dir)
            sample(kernel, shim_env)  # fills the cache
            samples = {"real": [], "shim warm": []}
            for _ in range(args.first_hit_samples):
                samples["real"].append(sample(kernel, real_env))
                samples["shim warm"].append(sample(kernel, shim_env))
                if kernel == "trivial" and os.path.exists(store_open):  # the same warm store, opened piece by piece
                    out = subprocess.run([store_open], env=dict(real_env, NVRTC_CACHE_DIR=cache_dir), check=True,
                                         capture_output=True, text=True).stdout.split()
                    open_samples.append(dict(zip(open_fields, (int(x) for x in out))))
        for mode, values in samples.items():
            row = {"kernel": kernel, "mode": mode}
            for field in ("create", "first", "second", "process"):
                q = statistics.quantiles([v[field] for v in values], n=4)
                row[field] = (q[0], statistics.median(v[field] for v in values), q[2])
            rows.append(row)
    store_open_rows = {f: statistics.median(v[f] for v in open_samples) for f in open_fields} if open_samples else None
    return {"samples": args.first_hit_samples, "rows": rows, "store_open": store_open_rows}


class RedisServer:
    """A throw-away redis-server: loopback port, password, no persistence, LRU within 1 GiB; with
    `unix_socket`, also a unix socket (socket_path) only its user may open."""

    def __init__(self, directory, unix_socket=False):
        self.dir = directory
        self.password = "bench-" + os.urandom(6).hex()
        self.socket_path = os.path.join(directory, "redis.sock") if unix_socket else None
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        extra = ["--unixsocket", self.socket_path, "--unixsocketperm", "700"] if unix_socket else []
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--requirepass", self.password,
             "--save", "", "--appendonly", "no", "--dir", directory, "--maxmemory", "1gb",
             "--maxmemory-policy", "allkeys-lru", "--logfile", os.path.join(directory, "redis.log")] + extra)
        for _ in range(200):
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0 and (not unix_socket or os.path.exists(self.socket_path)):
                    return
            time.sleep(0.025)
        self.stop()
        raise RuntimeError("redis-server did not start")

    def url(self):
        return f"redis://:{self.password}@127.0.0.1:{self.port}"

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


class NginxServer:
    """A throw-away nginx (Debian's nginx-light) serving an HTTP cache: WebDAV PUT/DELETE into
    `directory`/www on a loopback port, plain or over TLS with a throw-away CA made with the openssl
    CLI (`tls=True`; url() then names the CA with tls-ca-file)."""

    def __init__(self, directory, tls=False):
        self.dir, self.tls = directory, tls
        os.makedirs(os.path.join(directory, "www"), exist_ok=True)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        ssl = ""
        if tls:
            def ossl(*a):
                subprocess.run(["openssl", *a], check=True, capture_output=True, cwd=directory)
            ossl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "ca.key",
                 "-out", "ca.crt", "-subj", "/CN=bench-ca", "-days", "1")
            ossl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "server.key",
                 "-out", "server.csr", "-subj", "/CN=localhost")
            with open(os.path.join(directory, "ext"), "w") as f:
                f.write("subjectAltName=IP:127.0.0.1\n")
            ossl("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                 "-days", "1", "-extfile", "ext", "-out", "server.crt")
            ssl = (f" ssl;\n    ssl_certificate {directory}/server.crt;\n"
                   f"    ssl_certificate_key {directory}/server.key")
        user = "user root root;\n" if os.geteuid() == 0 else ""
        conf = (f"daemon off;\nworker_processes 2;\n{user}error_log {directory}/error.log warn;\n"
                f"pid {directory}/nginx.pid;\nevents {{ worker_connections 1024; }}\n"
                f"http {{\n  access_log off;\n  client_body_temp_path {directory}/body;\n"
                f"  client_max_body_size 256m;\n  keepalive_requests 1000000;\n"
                f"  server {{\n    listen 127.0.0.1:{self.port}{ssl};\n    root {directory}/www;\n"
                f"    location / {{ dav_methods PUT DELETE; create_full_put_path on; }}\n  }}\n}}\n")
        with open(os.path.join(directory, "nginx.conf"), "w") as f:
            f.write(conf)
        self.proc = subprocess.Popen(["nginx", "-p", directory, "-c", os.path.join(directory, "nginx.conf"),
                                      "-e", os.path.join(directory, "error.log")])
        for _ in range(200):
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.025)
        self.stop()
        raise RuntimeError("nginx did not start")

    def url(self):
        if self.tls:
            return f"https://127.0.0.1:{self.port}/cache?tls-ca-file={self.dir}/ca.crt"
        return f"http://127.0.0.1:{self.port}/cache"

    def stop(self):
        self.proc.terminate()  # SIGTERM: nginx's master stops its workers
        self.proc.wait()


def measure_redis(args, build):
    """bench/redis_round_trip against a redis-server of its own: per client (the tier's, hiredis),
    socket (TCP, unix), value size (1 KiB, 1 MiB) and operation, the minimum, median and 90th
    percentile (µs) of `args.redis_iterations` round trips. None (with the reason) when the
    benchmark was not built (no hiredis) or redis-server is missing."""
    binary = os.path.join(build, "bin", "redis_round_trip")
    if not os.path.exists(binary):
        return None, "Redis round trips skipped: bench/redis_round_trip was not built (libhiredis-dev missing)."
    if shutil.which("redis-server") is None:
        return None, "Redis round trips skipped: redis-server is not installed."
    with tempfile.TemporaryDirectory(prefix="nvrtc-cache-redis-bench-") as d:
        server = RedisServer(d, unix_socket=True)
        try:
            out = subprocess.run([binary, str(server.port), server.socket_path, server.password,
                                  str(args.redis_iterations)], check=True, capture_output=True, text=True).stdout
        finally:
            server.stop()
    rows = []
    for line in out.splitlines()[1:]:  # the first line names the columns
        client, sock, value, op, low, median, p90 = line.split()
        rows.append({"client": client, "socket": sock, "value": value, "op": op, "min": float(low),
                     "median": float(median), "p90": float(p90)})
    return {"iterations": args.redis_iterations, "rows": rows}, None


def measure_tiers(args, build):
    """scripts/bench/tiers.sh: every shared tier through bench/tier_bench on servers of its own; the
    summary table it prints last (None with the reason when a server is missing)."""
    missing = [tool for tool in ("redis-server", "redis-cli", "nginx", "openssl") if shutil.which(tool) is None]
    if missing:
        return None, f"The shared tiers side by side skipped: {', '.join(missing)} not installed."
    entries = "300" if args.quick else "2000"
    out = subprocess.run([os.path.join(ROOT, "scripts", "bench", "tiers.sh"), entries, "8192"], check=True,
                         capture_output=True, text=True, env=dict(os.environ, BUILD_DIR=build)).stdout
    summary = out[out.index("\nlocal store"):].strip() if "\nlocal store" in out else out.strip()
    return {"entries": int(entries), "bytes": 8192, "summary": summary}, None


def measure_compression(args, build):
    """bench/entry_compression_bench (Google Benchmark, JSON): per entry kind and zstd level, the stored
    size and the CPU time of a hit (LMDB get + decode) and of compressing."""
    binary = os.path.join(build, "bin", "entry_compression_bench")
    if not os.path.exists(binary):
        return None, "Compression skipped: bench/entry_compression_bench was not built."
    out = subprocess.run([binary, "--benchmark_format=json", f"--benchmark_repetitions={3 if args.quick else 5}",
                          "--benchmark_report_aggregates_only=true"], check=True, capture_output=True,
                         text=True).stdout
    rows = [b for b in json.loads(out)["benchmarks"] if b.get("aggregate_name") == "median"]
    return {"rows": rows}, None


def machine():
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
               platform.processor())
    mem = next((int(line.split()[1]) for line in open("/proc/meminfo") if line.startswith("MemTotal")), 0)
    os_name = next((line.split("=", 1)[1].strip().strip('"') for line in open("/etc/os-release")
                    if line.startswith("PRETTY_NAME")), platform.system())
    nvrtc = "unknown"
    try:
        lib = ctypes.CDLL("/usr/local/cuda/lib64/libnvrtc.so")
        major, minor = ctypes.c_int(), ctypes.c_int()
        lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
        nvrtc = f"{major.value}.{minor.value}"
    except OSError:
        pass
    gpu = subprocess.run("nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1", shell=True,
                         capture_output=True, text=True).stdout.strip() or "none (NVRTC compiles need no GPU)"
    commit = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"], capture_output=True,
                            text=True).stdout.strip()
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_gib": mem / 2**20, "os": os_name,
            "kernel": platform.release(), "nvrtc": nvrtc, "gpu": gpu, "commit": commit,
            "load": os.getloadavg()}


# ---------------------------------------------------------------------------------------------- report

def ms(ns):
    return f"{ns / 1e6:.0f}" if ns >= 1e8 else f"{ns / 1e6:.3g}" if ns >= 1e6 else f"{ns / 1e6:.3f}"


def us(ns):
    return f"{ns / 1e3:.1f}"


def ratio(x):
    return f"{x:.3g}×" if x < 100 else f"{x:.0f}×"


def size(b):
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if b >= scale:
            return f"{b / scale:.1f} {unit}"
    return f"{b:.0f} B"


def write_markdown(path, m, results, args, png_name):
    L = []
    add = L.append
    add("# Performance\n")
    add("What a miss and a hit cost, measured: the real libraries against the cache cold and warm, a hit's "
        "latency split next to its floor, many processes on one key, the store's scaling, the peers' own "
        "caches, a fresh process's first hit, the shared tiers and compression. This page is written by one "
        "run of the benchmark suite, `scripts/bench/run.sh` (`--quick` for a smoke run, `--only SECTION...` "
        "for part of it); nothing on it is pasted by hand. Why the cache is built the way these numbers "
        "show is in [design.md](design.md).\n")
    load = ", ".join(f"{v:.1f}" for v in m["load"])
    add(f"Measured {m['date']} on {m['cpu']} ({m['cores']} CPUs, {m['memory_gib']:.0f} GiB RAM, load average "
        f"{load} at the start), {m['os']}, Linux {m['kernel']}, NVRTC {m['nvrtc']} (/usr/local/cuda), GPU: "
        f"{m['gpu']}; commit {m['commit']}; {'--quick (smoke) run' if args.quick else 'full run'}, "
        f"{m['seconds']:.0f} s. Everything below comes from this one run.\n")
    add(f"Reproduce with `scripts/bench/run.sh{' --quick' if args.quick else ''}` (builds what it needs, then "
        "runs scripts/bench/suite.py). Absolute times depend on the machine; the ratios are the result.\n")
    add(f"![benchmarks]({png_name})\n")

    corpus = results.get("corpus")
    if corpus:
        add("## Real NVRTC vs the shim, cold and warm\n")
        add(f"`bench/nvrtc_bench` compiles each program {args.repeat} times in one fresh process per mode (create, "
            "name expressions, compile, lowered names, CUBIN, log, destroy). *first*: the process's first compile "
            f"(for the warm shim: the first hit of a fresh process, including opening the store; median of "
            f"{args.first_hits} processes); *in-process*: "
            "the median of the other compiles in that process (for the shim: hits; its warm process compiles "
            f"{args.warm_repeat} times). Times in ms; ratios against the real NVRTC. An untimed real compile "
            "runs first, so that every mode finds the headers in the page cache.\n")
        add("| program | dependencies (files read / paths probed) | outputs | real NVRTC first | shim cold first | "
            "cold / real | shim warm first | real / warm first | real in-process | shim in-process hit | "
            "real / hit |")
        add("|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|")
        for r in corpus:
            deps = f"{r['files_read']} / {r['paths_probed']}" if r["files_read"] is not None else "not logged"
            real, cold, warm = r["real"], r["cold"], r["warm"]
            add(f"| {KERNEL_LABELS.get(r['kernel'], r['kernel'])} | {deps} | {size(r['output_bytes'])} | "
                f"{ms(real['first'])} | {ms(cold['first'])} | {ratio(cold['first'] / real['first'])} | "
                f"{ms(warm['first'])} | **{ratio(real['first'] / warm['first'])}** | {ms(real['repeat'])} | "
                f"{ms(warm['repeat'])} | **{ratio(real['repeat'] / warm['repeat'])}** |")
        uncached = [r["kernel"] for r in corpus if r["hits"] < r["warm_compiles"]]
        if uncached:
            add(f"\nNot every warm compile was a hit for: {', '.join(uncached)} (see the hits column below).")
        add("")
        add("## Hit latency split and its floor\n")
        add("The shim's own accounting of its hits (`nvrtc-cache stats --json`, `hit_*_ns`; µs): *first hit* is a "
            f"fresh process's first compile (median of {args.first_hits} warm processes of one compile each), "
            f"*later hit* the mean of the other hits of a warm process of {args.warm_repeat} compiles (its "
            "counters read while it waits after its first compile, then at its exit). *wall* is the whole compile as the client saw it (create to destroy, "
            "`nvrtc_bench`; a median for first hits, a mean for later ones, like the split, so a few stalls of a "
            "loaded machine weigh in both); what it has beyond the four accounted phases is the rest of the API calls and, on a "
            "first hit, the shim's start (configuration, store open, real NVRTC resolution). The floor is "
            "measured in the same run by `bench/hit_floor` with the bare primitives a hit cannot avoid (median "
            "µs): BLAKE2b-256 of the source, options and name expressions; one `stat()` of as many paths as the "
            "compile's dependencies (files from its include directories, and as many missing paths as it "
            "probed); one copy of the outputs (CUBIN + log) into a fresh buffer.\n")
        add("| program | hit | wall (µs) | keying | lookup | validation | replay | accounted | floor: hash | "
            "floor: stat (paths) | floor: copy | **floor** | **accounted / floor** | wall / floor |")
        add("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
        for r in corpus:
            f = r["floor"]
            floor = sum(f.values())
            label = KERNEL_LABELS.get(r["kernel"], r["kernel"])
            floor_cells = (f"{us(f['hash'])} | {us(f['stat'])} ({r['floor_paths']}) | {us(f['copy'])} | "
                           f"**{us(floor)}**")
            for which, split, wall in (("first (median)", r["split_first"], r["warm"]["first"]),
                                       ("later (mean)", r["split"], r["warm"]["repeat_mean"])):
                if split["keying"] is None:
                    add(f"| {label} | {which} | {ms(wall)} ms | not a hit | | | | | {floor_cells} | | |")
                    continue
                total = sum(split.values())
                add(f"| {label} | {which} | {us(wall)} | {us(split['keying'])} | {us(split['lookup'])} | "
                    f"{us(split['validate'])} | {us(split['replay'])} | {us(total)} | {floor_cells} | "
                    f"**{ratio(total / floor)}** | {ratio(wall / floor)} |")
                label = ""
        add("")

    flight = results.get("single-flight")
    if flight:
        add("## N processes on one key (cold starts on one node)\n")
        add(f"`scripts/bench/single_flight.sh`: N processes start together on an empty cache and compile the same "
            f"program (`{flight['kernel']}`); *compiles* is the real compiles done (the store's misses), *wall* the "
            f"time until all have finished, as a multiple of one compile by the real NVRTC alone measured just "
            f"before each run ({flight['one_ms']:.0f} ms at the start); median of {flight['repeat']} runs. "
            f"Without single-flight = `NVRTC_CACHE_WAIT_TIMEOUT=0`. This machine has {m['cores']} CPUs.\n")
        add("| N | compiles (single-flight) | hits | waited | wall | **wall / one compile** | "
            "compiles (without) | wall (without) | wall / one compile (without) |")
        add("|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
        for r in flight["rows"]:
            add(f"| {r['n']} | {r['sf_compiles']} | {r['sf_hits']} | {r['sf_waited']} | {r['sf_wall']:.0f} ms | "
                f"**{r['sf_ratio']:.2f}×** | {r['no_compiles']} | {r['no_wall']:.0f} ms | {r['no_ratio']:.2f}× |")
        add("")

    store = results.get("store")
    if store:
        add("## Store scaling\n")
        add(f"`bench/store_scaling`: one LMDB store (`store::LmdbStore`, put/get directly) filled with entries "
            f"of {args.entry_kib[0]}–{args.entry_kib[1]} KiB (log-uniform, fixed seed, 33-byte keys), measured at "
            f"each size with {args.store_gets} random gets of present keys and as many of absent keys (page "
            f"cache warm; every get verifies the entry's checksum and copies it out). Disk: the blocks allocated "
            f"to the store's files.\n")
        add("| entries | on | get p50 | get p99 | miss p50 | payload | disk | disk / payload | put (mean) |")
        add("|--:|---|--:|--:|--:|--:|--:|--:|--:|")
        for r in store:
            add(f"| {r['entries']:.0f} | {r['where']} | {us(r['get_p50_ns'])} µs | {us(r['get_p99_ns'])} µs | "
                f"{us(r['miss_p50_ns'])} µs | {size(r['payload_bytes'])} | {size(r['disk_bytes'])} | "
                f"{r['disk_bytes'] / r['payload_bytes']:.2f} | {r['put_us']:.0f} µs |")
        if any(r["where"] == "tmpfs" for r in store):
            add("\nThe scaling rows live on tmpfs (/dev/shm): every put commits with an fsync, which on this "
                "machine's disk costs the put time of the *disk* row, so filling 10^5 entries there would take "
                "far longer than the measurement. Gets are served from mapped pages either way (warm page cache), "
                "so the get columns compare; the tmpfs put times do not include a real fsync.")
        if args.store_note:
            add(f"\n{args.store_note}")
        add("")

    cc = results.get("cuda.core")
    if cc:
        add("## cuda.core's own caches vs the shim\n")
        add(f"`scripts/bench/cuda_core.py`: the same `cuda.core` `Program.compile(\"cubin\")` calls (sm_80, "
            f"c++17; NVRTC from the nvidia-cuda-nvrtc wheel), {args.repeat} per fresh process. *cold first*: "
            f"the first compile on an empty cache; *warm first*: the first compile of a second fresh process "
            f"(`InMemoryProgramCache` lives in one process, so it has none); *warm in-process*: the median of "
            f"the later compiles (hits) of the warm process (of the only process for the in-memory cache). "
            f"Times in ms; ratios against the plain compile.\n")
        add("| program | mode | cold first | warm first | **plain / warm first** | warm in-process | "
            "**plain / in-process** |")
        add("|---|---|--:|--:|--:|--:|--:|")
        names = {"cuda.core": "cuda.core FileStreamProgramCache", "cuda.core-mem": "cuda.core InMemoryProgramCache",
                 "nvrtc-cache": "nvrtc-cache (shim)"}
        for r in cc:
            plain = r["plain"]
            plain_rep = statistics.median(plain[1:])
            add(f"| {r['program']} | plain (no cache) | {ms(plain[0] * 1e6)} | – | – | {ms(plain_rep * 1e6)} | – |")
            for mode, x in r["modes"].items():
                if x["status"] != "ok":
                    add(f"| | {names[mode]} | {x['status']} | | | | |")
                    continue
                hits = statistics.median((x["warm"] or x["cold"])[1:])
                first = f"{ms(x['warm'][0] * 1e6)} | **{ratio(plain[0] / x['warm'][0])}**" if x["warm"] else "– | –"
                add(f"| | {names[mode]} | {ms(x['cold'][0] * 1e6)} | {first} | {ms(hits * 1e6)} | "
                    f"**{ratio(plain_rep / hits)}** |")
        add("")
    pc = results.get("program-cache")
    if pc:
        add("## nvrtc_cache.ProgramCache vs cuda.core's backends\n")
        add(f"`scripts/bench/program_cache.py`: the same `cuda.core` `Program.compile(\"cubin\", cache=...)` calls "
            "(sm_80, c++17; NVRTC from the nvidia-cuda-nvrtc wheel) through `nvrtc_cache.ProgramCache` (the C API, "
            "its own cache directory, no configuration), cuda.core's `FileStreamProgramCache` and its "
            "`InMemoryProgramCache`, each in fresh processes (times in ms, medians). *cold first*: the first "
            f"compile on an empty cache; *in-process*: a compile repeated in the same process (a hit; median of "
            f"{pc['repeat']}); *warm first*: the first compile of a fresh process whose cache another process "
            f"filled (the in-memory cache lives in one process: a real compile); *{pc['processes']} processes*: "
            f"{pc['processes']} processes started at once on a filled cache, the wall time until the last one is "
            "done (Python's start and cuda.core's import included), and their median first compile; *fill per "
            f"entry*: writing {pc['entries']} entries of 4–16 KiB through the backend; *warm first among "
            f"entries*: the warm first compile with those {pc['entries']} entries in the cache. Ratios are the "
            "backend's time over `ProgramCache`'s (above 1: `ProgramCache` is faster).\n")
        add(program_cache.markdown_table(pc["rows"]))
        ours, fs = pc["rows"]["nvrtc-cache"], pc["rows"]["file-stream"]
        add(f"\nA hit costs {ours['in-process'] * 1e3:.0f} µs in-process (a read transaction and a copy; "
            f"FileStream: {fs['in-process'] * 1e3:.0f} µs, a file's open and read), and a fresh process's first hit "
            f"({ours['warm first']:.1f} ms; FileStream: {fs['warm first']:.1f} ms) is dominated by what both "
            "persistent backends share (loading NVRTC for `make_program_cache_key`'s version, deriving the key). "
            f"A write is one LMDB transaction ({ours['fill per entry']:.2f} ms) against a temporary file, `fsync` "
            f"and rename ({fs['fill per entry']:.2f} ms). The in-memory cache is faster within one process and has "
            "nothing to give the next.")
        add("")
    first_hit = results.get("first-hit")
    if first_hit:
        add("## First hit of a fresh process\n")
        add(f"`bench/first_hit_bench`: one process per sample creates an NVRTC program and compiles it twice "
            f"(*trivial*: a small kernel; *reject*: a compile NVRTC refuses, a bad option), directly (real NVRTC) "
            f"and under the shim with a warm cache, {first_hit['samples']} fresh processes per row, the two "
            f"modes interleaved so that both see the same machine load. Median [25th–75th percentile], ms; "
            f"*process* is the whole process, start to exit.\n")
        add("| program | mode | create | 1st compile | 2nd compile | process |")
        add("|---|---|--:|--:|--:|--:|")
        for r in first_hit["rows"]:
            cells = " | ".join(f"{r[f][1] / 1e6:.3f} [{r[f][0] / 1e6:.3f}–{r[f][2] / 1e6:.3f}]"
                               for f in ("create", "first", "second", "process"))
            add(f"| {r['kernel']} | {r['mode']} | {cells} |")
        for kernel in ("trivial", "reject"):
            real, warm = (next(r for r in first_hit["rows"] if r["kernel"] == kernel and r["mode"] == mode)
                          for mode in ("real", "shim warm"))
            add(f"\n{kernel}: first compile, shim warm − real = {(warm['first'][1] - real['first'][1]) / 1e6:+.3f} ms.")
        opened = first_hit.get("store_open")
        if opened:
            add(f"\nOf a first hit, the store's open, piece by piece (`bench/store_open_bench` on the same warm "
                f"store, a fresh process per sample, median of {first_hit['samples']}; µs): the settings, the "
                f"cache directory's checks, the data file's check, LMDB's open (lock file, `mdb_env_open`), the "
                f"counters file, the first read.\n")
            add("| settings | directory | data file | LMDB open | counters | first read | in all |")
            add("|--:|--:|--:|--:|--:|--:|--:|")
            add("| " + " | ".join(f"{opened[f] / 1e3:.1f}" for f in
                                  ("config", "directory", "data_file", "lmdb_open", "counters", "first_get", "total")) + " |")
        add("")

    redis = results.get("redis")
    if redis:
        add("## Redis round trips: the tier's client and hiredis\n")
        add(f"`bench/redis_round_trip` against a redis-server of its own (loopback TCP and a unix socket, a "
            f"password, no persistence): {redis['iterations']} round trips per row after 5 untimed ones, by the "
            f"Redis tier's own RESP client and by hiredis (blocking `redisCommand`). µs: minimum, median, "
            f"90th percentile.\n")
        add("| value | op | socket | tier min | tier median | tier p90 | hiredis min | hiredis median | hiredis p90 |")
        add("|---|---|---|--:|--:|--:|--:|--:|--:|")
        rows = redis["rows"]
        for r in rows:
            if r["client"] != "tier":
                continue
            h = next((x for x in rows if x["client"] == "hiredis" and
                      (x["socket"], x["value"], x["op"]) == (r["socket"], r["value"], r["op"])), None)
            hired = f"{h['min']:.1f} | {h['median']:.1f} | {h['p90']:.1f}" if h else "– | – | –"
            add(f"| {r['value']} | {r['op']} | {r['socket']} | {r['min']:.1f} | {r['median']:.1f} | "
                f"{r['p90']:.1f} | {hired} |")
        add("")

    link = results.get("link")
    if link:
        real, cold, warm = link["real"], link["cold"], link["warm"]
        add("## nvJitLink: an LTO link, real vs the shim cold and warm\n")
        add(f"`bench/link_bench` compiles four CUB kernels (block reduce, radix sort, scan, histogram) to LTO-IR "
            f"({size(real['ltoir_bytes'])}) with NVRTC, then links them with `-lto` into one CUBIN "
            f"({size(real['cubin_bytes'])}) {link['repeat']} times in one process; only the links are timed. "
            f"*first*: the process's first link (warm: the median of {link['processes']} fresh processes, "
            "including opening the store); *in-process*: the median of its other links. Times in ms.\n")
        add("| mode | first link | in-process link | real / first |")
        add("|---|--:|--:|--:|")
        for name, r in (("real nvJitLink", real), ("shim cold", cold), ("shim warm", warm)):
            add(f"| {name} | {ms(r['first_ns'])} | {ms(r['repeat_median_ns'])} | "
                f"{ratio(real['first_ns'] / r['first_ns'])} |")
        add("")

    nvvm = results.get("nvvm")
    if nvvm:
        add("## libNVVM: numba-cuda's compile_ptx, real vs the shim cold and warm\n")
        add(f"`scripts/bench/nvvm.py`: numba-cuda's `cuda.compile_ptx` of {nvvm['kernels']} kernels for sm_90 in one "
            f"process (numba lowers Python to NVVM IR, libNVVM compiles it to PTX); the median of "
            f"{nvvm['processes']} fresh processes per mode (cold: one). libNVVM's part is the real "
            "`nvvmCompileProgram` calls of the cold process against what the warm processes' hits took.\n")
        add("| | real | shim cold | shim warm | real / warm |")
        add("|---|--:|--:|--:|--:|")
        add(f"| compile_ptx, all kernels | {ms(nvvm['real_ns'])} | {ms(nvvm['cold_ns'])} | {ms(nvvm['warm_ns'])} | "
            f"{ratio(nvvm['real_ns'] / nvvm['warm_ns'])} |")
        add(f"| libNVVM's part | {ms(nvvm['nvvm_real_ns'])} | | {ms(nvvm['nvvm_hit_ns'])} | "
            f"{ratio(nvvm['nvvm_real_ns'] / nvvm['nvvm_hit_ns'])} |")
        add("")

    if results.get("shared-tier"):
        import shared_tier  # scripts/bench/shared_tier.py
        for tier in results["shared-tier"]:
            add(shared_tier.markdown(tier))

    tiers = results.get("tiers")
    if tiers:
        add("## The shared tiers side by side\n")
        add(f"`scripts/bench/tiers.sh`: {tiers['entries']} sealed values of {tiers['bytes'] >> 10} KiB per tier through "
            "`bench/tier_bench`, every server on loopback and started for the run: Redis over TCP, over TLS "
            "(`rediss://`, a throw-away CA), a 6-node Redis Cluster (3 masters with a replica each), and nginx with "
            "WebDAV over `http://` and `https://`. *hit*: the tier read and unseal (median); *shared hit*: plus the "
            "write-back into LMDB; 16 readers' and 16 writers' throughput.\n")
        add(tiers["summary"])
        add("")

    compression = results.get("compression")
    if compression:
        add("## Compressed entries\n")
        add("`bench/entry_compression_bench` (Google Benchmark) compiles the corpus's CUB program with the real NVRTC, "
            "to CUBIN (`-arch=sm_80`: its entry holds the CUBIN and the PTX) and to PTX only (`-arch=compute_80`), "
            "and measures the stored size and the part of a hit that compression changes (the LMDB get and the "
            "entry's decoding, which expands a compressed entry), and the compression a miss pays. Medians, CPU "
            "time. Level 0 is uncompressed; the default is level 1 (`compression`).\n")
        hits, compress = {}, {}
        for row in compression["rows"]:
            parts = row["run_name"].split("/")  # BM_<what>/<1: PTX only>/<level>
            kind = "PTX (`compute_80`)" if parts[1] == "1" else "CUBIN + PTX (`sm_80`)"
            (hits if parts[0] == "BM_HitOfCubEntry" else compress)[(kind, int(parts[2]))] = row
        kinds = sorted({k for k, _ in hits}, reverse=True)
        levels = sorted({lv for _, lv in hits})
        add("| entry | " + " | ".join(f"stored, level {lv}" if lv else "stored, uncompressed" for lv in levels) +
            " | " + " | ".join(f"hit, level {lv}" if lv else "hit, uncompressed" for lv in levels) + " | " +
            " | ".join(f"compress, level {lv}" for lv in levels if lv) + " |")
        add("|---|" + "--:|" * (len(levels) * 3 - 1))
        for kind in kinds:
            stored = [hits[(kind, lv)] for lv in levels]
            cells = [size(r["stored_bytes"]) + ("" if lv == 0 else f" ({r['ratio']:.1f}×)")
                     for r, lv in zip(stored, levels)]
            cells += [f"{r['cpu_time']:.0f} µs" for r in stored]
            cells += [f"{compress[(kind, lv)]['cpu_time']:.0f} µs" if (kind, lv) in compress else "" for lv in levels if lv]
            add(f"| {kind} | " + " | ".join(cells) + " |")
        add("")

    if results.get("notes"):
        add("## Notes\n")
        for note in results["notes"]:
            add(f"- {note}")
        add("")
    with open(path, "w") as f:
        f.write("\n".join(L))


def write_chart(path, m, results, args):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(3, 2, figsize=(15, 15))
    fig.suptitle(f"nvrtc-cache benchmarks — {m['date']}, {m['cores']} CPUs ({m['cpu']}), NVRTC {m['nvrtc']}"
                 f"{' — QUICK RUN' if args.quick else ''}", fontsize=12)
    colors = {"real": "#555555", "cold": "#d62728", "warm": "#1f77b4", "hit": "#2ca02c"}

    ax = axes[0][0]
    corpus = results.get("corpus") or []
    if corpus:
        labels = [r["kernel"] for r in corpus]
        series = [("real NVRTC", [r["real"]["first"] for r in corpus], colors["real"]),
                  ("shim cold (first)", [r["cold"]["first"] for r in corpus], colors["cold"]),
                  ("shim warm (first hit, fresh process)", [r["warm"]["first"] for r in corpus], colors["warm"]),
                  ("shim in-process hit", [r["warm"]["repeat"] for r in corpus], colors["hit"])]
        width = 0.2
        for i, (name, values, color) in enumerate(series):
            xs = [j + (i - 1.5) * width for j in range(len(labels))]
            ax.bar(xs, [v / 1e6 for v in values], width, label=name, color=color)
        for j, r in enumerate(corpus):
            ax.annotate(f"{r['real']['first'] / r['warm']['first']:.0f}×", (j + 0.5 * width, r["warm"]["first"] / 1e6),
                        ha="center", va="bottom", fontsize=8)
        for j, r in enumerate(corpus):
            ax.annotate(f"{r['real']['repeat'] / r['warm']['repeat']:.0f}×", (j + 1.5 * width, r["warm"]["repeat"] / 1e6),
                        ha="center", va="bottom", fontsize=8)
        ax.set_xticks(range(len(labels)), labels)
        ax.set_yscale("log")
        ax.set_ylim(top=max(r["real"]["first"] for r in corpus) / 1e6 * 300)
        ax.set_ylabel("ms per compile (log)")
        ax.set_title("Real NVRTC vs shim cold / warm (labels: real / shim)")
        ax.legend(fontsize=8, ncol=2, loc="upper center")

    ax = axes[0][1]
    if corpus:
        parts = ("keying", "lookup", "validate", "replay")
        floor_parts = ("hash", "stat", "copy")
        labels = [r["kernel"] for r in corpus]
        bottoms = [0.0] * len(corpus)
        palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728"]
        for p, color in zip(parts, palette):
            vals = [(r["split"][p] or 0) / 1e3 if r["hits"] else 0 for r in corpus]
            ax.bar([j - 0.2 for j in range(len(corpus))], vals, 0.38, bottom=bottoms, color=color, label=f"hit: {p}")
            bottoms = [b + v for b, v in zip(bottoms, vals)]
        bottoms = [0.0] * len(corpus)
        for p, color in zip(floor_parts, ["#9ecae1", "#a1d99b", "#fdae6b"]):
            vals = [r["floor"][p] / 1e3 for r in corpus]
            ax.bar([j + 0.2 for j in range(len(corpus))], vals, 0.38, bottom=bottoms, color=color, hatch="//",
                   label=f"floor: {p}")
            bottoms = [b + v for b, v in zip(bottoms, vals)]
        ax.set_xticks(range(len(labels)), labels)
        ax.set_yscale("log")
        ax.set_ylabel("µs per hit (log)")
        ax.set_ylim(top=ax.get_ylim()[1] * 30)
        ax.set_title("Later (in-process) hit: accounted split (left) vs floor (right, hatched)")
        ax.legend(fontsize=8, ncol=4, loc="upper center")

    ax = axes[1][0]
    flight = results.get("single-flight")
    if flight and flight["rows"]:
        ns = [r["n"] for r in flight["rows"]]
        ax.plot(ns, [r["sf_ratio"] for r in flight["rows"]], "o-", color=colors["warm"], label="wall / one compile, single-flight")
        ax.plot(ns, [r["no_ratio"] for r in flight["rows"]], "s--", color=colors["cold"], label="wall / one compile, without")
        ax.set_xscale("log", base=2)
        ax.set_xticks(ns, [str(n) for n in ns])
        ax.set_xlabel("processes on one key")
        ax.set_ylabel("wall time / one compile")
        ax2 = ax.twinx()
        ax2.bar(ns, [r["sf_compiles"] for r in flight["rows"]], width=[n * 0.15 for n in ns], alpha=0.3,
                color=colors["warm"], label="compiles, single-flight")
        ax2.bar([n * 1.18 for n in ns], [r["no_compiles"] for r in flight["rows"]], width=[n * 0.15 for n in ns],
                alpha=0.3, color=colors["cold"], label="compiles, without")
        ax2.set_ylabel("real compiles done")
        h1, l1 = ax.get_legend_handles_labels()
        h2, l2 = ax2.get_legend_handles_labels()
        ax.legend(h1 + h2, l1 + l2, fontsize=8, loc="upper left")
        ax.set_title(f"N processes on one key ({flight['kernel']}; one compile = {flight['one_ms']:.0f} ms)")

    ax = axes[1][1]
    store = results.get("store")
    if store:
        store = [r for r in store if r["where"] == store[-1]["where"]]
        xs = [r["entries"] for r in store]
        ax.plot(xs, [r["get_p50_ns"] / 1e3 for r in store], "o-", color=colors["warm"], label="get p50")
        ax.plot(xs, [r["get_p99_ns"] / 1e3 for r in store], "o--", color=colors["warm"], alpha=0.5, label="get p99")
        ax.plot(xs, [r["miss_p50_ns"] / 1e3 for r in store], "^-", color=colors["hit"], label="miss p50")
        ax.set_xscale("log")
        ax.set_xlabel("entries")
        ax.set_ylabel("µs")
        ax2 = ax.twinx()
        ax2.plot(xs, [r["disk_bytes"] / 2**30 for r in store], "s:", color=colors["real"], label="disk (GiB)")
        ax2.set_ylabel("disk GiB")
        h1, l1 = ax.get_legend_handles_labels()
        h2, l2 = ax2.get_legend_handles_labels()
        ax.legend(h1 + h2, l1 + l2, fontsize=8, loc="upper left")
        ax.set_title(f"Store scaling ({args.entry_kib[0]}–{args.entry_kib[1]} KiB entries)")

    ax = axes[2][0]
    cc = results.get("cuda.core")
    if cc:
        modes = [("plain", "plain", colors["real"]), ("cuda.core", "FileStream warm first", "#ff7f0e"),
                 ("cuda.core-mem", "InMemory in-process", "#9467bd"), ("nvrtc-cache", "shim warm first", colors["warm"]),
                 ("nvrtc-cache-hit", "shim in-process", colors["hit"]), ("cuda.core-hit", "FileStream in-process", "#ffbb78")]
        width = 0.13
        for i, (mode, name, color) in enumerate(modes):
            vals = []
            for r in cc:
                if mode == "plain":
                    vals.append(r["plain"][0])
                    continue
                x = r["modes"][mode.replace("-hit", "")]
                if x["status"] != "ok":
                    vals.append(0)
                elif mode == "cuda.core-mem":
                    vals.append(statistics.median(x["cold"][1:]))
                elif mode.endswith("-hit"):
                    vals.append(statistics.median(x["warm"][1:]))
                else:
                    vals.append(x["warm"][0])
            ax.bar([j + (i - 2.5) * width for j in range(len(cc))], vals, width, label=name, color=color)
        ax.set_xticks(range(len(cc)), [r["program"] for r in cc])
        ax.set_yscale("log")
        ax.set_ylabel("ms per Program.compile (log)")
        ax.set_ylim(top=ax.get_ylim()[1] * 100)
        ax.set_title("cuda.core's caches vs the shim")
        ax.legend(fontsize=8, ncol=3, loc="upper center")

    ax = axes[2][1]
    pc = results.get("program-cache")
    if pc:
        rows = pc["rows"]
        metrics = ["in-process", "warm first", f"{pc['processes']} processes, median first", "fill per entry",
                   "warm first among entries"]
        backends = [("nvrtc-cache", "nvrtc_cache.ProgramCache", colors["warm"]),
                    ("file-stream", "FileStreamProgramCache", "#ff7f0e"),
                    ("in-memory", "InMemoryProgramCache", "#9467bd")]
        width = 0.27
        for i, (mode, name, color) in enumerate(backends):
            ax.bar([j + (i - 1) * width for j in range(len(metrics))], [rows[mode][m] for m in metrics], width,
                   label=name, color=color)
        ax.set_xticks(range(len(metrics)), [m.replace(", ", ",\n").replace(" among", "\namong") for m in metrics],
                      fontsize=8)
        ax.set_yscale("log")
        ax.set_ylabel("ms (log)")
        ax.set_ylim(top=ax.get_ylim()[1] * 30)
        ax.set_title("nvrtc_cache.ProgramCache vs cuda.core's backends")
        ax.legend(fontsize=8, ncol=3, loc="upper center")
    for ax in (axes[0][0], axes[0][1], axes[1][0], axes[1][1], axes[2][0], axes[2][1]):
        if not ax.has_data():
            ax.axis("off")
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    fig.savefig(path, dpi=90)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a smoke run: fewer repeats, sizes and processes")
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--python", default=os.path.join(ROOT, ".venv", "bin", "python"))
    parser.add_argument("--out", default=os.path.join(ROOT, "docs"))
    parser.add_argument("--only", nargs="+", choices=SECTIONS, default=list(SECTIONS))
    parser.add_argument("--kernels", nargs="+", choices=list(KERNEL_LABELS), help="the corpus programs to run")
    args = parser.parse_args()
    build = os.path.abspath(args.build)
    args.repeat = 3 if args.quick else 5
    args.warm_repeat = 100 if args.quick else 1000
    args.first_hits = 3 if args.quick else 5
    args.flight_kernel = "trivial" if args.quick else "cub"
    args.flight_counts = [1, 2, 4] if args.quick else [1, 2, 4, 8, 16]
    args.flight_repeat = 1 if args.quick else 3
    args.entry_kib = (4, 64)
    args.store_gets = 300 if args.quick else 3000
    args.store_counts = [1000, 3000] if args.quick else [1000, 10000, 100000]
    args.first_hit_samples = 10 if args.quick else 60
    args.redis_iterations = 100 if args.quick else 500
    args.pc_entries = 1000 if args.quick else 10_000
    args.pc_processes = 4 if args.quick else 16
    args.pc_repeat = 5 if args.quick else 20
    args.store_mean_kib = (args.entry_kib[1] - args.entry_kib[0]) / math.log(args.entry_kib[1] / args.entry_kib[0])
    args.store_note = ("10^6 entries are not measured: at these entry sizes (mean "
                       f"{args.store_mean_kib:.1f} KiB) they would take about "
                       f"{args.store_mean_kib * 1e6 / 2**20:.0f} GiB, more than this machine's tmpfs and memory, "
                       "and on the disk, at the fsync'd put time above, hours to fill.") if not args.quick else ""
    header_count = 300 if args.quick else 3000

    m = machine()
    started = time.time()
    results = {"notes": []}
    with tempfile.TemporaryDirectory(prefix="nvrtc-cache-suite-") as work:
        env = {}
        cutlass = cutlass_include_dir(args.python)
        kernels = ["trivial", "names", "cub"]
        if cutlass:
            env["CUTLASS_INCLUDE_DIR"] = cutlass
            kernels.append("cute")
        else:
            results["notes"].append("CuTe skipped: the nvidia-cutlass wheel is not installed in .venv.")
        env["NVRTC_BENCH_HEADERS_DIR"] = os.path.join(work, "headers")
        generate_headers(env["NVRTC_BENCH_HEADERS_DIR"], header_count)
        KERNEL_LABELS["headers"] = f"{header_count} generated headers"
        if cutlass:
            KERNEL_LABELS["cute"] = "CuTe tensor tile copy (nvidia-cutlass wheel)"
        kernels.append("headers")
        kernels = [k for k in kernels if k in (args.kernels or kernels)]
        if "corpus" in args.only:
            print("corpus ...", file=sys.stderr)
            results["corpus"] = measure_corpus(args, build, kernels, env)
        if "link" in args.only:
            print("link ...", file=sys.stderr)
            results["link"] = measure_link(args, build)
        if "nvvm" in args.only:
            print("nvvm ...", file=sys.stderr)
            results["nvvm"] = nvvm.measure(args.python, build, 1 if args.quick else 3)
        if "single-flight" in args.only:
            print("single-flight ...", file=sys.stderr)
            results["single-flight"] = measure_single_flight(args, build)
        if "store" in args.only:
            print("store scaling ...", file=sys.stderr)
            results["store"] = measure_store(args, build)
        if "cuda.core" in args.only:
            print("cuda.core ...", file=sys.stderr)
            programs = cuda_core.PROGRAMS[:1] if args.quick else cuda_core.PROGRAMS
            results["cuda.core"] = cuda_core.measure(args.python, build, args.repeat, programs)
        if "program-cache" in args.only:
            print("program cache ...", file=sys.stderr)
            results["program-cache"] = {
                "entries": args.pc_entries, "processes": args.pc_processes, "repeat": args.pc_repeat,
                "rows": program_cache.measure(args.python, build, args.pc_entries, args.pc_processes,
                                                    args.pc_repeat)}
        if "first-hit" in args.only:
            print("first hit ...", file=sys.stderr)
            results["first-hit"] = measure_first_hit(args, build)
        if "redis" in args.only:
            print("redis round trips ...", file=sys.stderr)
            results["redis"], note = measure_redis(args, build)
            if note:
                results["notes"].append(note)
        if "shared-tier" in args.only:
            import shared_tier  # scripts/bench/shared_tier.py (it imports this module)
            results["shared-tier"] = []
            for tier in ("redis", "http", "https"):
                print(f"shared tier ({tier}) ...", file=sys.stderr)
                results["shared-tier"].append(shared_tier.measure(build, args.python, tier, args.quick))
        if "tiers" in args.only:
            print("shared tiers side by side ...", file=sys.stderr)
            results["tiers"], note = measure_tiers(args, build)
            if note:
                results["notes"].append(note)
        if "compression" in args.only:
            print("compression ...", file=sys.stderr)
            results["compression"], note = measure_compression(args, build)
            if note:
                results["notes"].append(note)
    m["seconds"] = time.time() - started
    m["date"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    os.makedirs(args.out, exist_ok=True)
    write_chart(os.path.join(args.out, "performance.png"), m, results, args)
    write_markdown(os.path.join(args.out, "performance.md"), m, results, args, "performance.png")
    print(f"wrote {args.out}/performance.md and performance.png ({m['seconds']:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
