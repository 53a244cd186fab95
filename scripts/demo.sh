#!/usr/bin/env bash
# The demo: installs only what the cache needs (scripts/setup.sh --minimal: no test framework, Wine or
# mingw-w64), builds only the shim, the CLI and the demo client (bench/nvrtc_demo.cc) into build-demo/
# (or $BUILD_DIR), then compiles real kernels without the cache, through `nvrtc-cache run` with an
# empty cache (cold) and again (warm), printing the times and the cache statistics. The CLI runs from
# the build directory, whose bin/ and lib/ are laid out as an installation's. Exit status 1 when the
# warm run was not served from the cache.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${BUILD_DIR:-build-demo}"
start=$SECONDS
if [ -n "${DEMO_PREBUILT:-}" ]; then
  # CI: the full build of the test command already holds the three targets (same layout, same
  # optimization); they are only brought up to date there instead of being built a second time.
  build_dir="$DEMO_PREBUILT"
  cmake --build "$build_dir" --target nvrtc_cache_shim nvrtc_cache_cli nvrtc_demo -j"$(nproc)" >/dev/null
else
  BUILD_DIR="$build_dir" scripts/setup.sh --minimal
fi
built=$((SECONDS - start))
export NVRTC_CACHE_DIR="${NVRTC_CACHE_DIR:-$(mktemp -d /tmp/nvrtc-cache-demo-XXXXXX)}"
cli="$build_dir/bin/nvrtc-cache"
app="$build_dir/bin/nvrtc_demo"

echo "nvrtc-cache demo: set up and built in $built s ($build_dir), cache in $NVRTC_CACHE_DIR"
echo
"$cli" clear >/dev/null
echo "== without the cache (plain NVRTC)"
"$app"
echo
echo "== nvrtc-cache run, cold cache"
"$cli" run -- "$app"
echo
echo "== nvrtc-cache run, warm cache"
warm=$("$cli" run -- "$app")
echo "$warm"
echo
echo "== nvrtc-cache stats"
"$cli" stats
kernels=$(grep -c ' ok ' <<<"$warm" || true)
hits=$("$cli" stats --json | sed -n 's/^  "hits": *\([0-9]*\),*$/\1/p' | head -n 1)
if [ "$kernels" -eq 0 ] || [ "$hits" != "$kernels" ]; then
  echo "demo: the warm run was not served from the cache ($hits hits for $kernels kernels compiled)" >&2
  exit 1
fi
