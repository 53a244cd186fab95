# NVRTC for a cross build: the target architecture's libnvrtc.so.13 (e.g. the lib/ directory of the
# nvidia-cuda-nvrtc wheel for that platform) and the host toolkit's headers (nvrtc.h is the same on every
# architecture). Defines what find_package(CUDAToolkit) would: CUDAToolkit_INCLUDE_DIRS,
# CUDAToolkit_LIBRARY_DIR, CUDA::toolkit and CUDA::nvrtc.
set(NVRTC_CACHE_TARGET_NVRTC_DIR "" CACHE PATH "Directory holding the target architecture's libnvrtc.so.13")
set(NVRTC_CACHE_TARGET_CUDA_INCLUDE_DIR "/usr/local/cuda/include" CACHE PATH "Directory holding nvrtc.h")
if(NOT EXISTS "${NVRTC_CACHE_TARGET_NVRTC_DIR}/libnvrtc.so.13")
  message(FATAL_ERROR "Cross build: set NVRTC_CACHE_TARGET_NVRTC_DIR to a directory holding the "
    "${CMAKE_SYSTEM_PROCESSOR} libnvrtc.so.13 (scripts/aarch64.sh fetches the nvidia-cuda-nvrtc wheel)")
endif()
if(NOT EXISTS "${NVRTC_CACHE_TARGET_CUDA_INCLUDE_DIR}/nvrtc.h")
  message(FATAL_ERROR "Cross build: no nvrtc.h in NVRTC_CACHE_TARGET_CUDA_INCLUDE_DIR "
    "(${NVRTC_CACHE_TARGET_CUDA_INCLUDE_DIR})")
endif()
set(CUDAToolkit_INCLUDE_DIRS "${NVRTC_CACHE_TARGET_CUDA_INCLUDE_DIR}")
set(CUDAToolkit_LIBRARY_DIR "${NVRTC_CACHE_TARGET_NVRTC_DIR}")
add_library(CUDA::toolkit INTERFACE IMPORTED)
set_target_properties(CUDA::toolkit PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${CUDAToolkit_INCLUDE_DIRS}")
add_library(CUDA::nvrtc SHARED IMPORTED)
set_target_properties(CUDA::nvrtc PROPERTIES
  IMPORTED_LOCATION "${NVRTC_CACHE_TARGET_NVRTC_DIR}/libnvrtc.so.13"
  INTERFACE_INCLUDE_DIRECTORIES "${CUDAToolkit_INCLUDE_DIRS}")
