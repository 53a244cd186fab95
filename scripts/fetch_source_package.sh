#!/usr/bin/env bash
# Fetches a Debian source package (signature-checked by apt against the archive keyring) into
# .deps/NAME, for the parts built from source (LMDB for the shim; LMDB and libb2 for the Windows
# cross-build, scripts/windows-build.sh). Nothing is installed and the system's apt configuration is
# not touched: apt runs with its own source list and state under .deps/apt-NAME. Idempotent (a
# present .deps/NAME/MARKER is kept); needs no root.
# Usage: scripts/fetch_source_package.sh NAME MARKER   (MARKER: a file of the unpacked source)
# Exit status non-zero (with a message) when the source cannot be had.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -ne 2 ]; then
  echo "usage: scripts/fetch_source_package.sh NAME MARKER" >&2
  exit 2
fi
name=$1
deps="$PWD/.deps"
target="$deps/$name"
[ -f "$target/$2" ] && exit 0
command -v dpkg-source >/dev/null || { echo "fetch_source_package: dpkg-source (dpkg-dev) is missing" >&2; exit 1; }
. /etc/os-release
suite="${VERSION_CODENAME:-bookworm}"

apt_dir="$deps/apt-$name"
rm -rf "$apt_dir"
mkdir -p "$apt_dir/parts" "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/download"
cat > "$apt_dir/parts/source.sources" <<SOURCES
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: $suite
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
apt_options=(-o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$apt_dir/parts"
             -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache"
             -o Debug::NoLocking=1 -o APT::Sandbox::User="$(id -un)")
apt-get "${apt_options[@]}" -qq update >/dev/null
(cd "$apt_dir/download" && apt-get "${apt_options[@]}" -qq source --download-only "$name" >/dev/null 2>&1)
dsc=$(ls "$apt_dir"/download/"${name}"_*.dsc | head -n 1)
rm -rf "$target.tmp"
dpkg-source --no-check -x "$dsc" "$target.tmp" >/dev/null  # apt verified the files against the signed index
mv "$target.tmp" "$target"
rm -rf "$apt_dir"
echo "fetch_source_package: $(basename "$dsc" .dsc) in $target" >&2
