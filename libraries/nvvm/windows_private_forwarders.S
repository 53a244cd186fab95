// libNVVM's functions of unknown signature for the stand-in nvvm64_40_0.dll (the private
// __nvvmHandle and __nvvmHandleTarget, the undocumented nvvmDisableConcurrentAPI), forwarded to the
// real DLL's (libraries/nvvm/windows_standin.cc hands them out); without a real one each returns 2
// (NVVM_ERROR_PROGRAM_CREATION_FAILURE).
#include "shim/windows/private_forwarder.inc"
  private_forward __nvvmHandle, nvrtc_cache_standin_nvvm_handle, 2
  private_forward __nvvmHandleTarget, nvrtc_cache_standin_nvvm_handle_target, 2
  private_forward nvvmDisableConcurrentAPI, nvrtc_cache_standin_nvvm_disable_concurrent_api, 2
