#!/usr/bin/env bash
# Measures what an LD_AUDIT module with la_symbind64 would cost, to decide whether to build one
# (it would also see dlvsym and RTLD_DEEPBIND bindings, which the dlsym hook cannot). Builds a
# pass-through audit module (binds every symbol to itself, as a real one must inspect each) and
# times a Python JIT client's start and first compile: plain, with the shim preloaded, with the
# audit module. usage: scripts/measure_audit.sh [PYTHON] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
python="${1:-.venv/bin/python}"
runs="${2:-10}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/audit.c" <<'C'
#define _GNU_SOURCE
#include <link.h>
#include <stdint.h>
unsigned int la_version(unsigned int v) { return v; }
unsigned int la_objopen(struct link_map* map, Lmid_t lmid, uintptr_t* cookie) {
  (void)map; (void)lmid; (void)cookie;
  return LA_FLG_BINDTO | LA_FLG_BINDFROM;
}
uintptr_t la_symbind64(Elf64_Sym* sym, unsigned int ndx, uintptr_t* refcook, uintptr_t* defcook,
                       unsigned int* flags, const char* symname) {
  (void)ndx; (void)refcook; (void)defcook; (void)flags;
  /* A real module compares the name with NVRTC's and swaps in the shim's wrapper. */
  if (symname[0] == 'n' && symname[1] == 'v' && symname[2] == 'r') return sym->st_value;
  return sym->st_value;
}
C
cc -shared -fPIC -O2 -o "$work/audit.so" "$work/audit.c"
client='import time; t=time.perf_counter()
from cuda.core import Program, ProgramOptions
Program("__global__ void k(int* x){ x[0]=1; }", "c++", options=ProgramOptions(arch="sm_80")).compile("cubin")
print((time.perf_counter()-t)*1e3)'
measure() {
  local label="$1"; shift
  local total=0 best=999999
  for _ in $(seq "$runs"); do
    local start end ms
    start=$(date +%s%N)
    env "$@" "$python" -c "$client" >/dev/null
    end=$(date +%s%N)
    ms=$(( (end - start) / 1000000 ))
    total=$((total + ms)); [ "$ms" -lt "$best" ] && best=$ms
  done
  printf '%-28s mean %5d ms   best %5d ms   (process start to exit, %s runs)\n' "$label" $((total / runs)) "$best" "$runs"
}
cache=$(mktemp -d)
measure "plain" X=1
measure "shim (LD_PRELOAD), warm" LD_PRELOAD="$PWD/build/lib/libnvrtc-cache.so" NVRTC_CACHE_DIR="$cache"
measure "audit module (LD_AUDIT)" LD_AUDIT="$work/audit.so"
rm -rf "$cache"
