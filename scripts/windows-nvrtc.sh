#!/usr/bin/env bash
# Prepares the Windows NVRTC, nvJitLink and libNVVM under Wine for the tests: installs Wine and the
# mingw-w64 cross compiler if missing, downloads the Windows wheels matching the CUDA toolkit here
# (nvidia-cuda-nvrtc, nvidia-nvjitlink and nvidia-nvvm 13.0.88, win_amd64) with the project's .venv
# pip, unpacks nvrtc64_130_0.dll, its builtins DLL, nvJitLink_130_0.dll and nvvm64_40_0.dll into DIR, and makes a scratch Wine prefix DIR/wineprefix (its first start takes seconds; done here
# once so that the tests do not pay for it). Usage: scripts/windows-nvrtc.sh DIR
# Prints the variables the tests read (NVRTC_CACHE_WINE_NVRTC_DIR, NVRTC_CACHE_WINE, WINEPREFIX is
# derived from DIR by the tests); prints nothing and exits 0, saying why on stderr, when the package
# index is unreachable (the Wine tests then skip, or fail where NVRTC_CACHE_REQUIRE_PYPI=1).
set -uo pipefail
cd "$(dirname "$0")/.."
if [ $# -ne 1 ]; then
  echo "usage: scripts/windows-nvrtc.sh DIR" >&2
  exit 2
fi
mkdir -p "$1" || exit 1
dir=$(cd "$1" && pwd)
version=13.0.88  # /usr/local/cuda/dist-info/nvidia_cuda_nvrtc-13.0.88.dist-info
wine=/usr/lib/wine/wine64

missing=()
[ -x "$wine" ] || missing+=(wine64)
command -v x86_64-w64-mingw32-g++-posix >/dev/null || missing+=(g++-mingw-w64-x86-64-posix)
command -v x86_64-w64-mingw32-dlltool >/dev/null || missing+=(mingw-w64)
. scripts/lib/apt.sh
if ((${#missing[@]})); then
  install_packages "${missing[@]}" ||
    { echo "windows-nvrtc: cannot install ${missing[*]}; the Wine tests will skip" >&2; exit 0; }
fi

if [ ! -f "$dir/nvrtc64_130_0.dll" ] || [ ! -f "$dir/nvJitLink_130_0.dll" ] || [ ! -f "$dir/nvvm64_40_0.dll" ] ||
   [ ! -f "$dir/version" ] ||
   [ "$(cat "$dir/version")" != "$version" ]; then
  pip=.venv/bin/pip
  [ -x "$pip" ] || { python3 -m venv .venv >&2 && pip=.venv/bin/pip; } || exit 0
  download=$(mktemp -d)
  trap 'rm -rf "$download"' EXIT
  if ! timeout 600 "$pip" download -q --disable-pip-version-check --no-deps --only-binary=:all: \
      --platform win_amd64 --python-version 3.11 -d "$download" "nvidia-cuda-nvrtc==$version" \
      "nvidia-nvjitlink==$version" "nvidia-nvvm==$version" >&2; then
    echo "windows-nvrtc: the package index is unreachable (nvidia-cuda-nvrtc, nvidia-nvjitlink, nvidia-nvvm $version for win_amd64); the Wine tests will skip" >&2
    exit 0
  fi
  # The DLLs sit in nvidia/cu13/bin/x86_64/ (nvidia/cu13/bin/ in some releases).
  python3 - "$dir" "$download"/nvidia_cuda_nvrtc-*.whl "$download"/nvidia_nvjitlink-*.whl \
      "$download"/nvidia_nvvm-*.whl <<'EOF' || exit 1
import sys, zipfile, os
out, wheels = sys.argv[1], sys.argv[2:]
for wheel in wheels:
    with zipfile.ZipFile(wheel) as z:
        names = [n for n in z.namelist() if n.lower().endswith('.dll') and '.alt.' not in n.lower() and
                 ('/nvrtc' in n.lower() or '/nvjitlink' in n.lower() or '/nvvm' in n.lower())]
        for n in names:
            with z.open(n) as src, open(os.path.join(out, os.path.basename(n)), 'wb') as dst:
                dst.write(src.read())
for needed in ('nvrtc64_130_0.dll', 'nvJitLink_130_0.dll', 'nvvm64_40_0.dll'):
    if not os.path.exists(os.path.join(out, needed)):
        sys.exit('windows-nvrtc: no ' + needed + ' in ' + ' '.join(wheels))
EOF
  echo "$version" >"$dir/version"
fi

# The scratch prefix: created by the first start (wineboot), quietly.
export WINEPREFIX="$dir/wineprefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
if [ ! -f "$WINEPREFIX/system.reg" ]; then
  timeout 300 "$wine" wineboot --init >/dev/null 2>&1 || { echo "windows-nvrtc: wineboot failed" >&2; exit 1; }
fi
echo "export NVRTC_CACHE_WINE_NVRTC_DIR=$dir"
echo "export NVRTC_CACHE_WINE=$wine"
exit 0
