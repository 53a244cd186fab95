#!/usr/bin/env bash
# The packages, installed as a user installs them, then the demo's warm path through what they installed:
#  1. the Python wheel: built with pip (scikit-build-core, pyproject.toml), audited (auditwheel names the
#     manylinux policy it meets and the wheel is retagged to it; every ELF's DT_NEEDED is a library that
#     policy allows, no symbol needs a newer glibc than it names, no RPATH/RUNPATH), installed into a
#     fresh venv; `nvrtc-cache run` (the console script) compiles the
#     demo's kernels cold then warm, and again through `run --proxy`, with LMDB built in (no liblmdb loaded);
#     `nvrtc_cache.ProgramCache` stores and serves through the C API library the wheel carries;
#     then an nvJitLink link and a libNVVM compile (tests/clients/, dlopen by soname) cold then warm
#     through `run --proxy`, i.e. through the packaged stand-ins libnvJitLink.so.13 and libnvvm.so.4;
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

# 1. The wheel.
start=$SECONDS
"$python" -m venv "$work/build-venv"
"$work/build-venv/bin/pip" wheel --quiet --no-deps --wheel-dir "$work/dist" . >"$work/wheel-build.log" 2>&1 ||
  { cat "$work/wheel-build.log" >&2; fail "the wheel did not build"; }
wheel=$(ls "$work"/dist/nvrtc_cache-*.whl)
echo "package_test: built ${wheel##*/} in $((SECONDS - start)) s"
# auditwheel (PyPI) names the manylinux policy the wheel meets (it reads every ELF in it); the wheel,
# tagged linux_x86_64 as built, is retagged to that policy (its files unchanged) and installed as such.
"$work/build-venv/bin/pip" install --quiet auditwheel wheel
tag=$("$work/build-venv/bin/auditwheel" show "$wheel" | tr '\n' ' ' |
      sed -n 's/.*following[[:space:]]*platform[[:space:]]*tag:[[:space:]]*"\([^"]*\)".*/\1/p')
[[ $tag == manylinux_* ]] || { "$work/build-venv/bin/auditwheel" show "$wheel" >&2; fail "wheel: no manylinux policy met"; }
"$work/build-venv/bin/python" -m wheel tags --remove --platform-tag "$tag" "$wheel" >/dev/null
wheel=$(ls "$work"/dist/nvrtc_cache-*"$tag".whl)
max_glibc=$(echo "$tag" | sed -n 's/^manylinux_\([0-9]*\)_\([0-9]*\)_.*/\1.\2/p')
"$python" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$wheel" "$work/wheel"
for f in bin/nvrtc-cache lib/libnvrtc-cache.so lib/libnvrtc-cache-api.so.1 include/nvrtc_cache.h \
         lib/nvrtc-cache/proxy/libnvrtc.so.13 lib/nvrtc-cache/proxy/libnvJitLink.so.13 \
         lib/nvrtc-cache/proxy/libnvvm.so.4 lib/nvrtc-cache/LMDB-LICENSE; do
  [ -f "$work/wheel/nvrtc_cache/$f" ] || fail "wheel: nvrtc_cache/$f missing"
done
echo "package_test: wheel audit (tag $tag):"
while IFS= read -r f; do
  audit_elf "$f" "$max_glibc"
done < <(find "$work/wheel" -type f -exec sh -c 'head -c4 "$1" | grep -q ELF' _ {} \; -print | sort)

"$python" -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --no-deps --no-index "$wheel"
cli="$work/venv/bin/nvrtc-cache"
[ "$("$work/venv/bin/python" -c 'import nvrtc_cache; print(nvrtc_cache.shim_path())')" = \
  "$(realpath "$work"/venv/lib/python3*/site-packages/nvrtc_cache/lib/libnvrtc-cache.so)" ] || fail "wheel: shim_path()"
warm_path wheel
# The Python backend from the installed wheel, through the C library the wheel carries (no cuda.core
# in this venv: the plain base class with the same methods).
NVRTC_CACHE_DIR="$work/cache-api" "$work/venv/bin/python" - <<'PY' || fail "wheel: nvrtc_cache.ProgramCache"
import nvrtc_cache
assert nvrtc_cache.api_library_path().endswith("site-packages/nvrtc_cache/lib/libnvrtc-cache-api.so.1")
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
         usr/lib/nvrtc-cache/proxy/libnvrtc.so.13 usr/lib/nvrtc-cache/proxy/libnvJitLink.so.13 \
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
