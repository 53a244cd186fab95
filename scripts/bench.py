#!/usr/bin/env python3
"""End-to-end benchmark: the same kernels compiled by the real NVRTC, under the shim with a cold
cache, and under the shim warm, from one run, with ratios side by side and the hit latency split.

usage: scripts/bench.py [--build BUILD_DIR] [--repeat N]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def run(cmd, env):
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True)
    return [int(line) for line in out.stdout.split()]


def base_env():
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD" and not k.startswith("NVRTC_CACHE_")}
    return env


def stats(cli, cache_dir):
    env = base_env()
    env["NVRTC_CACHE_DIR"] = cache_dir
    return json.loads(subprocess.run([cli, "stats", "--json"], env=env, check=True, capture_output=True,
                                     text=True).stdout)


def ms(ns):
    return ns / 1e6


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=os.path.join(os.path.dirname(__file__), "..", "build"))
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    bench = os.path.join(args.build, "bin", "nvrtc_bench")
    cli = os.path.join(args.build, "bin", "nvrtc-cache")
    shim = os.path.join(args.build, "lib", "libnvrtc-cache.so")

    print("Each mode runs in a fresh process; 'first' is a process's first compile, 'repeat' the median of")
    print(f"the other {args.repeat - 1} compiles of the same kernel in that process.\n")
    print(f"{'kernel':8} {'':7} {'real NVRTC':>11} {'shim cold':>11} {'shim warm':>11} {'cold/real':>10} "
          f"{'real/warm':>10}")
    kernels = ["trivial", "cub"]
    if os.path.isdir(os.path.join(os.environ.get("CUTLASS_INCLUDE_DIR", "/nonexistent"), "cute")):
        kernels.append("cute")
    else:
        print("(cute kernel skipped: set CUTLASS_INCLUDE_DIR to a CUTLASS include tree, e.g. the "
              "cutlass_library/source/include directory of the nvidia-cutlass wheel)\n")
    for kernel in kernels:
        with tempfile.TemporaryDirectory(prefix="nvrtc-cache-bench-") as cache_dir:
            shim_env = base_env()
            shim_env.update(LD_PRELOAD=shim, NVRTC_CACHE_DIR=cache_dir)
            real = run([bench, kernel, str(args.repeat)], base_env())
            cold = run([bench, kernel, str(args.repeat)], shim_env)
            after_cold = stats(cli, cache_dir)
            warm = run([bench, kernel, str(args.repeat)], shim_env)
            s = stats(cli, cache_dir)
            rows = [("first", real[0], cold[0], warm[0]),
                    ("repeat", statistics.median(real[1:]), statistics.median(cold[1:]), statistics.median(warm[1:]))]
            for label, r, c, w in rows:
                print(f"{kernel:8} {label:7} {ms(r):9.3f}ms {ms(c):9.3f}ms {ms(w):9.3f}ms {c / r:9.2f}x "
                      f"{r / w:9.1f}x")
            hits = s["hits"] - after_cold["hits"]
            if hits:
                split = {k: (s[f"hit_{k}_ns"] - after_cold[f"hit_{k}_ns"]) / hits / 1e3
                         for k in ("keying", "lookup", "validate", "replay")}
                print(f"{'':8} warm: {hits} hits; hit latency split (mean): keying {split['keying']:.1f} us, "
                      f"lookup {split['lookup']:.1f} us, dependency validation {split['validate']:.1f} us, "
                      f"replay {split['replay']:.1f} us")
            else:
                print(f"{'':8} not cached: {s['uncacheable']} compiles were uncacheable (headers read from disk)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
