#!/usr/bin/env bash
# Makes (or reuses) .venv with the real Python JIT stacks the tests drive through the shim:
# cuda-core, cuda-bindings, CuPy, numba-cuda, the NVRTC 13 and nvJitLink 13 wheels they prefer (loaded by absolute path), and the NVRTC
# 12 wheel for the two-majors test (both wheels also for the corpus of every NVRTC version), the NVRTC
# 11.8 wheel (in cu11/, for the test that 11.x passes through uncached), and, apart
# from the stacks' own packages (in cu12/, a directory no Python stack searches), nvJitLink 12 and
# libNVVM from CUDA 12 (nvidia-nvjitlink-cu12, nvidia-cuda-nvcc-cu12; 12.9, as the NVRTC 12 wheel,
# whose LTO-IR nvJitLink 12.9 links); for the benchmark suite (scripts/bench_suite.sh), the nvidia-cutlass
# wheel (its CuTe headers) and matplotlib; IPython, for %load_ext nvrtc_cache in a real shell. Prints the variables the tests read; prints nothing (and the
# Python tests skip) when PyPI cannot be reached.
set -uo pipefail
cd "$(dirname "$0")/.."
venv=".venv"
packages=(cuda-core cuda-bindings nvidia-cuda-nvrtc nvidia-nvjitlink nvidia-cuda-nvrtc-cu12 cupy-cuda13x numba-cuda
          nvidia-cutlass matplotlib ipython)
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" >&2 || exit 0
fi
if ! "$venv/bin/python" -c "import cuda.core, cuda.bindings, cupy, numba.cuda, matplotlib, IPython" 2>/dev/null ||
   ! ls "$venv"/lib/python3*/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12 >/dev/null 2>&1 ||
   ! ls "$venv"/lib/python3*/site-packages/nvidia/cu13/lib/libnvJitLink.so.13 >/dev/null 2>&1 ||
   ! ls -d "$venv"/lib/python3*/site-packages/cutlass_library/source/include/cute >/dev/null 2>&1; then
  if ! timeout 600 "$venv/bin/pip" install -q --disable-pip-version-check "${packages[@]}" >&2; then
    echo "python_env: PyPI unreachable or install failed; the Python JIT-stack tests will skip" >&2
    exit 0
  fi
fi
cu12="$venv/cu12"
if [ ! -e "$cu12/nvidia/nvjitlink/lib/libnvJitLink.so.12" ] || [ ! -e "$cu12/nvidia/cuda_nvcc/nvvm/lib64/libnvvm.so" ]; then
  timeout 600 "$venv/bin/pip" install -q --disable-pip-version-check --no-deps --upgrade --target "$cu12" \
    'nvidia-nvjitlink-cu12==12.9.*' 'nvidia-cuda-nvcc-cu12==12.9.*' >&2 ||
    echo "python_env: nvidia-nvjitlink-cu12 / nvidia-cuda-nvcc-cu12 not installed; their tests will skip" >&2
fi
# NVRTC 11.8 (nvidia-cuda-nvrtc-cu11), apart too (cu11/): the test that 11.x passes through uncached.
cu11="$venv/cu11"
if [ ! -e "$cu11/nvidia/cuda_nvrtc/lib/libnvrtc.so.11.2" ]; then
  timeout 600 "$venv/bin/pip" install -q --disable-pip-version-check --no-deps --upgrade --target "$cu11" \
    'nvidia-cuda-nvrtc-cu11==11.8.*' >&2 ||
    echo "python_env: nvidia-cuda-nvrtc-cu11 not installed; its test will skip" >&2
fi
echo "export NVRTC_CACHE_TEST_PYTHON=$PWD/$venv/bin/python"
nvrtc12=$(ls "$PWD/$venv"/lib/python3*/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12 2>/dev/null | head -1)
[ -n "$nvrtc12" ] && echo "export NVRTC_CACHE_TEST_NVRTC12=$nvrtc12"
nvrtc13=$(ls "$PWD/$venv"/lib/python3*/site-packages/nvidia/cu13/lib/libnvrtc.so.13 2>/dev/null | head -1)
[ -n "$nvrtc13" ] && echo "export NVRTC_CACHE_TEST_NVRTC13=$nvrtc13"
nvjitlink13=$(ls "$PWD/$venv"/lib/python3*/site-packages/nvidia/cu13/lib/libnvJitLink.so.13 2>/dev/null | head -1)
[ -n "$nvjitlink13" ] && echo "export NVRTC_CACHE_TEST_NVJITLINK13=$nvjitlink13"
[ -e "$PWD/$cu11/nvidia/cuda_nvrtc/lib/libnvrtc.so.11.2" ] &&
  echo "export NVRTC_CACHE_TEST_NVRTC11=$PWD/$cu11/nvidia/cuda_nvrtc/lib/libnvrtc.so.11.2"
[ -e "$PWD/$cu12/nvidia/nvjitlink/lib/libnvJitLink.so.12" ] &&
  echo "export NVRTC_CACHE_TEST_NVJITLINK12=$PWD/$cu12/nvidia/nvjitlink/lib/libnvJitLink.so.12"
[ -e "$PWD/$cu12/nvidia/cuda_nvcc/nvvm/lib64/libnvvm.so" ] &&
  echo "export NVRTC_CACHE_TEST_NVVM12=$PWD/$cu12/nvidia/cuda_nvcc/nvvm/lib64/libnvvm.so"
exit 0
