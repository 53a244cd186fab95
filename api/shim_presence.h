// Shim presence: whether this process has the shim (libnvrtc-cache.so) or its proxy
// (lib/nvrtc-cache/proxy/libnvrtc.so.13) loaded. LMDB allows one environment per store per process,
// and the shim's copy of the store code keeps its own: the C API must not open a second one on the
// shim's store directory (include/nvrtc_cache.h, NVRTC_CACHE_IN_USE).
// Contract: reads the loader's list of objects (dl_iterate_phdr); thread-safe; never throws.
#pragma once

namespace nvrtc_cache::api {

bool shim_loaded_in_process();

}  // namespace nvrtc_cache::api
