# nvrtc_cache_handle_library(REAL_TABLE): called from a handle-based library's folder
# (libraries/<name>/CMakeLists.txt), adds the parts every such folder holds to the targets of the
# layers they plug into — options.cc to keying (on every OS: the CLI's replay checks options), and on
# Linux REAL_TABLE (its real-function table) and hooks.cc (its description to the handle lifecycle)
# to the two Linux hosts' shared objects, exports.cc to the preloaded shim. The real table and the
# description are compiled alone in a unity build: their file-local names are the same on purpose.
# The stand-ins are the folder's own calls (nvrtc_cache_add_standin, shim/CMakeLists.txt).
function(nvrtc_cache_handle_library real_table)
  target_sources(nvrtc_cache_keying PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/options.cc)
  if(WIN32)
    return()
  endif()
  set_source_files_properties(${real_table} hooks.cc TARGET_DIRECTORY nvrtc_cache_interposer
    PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
  target_sources(nvrtc_cache_interposer PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/${real_table}
    ${CMAKE_CURRENT_SOURCE_DIR}/hooks.cc)
  target_sources(nvrtc_cache_shim PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/exports.cc)
endfunction()
