// __nvJitLinkAPI for the stand-in nvJitLink_130_0.dll: nvJitLink's private entry point, forwarded to
// the real DLL's (nvrtc_cache_standin_private, libraries/nvjitlink/windows_standin.cc); without a real one
// it returns 6 (NVJITLINK_ERROR_INTERNAL).
#include "shim/windows/private_forwarder.inc"
  private_forward __nvJitLinkAPI, nvrtc_cache_standin_private, 6
