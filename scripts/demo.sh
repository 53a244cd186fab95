#!/usr/bin/env bash
# The demo: builds and installs nvrtc-cache, then compiles real kernels through `nvrtc-cache run`
# with an empty cache (cold) and again (warm), printing the times and the cache statistics.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
prefix="$PWD/build/install"
cmake --install build --prefix "$prefix" >/dev/null
export NVRTC_CACHE_DIR="${NVRTC_CACHE_DIR:-$(mktemp -d /tmp/nvrtc-cache-demo-XXXXXX)}"
cli="$prefix/bin/nvrtc-cache"
app="build/bin/nvrtc_demo"

echo "nvrtc-cache demo: installed to $prefix, cache in $NVRTC_CACHE_DIR"
echo
"$cli" clear >/dev/null
echo "== without the cache (plain NVRTC)"
"$app"
echo
echo "== nvrtc-cache run, cold cache"
"$cli" run -- "$app"
echo
echo "== nvrtc-cache run, warm cache"
"$cli" run -- "$app"
echo
echo "== nvrtc-cache stats"
"$cli" stats
