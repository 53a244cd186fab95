#!/usr/bin/env python3
"""nvrtc_cache.ProgramCache beside cuda.core's own backends (InMemoryProgramCache,
FileStreamProgramCache), on the same Program.compile("cubin", cache=...) calls, from one run.

usage: scripts/bench/program_cache.py [--build BUILD_DIR] [--python VENV_PYTHON] [--entries N]
                                     [--processes N] [--repeat N]
scripts/bench/suite.py imports measure() and markdown_table() from here (its program-cache section).

Measures, per backend (times in ms, medians):
  warm first    the first compile of a fresh process whose cache another process filled
                (the in-memory cache lives in one process: its first compile is a real compile)
  in-process    a compile repeated in the same process (a hit)
  16 processes  16 processes (--processes) started at once on a filled cache, each compiling the
                program set: the wall time until the last one is done, and their median first compile
  10^4 entries  a cache holding N (--entries) entries (4-16 KiB each, written through the backend):
                the time to write them (per entry), then the warm first compile of a fresh process
                among them
Ratios are the backend's time over nvrtc_cache.ProgramCache's (> 1: ProgramCache is faster).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

CLIENT = r'''
import json, os, sys, time
mode, cache_dir, action, arg = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
from cuda.core import Program, ProgramOptions
SOURCES = [
    "template <typename T, int N> __global__ void poly(T* x) { T v = x[threadIdx.x];"
    " for (int i = 0; i < N; ++i) v = v * v + T(i); x[threadIdx.x] = v; }\n"
    "extern \"C\" __global__ void axpy(float a, const float* x, float* y) {"
    " y[threadIdx.x] = a * x[threadIdx.x] + y[threadIdx.x]; }\n",
    "extern \"C\" __global__ void scale(float* x, float a) { x[threadIdx.x] *= a; }\n",
]
def open_cache():
    if mode == "in-memory":
        from cuda.core.utils import InMemoryProgramCache
        return InMemoryProgramCache()
    if mode == "file-stream":
        from cuda.core.utils import FileStreamProgramCache
        return FileStreamProgramCache(cache_dir)
    import nvrtc_cache
    return nvrtc_cache.ProgramCache(cache_dir, use_configuration=False)
def compile_one(cache, source):
    start = time.perf_counter()
    program = Program(source, "c++", options=ProgramOptions(arch="sm_80", std="c++17"))
    program.compile("cubin", cache=cache)
    program.close()
    return (time.perf_counter() - start) * 1e3
cache = open_cache()
out = {}
if action == "fill":  # arg entries of 4-16 KiB, written through the backend
    import random
    rng = random.Random(29)
    start = time.perf_counter()
    for i in range(arg):
        cache[os.urandom(32)] = rng.randbytes(rng.randint(4096, 16384))
    out["fill_ms_per_entry"] = (time.perf_counter() - start) * 1e3 / max(arg, 1)
if action in ("fill", "compile"):
    out["first"] = compile_one(cache, SOURCES[0])
    out["repeat"] = [compile_one(cache, SOURCES[0]) for _ in range(arg if action == "compile" else 5)]
    out["others"] = [compile_one(cache, s) for s in SOURCES[1:]]
cache.close()
print(json.dumps(out))
'''

MODES = ("nvrtc-cache", "file-stream", "in-memory")


def client(python, env, mode, cache_dir, action, arg):
    return subprocess.Popen([python, "-c", CLIENT, mode, cache_dir, action, str(arg)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def result(process):
    out, err = process.communicate()
    if process.returncode != 0:
        raise SystemExit(err)
    return json.loads(out)


def measure(python, build, entries, processes=16, repeat=20):
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD" and not k.startswith("NVRTC_CACHE_")}
    env["NVRTC_CACHE_API_LIBRARY"] = os.path.join(build, "lib", "libnvrtc-cache-api.so.1")
    env["PYTHONPATH"] = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python")
    rows = {}
    for mode in MODES:
        row = {}
        with tempfile.TemporaryDirectory() as d:
            cold = result(client(python, env, mode, d, "compile", repeat))
            row["cold first"] = cold["first"]
            row["in-process"] = statistics.median(cold["repeat"])
            warm = [result(client(python, env, mode, d, "compile", 1))["first"] for _ in range(3)]
            row["warm first"] = statistics.median(warm)
            start = time.perf_counter()
            batch = [client(python, env, mode, d, "compile", 1) for _ in range(processes)]
            firsts = [result(p)["first"] for p in batch]
            row[f"{processes} processes"] = (time.perf_counter() - start) * 1e3
            row[f"{processes} processes, median first"] = statistics.median(firsts)
        with tempfile.TemporaryDirectory() as d:
            filled = result(client(python, env, mode, d, "fill", entries))
            row["fill per entry"] = filled["fill_ms_per_entry"]
            if mode == "in-memory":
                row["warm first among entries"] = filled["first"]
            else:
                row["warm first among entries"] = statistics.median(
                    [result(client(python, env, mode, d, "compile", 1))["first"] for _ in range(3)])
        rows[mode] = row
    return rows


NAMES = {"nvrtc-cache": "ProgramCache", "file-stream": "FileStream", "in-memory": "InMemory"}


def markdown_table(rows):
    """The rows of measure() as a Markdown table: ms per backend, then each of cuda.core's backends
    over ProgramCache."""
    lines = ["| measure (ms) | " + " | ".join(NAMES[m] for m in MODES) + " | FileStream / ProgramCache | "
             "InMemory / ProgramCache |",
             "|---|" + "--:|" * (len(MODES) + 2)]
    for metric in rows["nvrtc-cache"]:
        ours = rows["nvrtc-cache"][metric]
        cells = [f"{rows[m][metric]:.3f}" for m in MODES]
        ratios = [f"{rows[m][metric] / ours:.2f}x" if ours > 0 else "-" for m in ("file-stream", "in-memory")]
        lines.append(f"| {metric} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default="build")
    parser.add_argument("--python", default=os.environ.get("NVRTC_CACHE_TEST_PYTHON", sys.executable))
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--processes", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    print(markdown_table(measure(args.python, args.build, args.entries, args.processes, args.repeat)))


if __name__ == "__main__":
    main()
