// nvJitLink's C API as the cache's own code sees it: the types, result codes and input kinds of
// nvJitLink 13.0's nvJitLink.h (their values are nvJitLink's ABI) and one plain declaration for each
// function of the project's table (libraries/nvjitlink/api.def) that 13.0 declares, plus
// nvJitLinkVersion. The product builds against this file (docs/design.md, "Building without CUDA").
// Contract: declarations only; the real header's release-suffixed inline wrappers
// (nvJitLinkCreate -> __nvJitLinkCreate_13_0) are never defined, as with NVJITLINK_NO_INLINE.
#ifndef NVRTC_CACHE_CUDA_API_NVJITLINK_H
#define NVRTC_CACHE_CUDA_API_NVJITLINK_H
#ifndef nvJitLink_INCLUDED
#define nvJitLink_INCLUDED  // the real header's guard

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  NVJITLINK_SUCCESS = 0,
  NVJITLINK_ERROR_UNRECOGNIZED_OPTION = 1,
  NVJITLINK_ERROR_MISSING_ARCH = 2,
  NVJITLINK_ERROR_INVALID_INPUT = 3,
  NVJITLINK_ERROR_PTX_COMPILE = 4,
  NVJITLINK_ERROR_NVVM_COMPILE = 5,
  NVJITLINK_ERROR_INTERNAL = 6,
  NVJITLINK_ERROR_THREADPOOL = 7,
  NVJITLINK_ERROR_UNRECOGNIZED_INPUT = 8,
  NVJITLINK_ERROR_FINALIZE = 9,
  NVJITLINK_ERROR_NULL_INPUT = 10,
  NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS = 11,
  NVJITLINK_ERROR_INCORRECT_INPUT_TYPE = 12,
  NVJITLINK_ERROR_ARCH_MISMATCH = 13,
  NVJITLINK_ERROR_OUTDATED_LIBRARY = 14,
  NVJITLINK_ERROR_MISSING_FATBIN = 15,
  NVJITLINK_ERROR_UNRECOGNIZED_ARCH = 16,
  NVJITLINK_ERROR_UNSUPPORTED_ARCH = 17,
  NVJITLINK_ERROR_LTO_NOT_ENABLED = 18
} nvJitLinkResult;

typedef enum {
  NVJITLINK_INPUT_NONE = 0,
  NVJITLINK_INPUT_CUBIN = 1,
  NVJITLINK_INPUT_PTX = 2,
  NVJITLINK_INPUT_LTOIR = 3,
  NVJITLINK_INPUT_FATBIN = 4,
  NVJITLINK_INPUT_OBJECT = 5,
  NVJITLINK_INPUT_LIBRARY = 6,
  NVJITLINK_INPUT_INDEX = 7,
  NVJITLINK_INPUT_ANY = 10
} nvJitLinkInputType;

typedef struct nvJitLink* nvJitLinkHandle;

#pragma push_macro("HANDLE_LIBRARY_API")
#pragma push_macro("NVJITLINK_API_SINCE_13_1")
#undef HANDLE_LIBRARY_API
#undef NVJITLINK_API_SINCE_13_1
#define HANDLE_LIBRARY_API(kind, ret, name, params, args) ret name params;
#define NVJITLINK_API_SINCE_13_1(kind, ret, name, params, args)
#include "libraries/nvjitlink/api.def"
#undef HANDLE_LIBRARY_API
#undef NVJITLINK_API_SINCE_13_1
#pragma pop_macro("NVJITLINK_API_SINCE_13_1")
#pragma pop_macro("HANDLE_LIBRARY_API")

nvJitLinkResult nvJitLinkVersion(unsigned int* major, unsigned int* minor);

#ifdef __cplusplus
}
#endif

#endif  // nvJitLink_INCLUDED
#endif  // NVRTC_CACHE_CUDA_API_NVJITLINK_H
