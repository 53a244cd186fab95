// __nvrtcCPEx for the Windows proxy: NVRTC's private entry point, forwarded to the real DLL's
// (nvrtc_cache_windows_cpex, shim/windows/proxy_exports.cc); without a real one it returns 11
// (NVRTC_ERROR_INTERNAL_ERROR).
#include "shim/windows/private_forwarder.inc"
  private_forward __nvrtcCPEx, nvrtc_cache_windows_cpex, 11
