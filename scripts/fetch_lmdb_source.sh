#!/usr/bin/env bash
# Fetches LMDB's source from the distribution's source package (Debian's `lmdb`, signature-checked by
# apt against the archive keyring) into .deps/lmdb, where CMake builds it position-independent and
# links it into the shim with hidden symbols (no dlopen on a process's first compile, no run-time
# dependency on liblmdb). Nothing is installed and the system's apt configuration is not touched:
# apt runs with its own source list and state under .deps/apt. Idempotent; needs no root.
# Exit status non-zero (with a message) when the source cannot be had; the build then falls back to
# loading the distribution's shared liblmdb at run time.
set -euo pipefail
cd "$(dirname "$0")/.."

deps="$PWD/.deps"
target="$deps/lmdb"
if [ -f "$target/libraries/liblmdb/mdb.c" ]; then
  exit 0
fi
command -v dpkg-source >/dev/null || { echo "fetch_lmdb_source: dpkg-source (dpkg-dev) is missing" >&2; exit 1; }
. /etc/os-release
suite="${VERSION_CODENAME:-bookworm}"

apt_dir="$deps/apt"
rm -rf "$apt_dir"
mkdir -p "$apt_dir/parts" "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/download"
cat > "$apt_dir/parts/source.sources" <<EOF
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: $suite
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
apt_options=(-o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$apt_dir/parts"
             -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache"
             -o Debug::NoLocking=1 -o APT::Sandbox::User="$(id -un)")
apt-get "${apt_options[@]}" -qq update >/dev/null
(cd "$apt_dir/download" && apt-get "${apt_options[@]}" -qq source --download-only lmdb >/dev/null 2>&1)
dsc=$(ls "$apt_dir"/download/lmdb_*.dsc | head -n 1)
rm -rf "$target.tmp"
dpkg-source --no-check -x "$dsc" "$target.tmp" >/dev/null  # apt verified the files against the signed index
mv "$target.tmp" "$target"
rm -f "$deps"/lmdb_*.orig.tar.*
rm -rf "$apt_dir"
echo "fetch_lmdb_source: $(basename "$dsc" .dsc) in $target" >&2
