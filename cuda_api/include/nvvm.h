// libNVVM's C API as the cache's own code sees it: the types and result codes of CUDA 13.0's nvvm.h
// (their values are libNVVM's ABI) and one declaration for each function of the project's table
// (libraries/nvvm/api.def), plus the three documented ones the shim never exports
// (nvvmGetErrorString, nvvmVersion, nvvmIRVersion; nvvmDisableConcurrentAPI is undocumented). The
// product builds against this file (docs/design.md, "Building without CUDA").
// Contract: declarations only.
#ifndef NVRTC_CACHE_CUDA_API_NVVM_H
#define NVRTC_CACHE_CUDA_API_NVVM_H
#ifndef NVVM_H
#define NVVM_H  // the real header's guard

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  NVVM_SUCCESS = 0,
  NVVM_ERROR_OUT_OF_MEMORY = 1,
  NVVM_ERROR_PROGRAM_CREATION_FAILURE = 2,
  NVVM_ERROR_IR_VERSION_MISMATCH = 3,
  NVVM_ERROR_INVALID_INPUT = 4,
  NVVM_ERROR_INVALID_PROGRAM = 5,
  NVVM_ERROR_INVALID_IR = 6,
  NVVM_ERROR_INVALID_OPTION = 7,
  NVVM_ERROR_NO_MODULE_IN_PROGRAM = 8,
  NVVM_ERROR_COMPILATION = 9,
  NVVM_ERROR_CANCELLED = 10
} nvvmResult;

typedef struct _nvvmProgram* nvvmProgram;

const char* nvvmGetErrorString(nvvmResult result);
nvvmResult nvvmVersion(int* major, int* minor);
nvvmResult nvvmIRVersion(int* majorIR, int* minorIR, int* majorDbg, int* minorDbg);

#pragma push_macro("HANDLE_LIBRARY_API")
#undef HANDLE_LIBRARY_API
#define HANDLE_LIBRARY_API(kind, ret, name, params, args) ret name params;
#include "libraries/nvvm/api.def"
#undef HANDLE_LIBRARY_API
#pragma pop_macro("HANDLE_LIBRARY_API")

#ifdef __cplusplus
}
#endif

#endif  // NVVM_H
#endif  // NVRTC_CACHE_CUDA_API_NVVM_H
