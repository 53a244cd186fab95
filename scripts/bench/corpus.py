#!/usr/bin/env python3
"""End-to-end benchmark: the same kernels (bench/bench_kernels.h) compiled by the real NVRTC, under the
shim with a cold cache, and under the shim warm, from one run, with ratios side by side and the hit
latency split. scripts/bench/suite.py imports measure_kernel() from here.

usage: scripts/bench/corpus.py [--build BUILD_DIR] [--repeat N] [KERNEL...]   (default: trivial names cub, and
       cute when CUTLASS_INCLUDE_DIR names a CUTLASS include tree)
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

SPLIT = ("keying", "lookup", "validate", "replay")


def base_env():
    return {k: v for k, v in os.environ.items() if k != "LD_PRELOAD" and not k.startswith("NVRTC_CACHE_")}


def run_bench(bench, kernel, repeat, env):
    """Runs nvrtc_bench in a fresh process: a list of (ns, cubin bytes, log bytes), one per compile."""
    out = subprocess.run([bench, kernel, str(repeat)], env=env, check=True, capture_output=True, text=True)
    return [tuple(int(v) for v in line.split()) for line in out.stdout.splitlines()]


def stats(cli, cache_dir):
    env = base_env()
    env["NVRTC_CACHE_DIR"] = cache_dir
    return json.loads(subprocess.run([cli, "stats", "--json"], env=env, check=True, capture_output=True,
                                     text=True).stdout)


def measure_kernel(build, kernel, repeat, extra_env=None, warm_repeat=None, first_hits=3):
    """One kernel in fresh processes: an untimed real compile (warms the page cache), the real NVRTC
    and the shim cold (`repeat` compiles each), `first_hits` warm processes of one compile each, and
    one warm process of `warm_repeat` compiles (default `repeat`), paused after its first compile
    while the cache's counters are read (a process's first hit flushes its counters at once). Returns
    times in ns ('first' = a process's first compile, for the warm shim the median over the warm
    processes; 'repeat' = the median of a process's other compiles), the hit latency split (ns) of a
    fresh process's first hit ('split_first', medians over the warm processes) and the mean of its
    later hits ('split', None when the counters could not be split), the output bytes, and the
    dependency counts the cold run's debug log reports (None when it says nothing)."""
    bench = os.path.join(build, "bin", "nvrtc_bench")
    cli = os.path.join(build, "bin", "nvrtc-cache")
    shim = os.path.join(build, "lib", "libnvrtc-cache.so")
    env = base_env()
    env.update(extra_env or {})
    with tempfile.TemporaryDirectory(prefix="nvrtc-cache-bench-") as cache_dir:
        log_file = os.path.join(cache_dir, "debug.log")
        shim_env = dict(env, LD_PRELOAD=shim, NVRTC_CACHE_DIR=os.path.join(cache_dir, "cache"))
        run_bench(bench, kernel, 1, env)
        real = run_bench(bench, kernel, repeat, env)
        cold = run_bench(bench, kernel, repeat, dict(shim_env, NVRTC_CACHE_LOG="debug", NVRTC_CACHE_LOG_FILE=log_file))
        before = stats(cli, shim_env["NVRTC_CACHE_DIR"])
        singles = []  # (wall ns, stats delta) of each one-compile warm process
        for _ in range(first_hits):
            wall = run_bench(bench, kernel, 1, shim_env)[0][0]
            after = stats(cli, shim_env["NVRTC_CACHE_DIR"])
            singles.append((wall, {k: after[k] - before[k] for k in after if isinstance(after[k], int)}))
            before = after
        proc = subprocess.Popen([bench, kernel, str(warm_repeat or repeat)], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True, env=dict(shim_env, NVRTC_BENCH_PAUSE_AFTER_FIRST="1"))
        first_line = proc.stdout.readline()
        middle = stats(cli, shim_env["NVRTC_CACHE_DIR"])
        rest, _ = proc.communicate("\n")
        if proc.returncode != 0:
            raise subprocess.CalledProcessError(proc.returncode, proc.args)
        warm = [tuple(int(v) for v in line.split()) for line in (first_line + rest).splitlines()]
        singles.append((warm[0][0], {k: middle[k] - before[k] for k in middle if isinstance(middle[k], int)}))
        after = stats(cli, shim_env["NVRTC_CACHE_DIR"])
        log = open(log_file).read() if os.path.exists(log_file) else ""
    stored = re.search(r"(\d+) files read, (\d+) paths probed", log)
    all_hit = all(d["hits"] == 1 for _, d in singles)
    hits = after["hits"] - middle["hits"]
    split_first = {k: statistics.median(d[f"hit_{k}_ns"] for _, d in singles) if all_hit else None for k in SPLIT}
    split = {k: (after[f"hit_{k}_ns"] - middle[f"hit_{k}_ns"]) / hits if all_hit and hits == len(warm) - 1 > 0 else None
             for k in SPLIT}
    times = lambda rows: {"first": rows[0][0], "repeat": statistics.median(r[0] for r in rows[1:]) if len(rows) > 1 else None}
    return {"kernel": kernel, "real": times(real), "cold": times(cold),
            "warm": {"first": statistics.median(w for w, _ in singles), "repeat": times(warm)["repeat"],
                     "repeat_mean": statistics.mean(r[0] for r in warm[1:]) if len(warm) > 1 else None},
            "hits": hits + 1, "warm_compiles": len(warm), "first_hit_processes": len(singles),
            "uncacheable": after["uncacheable"], "split": split, "split_first": split_first,
            "output_bytes": real[0][1] + real[0][2],
            "files_read": int(stored.group(1)) if stored else None,
            "paths_probed": int(stored.group(2)) if stored else None}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=os.path.join(os.path.dirname(__file__), "..", "..", "build"))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("kernels", nargs="*")
    args = parser.parse_args()
    kernels = args.kernels or ["trivial", "names", "cub"]
    if not args.kernels:
        if os.path.isdir(os.path.join(os.environ.get("CUTLASS_INCLUDE_DIR", "/nonexistent"), "cute")):
            kernels.append("cute")
        else:
            print("(cute kernel skipped: set CUTLASS_INCLUDE_DIR to a CUTLASS include tree, e.g. the "
                  "cutlass_library/source/include directory of the nvidia-cutlass wheel)\n")

    print("Each mode runs in a fresh process; 'first' is a process's first compile, 'repeat' the median of")
    print(f"the other {args.repeat - 1} compiles of the same kernel in that process.\n")
    print(f"{'kernel':8} {'':7} {'real NVRTC':>11} {'shim cold':>11} {'shim warm':>11} {'cold/real':>10} "
          f"{'real/warm':>10}")
    for kernel in kernels:
        m = measure_kernel(args.build, kernel, args.repeat)
        for label in ("first", "repeat"):
            r, c, w = (m[mode][label] / 1e6 for mode in ("real", "cold", "warm"))
            print(f"{kernel:8} {label:7} {r:9.3f}ms {c:9.3f}ms {w:9.3f}ms {c / r:9.2f}x {r / w:9.1f}x")
        if m["split"]["keying"] is not None:
            for label, split in (("first hit", m["split_first"]), ("later hits", m["split"])):
                if split["keying"] is None:
                    continue
                s = {k: v / 1e3 for k, v in split.items()}
                print(f"{'':8} {label}: keying {s['keying']:.1f} us, lookup {s['lookup']:.1f} us, "
                      f"dependency validation {s['validate']:.1f} us, replay {s['replay']:.1f} us")
        else:
            print(f"{'':8} not cached: {m['uncacheable']} compiles were uncacheable")
    return 0


if __name__ == "__main__":
    sys.exit(main())
