// nvrtc_intermediate.dll: a DLL of the program's own that imports nvrtc64_130_0.dll (linked with its
// import library, so the loader loads NVRTC with it) and hands the program the functions its import
// table binds, for tests/clients/windows/loader_client.cc's `intermediate` mode: every NVRTC call
// the program makes then goes through this DLL's import address table.
#include <nvrtc.h>

#include "tests/support/probe_corpus.h"

extern "C" __declspec(dllexport) void nvrtc_intermediate_api(nvrtc_cache::probe::Api* a) {
#define NVRTC_API(kind, ret, name, params, args) a->name = ::name;
#define NVRTC_API_OUTSIDE_HEADER(kind, ret, name, params, args)  // not in the nvrtc.h it is built against
#include "libraries/nvrtc/api.def"
#undef NVRTC_API
#undef NVRTC_API_OUTSIDE_HEADER
}
