"""libNVVM compiles of numba-generated NVVM IR, real vs the shim cold and warm (scripts/bench/suite.py,
section "nvvm"). Each mode runs in fresh processes; in each, numba-cuda's cuda.compile_ptx compiles a set
of kernels for sm_90 (numba lowers Python to NVVM IR, libNVVM compiles it to PTX) and only the
compile_ptx calls are timed. No GPU is needed.

    python scripts/bench/nvvm.py --build build [--python .venv/bin/python] [--processes 3]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

CHILD = r'''
import json, sys, time
from numba import cuda

def saxpy(out, x, y, a):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]

def stencil(out, x):
    i = cuda.grid(1)
    if 0 < i < x.size - 1:
        out[i] = 0.25 * x[i - 1] + 0.5 * x[i] + 0.25 * x[i + 1]

def reduce_rows(out, m):
    i = cuda.grid(1)
    if i < m.shape[0]:
        s = 0.0
        for j in range(m.shape[1]):
            s += m[i, j] * m[i, j]
        out[i] = s ** 0.5

def mandel(out, w, h, steps):
    i = cuda.grid(1)
    if i < out.size:
        x0 = (i % w) / w * 3.5 - 2.5
        y0 = (i // w) / h * 2.0 - 1.0
        x = y = 0.0
        n = 0
        while x * x + y * y < 4.0 and n < steps:
            x, y = x * x - y * y + x0, 2 * x * y + y0
            n += 1
        out[i] = n

kernels = [(saxpy, "void(float32[:], float32[:], float32[:], float32)"), (stencil, "void(float64[:], float64[:])"),
           (reduce_rows, "void(float64[:], float64[:, :])"), (mandel, "void(int32[:], int32, int32, int32)")]
times = []
for fn, signature in kernels:
    start = time.perf_counter_ns()
    cuda.compile_ptx(fn, signature, cc=(9, 0))
    times.append(time.perf_counter_ns() - start)
print(json.dumps({"ns": times}))
'''


def run(python, env):
    out = subprocess.run([python, "-c", CHILD], env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])["ns"]


def counters(build, cache_dir):
    out = subprocess.run([os.path.join(build, "bin", "nvrtc-cache"), "stats", "--json"], check=True,
                         capture_output=True, text=True, env=dict(os.environ, NVRTC_CACHE_DIR=cache_dir)).stdout
    return json.loads(out)["counters"]


def measure(python, build, processes):
    """Per mode, the sum of the kernels' compile_ptx times (ns) per process: its median over `processes`
    fresh processes (cold: one process on an empty cache); and libNVVM's part: the real nvvmCompileProgram
    calls of the cold process (nvvm_ns) against the time the warm processes' hits took instead (the
    recorded compile time less nvvm_saved_ns, per process)."""
    shim = os.path.join(build, "lib", "libnvrtc-cache.so")
    base = {k: v for k, v in os.environ.items() if not k.startswith("NVRTC_CACHE_") and k != "LD_PRELOAD"}
    base["PYTHONDONTWRITEBYTECODE"] = "1"
    with tempfile.TemporaryDirectory(prefix="nvrtc-cache-nvvm-") as cache_dir:
        shim_env = dict(base, LD_PRELOAD=shim, NVRTC_CACHE_DIR=cache_dir)
        real = [sum(run(python, base)) for _ in range(processes)]
        cold = sum(run(python, shim_env))
        after_cold = counters(build, cache_dir)
        warm = [sum(run(python, shim_env)) for _ in range(processes)]
        after_warm = counters(build, cache_dir)
    nvvm_real = after_cold.get("nvvm_ns", 0)
    saved_per_process = (after_warm.get("nvvm_saved_ns", 0) - after_cold.get("nvvm_saved_ns", 0)) / processes
    return {"kernels": 4, "processes": processes, "real_ns": statistics.median(real), "cold_ns": cold,
            "warm_ns": statistics.median(warm), "nvvm_real_ns": nvvm_real,
            "nvvm_hit_ns": max(nvvm_real - saved_per_process, 1)}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(os.path.dirname(__file__), "..", "..", "build"))
    parser.add_argument("--python", default=os.path.join(os.path.dirname(__file__), "..", "..", ".venv", "bin", "python"))
    parser.add_argument("--processes", type=int, default=3)
    args = parser.parse_args()
    r = measure(args.python, os.path.abspath(args.build), args.processes)
    print(f"4 numba kernels, compile_ptx: real {r['real_ns'] / 1e6:.1f} ms, shim cold {r['cold_ns'] / 1e6:.1f} ms, "
          f"shim warm {r['warm_ns'] / 1e6:.1f} ms, real/warm {r['real_ns'] / r['warm_ns']:.1f}x; libNVVM's part: "
          f"{r['nvvm_real_ns'] / 1e6:.1f} ms real, {r['nvvm_hit_ns'] / 1e6:.2f} ms served, "
          f"{r['nvvm_real_ns'] / r['nvvm_hit_ns']:.0f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
