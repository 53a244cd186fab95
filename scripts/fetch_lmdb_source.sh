#!/usr/bin/env bash
# Fetches LMDB's source from the distribution's source package (Debian's `lmdb`, signature-checked by
# apt against the archive keyring) into .deps/lmdb, where CMake builds it position-independent and
# links it into the shim with hidden symbols (no dlopen on a process's first compile, no run-time
# dependency on liblmdb). scripts/fetch_source_package.sh does the fetching: nothing is installed and
# the system's apt configuration is not touched. Idempotent; needs no root.
# Exit status non-zero (with a message) when the source cannot be had; the build then falls back to
# loading the distribution's shared liblmdb at run time.
set -euo pipefail
cd "$(dirname "$0")/.."
exec scripts/fetch_source_package.sh lmdb libraries/liblmdb/mdb.c
