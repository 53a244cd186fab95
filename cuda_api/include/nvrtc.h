// NVRTC's C API as the cache's own code sees it: the types and result codes of NVRTC 13.0's nvrtc.h
// (their values are NVRTC's ABI, the same in every 12.x and 13.x) and one declaration for each
// function of the project's table (libraries/nvrtc/api.def) that 13.0 declares. The product
// builds against this file, so that it needs no CUDA toolkit and no wheel at build time
// (docs/design.md, "Building without CUDA"); the tests' clients build against the real header.
// Contract: declarations only (no inline functions, no C++ helpers such as nvrtcGetTypeName).
#ifndef NVRTC_CACHE_CUDA_API_NVRTC_H
#define NVRTC_CACHE_CUDA_API_NVRTC_H
#ifndef __NVRTC_H__
#define __NVRTC_H__  // the real header's guard: a TU that also reaches it sees one definition

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  NVRTC_SUCCESS = 0,
  NVRTC_ERROR_OUT_OF_MEMORY = 1,
  NVRTC_ERROR_PROGRAM_CREATION_FAILURE = 2,
  NVRTC_ERROR_INVALID_INPUT = 3,
  NVRTC_ERROR_INVALID_PROGRAM = 4,
  NVRTC_ERROR_INVALID_OPTION = 5,
  NVRTC_ERROR_COMPILATION = 6,
  NVRTC_ERROR_BUILTIN_OPERATION_FAILURE = 7,
  NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION = 8,
  NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION = 9,
  NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID = 10,
  NVRTC_ERROR_INTERNAL_ERROR = 11,
  NVRTC_ERROR_TIME_FILE_WRITE_FAILED = 12,
  NVRTC_ERROR_NO_PCH_CREATE_ATTEMPTED = 13,
  NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED = 14,
  NVRTC_ERROR_PCH_CREATE = 15,
  NVRTC_ERROR_CANCELLED = 16,
  NVRTC_ERROR_TIME_TRACE_FILE_WRITE_FAILED = 17
} nvrtcResult;

typedef struct _nvrtcProgram* nvrtcProgram;

#pragma push_macro("NVRTC_API")
#pragma push_macro("NVRTC_API_OUTSIDE_HEADER")
#undef NVRTC_API
#undef NVRTC_API_OUTSIDE_HEADER
#define NVRTC_API(kind, ret, name, params, args) ret name params;
#define NVRTC_API_OUTSIDE_HEADER(kind, ret, name, params, args)
#include "libraries/nvrtc/api.def"
#undef NVRTC_API
#undef NVRTC_API_OUTSIDE_HEADER
#pragma pop_macro("NVRTC_API_OUTSIDE_HEADER")
#pragma pop_macro("NVRTC_API")

#ifdef __cplusplus
}
#endif

#endif  // __NVRTC_H__
#endif  // NVRTC_CACHE_CUDA_API_NVRTC_H
