#!/usr/bin/env python3
"""First hit of a fresh process: bench/first_hit_bench run many times, each in a fresh process,
directly (real NVRTC) and under the shim with a warm cache, interleaved so that both see the same
machine load. Prints medians (and the 25th/75th percentiles) of the first compile, the second
compile and the whole process, in milliseconds.

usage: scripts/first_hit_bench.py [--build BUILD_DIR] [--samples N] [--shim LIB]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time


def base_env():
    return {k: v for k, v in os.environ.items() if k != "LD_PRELOAD" and not k.startswith("NVRTC_CACHE_")}


def sample(bench, kernel, env):
    start = time.perf_counter_ns()
    out = subprocess.run([bench, kernel], env=env, check=True, capture_output=True, text=True).stdout.split()
    wall = time.perf_counter_ns() - start
    create, first, second, rc = (int(x) for x in out)
    return {"create": create, "first": first, "second": second, "process": wall, "rc": rc}


def quartiles(values):
    q = statistics.quantiles(values, n=4)
    return q[0], statistics.median(values), q[2]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=os.path.join(os.path.dirname(__file__), "..", "build"))
    parser.add_argument("--samples", type=int, default=60)
    parser.add_argument("--shim", help="the preloaded library (default: BUILD/lib/libnvrtc-cache.so)")
    args = parser.parse_args()
    bench = os.path.join(args.build, "bin", "first_hit_bench")
    shim = args.shim or os.path.join(args.build, "lib", "libnvrtc-cache.so")

    print(f"{args.samples} fresh processes per row; median [25th-75th percentile], milliseconds")
    print(f"{'kernel':8} {'mode':10} {'create':>22} {'1st compile':>22} {'2nd compile':>22} {'process':>22}")
    for kernel in ["trivial", "reject"]:
        with tempfile.TemporaryDirectory(prefix="nvrtc-cache-first-hit-") as cache_dir:
            shim_env = base_env()
            shim_env.update(LD_PRELOAD=shim, NVRTC_CACHE_DIR=cache_dir)
            sample(bench, kernel, shim_env)  # fills the cache
            rows = {"real": [], "shim warm": []}
            for _ in range(args.samples):
                rows["real"].append(sample(bench, kernel, base_env()))
                rows["shim warm"].append(sample(bench, kernel, shim_env))
            for mode, samples in rows.items():
                cells = []
                for field in ["create", "first", "second", "process"]:
                    lo, mid, hi = quartiles([s[field] / 1e6 for s in samples])
                    cells.append(f"{mid:8.3f} [{lo:.3f}-{hi:.3f}]")
                print(f"{kernel:8} {mode:10} " + " ".join(f"{c:>22}" for c in cells))
            real = statistics.median(s["first"] for s in rows["real"])
            warm = statistics.median(s["first"] for s in rows["shim warm"])
            print(f"{kernel:8} first compile: shim warm - real = {(warm - real) / 1e6:+.3f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
