# shellcheck shell=bash
# A machine with no CUDA toolkit, as most Python users have: `toolkit_hidden CMD...` runs CMD in a
# mount namespace of its own (`unshare -m`, private propagation: nothing leaks to the host) where an
# empty tmpfs covers every /usr/local/cuda* directory (/usr/local/cuda is a link to one of them), with
# the toolkit's variables unset (CUDA_HOME, CUDA_PATH, LIBRARY_PATH, LD_LIBRARY_PATH, CONDA_PREFIX,
# VIRTUAL_ENV) and its bin/ off PATH. Before CMD runs, it checks that the toolkit really is invisible:
# every /usr/local/cuda* is empty, no nvcc runs (/usr/local/bin's wrappers into the toolkit dangle), no CUDA header in /usr/include, and none of NVRTC,
# nvJitLink, libNVVM or the CUDA runtime loads by soname (exit 98 otherwise). Needs root (or a user
# namespace that allows mounts); exit 97 when the mounts fail.
toolkit_hidden() {
  local path="" dir
  local IFS=:
  for dir in $PATH; do [[ $dir == /usr/local/cuda* ]] || path+="${path:+:}$dir"; done
  unset IFS
  # shellcheck disable=SC2016  # the script is the inner bash's
  env -u CUDA_HOME -u CUDA_PATH -u LIBRARY_PATH -u LD_LIBRARY_PATH -u CONDA_PREFIX -u VIRTUAL_ENV PATH="$path" \
    unshare -m bash -c '
      for d in /usr/local/cuda*; do
        if [ -d "$d" ] && [ ! -L "$d" ]; then mount -t tmpfs -o size=1m none "$d" || exit 97; fi
      done
      seen() { echo "toolkit_hidden: the toolkit is still visible: $*" >&2; exit 98; }
      for d in /usr/local/cuda*; do [ -z "$(ls -A "$d/" 2>/dev/null)" ] || seen "$d"; done
      ! nvcc --version >/dev/null 2>&1 || seen "$(command -v nvcc) runs"
      for h in cuda_fp16.h cuda_runtime.h nvrtc.h; do [ ! -e "/usr/include/$h" ] || seen "/usr/include/$h"; done
      python3 - <<"PY" || exit 98
import ctypes, sys
for soname in ("libnvrtc.so.13", "libnvrtc.so.12", "libnvJitLink.so.13", "libnvvm.so.4", "libcudart.so.13"):
    try:
        ctypes.CDLL(soname)
    except OSError:
        continue
    sys.exit(f"toolkit_hidden: the toolkit is still visible: {soname} loads by soname")
PY
      exec "$@"' toolkit_hidden "$@"
}
