#!/usr/bin/env python3
"""The shared-tier benchmark: a Redis tier (a redis-server of its own on loopback, with a password),
or with --tier http / https an HTTP cache (an nginx of its own with WebDAV PUT), against a local hit
and the real NVRTC, over the benchmark suite's corpus (bench/bench_kernels.h), with ratios side by
side from one run; prints a Markdown section (the benchmark suite, scripts/bench/suite.py, puts one per
tier into docs/performance.md).

  per program   real NVRTC (a fresh process's compile) | shim cold on a writer node (compile + write-behind)
                | shared-tier hit (a fresh node: local miss, Redis GET, unseal, local write-back)
                | local hit (the same node's next process)
  16 clients    16 fresh nodes start together and compile the program: every one served from Redis;
                wall time against 16 plain processes compiling it at once
  put           tier_bench: sealed values written straight to Redis by 1 and by 16 writers

Every shim run's counters are checked (a shared hit has no miss and reads the tier; a local hit does
not read it), so a figure cannot come from the wrong path.

usage: scripts/bench/shared_tier.py [--build BUILD_DIR] [--python PYTHON] [--quick] [--tier redis|http|https]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402  scripts/bench/corpus.py
import suite  # noqa: E402  scripts/bench/suite.py

CLIENTS = 16


def shim_env(build, env, cache_dir, remote):
    e = dict(corpus.base_env(), **env)
    e.update(LD_PRELOAD=os.path.join(build, "lib", "libnvrtc-cache.so"), NVRTC_CACHE_DIR=cache_dir,
             NVRTC_CACHE_REMOTE=remote)
    return e


def first_compile_ns(build, kernel, env):
    return corpus.run_bench(os.path.join(build, "bin", "nvrtc_bench"), kernel, 1, env)[0][0]


def counters(build, cache_dir):
    return corpus.stats(os.path.join(build, "bin", "nvrtc-cache"), cache_dir)


def tier_counter(c, name):
    """A counter of the first shared tier (`nvrtc-cache stats --json`: tiers -> "0" -> name)."""
    return c.get("tiers", {}).get("0", {}).get(name, 0)


def tier_hits(c):
    return tier_counter(c, "hits")


def together(build, kernel, envs):
    """Starts one nvrtc_bench per environment at once; returns (wall ns, [first-compile ns])."""
    binary = os.path.join(build, "bin", "nvrtc_bench")
    start = time.perf_counter_ns()
    procs = [subprocess.Popen([binary, kernel, "1"], env=e, stdout=subprocess.PIPE, text=True) for e in envs]
    outs = [p.communicate()[0] for p in procs]
    wall = time.perf_counter_ns() - start
    if any(p.returncode for p in procs):
        raise RuntimeError(f"{kernel}: a concurrent client failed")
    return wall, [int(o.split()[0]) for o in outs]


def measure_program(args, kernel, env, url, work):
    build = args.build
    plain = dict(corpus.base_env(), **env)
    first_compile_ns(build, kernel, plain)  # untimed: the headers into the page cache
    real = statistics.median(first_compile_ns(build, kernel, plain) for _ in range(args.repeat))
    writer = os.path.join(work, f"{kernel}-writer")
    cold = first_compile_ns(build, kernel, shim_env(build, env, writer, url))
    w = counters(build, writer)
    assert w["stores"] == 1 and tier_counter(w, "writes") >= 2, f"{kernel}: the writer stored nothing in the tier: {w}"
    shared, local = [], []
    for i in range(args.repeat):
        node = os.path.join(work, f"{kernel}-node{i}")
        e = shim_env(build, env, node, url)
        shared.append(first_compile_ns(build, kernel, e))
        c = counters(build, node)
        assert c["misses"] == 0 and c["hits"] == 1 and tier_hits(c) >= 2, f"{kernel}: not a shared hit: {c}"
        local.append(first_compile_ns(build, kernel, e))
        c2 = counters(build, node)
        assert c2["hits"] == 2 and tier_hits(c2) == tier_hits(c), f"{kernel}: not a local hit: {c2}"
    nodes = [os.path.join(work, f"{kernel}-many{i}") for i in range(CLIENTS)]
    many_wall, many = together(build, kernel, [shim_env(build, env, n, url) for n in nodes])
    for n in nodes:
        c = counters(build, n)
        assert c["misses"] == 0 and c["hits"] == 1, f"{kernel}: a concurrent client compiled: {c}"
    plain_wall, _ = together(build, kernel, [plain] * CLIENTS)
    return {"kernel": kernel, "real": real, "cold": cold, "shared": statistics.median(shared),
            "local": statistics.median(local), "many_wall": many_wall, "many_median": statistics.median(many),
            "many_max": max(many), "plain_wall": plain_wall}


def measure_puts(args, url):
    rows = []
    for entries, size in ((500, 64 << 10), (100, 1 << 20)) if not args.quick else ((100, 64 << 10),):
        out = subprocess.run([os.path.join(args.build, "bin", "tier_bench"), str(entries), str(size), url],
                             check=True, capture_output=True, text=True).stdout
        rows.append((entries, size, [line for line in out.splitlines() if line.startswith(("put", "tier", "shared",
                                                                                          "local"))]))
    return rows


def ms(ns):
    return f"{ns / 1e6:.3g}" if ns < 1e8 else f"{ns / 1e6:.0f}"


LABELS = {"redis": "Redis", "http": "HTTP", "https": "HTTPS"}
SERVERS = {"redis": "redis-server on loopback (TCP, password, `maxmemory-policy allkeys-lru`)",
           "http": "nginx on loopback (WebDAV PUT)", "https": "nginx on loopback (WebDAV PUT, TLS 1.3, ECDSA P-256)"}


def markdown(m, heading="##"):
    """The tier's section of docs/performance.md: `m` is what measure() returned."""
    label = LABELS[m["tier"]]
    L = [f"{heading} A shared-tier hit through the shim ({label})\n"]
    L.append(f"{SERVERS[m['tier']]}. Each figure is a fresh process's compile (`bench/nvrtc_bench`, create to destroy), "
             f"median of {m['repeat']}. *Shared-tier hit*: a new node (empty local store) whose first process finds the "
             f"program in the tier (local miss, GET of manifest and result, unseal, dependency validation, write-back "
             "into the local store); *local hit*: that node's next process. The counters of every run were "
             f"checked: shared hits read {label} and compiled nothing, local hits did not read it.\n")
    L.append("| program | real NVRTC | shim cold (writer) | shared-tier hit | local hit | **real / shared** | "
             "**real / local** | shared / local |")
    L.append("|---|--:|--:|--:|--:|--:|--:|--:|")
    for r in m["results"]:
        L.append(f"| {m['labels'].get(r['kernel'], r['kernel'])} | {ms(r['real'])} ms | "
                 f"{ms(r['cold'])} ms | {ms(r['shared'])} ms | {ms(r['local'])} ms | "
                 f"**{suite.ratio(r['real'] / r['shared'])}** | **{suite.ratio(r['real'] / r['local'])}** | "
                 f"{suite.ratio(r['shared'] / r['local'])} |")
    L.append(f"\n{CLIENTS} fresh nodes start together and compile the program, every one served from {label}, "
             f"against {CLIENTS} plain processes compiling it at once.\n")
    L.append(f"| program | wall, {CLIENTS} shared-tier clients | per client: median / max | wall, {CLIENTS} plain compiles | "
             "**plain / shared** |")
    L.append("|---|--:|--:|--:|--:|")
    for r in m["results"]:
        L.append(f"| {m['labels'].get(r['kernel'], r['kernel'])} | {ms(r['many_wall'])} ms | "
                 f"{ms(r['many_median'])} / {ms(r['many_max'])} ms | {ms(r['plain_wall'])} ms | "
                 f"**{suite.ratio(r['plain_wall'] / r['many_wall'])}** |")
    L.append(f"\nSealed values written straight to {label} by 1 and by 16 writer threads (`bench/tier_bench`, one "
             f"process, the tier's connection pool); then a writer node fills {label} through the write-behind, and a "
             "fresh node reads every value: the tier alone (GET + unseal), a shared hit (+ write-back into LMDB), a "
             "local hit.\n")
    for entries, size, lines in m["puts"]:
        L.append(f"{entries} values of {size >> 10} KiB:\n\n```")
        L.extend(lines)
        L.append("```\n")
    return "\n".join(L) + "\n"


def measure(build, python, tier, quick):
    """The tier's figures, on a server of its own: per program of the corpus, then put throughput."""
    args = argparse.Namespace(build=os.path.abspath(build), python=python, quick=quick,
                              repeat=3 if quick else 5)
    labels = dict(suite.KERNEL_LABELS)
    with tempfile.TemporaryDirectory(prefix="nvrtc-cache-shared-tier-") as work:
        env = {}
        kernels = ["trivial", "names", "cub"]
        cutlass = suite.cutlass_include_dir(python)
        if cutlass and not quick:
            env["CUTLASS_INCLUDE_DIR"] = cutlass
            kernels.append("cute")
        headers = 300 if quick else 3000
        env["NVRTC_BENCH_HEADERS_DIR"] = os.path.join(work, "headers")
        suite.generate_headers(env["NVRTC_BENCH_HEADERS_DIR"], headers)
        labels["headers"] = f"{headers} generated headers"
        kernels.append("headers")
        os.makedirs(os.path.join(work, "server"))
        if tier == "redis":
            server = suite.RedisServer(os.path.join(work, "server"))
        else:
            server = suite.NginxServer(os.path.join(work, "server"), tls=tier == "https")
        try:
            results = []
            for kernel in kernels:
                t = time.time()
                results.append(measure_program(args, kernel, env, server.url(), work))
                print(f"  {tier} {kernel}: {time.time() - t:.0f} s", file=sys.stderr)
            puts = measure_puts(args, server.url())
        finally:
            server.stop()
    return {"tier": tier, "repeat": args.repeat, "labels": labels, "results": results, "puts": puts}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(suite.ROOT, "build"))
    parser.add_argument("--python", default=os.path.join(suite.ROOT, ".venv", "bin", "python"))
    parser.add_argument("--quick", action="store_true", help="a smoke run: fewer repeats and programs")
    parser.add_argument("--tier", choices=tuple(LABELS), default="redis")
    args = parser.parse_args()
    print(markdown(measure(args.build, args.python, args.tier, args.quick)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
