#!/usr/bin/env bash
# The packages, installed as a user installs them, then the demo's warm path through what they installed:
#  1. the Python wheel: built with pip as a user's `pip install .` builds it (scikit-build-core, then
#     auditwheel's manylinux tag: python/build_backend/wheel_backend.py), reusing $BUILD_DIR's objects
#     through ccache where that tree was compiled through it (.ci/run); the tag checked (a manylinux
#     policy, from the build itself) and the files audited on their own (every ELF's DT_NEEDED is a
#     library that policy allows, no symbol needs a newer glibc than it names, no RPATH/RUNPATH, every
#     binary in the wheel's data scheme), installed into a fresh venv: bin/nvrtc-cache is the native
#     executable (no Python trampoline; its time per call printed), `man nvrtc-cache` and the bash
#     completion are found from PATH, nvrtc_cache.cli_path()/shim_path()/proxy_dir() name the installed
#     files, also under `pip install --prefix`; `nvrtc-cache run` compiles the demo's kernels cold then
#     warm, and again through `run --proxy` and `python -m nvrtc_cache run`, with LMDB built in (no
#     liblmdb loaded);
#     `nvrtc_cache.ProgramCache` stores and serves through the C API library the wheel carries;
#     then an nvJitLink link and a libNVVM compile (tests/clients/, dlopen by soname) cold then warm
#     through `run --proxy`, i.e. through the packaged stand-ins libnvJitLink.so.13 and libnvvm.so.4;
#     and, with the toolkit hidden as for the build, the wheel with only PyPI's CUDA beside it: doctor and
#     a cuda.core program through each way into the cache (scripts/pypi_only_test.sh);
#  2. the Debian package: built with cpack -G DEB from $BUILD_DIR (default build/), its Depends checked
#     and resolved by apt (simulated), unpacked with dpkg -x into a temporary root (this machine's
#     /usr is not touched); the same runs from that root, and a C99 program builds against the C API
#     it installed (nvrtc_cache.h, -lnvrtc-cache-api), stores and serves.
# The demo client is bench/nvrtc_demo from $BUILD_DIR (built here if missing). Each run asserts the
# cache's counters with `nvrtc-cache stats --json`: misses only when cold, a hit for every kernel warm.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${BUILD_DIR:-build}"
work=$(mktemp -d /tmp/nvrtc-cache-package-XXXXXX)
trap 'rm -rf "$work"' EXIT
python=/usr/bin/python3  # the distribution's Python (python3-venv), as a user's venv would have it

cmake --build "$build_dir" --target nvrtc_demo link_client_unlinked nvvm_client_unlinked -j"$(nproc)" >/dev/null
demo="$PWD/$build_dir/bin/nvrtc_demo"
link_client="$PWD/$build_dir/bin/link_client_unlinked"
nvvm_client="$PWD/$build_dir/bin/nvvm_client_unlinked"
kernels=$("$demo" | grep -c ' ok ')  # the client compiles without the cache first: it works at all
[ "$kernels" -ge 3 ] || { echo "package_test: the demo client compiled only $kernels kernels" >&2; exit 1; }

fail() { echo "package_test: $*" >&2; exit 1; }

# counter NAME: from `$cli stats --json` (cli and NVRTC_CACHE_DIR set by the caller).
counter() { "$cli" stats --json | "$python" -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }

# handle_counter GROUP NAME: `$cli stats --json`'s GROUP.NAME ("links" "hits").
handle_counter() {
  "$cli" stats --json | "$python" -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]][sys.argv[2]])' "$1" "$2"
}

# proxy_standins LABEL: a link (nvJitLink) and an NVVM compile through `$cli run --proxy` cold then warm,
# each output byte for byte the real library's, the warm runs served.
proxy_standins() {
  local label=$1 client what group scenario
  export NVRTC_CACHE_DIR="$work/cache-$label-standins"
  for what in link:links:lto nvvm:nvvm_compiles:ptx; do
    IFS=: read -r client group scenario <<<"$what"
    client=${client}_client
    "${!client}" "$scenario" >"$work/$label-$client-direct.txt"
    "$cli" run --proxy -- "${!client}" "$scenario" >"$work/$label-$client-cold.txt"
    "$cli" run --proxy -- "${!client}" "$scenario" >"$work/$label-$client-warm.txt"
    cmp -s "$work/$label-$client-direct.txt" "$work/$label-$client-cold.txt" &&
      cmp -s "$work/$label-$client-direct.txt" "$work/$label-$client-warm.txt" ||
      fail "$label: $client through the proxy differs from the real library"
    [ "$(handle_counter "$group" misses)" -eq 1 ] && [ "$(handle_counter "$group" hits)" -eq 1 ] ||
      fail "$label: $client through the proxy: $("$cli" stats --json)"
  done
  echo "package_test: $label: a link and an NVVM compile through the proxy's stand-ins, cold then warm (hits)"
}

# warm_path LABEL: cold then warm through `$cli run`, then warm through `$cli run --proxy`.
warm_path() {
  local label=$1
  export NVRTC_CACHE_DIR="$work/cache-$label"
  "$cli" run -- "$demo" >"$work/$label-cold.txt"
  [ "$(grep -c ' ok ' "$work/$label-cold.txt")" -eq "$kernels" ] || fail "$label: cold run failed"
  [ "$(counter misses)" -eq "$kernels" ] && [ "$(counter hits)" -eq 0 ] || fail "$label: cold run: $("$cli" stats --json)"
  "$cli" run -- "$demo" >"$work/$label-warm.txt"
  [ "$(grep -c ' ok ' "$work/$label-warm.txt")" -eq "$kernels" ] || fail "$label: warm run failed"
  [ "$(counter hits)" -eq "$kernels" ] && [ "$(counter misses)" -eq "$kernels" ] || fail "$label: warm run: $("$cli" stats --json)"
  "$cli" run --proxy -- "$demo" >"$work/$label-proxy.txt"
  [ "$(counter hits)" -eq $((2 * kernels)) ] || fail "$label: warm run through the proxy: $("$cli" stats --json)"
  echo "package_test: $label: cold $kernels misses, warm $kernels hits (preload), $kernels hits (proxy)"
  sed -n 's/^  total */    warm total /p' "$work/$label-warm.txt"
  proxy_standins "$label"
}

# audit_elf FILE MAX_GLIBC: the DT_NEEDED entries a manylinux policy allows (the C and C++ runtimes),
# no RPATH/RUNPATH, and no symbol versioned above GLIBC_MAX_GLIBC.
allowed_needed='^(libc\.so\.6|libm\.so\.6|libgcc_s\.so\.1|libstdc\+\+\.so\.6|libpthread\.so\.0|libdl\.so\.2|ld-linux-x86-64\.so\.2)$'
audit_elf() {
  local file=$1 max=$2 needed glibc
  needed=$(readelf -d "$file" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  for lib in $needed; do
    [[ $lib =~ $allowed_needed ]] || fail "wheel: ${file##*/} needs $lib, which the wheel neither carries nor may assume"
  done
  ! readelf -d "$file" | grep -qE '\((RPATH|RUNPATH)\)' || fail "wheel: ${file##*/} has an RPATH/RUNPATH"
  glibc=$(objdump -T "$file" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1)
  [ "$(printf '%s\n%s\n' "$glibc" "$max" | sort -V | tail -1)" = "$max" ] || fail "wheel: ${file##*/} needs GLIBC_$glibc > $max"
  echo "    ${file#"$work"/wheel/}: NEEDED $(echo $needed | tr ' ' ,), GLIBC_$glibc"
}

# 1. The wheel, built as a user's `pip install .` builds it (PEP 517: scikit-build-core, then auditwheel's
# manylinux tag, python/build_backend/wheel_backend.py), from scratch in a build directory of its own
# beside $build_dir, with the CUDA toolkit hidden (scripts/lib/hide_toolkit.sh), as most Python users
# have none. Where $build_dir was compiled through ccache (.ci/run, scripts/lib/ccache.sh), so
# are the wheel's compiles, with that tree's generator: each object whose compile command and
# preprocessed source equal one of $build_dir's (-Werror aside) is that object; the rest compile. The
# compilers are named as that tree names them (scikit-build-core would take Python's sysconfig names,
# e.g. x86_64-linux-gnu-g++: the same binary, but ccache hashes the name).
wheel_build="${build_dir%/}-wheel" generator=""
rm -rf "$wheel_build"
if grep -q '^CMAKE_CXX_COMPILER_LAUNCHER:.*ccache' "$build_dir/CMakeCache.txt" && command -v ccache >/dev/null; then
  cache_value() { sed -n "s/^$1:[A-Z]*=//p" "$build_dir/CMakeCache.txt"; }
  generator=$(cache_value CMAKE_GENERATOR) cc=$(cache_value CMAKE_C_COMPILER) cxx=$(cache_value CMAKE_CXX_COMPILER)
  ccache --zero-stats >/dev/null
fi
start=$SECONDS
"$python" -m venv "$work/build-venv"
(if [ -n "$generator" ]; then . scripts/lib/ccache.sh; export CMAKE_GENERATOR="$generator" CC="$cc" CXX="$cxx"; fi
 . scripts/lib/hide_toolkit.sh
 toolkit_hidden "$work/build-venv/bin/pip" wheel --no-deps --wheel-dir "$work/dist" --config-settings=build-dir="$wheel_build" .) \
  >"$work/wheel-build.log" 2>&1 || { cat "$work/wheel-build.log" >&2; fail "the wheel did not build"; }
wheel=$(ls "$work"/dist/nvrtc_cache-*.whl)
reused=""
[ -n "$generator" ] && reused=$(ccache --print-stats | awk -F'\t' '$1 ~ /_cache_hit$/ {h += $2} $1 == "cache_miss" {m = $2}
                                   END {printf "; %d of %d compiles from ccache", h, h + m}')
echo "package_test: built ${wheel##*/} in $((SECONDS - start)) s$reused"
# The build tagged it: auditwheel named the manylinux policy its binaries meet (no retag here).
tag=${wheel##*-} tag=${tag%.whl}
[[ $tag == manylinux_*_"$(uname -m)" ]] ||
  { grep 'nvrtc-cache wheel:' -A8 "$work/wheel-build.log" >&2; fail "wheel: tagged $tag, not with a manylinux policy"; }
max_glibc=$(echo "$tag" | sed -n 's/^manylinux_\([0-9]*\)_\([0-9]*\)_.*/\1.\2/p')
"$python" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$wheel" "$work/wheel"
# The package holds Python only; the command and the libraries are the wheel's data (the install prefix).
data=$(ls -d "$work"/wheel/nvrtc_cache-*.data/data)
for f in bin/nvrtc-cache lib/libnvrtc-cache.so lib/libnvrtc-cache-api.so.1 include/nvrtc_cache.h \
         lib/nvrtc-cache/proxy/libnvrtc.so.13 lib/nvrtc-cache/proxy/libnvrtc.so.12 lib/nvrtc-cache/proxy/libnvJitLink.so.13 \
         lib/nvrtc-cache/proxy/libnvvm.so.4 lib/nvrtc-cache/LMDB-LICENSE share/man/man1/nvrtc-cache.1 \
         share/bash-completion/completions/nvrtc-cache; do
  [ -f "$data/$f" ] || fail "wheel: data/$f missing"
done
for f in __init__.py __main__.py _install.py program_cache.py; do
  [ -f "$work/wheel/nvrtc_cache/$f" ] || fail "wheel: nvrtc_cache/$f missing"
done
! grep -q '^\[console_scripts\]' "$work"/wheel/nvrtc_cache-*.dist-info/entry_points.txt 2>/dev/null ||
  fail "wheel: a console-script entry point would stand a Python trampoline in for the command"
echo "package_test: wheel audit (tag $tag):"
while IFS= read -r f; do
  case $f in "$data"/*) ;; *) fail "wheel: ELF file ${f#"$work"/wheel/} outside the data scheme" ;; esac
  audit_elf "$f" "$max_glibc"
done < <(find "$work/wheel" -type f -exec sh -c 'head -c4 "$1" | grep -q ELF' _ {} \; -print | sort)

# A user with only PyPI's CUDA: that wheel and PyPI's CUDA wheels installed with the toolkit hidden, doctor,
# and a cuda.core program exact through run, run --proxy and activate(), warm through run and activate()
# (scripts/pypi_only_test.sh).
scripts/pypi_only_test.sh "$wheel" "$work/pypi-only"

"$python" -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --no-deps --no-index "$wheel"
cli="$work/venv/bin/nvrtc-cache"
# The command on PATH is the native executable itself: no interpreter starts for a call.
head -c4 "$cli" | grep -q ELF || fail "wheel: $cli is not the native executable: $(head -c64 "$cli" | head -1)"
per_call() {  # per_call COMMAND...: the mean wall time of 20 calls, in ms
  local t0 i
  t0=$(date +%s%N)
  for i in $(seq 20); do "$@" >/dev/null; done
  echo $((($(date +%s%N) - t0) / 20000000))
}
echo "package_test: wheel: \`nvrtc-cache stats\` $(NVRTC_CACHE_DIR="$work/cache-timing" per_call "$cli" stats) ms a call" \
     "(\`python -m nvrtc_cache stats\` $(NVRTC_CACHE_DIR="$work/cache-timing" per_call "$work/venv/bin/python" -m nvrtc_cache stats) ms)"
prefix_of_venv=$(realpath "$work/venv")
for expr in "cli_path():$prefix_of_venv/bin/nvrtc-cache" "shim_path():$prefix_of_venv/lib/libnvrtc-cache.so" \
            "proxy_dir():$prefix_of_venv/lib/nvrtc-cache/proxy"; do
  got=$("$work/venv/bin/python" -c "import nvrtc_cache; print(nvrtc_cache.${expr%%:*})")
  [ "$got" = "${expr#*:}" ] || fail "wheel: nvrtc_cache.${expr%%:*} is $got, not ${expr#*:}"
done
# man finds the page from PATH (<bin>/../share/man), as for /usr/local; the completion is a script bash
# sources (bash-completion loads it by itself from ~/.local/share and /usr/local/share: --user and system installs).
man_page="$prefix_of_venv/share/man/man1/nvrtc-cache.1"
if command -v man >/dev/null; then
  [ "$(env -u MANPATH PATH="$work/venv/bin:/usr/bin:/bin" man -w nvrtc-cache)" = "$man_page" ] ||
    fail "wheel: \`man nvrtc-cache\` does not find $man_page"
fi
grep -q '^\.TH NVRTC-CACHE 1' "$man_page" || fail "wheel: $man_page is not the man page"
bash -c '. "$1" && complete -p nvrtc-cache' _ "$prefix_of_venv/share/bash-completion/completions/nvrtc-cache" \
  >/dev/null || fail "wheel: the bash completion does not define a completion for nvrtc-cache"
echo "package_test: wheel: man nvrtc-cache finds $man_page; the bash completion completes nvrtc-cache"
# Another scheme (pip --prefix): the package finds the command beside its own site-packages there.
"$work/venv/bin/pip" install --quiet --ignore-installed --no-deps --no-index --prefix "$work/prefix" "$wheel"
other=$(ls -d "$work"/prefix/lib/python3*/site-packages)
[ "$(PYTHONPATH="$other" "$python" -c 'import nvrtc_cache; print(nvrtc_cache.cli_path())')" = \
  "$(realpath "$work/prefix")/bin/nvrtc-cache" ] || fail "wheel: cli_path() under pip --prefix"
PYTHONPATH="$other" "$python" -m nvrtc_cache version >/dev/null || fail "wheel: python -m nvrtc_cache under pip --prefix"
warm_path wheel
# `python -m nvrtc_cache run` is the same command: the demo served warm again.
NVRTC_CACHE_DIR="$work/cache-wheel" "$work/venv/bin/python" -m nvrtc_cache run -- "$demo" >"$work/wheel-module.txt"
[ "$(NVRTC_CACHE_DIR="$work/cache-wheel" counter hits)" -eq $((3 * kernels)) ] ||
  fail "wheel: python -m nvrtc_cache run: $(NVRTC_CACHE_DIR="$work/cache-wheel" "$cli" stats --json)"
echo "package_test: wheel: python -m nvrtc_cache run: $kernels hits"
# The Python backend from the installed wheel, through the C library the wheel carries (no cuda.core
# in this venv: the plain base class with the same methods).
NVRTC_CACHE_DIR="$work/cache-api" "$work/venv/bin/python" - <<'PY' || fail "wheel: nvrtc_cache.ProgramCache"
import nvrtc_cache
import os, sys
assert nvrtc_cache.api_library_path() == os.path.realpath(sys.prefix) + "/lib/libnvrtc-cache-api.so.1", nvrtc_cache.api_library_path()
with nvrtc_cache.ProgramCache() as cache:
    cache[b"key"] = b"value"
    cache["str key"] = memoryview(b"bytes")
    assert cache[b"key"] == b"value" and cache[b"str key"] == b"bytes" and len(cache) == 2
with nvrtc_cache.ProgramCache() as cache:
    assert cache.get("key") == b"value"
PY
[ "$(NVRTC_CACHE_DIR="$work/cache-api" "$cli" stats --json | "$python" -c 'import json, sys; print(json.load(sys.stdin)["api_entries"])')" -eq 2 ] ||
  fail "wheel: stats does not count the ProgramCache entries"
echo "package_test: wheel: nvrtc_cache.ProgramCache stores and serves through lib/libnvrtc-cache-api.so.1"
# LMDB is built into the shim and the CLI: no liblmdb is loaded at all.
LD_DEBUG=files "$cli" run -- "$demo" >/dev/null 2>"$work/ld-debug.txt"
LD_DEBUG=files "$cli" stats >/dev/null 2>>"$work/ld-debug.txt"
grep -q 'file=.*libnvrtc-cache.so' "$work/ld-debug.txt" || fail "wheel: LD_DEBUG saw no shim (the check would prove nothing)"
grep 'file=.*liblmdb' "$work/ld-debug.txt" && fail "wheel: a liblmdb was loaded; LMDB should be built in"

# 2. The Debian package.
start=$SECONDS
(cd "$work" && cpack -G DEB -B "$work/deb" --config "$OLDPWD/$build_dir/CPackConfig.cmake" >"$work/cpack.log" 2>&1) ||
  { cat "$work/cpack.log" >&2; fail "cpack failed"; }
deb=$(ls "$work"/deb/nvrtc-cache_*.deb)
depends=$(dpkg-deb -f "$deb" Depends)
echo "package_test: built ${deb##*/} in $((SECONDS - start)) s; Depends: $depends"
[[ "$depends" == *liblmdb* ]] && fail "deb: Depends names liblmdb although LMDB is built in"
for dep in libc6 libstdc++6; do
  [[ ",$depends" == *", $dep"* || "$depends" == "$dep"* ]] || fail "deb: Depends lacks $dep"
done
apt-get install --simulate --no-install-recommends "$deb" >"$work/apt.log" 2>&1 ||
  { cat "$work/apt.log" >&2; fail "deb: apt cannot satisfy its Depends"; }
dpkg -x "$deb" "$work/root"
for f in usr/bin/nvrtc-cache usr/lib/libnvrtc-cache.so usr/lib/libnvrtc-cache-api.so.1 usr/include/nvrtc_cache.h \
         usr/lib/nvrtc-cache/proxy/libnvrtc.so.13 usr/lib/nvrtc-cache/proxy/libnvrtc.so.12 \
         usr/lib/nvrtc-cache/proxy/libnvJitLink.so.13 \
         usr/lib/nvrtc-cache/proxy/libnvvm.so.4 usr/share/doc/nvrtc-cache/README.md \
         usr/share/doc/nvrtc-cache/docs/configuration.md; do
  [ -f "$work/root/$f" ] || fail "deb: /$f missing"
done
cli="$work/root/usr/bin/nvrtc-cache"
warm_path deb
# The C API from the package, as a C program uses it: the header compiles as C99 without a warning,
# -lnvrtc-cache-api finds the library through its link, and a value is stored and served.
cat >"$work/api.c" <<'C'
#include <stdio.h>
#include <string.h>

#include <nvrtc_cache.h>

int main(int argc, char** argv) {
  nvrtc_cache_options options;
  nvrtc_cache_t* cache = NULL;
  void* value = NULL;
  size_t size = 0;
  int ok;
  if (argc != 2 || nvrtc_cache_version() >> 16 != NVRTC_CACHE_VERSION_MAJOR) return 2;
  memset(&options, 0, sizeof options);
  options.size = sizeof options;
  options.flags = NVRTC_CACHE_OPEN_DEFAULTS;
  options.directory = argv[1];
  if (nvrtc_cache_open(&options, &cache) != NVRTC_CACHE_OK ||
      nvrtc_cache_put(cache, "key", 3, "value", 5) != NVRTC_CACHE_OK ||
      nvrtc_cache_get(cache, "key", 3, &value, &size) != NVRTC_CACHE_OK) {
    fprintf(stderr, "%s\n", nvrtc_cache_error_message());
    return 1;
  }
  ok = size == 5 && memcmp(value, "value", 5) == 0;
  nvrtc_cache_free(value);
  nvrtc_cache_close(cache);
  return ok ? 0 : 1;
}
C
cc -std=c99 -Wall -Wextra -pedantic -Werror -I"$work/root/usr/include" "$work/api.c" -L"$work/root/usr/lib" \
  -lnvrtc-cache-api -o "$work/api" || fail "deb: a C program does not build against nvrtc_cache.h and -lnvrtc-cache-api"
LD_LIBRARY_PATH="$work/root/usr/lib" "$work/api" "$work/cache-c" || fail "deb: the C program's put and get failed"
[ "$(NVRTC_CACHE_DIR="$work/cache-c" "$cli" stats --json | "$python" -c 'import json, sys; print(json.load(sys.stdin)["api_entries"])')" -eq 1 ] ||
  fail "deb: stats does not count the C program's entry"
echo "package_test: deb: a C99 program builds against /usr/include/nvrtc_cache.h and -lnvrtc-cache-api, stores and serves"
