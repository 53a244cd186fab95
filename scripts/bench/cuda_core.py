#!/usr/bin/env python3
"""nvrtc-cache against cuda.core's own program caches (cuda.core.utils.FileStreamProgramCache and
InMemoryProgramCache), on the same cuda.core Program.compile("cubin") calls, each mode in fresh
processes, from one run. scripts/bench/suite.py imports measure() from here.

usage: scripts/bench/cuda_core.py [--build BUILD_DIR] [--python VENV_PYTHON] [--repeat N]
Modes:
  plain         Program.compile, no cache (every compile is a real NVRTC compile)
  cuda.core     Program.compile(..., cache=FileStreamProgramCache(dir)) -- cold, then warm
  cuda.core-mem Program.compile(..., cache=InMemoryProgramCache())      -- one process: its first
                compile is cold, the others hit; a fresh process starts empty (no warm first)
  nvrtc-cache   Program.compile under the shim (LD_PRELOAD)             -- cold, then warm
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

CLIENT = r'''
import sys, time
from cuda.core import Program, ProgramOptions
mode, cache_dir, repeat, variant = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
with_names = variant == "names"
SOURCE = ("template <typename T, int N> __global__ void poly(T* x) { T v = x[threadIdx.x];"
          " for (int i = 0; i < N; ++i) v = v * v + T(i); x[threadIdx.x] = v; }\n"
          "extern \"C\" __global__ void axpy(float a, const float* x, float* y) {"
          " y[threadIdx.x] = a * x[threadIdx.x] + y[threadIdx.x]; }\n")
names = ["poly<float, 16>", "poly<double, 32>"] if with_names else []
extra = {}
if variant == "cub":
    SOURCE = ("#include <cub/block/block_reduce.cuh>\n"
              "extern \"C\" __global__ void block_sum(const int* in, int* out) {\n"
              "  using R = cub::BlockReduce<int, 128>; __shared__ typename R::TempStorage t;\n"
              "  int s = R(t).Sum(in[blockIdx.x * 128 + threadIdx.x]); if (threadIdx.x == 0) out[blockIdx.x] = s; }\n")
    extra = {"include_path": ["/usr/local/cuda/include/cccl", "/usr/local/cuda/include"]}
cache = None
if mode == "cuda.core":
    from cuda.core.utils import FileStreamProgramCache
    cache = FileStreamProgramCache(cache_dir)
elif mode == "cuda.core-mem":
    from cuda.core.utils import InMemoryProgramCache
    cache = InMemoryProgramCache()
for _ in range(repeat):
    start = time.perf_counter()
    program = Program(SOURCE, "c++", options=ProgramOptions(arch="sm_80", std="c++17", **extra))
    kwargs = {"cache": cache} if cache is not None else {}
    try:
        code = program.compile("cubin", name_expressions=names, **kwargs)
        status = "ok"
    except Exception as e:  # cuda.core refuses some inputs for its cache
        status = "refused: " + type(e).__name__ + ": " + str(e).splitlines()[0][:200]
    program.close()
    print(f"{(time.perf_counter() - start) * 1e3:.4f} {status}", flush=True)
'''


def run(python, args, env):
    out = subprocess.run([python, "-c", CLIENT] + args, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(out.stderr)
    rows = [line.split(" ", 1) for line in out.stdout.splitlines()]
    return [float(ms) for ms, _ in rows], rows[0][1]


PROGRAMS = (("two kernels", "plain"), ("+ name expressions", "names"), ("CUB (-I headers)", "cub"))
MODES = ("cuda.core", "cuda.core-mem", "nvrtc-cache")


def measure(python, build, repeat, programs=PROGRAMS):
    """Per program: the plain times and, per cache mode, the cold and warm times (ms lists, one per
    compile; warm is None for the in-memory cache) or the reason the cache refused the program."""
    shim = os.path.join(build, "lib", "libnvrtc-cache.so")
    base = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD" and not k.startswith("NVRTC_CACHE_")}
    results = []
    for label, variant in programs:
        with tempfile.TemporaryDirectory() as plain_dir:
            plain, _ = run(python, ["plain", plain_dir, str(repeat), variant], base)
        modes = {}
        for mode in MODES:
            with tempfile.TemporaryDirectory() as cache_dir:
                env = dict(base)
                if mode == "nvrtc-cache":
                    env.update(LD_PRELOAD=shim, NVRTC_CACHE_DIR=cache_dir)
                cold, status = run(python, [mode, cache_dir, str(repeat), variant], env)
                warm = None if mode == "cuda.core-mem" else run(python, [mode, cache_dir, str(repeat), variant], env)[0]
                modes[mode] = {"cold": cold, "warm": warm, "status": status}
        results.append({"program": label, "plain": plain, "modes": modes})
    return results


def main():
    parser = argparse.ArgumentParser()
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    parser.add_argument("--build", default=os.path.join(root, "build"))
    parser.add_argument("--python", default=os.path.join(root, ".venv", "bin", "python"))
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    print("cuda.core Program.compile('cubin'), sm_80; times in ms; 'first' = first compile of a fresh process,")
    print(f"'repeat' = median of the next {args.repeat - 1} in that process.\n")
    print(f"{'program':24} {'mode':13} {'cold first':>11} {'warm first':>11} {'warm repeat':>12} "
          f"{'plain/warm first':>17}")
    for r in measure(args.python, args.build, args.repeat):
        plain = r["plain"]
        print(f"{r['program']:24} {'plain':13} {plain[0]:11.2f} {'':>11} {statistics.median(plain[1:]):12.3f}")
        for mode, m in r["modes"].items():
            if m["status"] != "ok":
                print(f"{'':24} {mode:13} {m['status']}")
                continue
            if m["warm"] is None:  # in-memory: the process's later compiles are its hits
                print(f"{'':24} {mode:13} {m['cold'][0]:11.2f} {'-':>11} {statistics.median(m['cold'][1:]):12.3f}")
                continue
            warm = m["warm"]
            print(f"{'':24} {mode:13} {m['cold'][0]:11.2f} {warm[0]:11.3f} {statistics.median(warm[1:]):12.3f} "
                  f"{plain[0] / warm[0]:16.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
