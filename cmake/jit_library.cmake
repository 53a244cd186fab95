# nvrtc_cache_handle_library(REAL_TABLE): called from a handle-based library's folder
# (libraries/<name>/CMakeLists.txt), adds the parts every such folder holds to the targets of the
# layers they plug into — options.cc to keying (on every OS: the CLI's replay checks options); its
# hooks over the handle lifecycle (hooks.cc) and the rules of its function names (function_names.cc)
# to the hosts; on Linux REAL_TABLE (its real-function table) to the two Linux hosts' shared objects
# and exports.cc to the preloaded shim; on Windows windows_exports.cc (the proxy core's entries its
# stand-in DLL forwards to, shim/CMakeLists.txt) to the proxy DLL. The real table and the
# description are compiled alone in a unity build: their file-local names are the same on purpose.
# The Linux stand-ins are the folder's own calls (nvrtc_cache_add_standin, shim/CMakeLists.txt); the
# Windows one is made here (nvrtc_cache_windows_standin).
function(nvrtc_cache_handle_library real_table)
  target_sources(nvrtc_cache_keying PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/options.cc)
  if(WIN32)
    set_source_files_properties(hooks.cc windows_exports.cc TARGET_DIRECTORY nvrtc_proxy
      PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
    target_sources(nvrtc_proxy PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/hooks.cc ${CMAKE_CURRENT_SOURCE_DIR}/windows_exports.cc)
    nvrtc_cache_windows_standin()
    return()
  endif()
  set_source_files_properties(${real_table} hooks.cc TARGET_DIRECTORY nvrtc_cache_interposer
    PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
  target_sources(nvrtc_cache_interposer PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/${real_table}
    ${CMAKE_CURRENT_SOURCE_DIR}/hooks.cc ${CMAKE_CURRENT_SOURCE_DIR}/function_names.cc)
  target_sources(nvrtc_cache_shim PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/exports.cc)
endfunction()

# nvrtc_cache_windows_standin(): the stand-in DLL of a handle-based library's folder on Windows —
# windows_standin.cc with its windows_private_forwarder*.S, exporting what windows_standin.def.in
# lists (its LIBRARY line names the DLL), over the proxy core (shim/windows/standin_core.h) and,
# without one, the real DLL (windows_real_dll.cc, in a static library the proxy links too).
# Installed to bin/ beside the proxy.
function(nvrtc_cache_windows_standin)
  get_filename_component(library ${CMAKE_CURRENT_SOURCE_DIR} NAME)
  file(STRINGS ${CMAKE_CURRENT_SOURCE_DIR}/windows_standin.def.in dll_line REGEX "^LIBRARY ")
  string(REGEX REPLACE "^LIBRARY ([^ ]+)\\.dll$" "\\1" dll "${dll_line}")
  set(def ${CMAKE_CURRENT_BINARY_DIR}/${dll}.def)
  add_custom_command(OUTPUT ${def}
    COMMAND ${CMAKE_CXX_COMPILER} -E -P -x c++ -I${NVRTC_CACHE_ROOT} ${CMAKE_CURRENT_SOURCE_DIR}/windows_standin.def.in
      -o ${def}
    DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/windows_standin.def.in ${CMAKE_CURRENT_SOURCE_DIR}/api.def VERBATIM)
  add_custom_target(${library}_standin_def DEPENDS ${def})
  # The real DLL's table and the rules of its names: compiled once, for the proxy and the stand-in.
  add_library(${library}_windows_real STATIC windows_real_dll.cc function_names.cc)
  target_link_libraries(${library}_windows_real PUBLIC nvrtc_cache_windows_dlls)
  target_link_libraries(nvrtc_proxy PRIVATE ${library}_windows_real)
  file(GLOB forwarders ${CMAKE_CURRENT_SOURCE_DIR}/windows_private_forwarder*.S)
  add_library(${library}_standin SHARED windows_standin.cc ${forwarders})
  target_link_libraries(${library}_standin PRIVATE ${library}_windows_real)
  add_dependencies(${library}_standin ${library}_standin_def)
  set_target_properties(${library}_standin PROPERTIES OUTPUT_NAME ${dll} PREFIX "" SUFFIX ".dll")
  target_link_options(${library}_standin PRIVATE ${NVRTC_CACHE_STATIC_RUNTIME} ${def})
  install(TARGETS ${library}_standin RUNTIME DESTINATION bin LIBRARY DESTINATION bin)
endfunction()
